"""Conformance of the reference's Connect workers with the model's ``connect-delayed`` variant (KIP-415).

Theory of operation
-------------------
:class:`groupspec.conformance.Harness` runs the variant ``connect-delayed`` with
:class:`~groupspec.reference.connect.ConnectWorker` processes instead of consumers; this module
holds what differs, called through small hooks of the harness (``Harness.connect``):

* **Work items are partitions.** One connector ``t`` whose task count is the partition count of topic
  ``t``: the connector instance ``(t, -1)`` is model partition 0 and task ``(t, k)`` is model partition
  ``k + 1`` (the model has no separate kind of item; Connect's hold treats connectors and tasks alike).
  Adding a partition to ``t`` adds a task. The model instance therefore has one partition more than
  the most tasks a run reaches.
* **Assignments are incremental** in Connect (items to start, items to revoke); the model's stored
  assignment and SyncGroup answer are a member's whole allocation. ``alpha`` reads a member's
  allocation as *what it reported running in its JoinGroup, minus what the leader revoked, plus what it
  was told to start*, computed when the leader's SyncGroup is seen (:meth:`ConnectView.target`) and
  remembered per generation and slot for the stored assignments and the answers in flight.
* **The hold** (``Group.held`` / ``held_for``) is the model's bookkeeping, kept by the harness with
  the model's rule (:meth:`ConnectView.update`): the stored allocation of a member whose record goes
  away while the group is ``STABLE`` or ``PREPARING_REBALANCE`` (it left, its session expired, the
  rebalance timeout dropped it) is added to ``held`` (``held_for``: the first such slot); an ``EMPTY``
  group holds nothing. The hold ends (the model's ``DelayExpired``, which may fire at any moment) when
  the reference's delay is over — the clock passed the leader's scheduled rebalance, or a worker's
  scheduled rejoin fired — or when the reference leader hands held work out *for a reason KIP-415
  allows* (below).
* **The check ``connect_hold``** (the target is pinned to what the reference leader computed, so the
  hold must be checked on it): when the leader's assignment hands out work the model holds, the
  leader's own round must allow it — its memory of the previous assignment was not valid (a new leader,
  or the last round it computed did not complete: Kafka discards that memory and hands the work out
  as new), or the scheduled rebalance time had come, or the work was not lost (someone reported
  running it, or the leader never knew it), or no worker had departed and no delay was running (a
  missed assignment). Anything else fails ``connect_hold``: work held back for a departed worker was
  handed to another worker before the delay was over (the ``drop_connect_delay`` mutant).
* **A worker's rejoin after the delay** is the model's ``NoticeMetadata`` (any Connect worker rejoins
  when work nobody is assigned exists and nothing holds it), then ``SendJoinGroup`` when its JoinGroup
  takes effect; once the group prepares a rebalance, a worker whose delay ends later is
  ``Heartbeat`` (REBALANCE_IN_PROGRESS) + ``SendJoinGroup``. A task-count change is noticed the same
  way.

The ``connect-delayed`` workers run with ``keep_work_on_reset=False`` (see docs/conformance.md, known
model gap 11: a Kafka Connect worker keeps running its work across a member-id reset and reports it in its
next JoinGroup; that model's member, like a consumer, loses it). The ``connect-keep-work`` workers run with
``keep_work_on_reset=True``, Kafka's behaviour, against the model variant of that name.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from groupspec.model import NO_GENERATION, GroupStatus as GS, Record, State
from groupspec.reference.classic import ConsumerProtocolError
from groupspec.reference.classic import GroupStatus as RefStatus
from groupspec.reference.connect import CONNECTOR_TASK, decode_connect_assignment, decode_worker_metadata
from groupspec.reference.connect import ConnectWorker, WorkerConfig, items_running

__all__ = ["CONNECT_DELAY_MS", "ConnectView", "worker_config"]

CONNECT_DELAY_MS = 4000  # scheduled.rebalance.max.delay.ms in conformance runs: a pause can outlast it or not


def worker_config(name: str, topic: str, session_ms: int, heartbeat_ms: int, rebalance_ms: int,
                  request_ms: int, keep_work: bool = False) -> WorkerConfig:
    return WorkerConfig(
        group_id="g", client_id=name, topics=(), connector=topic,
        session_timeout_ms=session_ms, heartbeat_interval_ms=heartbeat_ms,
        max_poll_interval_ms=rebalance_ms, request_timeout_ms=request_ms,
        max_delay_ms=CONNECT_DELAY_MS, keep_work_on_reset=keep_work,
    )


class ConnectView:
    """The connect-specific parts of ``alpha`` and the hold bookkeeping of one :class:`Harness`."""

    member_class = ConnectWorker

    def __init__(self, harness: Any) -> None:
        self.h = harness
        self.full: dict[tuple[int, int], int] = {}  # (generation, slot) -> allocation mask
        self.pinned: tuple[int, ...] | None = None  # the reference leader's target, as read this step
        self._scheduled: dict[str, int | None] = {}  # each worker's scheduled rejoin after the last step
        self.releases: list[str] = []  # why each hold ended (for the timeline and the tests)
        self._ids: dict[int, str] = {}  # the member id of each slot's record after the last step

    # ------------------------------------------------------------------ items and allocations
    def mask(self, items: Iterable[Any], topic: str, limit: int) -> int:
        m = 0
        for c, t in items:
            t = int(t)
            if c == topic and CONNECTOR_TASK <= t < limit:
                m |= 1 << (t + 1)
        return m

    def existing(self, tasks: int) -> int:
        return ((1 << tasks) - 1) << 1 | 1

    def _reported(self, view: Any, mv: Any) -> tuple[Any, ...]:
        name = view.protocol_name or (mv.protocols[0][0] if mv.protocols else None)
        for pname, blob in mv.protocols:
            if pname == name:
                try:
                    return decode_worker_metadata(blob).running
                except ConsumerProtocolError:
                    return ()
        return ()

    def _allocation(self, reported: Iterable[Any], blob: bytes) -> int:
        """``reported - revoked + assigned`` as a mask (0 for no assignment)."""
        h = self.h
        if len(blob) < 2:
            return 0
        try:
            asg = decode_connect_assignment(blob)
        except ConsumerProtocolError:
            return 0
        items = (set(reported) - set(asg.revoked)) | set(asg.assigned)
        mask: int = h._mask(items)
        return mask

    def record(self, view: Any, mv: Any, slot: int | None) -> Record:
        """A coordinator member as the model's record (reported metadata: what it runs)."""
        h = self.h
        reported = self._reported(view, mv)
        stored = 0
        if len(mv.assignment) >= 2:
            known = self.full.get((view.generation, slot)) if slot is not None else None
            stored = known if known is not None else self._allocation(reported, mv.assignment)
        # The reported generation: Connect's metadata has none. The model reads it only to decide whether a
        # rejoining member's metadata is unchanged (then the coordinator answers a follower at once);
        # the coordinator compares the bytes. So it is the member's generation if the JoinGroup it would
        # send now carries the bytes the coordinator has, and none otherwise (never "the same").
        gen = NO_GENERATION
        if slot is not None:
            p = h._process(h.names[slot])
            w = p.consumer if p is not None and p.alive else None
            if isinstance(w, ConnectWorker) and w.member_id == mv.member_id and w.join_protocols() == tuple(mv.protocols):
                gen = w.generation.generation_id
        status = view.status
        return Record(
            static=False,
            joined=mv.awaiting_join and status == RefStatus.PREPARING_REBALANCE,
            awaiting_sync=mv.awaiting_sync,
            synced=status in (RefStatus.COMPLETING_REBALANCE, RefStatus.STABLE) and mv.member_id not in view.pending_sync,
            topics=1, owned=h._mask(reported), generation=gen, assignment=stored,
        )

    def target_mask(self, view: Any, member_id: str, blob: bytes, slot: int) -> int:
        """One member's allocation in the leader's SyncGroup (remembered for its answer and record)."""
        mv = next((m for m in view.members if m.member_id == member_id), None)
        reported = self._reported(view, mv) if mv is not None else ()
        mask = self._allocation(reported, blob)
        self.full[(view.generation, slot)] = mask
        return mask

    def sync_answer(self, name: str, generation: int, blob: bytes) -> int:
        """The allocation a SyncGroup answer of ``generation`` gives process ``name``."""
        h = self.h
        known = self.full.get((generation, h.slot[name]))
        if known is not None:
            return known
        p = h._process(name)
        running = p.consumer.owned if p is not None else ()
        return self._allocation(running, blob)

    # ------------------------------------------------------------------ the hold
    def _leader_worker(self) -> ConnectWorker | None:
        view = self.h._group_view()
        if view is None or view.leader is None:
            return None
        for mv in view.members:
            if mv.member_id == view.leader:
                i = self.h._member_slot(mv)
                p = self.h._process(self.h.names[i]) if i is not None else None
                if p is not None and p.alive and isinstance(p.consumer, ConnectWorker):
                    return p.consumer
        return None

    def _delay_over(self) -> str | None:
        h = self.h
        now = h.sim.now
        fired = None
        for name in h.names:
            p = h._process(name)
            cur = p.consumer.scheduled_rejoin_ms if p is not None and p.alive else None
            before = self._scheduled.get(name)
            if before is not None and before <= now and cur is None and fired is None:
                fired = f"{name}'s scheduled rebalance fired"
            self._scheduled[name] = cur
        if fired:
            return fired
        w = self._leader_worker()
        if w is not None and 0 < w.leader_state.scheduled_rebalance <= now:
            return "the leader's scheduled rebalance time passed"
        return None

    def _round_allows(self, handed: int) -> str | None:
        """Why the leader's round may hand out ``handed`` (held) work; None if KIP-415 forbids it."""
        h = self.h
        view = h._group_view()
        w = self._leader_worker()
        r = w.last_round if w is not None else None
        if view is None or r is None or r.generation != view.generation:
            return "the leader's round is not inspectable"  # pragma: no cover - the target comes from it
        st = r.state
        if st.previous_generation != r.last_completed_generation:
            return f"the leader's memory was not of the last completed generation ({st.previous_generation} vs {r.last_completed_generation})"
        if self._revocation_not_taken(r):
            return ("a revocation of the leader's previous round had not taken effect (a worker still reports "
                    "running revoked work): its memory is what runs now, so held work nobody runs counts as new")
        if st.scheduled_rebalance > 0 and r.now >= st.scheduled_rebalance:
            return "the scheduled rebalance time had come"
        remembered = h._mask({(c, CONNECTOR_TASK) for c in st.previous_connectors} | set(st.previous_tasks))
        active = 0
        for run in r.workers.values():
            active |= h._mask(items_running(run))
        lost = remembered & ~active
        if not handed & lost:
            return "the leader did not count the work as lost (it did not remember it, or a worker reported running it)"
        if st.scheduled_rebalance <= 0 and st.previous_members <= set(r.workers):
            return "no worker had departed and no delay was running"
        return None

    @staticmethod
    def _revocation_not_taken(r: Any) -> bool:
        """Kafka's ``performTaskAssignment``: when a worker still reports running something the previous
        round revoked, that revocation did not take effect and the leader replaces its memory of the
        previous assignment by what runs now (``previousAssignment = activeAssignments``). Work that was
        held for a departed worker and that nobody runs is then no longer *lost* but *created*, and is
        handed out at once. A Connect worker that keeps its work across a reset (connect-keep-work)
        reports revoked work still running (found by ``--hypothesis-seed=3220338316``, regression
        ``connect-keep-work-revocation-not-taken``)."""
        st = r.state
        running_c: set[Any] = set()
        running_t: set[Any] = set()
        for run in r.workers.values():
            running_c |= set(run.connectors)
            running_t |= set(run.tasks)
        return bool(set(st.revoked_connectors) & running_c or set(st.revoked_tasks) & running_t)

    def _departures_shown(self) -> bool:
        """Whether alpha shows the coordinator's members as they are now. Not while it shows the state from
        before a due join completion (``Harness.holding``: only orphaned pending ids hold the completion
        back): a member whose session expired meanwhile is still shown, and its work must not be held yet.
        The model takes that expiry and the completion in one step (``SessionExpired``), as Connect's
        leader takes the departure in the round that completion starts; the hold grows then."""
        return not self.h.holding

    def update(self, pre: State, post: State, rec: Any) -> State:
        """alpha's ``held``/``held_for`` after this step (the model's rule), and the check ``connect_hold``."""
        h = self.h
        g = post.group
        held, held_for = pre.group.held, pre.group.held_for
        reason = self._delay_over()
        if g.status == GS.EMPTY:
            held, held_for = 0, -1
        else:
            if pre.group.status in (GS.STABLE, GS.PREPARING_REBALANCE) and self._departures_shown():
                ids = h._last_ids[0]
                for i, r in enumerate(pre.group.records):
                    # gone, or replaced in the same event by a new member id (it left and joined again)
                    gone = g.records[i] is None or (i in self._ids and ids.get(i) != self._ids[i])
                    if r is not None and r.assignment and gone:
                        if held == 0:
                            held_for = i
                        held |= r.assignment
            if held and reason is not None:
                self.releases.append(f"t={h.sim.now}ms {reason}")
                held, held_for = 0, -1
            pinned = self.pinned
            if held and pinned is not None:
                handed = 0
                for m in pinned:
                    handed |= m
                handed &= held
                if handed:
                    why = self._round_allows(handed)
                    if why is None:
                        h._fail("connect_hold", f"the reference leader handed out work held back for a departed worker "
                                f"before the delay was over: {self.describe(handed)} (held {self.describe(held)} for "
                                f"{h.names[held_for] if held_for >= 0 else '?'})", rec, post)
                    self.releases.append(f"t={h.sim.now}ms the leader handed held work out: {why}")
                    held, held_for = 0, -1
        if self._departures_shown():
            self._ids = dict(h._last_ids[0])
        group = replace(g, held=held, held_for=held_for)
        if group.status == GS.COMPLETING_REBALANCE and self.pinned is None and group.held != g.held:
            # the model's own assignor stands in for the leader (see Harness._abstract): with the hold
            present = [i for i, r in enumerate(group.records) if r is not None]
            group = replace(group, target=h.proto.compute_target(group, present))
        return replace(post, group=group)

    def settled(self) -> bool:
        """A suspension (failover ...) ends only once every running worker addresses the coordinator that
        leads the group now: a worker paused through a failover still talks to the old one, and what it
        then sends there (a LeaveGroup at its poll timeout, answered NOT_COORDINATOR) is no model step.
        NOTE: the consumer variants have the same exposure; kept to Connect here so their tuned mutation
        figures stay as they are."""
        h = self.h
        for name in h.names:
            p = h._process(name)
            if p is None or not p.alive or p.consumer.closed or p.consumer.fatal is not None:
                continue
            node = p.consumer.coordinator_node
            if node is not None and node != h.sim.leader:
                return False
        return True

    def known_gap(self, pre: State, post: State) -> str | None:
        """KNOWN MODEL GAP 12 (docs/conformance.md): a worker rejoins on its own when the delay in its
        assignment is over, though no work is unassigned or held: Connect's leader postponed its
        load-balancing revocations by the backoff of KAFKA-12495 (``delay`` = 40 ms, 1.6 s, ... for
        successive revoking rounds), or the delay outlived what it was for. The model has no such delay
        (its leader balances at once) and a worker rejoins only for work nobody is assigned. Accepted only
        for a worker whose last assignment carried a delay, that was STABLE in the group's generation and
        not rejoining, and only if the step is a model step once that worker is shown rejoining; refinement
        then goes on from alpha(after)."""
        h = self.h
        from dataclasses import replace as _r
        from groupspec.model import Id, MemberStatus as MS
        from .refinement import match

        for i, (a, b) in enumerate(zip(pre.clients, post.clients)):
            if a.status != MS.STABLE or a.rejoin or a.id != Id.CURRENT or a.generation != pre.group.generation:
                continue
            if b.status == MS.STABLE and not b.rejoin:
                continue
            p = h._process(h.names[i])  # alive or not: a worker that stopped may still have a JoinGroup travelling
            last = getattr(p.consumer, "last_assignment", None) if p is not None else None
            if last is None or last.delay <= 0:
                continue
            probe = _r(pre, clients=pre.clients[:i] + (_r(a, rejoin=True),) + pre.clients[i + 1:])
            if match(h.proto, probe, post, h.depth) is not None:
                return f"{h.names[i]} rejoined when the delay in its assignment ({last.delay} ms) was over, with no work to take"
        return None

    def describe(self, mask: int) -> str:
        topic = self.h.topic
        names = [f"connector {topic}" if p == 0 else f"task {topic}-{p - 1}" for p in range(mask.bit_length()) if mask >> p & 1]
        return ", ".join(names) or "nothing"
