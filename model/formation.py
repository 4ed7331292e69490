"""Group formation and the timers: the classic protocol's steps behind five faults.

Theory of operation
-------------------
The classic model (:mod:`groupspec.model.classic`) abstracts real time away: a join phase that starts
from ``EMPTY`` completes inside the first JoinGroup, a new member joins in one JoinGroup, and the
coordinator's timers remove only members whose process cannot answer. Kafka does more, and the five
faults below (``--faults``) switch each part on. Each is a *protocol* feature, not a failure; they are
faults so that a run without them explores exactly the space it always did (every pinned state count,
verdict and counterexample is unchanged), and only ``sync-timeout``'s slow member spends the budget.
The compiled engine does not encode them: ``groupspec check`` runs the Python explorer when one is on.

``initial-delay`` — **the initial rebalance delay** (KIP-134, coordinator.md §3.6). When a member is
added to an ``EMPTY`` group the coordinator prepares a rebalance with an *initial delayed join*
(``group.initial.rebalance.delay.ms``, default 3 s, extended while members keep arriving, up to the
rebalance timeout): it never completes early, so every member that joins meanwhile is in the first
generation. The group records that this timer runs (``Group.forming``); while it runs the join phase
cannot complete (not when everyone has joined, not by the rebalance timeout), and the fair step
``InitialDelayExpired`` ends it: the join phase completes with whoever joined (even with a pending id
outstanding: Kafka's ``onCompleteJoin`` does not wait for one). The model does not count the delay
itself, so the step may come after any number of joins: a first generation of one member (the delay
ran out first) or of several. Kafka's Java coordinator may end the delay early when a heartbeat or
pending-id expiry finds everyone joined (coordinator.md §9, an inference); the model follows the Scala
rule (never early), which only makes more interleavings possible.

``two-step-join`` — **MEMBER_ID_REQUIRED** (KIP-394, coordinator.md §2 step 7 and §3.8). A dynamic
member's first JoinGroup (no member id) is answered at once with MEMBER_ID_REQUIRED and a fresh id,
which the coordinator keeps as *pending* (``Group.pending``, one bit per slot; the client holds
``Id.PENDING``). A pending id is no member: it triggers no rebalance, is no leader candidate, and has
no record. It does **block** the completion of a join phase (``hasAllMembersJoined`` requires no
pending ids), until the process joins again with it (then it is added as a member, exactly as the
one-step model adds a new member), leaves (LeaveGroup drops it) or its session timeout drops it
(``PendingExpired``, fair: only for a process that cannot come back, a crashed or closed one). A
rebalance timeout that fires for a member that cannot rejoin completes the join phase without the
pending id (it stays pending; its JoinGroup then starts the next rebalance); a pending id alone waits
for its own expiry, as a live member that has not rejoined yet does not fire the timeout either (the
model's timers fire only for processes that cannot answer). Static members never get MEMBER_ID_REQUIRED.

``sync-timeout`` — **the pending-sync timer** (KAFKA-12890, Kafka 3.0+, coordinator.md §3.9). When a
join phase completes every member is pending sync (``Record.synced`` is false) until its SyncGroup
arrives; after the rebalance timeout the coordinator removes every member still pending and prepares
a rebalance. A member whose process cannot answer is already removed by ``SessionExpired``; the new
steps are the other two cases:

* ``SyncTimeout`` (a perturbation): a live member was too slow (its poll loop busy past the rebalance
  timeout while its heartbeat thread kept its session): every member not yet synced is removed, and
  the group rebalances. Its SyncGroup, when it comes, is answered UNKNOWN_MEMBER_ID and it rejoins.
* ``PendingSyncExpired`` (a protocol step): a static member replaced in a ``STABLE`` group before its
  old member id sent SyncGroup. Kafka keeps the *old* id in ``pendingSyncMembers``; the new id's
  SyncGroup does not clear it, so the timer fires and forces a rebalance that removes nobody
  (``Group.stale_sync``). Any rebalance prepared before clears the set and cancels the timer.

``late-expiry`` — **expiry after a pause** (with ``zombie``; coordinator.md §3.5). A process that
resumes from a long pause has not heartbeaten for a while: the coordinator's session timer for it may
run out before anything refreshes it, although the process runs again (``Client.woke``). Until its
session is refreshed — an accepted heartbeat (NONE or REBALANCE_IN_PROGRESS; ILLEGAL_GENERATION does
*not* refresh it), a join phase completing with it, its assignment delivered or served — the fair step
``SessionExpired`` may remove it; it then learns UNKNOWN_MEMBER_ID from its next request and rejoins
as a new member. A member with a parked JoinGroup or SyncGroup is never expired by its session.

``poll-timeout`` — **the consumer's poll timeout** (``max.poll.interval.ms``, coordinator.md §5.8). The
client's heartbeat thread runs while its member is joined (``COMPLETING_REBALANCE`` or ``STABLE``:
``AbstractCoordinator.HeartbeatThread`` disables itself in the other two states) and watches the time
since the application last called ``poll()``. When that exceeds ``max.poll.interval.ms`` — the poll loop
is busy, or the whole process was stopped by a GC pause longer than that and the heartbeat thread runs
before the poll loop when it ends — ``handlePollTimeoutExpiry`` calls ``maybeLeaveGroup``: a *dynamic*
member that holds a member id sends LeaveGroup (best effort, never resent), a static one sends nothing
(its membership ends only by session timeout); both then reset (``resetGenerationOnLeaveGroup``: no
member id, no generation, ``UNJOINED``) and request a rejoin. The process is not closed: the
application's next ``poll()`` runs onJoinPrepare, which reports everything it owned *lost*
(``onPartitionsLost``: the generation was reset) and joins again as a new member (a static member with
its instance id and no member id: the replacement of its old id). The step ``PollTimeoutLeave`` (a
perturbation: a stall is a fault, and it spends the budget) does it in one step: the member's record is
removed as by a LeaveGroup (a dynamic member with its current id; a stale id removes nothing, and a
static member's record stays for its replacement), and its process, still running, holds no id, no
generation and no partitions (lost at once, as after UNKNOWN_MEMBER_ID: it cannot commit in between,
not being ``STABLE``), nothing in its inbox (an answer to a request from before the reset only makes it
rejoin), and joins again with ``SendJoinGroup``. Without the fault the model had this only as a close
and a restart (``LeaveGroup`` then ``Start``), which needs the ``join`` fault and two steps where Kafka
takes one: the conformance harness met a poll-timeout leave whose rejoin reached the coordinator before
its LeaveGroup (``--hypothesis-seed=2692966313``, cooperative-sticky), one step more than it searches.
Connect workers leave the same way (``WorkerCoordinator.handlePollTimeoutExpiry``); ``connect-keep-work``
takes the step with ``leave`` too and keeps the worker's work (model/connect_delayed.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from . import actions as A
from .core import Client, Config, Group, GroupStatus as GS, Id, MemberStatus as MS, Proc, State


class FormationRules:
    """The steps behind ``initial-delay``, ``two-step-join``, ``sync-timeout``, ``late-expiry`` and ``poll-timeout``.

    A mixin of :class:`~groupspec.model.classic.ClassicProtocol`: it uses its ``cfg``, ``_remove``,
    ``_prepare_rebalance``, ``_complete_join``, ``_maybe_complete_join`` and ``_with``.
    """

    # set by _formation_init
    initial_delay: bool
    two_step: bool
    sync_timer: bool
    late_expiry: bool
    poll_timeout: bool
    # the faults that enable PollTimeoutLeave (connect-keep-work: ``leave`` too, model/connect_delayed.py)
    poll_timeout_faults: tuple[str, ...] = ("poll-timeout",)
    _poll_timeout: tuple[A.PollTimeoutLeave, ...]
    _initial_delay_expired: A.InitialDelayExpired
    _pending_sync_expired: A.PendingSyncExpired
    _sync_timeout: A.SyncTimeout
    _pending_expired: tuple[A.PendingExpired, ...]

    if TYPE_CHECKING:  # what it uses of ClassicProtocol
        cfg: Config
        static_members: bool
        coordinator_assigns: bool
        keep_work_on_reset: bool

        @staticmethod
        def alive(s: State, i: int) -> bool: ...
        def _remove(self, g: Group, clients: list[Client], i: int) -> Group: ...
        def _prepare_rebalance(self, g: Group, clients: list[Client]) -> Group: ...
        def _complete_join(self, g: Group, clients: list[Client]) -> Group: ...
        def _maybe_complete_join(self, g: Group, clients: list[Client]) -> Group: ...
        def _with(self, s: State, group: Group | None = None, clients: tuple[Client, ...] | None = None,
                  spend: bool = False) -> State: ...

    def _formation_init(self) -> None:
        faults = self.cfg.faults
        self.initial_delay = "initial-delay" in faults
        # static members skip MEMBER_ID_REQUIRED (coordinator.md §3.8)
        self.two_step = "two-step-join" in faults and not self.static_members
        self.sync_timer = "sync-timeout" in faults and not self.coordinator_assigns
        self.late_expiry = "late-expiry" in faults
        self.poll_timeout = any(f in faults for f in self.poll_timeout_faults)
        self._poll_timeout = tuple(A.PollTimeoutLeave(i) for i in range(self.cfg.members))
        self._initial_delay_expired = A.InitialDelayExpired()
        self._pending_sync_expired = A.PendingSyncExpired()
        self._sync_timeout = A.SyncTimeout()
        self._pending_expired = tuple(A.PendingExpired(i) for i in range(self.cfg.members))

    # -- JoinGroup ---------------------------------------------------------------------------------
    def _member_id_required(self, s: State, clients: list[Client], i: int, c: Client) -> State:
        """KIP-394: a dynamic member's first JoinGroup gets a pending id; the group does not change state."""
        clients[i] = c.but(id=Id.PENDING, status=MS.UNJOINED)
        return self._with(s, group=s.group.but(pending=s.group.pending | 1 << i), clients=tuple(clients))

    def _pending_unknown(self, s: State, clients: list[Client], i: int, c: Client) -> State | None:
        """A JoinGroup with a pending id the coordinator no longer holds: UNKNOWN_MEMBER_ID, join afresh.

        None when the id is still pending: the caller adds the member (and clears the bit)."""
        if s.group.pending >> i & 1:
            return None
        clients[i] = c.but(id=Id.NONE, status=MS.UNJOINED)
        return self._with(s, clients=tuple(clients))

    # -- the fair timer steps and the slow member --------------------------------------------------
    def _formation_steps(self, s: State) -> Iterator[tuple[A.Action, State]]:
        g = s.group
        if g.forming:
            # the initial delayed join ends: the join phase completes with everyone who joined
            clients = list(s.clients)
            # (with nobody left, they all left meanwhile: initNextGeneration, and the group is Empty again)
            g2 = self._complete_join(g.but(forming=False), clients)
            yield self._initial_delay_expired, self._with(s, group=g2, clients=tuple(clients))
        if g.pending:
            for i, c in enumerate(s.clients):
                if g.pending >> i & 1 and not (c.proc == Proc.UP and c.id == Id.PENDING):
                    clients = list(s.clients)
                    g2 = self._maybe_complete_join(g.but(pending=g.pending & ~(1 << i)), clients)
                    yield self._pending_expired[i], self._with(s, group=g2, clients=tuple(clients))
        if g.status in (GS.STABLE, GS.COMPLETING_REBALANCE):
            slow = [i for i, r in enumerate(g.records) if r is not None and not r.synced]
            if g.stale_sync and not slow:
                # only the replaced id is pending: the timer forces a rebalance that removes nobody
                clients = list(s.clients)
                g2 = self._prepare_rebalance(g, clients)
                yield self._pending_sync_expired, self._with(s, group=g2, clients=tuple(clients))
            if self.sync_timer and s.budget > 0 and any(self.alive(s, i) for i in slow):
                clients = list(s.clients)
                g2 = g.but(stale_sync=False)
                for i in slow:
                    # each removal of a member prepares the rebalance (the first) or re-checks completion
                    g2 = self._remove(g2, clients, i)
                if g2.status in (GS.STABLE, GS.COMPLETING_REBALANCE):
                    g2 = self._prepare_rebalance(g2, clients)
                yield self._sync_timeout, self._with(s, group=g2, clients=tuple(clients), spend=True)

    # -- the poll timeout --------------------------------------------------------------------------
    def _poll_timeout_steps(self, s: State, i: int) -> Iterator[tuple[A.Action, State]]:
        """``poll-timeout``: a running, joined member (its heartbeat thread runs) misses its poll timeout."""
        c = s.clients[i]
        if self.poll_timeout and c.proc == Proc.UP and c.id in (Id.CURRENT, Id.STALE) \
                and c.status in (MS.STABLE, MS.COMPLETING_REBALANCE):
            yield self._poll_timeout[i], self._poll_timeout_leave(s, i)

    def _poll_timeout_leave(self, s: State, i: int) -> State:
        """maybeLeaveGroup at the poll timeout: LeaveGroup (a dynamic member's current record is removed), then
        the reset: the process runs on with no member id, no generation and (unless a Connect worker keeps
        its work across a reset) nothing owned."""
        c = s.clients[i]
        clients = list(s.clients)
        g = s.group
        if c.id == Id.CURRENT and g.records[i] is not None and not self.static_members:
            g = self._remove(g, clients, i)
        owned = c.owned if self.keep_work_on_reset else 0
        clients[i] = Client(proc=Proc.UP, topics=c.topics, owned=owned, ghost=c.ghost)
        return self._with(s, group=g, clients=tuple(clients), spend=True)

    def _late_expirable(self, s: State, i: int) -> bool:
        """``late-expiry``: a resumed member whose session was not refreshed, and that nothing parks."""
        c = s.clients[i]
        r = s.group.records[i]
        return c.woke and r is not None and not r.awaiting_sync and not (
            s.group.status == GS.PREPARING_REBALANCE and r.joined)
