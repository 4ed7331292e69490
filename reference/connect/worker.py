"""A sans-IO Kafka Connect worker in the group protocol (KIP-415 incremental cooperative rebalancing).

Theory of operation
-------------------
A Connect worker is a group member like a consumer (Kafka's ``WorkerCoordinator`` extends the same
``AbstractCoordinator``), so :class:`ConnectWorker` is a :class:`~groupspec.reference.classic.client.Consumer`
with the Connect parts swapped in. Everything else — FindCoordinator, the MEMBER_ID_REQUIRED two-step
join, heartbeats, the session and poll timeouts, the error table, LeaveGroup on close — is the
consumer's, unchanged. The driver (the simulator) runs it exactly like a consumer: ``start`` it with
``member=ConnectWorker`` and a :class:`WorkerConfig`.

What it runs. One connector, ``WorkerConfig.connector``, whose task count is the value the metadata
source gives for that name (in the simulator: the partition count of the topic named like the
connector, so the simulator's ``partitions`` action changes the task count; the config topic is read
at once by every worker). Its work items are the connector instance ``(connector, -1)`` and its tasks
``(connector, 0..n-1)``; the worker keeps the items it runs in ``owned`` (sorted), so the consumer's
listener callbacks and trace lines (``assigned``/``revoked``/``lost``, cooperative: they add and
remove) describe them.

The Connect parts (coordinator.md §6; Kafka's ``WorkerCoordinator``, ``DistributedHerder``,
``IncrementalCooperativeAssignor``):

* **JoinGroup**: protocol type ``connect``; protocols ``sessioned`` then ``compatible`` (``connect.protocol
  = compatible``: only the latter), each carrying the worker's metadata (URL, config offset, and its
  *current allocation*: everything it runs), :mod:`groupspec.reference.connect.protocol`. The eager
  ``default`` protocol is not offered: the reference worker runs the incremental protocol only.
* **onJoinPrepare** revokes nothing: an incremental worker keeps running its work until it is
  explicitly revoked.
* **The leader** decodes every member's metadata and runs one round of
  :func:`groupspec.reference.assignors.connect.assign_round` with its :class:`LeaderState`, which it
  keeps for the life of the process, leader or not (Kafka's assignor object lives in the worker
  coordinator): the previous assignment, the previous members, the scheduled rebalance, the
  candidates, the revocation backoff. It reads the configuration to the end first
  (``configFreshSnapshot``): the configured task count is the current one. ``now`` is the leader's
  clock; ``scheduled.rebalance.max.delay.ms`` is ``WorkerConfig.max_delay_ms``. Each worker's
  assignment (items to start, items to revoke, the delay, the leader, the config offset) goes into the
  leader's SyncGroup. The round's inputs and result are kept in ``last_round`` (:class:`LeaderRound`)
  for inspection.
* **onJoinComplete** (the herder's ``onRevoked`` / ``onAssigned``): stop the revoked items, start the
  new ones; remember the generation as the last completed one (the leader's memory is only trusted
  for the generation after it, ``lastCompletedGenerationId``); if anything was revoked, rejoin at
  once; if the assignment carries ``delay > 0``, rejoin when it is over (``scheduled_rejoin_ms``; a
  later assignment replaces it, one with delay 0 cancels it, as ``DistributedHerder.scheduledRebalance``).
* **Config changes**: while STABLE, a worker whose assignment was computed with another task count
  than the connector now has rejoins (the herder's ``needsReconfigRebalance``). Kafka's herder requests
  that rebalance for every task-config update it reads, also when the round that just completed had
  already assigned with it; the reference skips that redundant round (nothing would change in it).

Choices where the reference differs from Kafka on purpose (documented in docs/conformance.md):

* ``WorkerConfig.keep_work_on_reset`` (default ``True``, Kafka's behaviour): a worker whose member id
  or generation is reset (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION, the poll timeout) keeps running its
  work and reports it in its next JoinGroup. With ``False`` it treats its work as lost at its next
  ``onJoinPrepare`` (``lost`` trace line, like a consumer), which is what the model's member does; the
  conformance harness runs the workers that way (a known model gap).
* The leader never answers with an assignment error (``CONFIG_MISMATCH``): every worker reads the
  configuration at once, so nobody is behind.

Fault switch (mutation testing only, off by default): ``drop_connect_delay`` — the leader reassigns lost
work at once, as if ``scheduled.rebalance.max.delay.ms`` were 0 (KAFKA-15693's immediate reassignment),
so a departed worker's work moves to another worker without the delay.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..assignors.connect import DEFAULT_MAX_DELAY_MS, LeaderState, RoundResult, Running, assign_round
from .protocol import (
    CONNECTOR_TASK,
    PROTOCOL_VERSIONS,
    ConnectAssignment,
    WorkerMetadata,
    decode_connect_assignment,
    decode_worker_metadata,
    encode_connect_assignment,
    encode_worker_metadata,
)
from ..classic import (
    COOPERATIVE, Consumer, ConsumerConfig, ConsumerProtocolError, JoinGroupRequest, JoinGroupResponse, MemberState,
    Send,
)

__all__ = ["FAULTS", "ConnectWorker", "LeaderRound", "WorkerConfig", "items_running"]

FAULTS = frozenset({"drop_connect_delay"})

Item = tuple[str, int]


@dataclass(frozen=True)
class WorkerConfig(ConsumerConfig):
    """A Connect worker's settings: the consumer's group settings plus Connect's (Kafka's names).

    ``max_poll_interval_ms`` is the rebalance timeout (Connect's ``rebalance.timeout.ms``)."""

    assignors: tuple[str, ...] = ()
    enable_auto_commit: bool = False  # workers commit no consumer offsets in the group
    connector: str = "t"  # the one connector; its task count is metadata()[connector]
    url: str = ""  # rest.advertised URL; "" = http://<client_id>:8083/
    connect_protocol: str = "sessioned"  # connect.protocol: sessioned | compatible
    max_delay_ms: int = DEFAULT_MAX_DELAY_MS  # scheduled.rebalance.max.delay.ms
    keep_work_on_reset: bool = True  # Kafka's behaviour; False: work is lost at a reset (the model's)


@dataclass(frozen=True)
class LeaderRound:
    """One assignment round a worker computed as leader: its inputs and its result."""

    generation: int
    now: int
    last_completed_generation: int
    workers: dict[str, Running]
    configured: dict[str, int]
    state: LeaderState  # the leader's memory before the round
    max_delay: int
    result: RoundResult


def items_running(r: Running) -> set[Item]:
    """A worker's report as items: its connectors as ``(c, -1)`` and its tasks."""
    return {(c, CONNECTOR_TASK) for c in r.connectors} | set(r.tasks)


def _running(items: tuple[Item, ...] | list[Item]) -> Running:
    return Running.of((c for c, t in items if t == CONNECTOR_TASK), ((c, t) for c, t in items if t != CONNECTOR_TASK))


@dataclass
class ConnectWorker(Consumer):
    """One Connect worker process's group membership (sans-IO); see the module docstring."""

    protocol_type: ClassVar[str] = "connect"

    leader_state: LeaderState = field(default_factory=LeaderState)
    last_completed_generation: int = -1
    scheduled_rejoin_ms: int | None = None  # the herder's scheduled rebalance (None: none)
    assignment_offset: int | None = None  # config offset (task count) of the last assignment
    last_assignment: ConnectAssignment | None = None  # the last assignment received (its snapshot)
    last_round: LeaderRound | None = None

    def __post_init__(self) -> None:
        bad = self.faults - FAULTS
        if bad:
            raise ValueError(f"unknown Connect worker fault(s): {', '.join(sorted(bad))}")
        if not isinstance(self.config, WorkerConfig):
            raise TypeError("a ConnectWorker needs a WorkerConfig")
        if self.config.connect_protocol not in ("sessioned", "compatible"):
            raise ValueError(f"connect.protocol {self.config.connect_protocol!r}: the reference worker runs "
                             "the incremental protocol only (sessioned or compatible)")
        self.protocol = COOPERATIVE

    @property
    def wconfig(self) -> WorkerConfig:
        assert isinstance(self.config, WorkerConfig)
        return self.config

    def _task_count(self) -> int:
        return int(self.metadata().get(self.wconfig.connector, 0))

    def _url(self) -> str:
        return self.wconfig.url or f"http://{self.config.client_id}:8083/"

    def commit_async(self, now: int) -> list[Send]:
        """A Connect worker commits no offsets in its group (sink tasks have consumer groups of their
        own, source offsets go to the offsets topic): the application call does nothing here."""
        return []

    def subscribe(self, now: int, topics: tuple[str, ...]) -> list[Send]:
        """A Connect worker has no subscription: its work comes from the connector configuration."""
        return []

    # ------------------------------------------------------------------ the herder's loop

    def poll(self, now: int) -> list[Send]:
        """The herder's tick: a due scheduled rebalance or a task-count change requests a rejoin."""
        if self.fatal is None and not self.closed and self.state is MemberState.STABLE and not self.rejoin_needed:
            if self.scheduled_rejoin_ms is not None and now >= self.scheduled_rejoin_ms:
                self.scheduled_rejoin_ms = None
                self.rejoin_needed = True
            elif self.assignment_offset is not None and self._task_count() != self.assignment_offset:
                self.rejoin_needed = True  # needsReconfigRebalance
        return super().poll(now)

    # ------------------------------------------------------------------ join

    def join_protocols(self) -> tuple[tuple[str, bytes], ...]:
        """``WorkerCoordinator.metadata``: the protocols and metadata a JoinGroup sent now carries.

        The allocation is the assignment snapshot: the last assignment received (its leader, config
        offset, revocations and delay) with everything the worker runs as its assigned items."""
        last = self.last_assignment
        names = ("sessioned", "compatible") if self.wconfig.connect_protocol == "sessioned" else ("compatible",)
        offset = self._task_count()  # configSnapshot, taken in metadata()
        protocols = []
        for name in names:
            version = PROTOCOL_VERSIONS[name]
            alloc = None
            if last is not None or self.owned:
                base = last or ConnectAssignment()
                alloc = ConnectAssignment(version, base.error, base.leader, base.leader_url, base.config_offset,
                                          tuple(sorted(self.owned)), base.revoked, base.delay)
            protocols.append((name, encode_worker_metadata(WorkerMetadata(self._url(), offset, alloc, version))))
        return tuple(protocols)

    def _send_join(self, now: int, out: list[Send]) -> None:
        req = JoinGroupRequest(
            group_id=self.config.group_id,
            member_id=self.generation.member_id,
            protocol_type=self.protocol_type,
            protocols=self.join_protocols(),
            session_timeout_ms=self.config.session_timeout_ms,
            rebalance_timeout_ms=self.config.max_poll_interval_ms,
            group_instance_id=None,  # Connect has no static membership
            version=self.config.join_group_version,
            client_id=self.config.client_id,
        )
        self.state = MemberState.PREPARING_REBALANCE
        self._send(now, "coordinator", "join", req, out)

    def _on_join_prepare(self, now: int, out: list[Send]) -> bool:
        """``WorkerCoordinator.onJoinPrepare``: an incremental worker keeps its work (see the docstring
        for ``keep_work_on_reset``)."""
        g = self.generation
        if (g.generation_id == -1 or g.member_id == "") and self.owned and not self.wconfig.keep_work_on_reset:
            lost = self.owned
            self.listener.on_partitions_lost(lost)
            self._event(now, "lost", lost)
            self._drop(lost)
        self.is_leader = False
        return True

    # ------------------------------------------------------------------ the leader

    def _on_leader_elected(self, now: int, resp: JoinGroupResponse, out: list[Send]) -> None:
        """``IncrementalCooperativeAssignor.performAssignment``: one round, with the leader's memory."""
        workers: dict[str, Running] = {}
        try:
            for m in resp.members:
                workers[m.member_id] = _running(decode_worker_metadata(m.metadata).running)
        except ConsumerProtocolError as e:
            self.fatal = f"SchemaException: {e}"
            return
        connector = self.wconfig.connector
        configured = {connector: self._task_count()}  # the configuration read to the end
        max_delay = 0 if "drop_connect_delay" in self.faults else self.wconfig.max_delay_ms  # FAULT: no delay
        state = self.leader_state
        result = assign_round(workers, configured, state, generation=resp.generation_id,
                              last_completed_generation=self.last_completed_generation, now=now, max_delay=max_delay)
        self.leader_state = result.state
        self.last_round = LeaderRound(resp.generation_id, now, self.last_completed_generation, workers, configured,
                                      state, max_delay, result)
        version = PROTOCOL_VERSIONS.get(resp.protocol_name or "", 1)
        blobs = []
        for m in resp.members:
            wa = result.assignments[m.member_id]
            asg = ConnectAssignment(
                version=version, leader=self.generation.member_id, leader_url=self._url(),
                config_offset=configured[connector],
                assigned=tuple((c, CONNECTOR_TASK) for c in wa.connectors_to_start) + tuple(wa.tasks_to_start),
                revoked=tuple((c, CONNECTOR_TASK) for c in wa.connectors_to_revoke) + tuple(wa.tasks_to_revoke),
                delay=wa.delay,
            )
            blobs.append((m.member_id, encode_connect_assignment(asg)))
        self._send_sync(now, tuple(blobs), out)

    # ------------------------------------------------------------------ the assignment arrives

    def _apply_sync_assignment(self, now: int, blob: bytes, out: list[Send]) -> None:
        """``WorkerCoordinator.onJoinComplete`` and the herder's ``onRevoked`` / ``onAssigned``."""
        try:
            asg = decode_connect_assignment(blob)
        except ConsumerProtocolError as e:
            self.fatal = f"SchemaException: {e}"
            return
        self.last_assignment = asg
        have = set(self.owned)
        revoked = tuple(sorted(it for it in set(asg.revoked) if it in have))
        if revoked:
            self._revoke(now, revoked, out)  # stop them
        have = set(self.owned)
        added = tuple(sorted(it for it in set(asg.assigned) if it not in have))
        self.owned = tuple(sorted(have | set(added)))
        self.listener.on_partitions_assigned(added)
        self._event(now, "assigned", added)
        self.last_completed_generation = self.generation.generation_id
        self.assignment_offset = asg.config_offset
        self.scheduled_rejoin_ms = now + asg.delay if asg.delay > 0 else None
        if asg.revoked:
            self.rejoin_needed = True  # revoked work can only move in a follow-up round
        if self.rejoin_needed:
            self._join_group_if_needed(now, out)

    # ------------------------------------------------------------------ inspection

    def snapshot(self) -> dict[str, Any]:
        out = super().snapshot()
        s = self.leader_state
        out.update(
            running=[list(it) for it in self.owned],
            scheduled_rejoin_ms=self.scheduled_rejoin_ms,
            last_completed_generation=self.last_completed_generation,
            leader_memory={"previous_generation": s.previous_generation, "scheduled_rebalance": s.scheduled_rebalance,
                           "delay": s.delay, "candidates": list(s.candidate_workers)},
        )
        return out
