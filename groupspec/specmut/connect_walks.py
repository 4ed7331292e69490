"""The client checks for Connect: the model's Connect workers mirrored by the reference's ``ConnectWorker``.

:mod:`.client_walks` drives the reference classic client along the model's paths; a Kafka Connect worker is a group
member like a consumer (``WorkerCoordinator`` extends the same ``AbstractCoordinator``), so the same mirror drives
``groupspec.reference.connect.ConnectWorker`` (Kafka's ``WorkerCoordinator`` and the herder's ``onRevoked`` /
``onAssigned``, written without the model) along the paths of ``connect-delayed`` and ``connect-keep-work``, and
after every step each running worker of the model must be where its worker is: member id, generation, member state,
the work it runs, whether it rejoins at its next poll. What differs from the consumer's mirror:

* **Work items are partitions** (as in the Connect conformance harness, groupspec/conformance/connect.py): one
  connector ``t``; model partition 0 is the connector instance ``(t, -1)``, partition ``k + 1`` its task ``(t, k)``;
  a partition added is a task added (the worker's metadata gives the task count).
* **The SyncGroup answer** is a Connect assignment, incremental: the items of the model's assignment the worker does
  not run yet to start, the items it runs outside it to revoke (the worker then rejoins, as the model's member does
  after a revocation), no delay (the worker's scheduled rebalance is not mirrored: the model's workers rejoin when
  they notice released work, ``NoticeMetadata``, and the worker is then told to).
* **A reset keeps the work** where the model says so: ``connect-keep-work`` is mirrored by workers with
  ``keep_work_on_reset`` (Kafka's behaviour: ``onJoinPrepare`` revokes nothing after UNKNOWN_MEMBER_ID or
  ILLEGAL_GENERATION), ``connect-delayed`` by workers without it (their work is lost at the next ``onJoinPrepare``, as
  the model's member loses it at the reset); a reset worker's work is compared as it runs.
* **The poll timeout** (``PollTimeoutLeave``): the worker's heartbeat thread finds its poll timer expired
  (``maybeLeaveGroup``: LeaveGroup, reset, the process runs on).

Not mirrored: the leader's round (``IncrementalCooperativeAssignor``: its SyncGroup is sent, its content not
compared; the model's sticky assignor is a stand-in), the scheduled rebalance's timer (above).

May import: ``groupspec.model`` (inside the functions), ``groupspec.reference`` (the Connect worker), ``.client_walks``.
"""
from __future__ import annotations

from typing import Any

from groupspec.reference.classic import JoinGroupResponse, MemberState, SyncGroupResponse
from groupspec.reference.connect import (CONNECTOR_TASK, ConnectAssignment, ConnectWorker, WorkerConfig,
                                         encode_connect_assignment)
from groupspec.reference.errors import Error

from .client_walks import FOREVER, Divergence, Mirror, explore, run_walks

# (variant, assignor, members, partitions, topics, faults, budget, walks, steps): walks of the keep-work workers (the
# timeouts and stale answers that reset a worker), and one instance explored per variant
CONNECT_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("connect-keep-work", "sticky", 3, 3, 1, "join,leave,crash,timeout,zombie,partitions", 6, 300, 50),
    ("connect-keep-work", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie", 2, 0, 0),
    ("connect-delayed", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie,partitions", 2, 0, 0),
)
CONNECTOR = "t"


class _Worker(ConnectWorker):
    """The reference worker, its follow-up JoinGroup held until the model's ``SendJoinGroup`` (as ``_Member``)."""

    allow_join: bool = False

    def _join_group_if_needed(self, now: int, out: list[Any]) -> None:
        if self.allow_join:
            super()._join_group_if_needed(now, out)


class ConnectMirror(Mirror):
    """One walk of a Connect variant: the model's workers and the reference's."""

    protocol_type = "connect"

    def __init__(self, proto: Any, variant: str, assignor: str) -> None:
        super().__init__(proto, variant, assignor)
        self.keeps_work = bool(getattr(proto, "keep_work_on_reset", False))
        self.leader = -1  # the model's leader before the step (the assignment names it)
        self.leader_of: dict[int, tuple[int, str]] = {}  # per generation: its leader's slot and member id

    # ---------------------------------------------------------------------------- items
    def item(self, b: int) -> tuple[str, int]:
        return (CONNECTOR, b - 1)  # partition 0: the connector instance (task -1), partition k + 1: task k

    def items(self, mask: int) -> tuple[tuple[str, int], ...]:
        return tuple(self.item(b) for b in range(self.cfg.partitions) if mask >> b & 1)

    def mask(self, parts: Any) -> int:
        return sum(1 << (t + 1) for c, t in parts if c == CONNECTOR and CONNECTOR_TASK <= t < self.cfg.partitions - 1)

    def counts_of(self, existing: int) -> dict[str, int]:
        return {CONNECTOR: max(0, existing.bit_count() - 1)}  # the task count: every partition but the connector's

    def set_partitions(self, existing: int) -> None:
        counts = self.counts_of(existing)
        self.counts.clear()
        self.counts.update(counts)
        for v in self.views:
            v.clear()
            v.update(counts)

    def new_client(self, i: int, topics: int, assignors: tuple[str, ...] | None = None) -> Any:
        config = WorkerConfig(group_id="g", client_id=f"c{i}", session_timeout_ms=FOREVER, heartbeat_interval_ms=1,
                              max_poll_interval_ms=FOREVER, request_timeout_ms=FOREVER, connector=CONNECTOR,
                              keep_work_on_reset=self.keeps_work)
        c = _Worker(f"c{i}", config, self.views[i], self.get)
        from groupspec.reference.classic import FindCoordinatorRequest, FindCoordinatorResponse

        for s in c.start(self.now):
            if isinstance(s.request, FindCoordinatorRequest):
                c.receive(self.now, s.corr, FindCoordinatorResponse(Error.NONE, node_id=0, host="b0", port=9092))
        return c

    # ---------------------------------------------------------------------------- answers
    def _sync_response(self, mask: int, generation: int | None = None, i: int = -1) -> SyncGroupResponse:
        """The model's whole assignment as Connect's incremental one: start what the worker does not run yet, revoke
        what it runs outside the assignment."""
        c = self.cons[i]
        running = set(c.owned) if c is not None else set()
        want = set(self.items(mask))
        lead = self.mid[self.leader] if self.leader >= 0 else ""
        asg = ConnectAssignment(leader=lead, leader_url=f"http://{lead}:8083/", config_offset=self.counts[CONNECTOR],
                                assigned=tuple(sorted(want - running)), revoked=tuple(sorted(running - want)), delay=0)
        return SyncGroupResponse(Error.NONE, encode_connect_assignment(asg), protocol_type="connect",
                                 protocol_name=self.assignor)

    # ---------------------------------------------------------------------------- steps
    def completion(self, t: Any) -> None:
        """A join phase completed: the JoinGroup answers of this generation name its leader, and the leader's carries
        the members with the metadata of their accepted JoinGroups, as they are now (a late answer too)."""
        from groupspec.reference.classic import JoinGroupMember

        g = t.group
        self.leader_of[g.generation] = (g.leader, self.mid[g.leader] if g.leader >= 0 else "")
        self.joined[g.generation] = tuple(JoinGroupMember(self.mid[k], None, meta) for k, r in enumerate(g.records)
                                          if r is not None and (meta := self.meta[k]) is not None)

    def _join_response(self, s: Any, i: int, generation: int, skip: bool = False) -> JoinGroupResponse:
        lead, lead_id = self.leader_of.get(generation, (-1, ""))
        members = self.joined.get(generation, ()) if lead == i else ()
        return JoinGroupResponse(Error.NONE, generation_id=generation, protocol_type="connect",
                                 protocol_name=self.assignor, leader=lead_id or self.mid[i], member_id=self.mid[i],
                                 members=members)

    def step(self, s: Any, a: Any, t: Any) -> None:
        self.leader = s.group.leader
        if type(a).__name__ == "PollTimeoutLeave":
            c = self._need(a.member)
            if c.state not in (MemberState.COMPLETING_REBALANCE, MemberState.STABLE):
                raise Divergence(f"the model's worker {a.member} misses its poll timeout; its worker's heartbeat "
                                 f"thread does not run (state {c.state.name})")
            c.last_poll_ms = self.now - FOREVER - 2  # the poll timer expired: the heartbeat thread leaves the group
            c.tick(self.now)
            # "poll-timeout-answer": the JoinGroup or SyncGroup answer the reset worker still waits for is discarded
            # when it comes (its generation was reset); the model's worker drops it at once and may rejoin at once
            for corr in [k for k, f in c.inflight.items() if f.kind in ("join", "sync")]:
                del c.inflight[corr]
        super().step(s, a, t)  # DelayExpired: nothing a worker sees (its scheduled rebalance is not mirrored)

    def notice(self, i: int) -> None:
        """The model's worker sees work nobody is assigned (a task added, a delay ended) and rejoins: the worker's
        herder rejoins on a task count its assignment was not computed with (``needsReconfigRebalance``); at the end
        of a delay on its scheduled rebalance, which is not mirrored: it is told to."""
        c = self._need(i)
        if not self.wants_join(c, metadata=True):
            c.rejoin_needed = True

    def wants_join(self, c: Any, metadata: bool = False) -> bool:
        if c.state is MemberState.UNJOINED or c.rejoin_needed:
            return True
        if metadata and c.state is MemberState.STABLE and c.assignment_offset is not None:
            return bool(int(c.metadata().get(CONNECTOR, 0)) != c.assignment_offset)
        return False




def check(job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run: the walks of one job (or those in ``only``), or its instance explored; a divergence, else None."""
    try:
        variant, assignor, members, partitions, topics, faults, budget, walks, steps = job
        if walks == 0:
            return explore(variant, assignor, members, partitions, topics, faults, budget, mirror_class=ConnectMirror)
        return run_walks(variant, assignor, members, partitions, topics, faults, budget, walks, steps, only=only,
                         mirror_class=ConnectMirror)
    except Divergence as e:
        return str(e)


__all__ = ["CONNECT_WALK_JOBS", "ConnectMirror", "check"]
