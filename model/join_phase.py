"""The coordinator's join phase in the classic protocol (coordinator.md §3): one mixin of the classic model.

Theory of operation
-------------------
A join phase begins when the group moves to ``PREPARING_REBALANCE`` (``_prepare_rebalance``: parked
SyncGroups are answered REBALANCE_IN_PROGRESS, every member must rejoin). It ends in one of two ways:

* every member has rejoined (``_maybe_complete_join``), or
* the **rebalance timer** fires (``_rebalance_timer``) and the join phase completes without those that
  have not: a dynamic one is dropped, a static one stays, a generation behind (KAFKA-8220).

Completing it (``_complete_join``, Kafka's initNextGeneration) bumps the generation, elects a leader if
the old one is gone (the lowest slot that rejoined: a fixed rule where Kafka takes the first key of its
member hash map, any of them — flagged, docs/conformance.md, known model gap 15), answers every parked JoinGroup and computes the leader's assignment
(``compute_target``): with the cooperative protocol, a partition that changes owner is withheld from
its new owner for this round (KIP-429). A member leaves the group by LeaveGroup or session expiry
(``_remove``); a Connect group holds a departed worker's work back for the delay (KIP-415, ``_hold``).

The rebalance timer, stated as a rule. In Kafka it is the largest ``rebalance.timeout.ms`` of the
members (``max.poll.interval.ms`` for a consumer: minutes). A running member learns of the join phase
from its next heartbeat (seconds) and rejoins at its next poll, well within that timeout. So the timer is

* **free** (the fair step ``RebalanceTimeout``) when none of the members that have not rejoined can:
  each is crashed, paused, or holds an id the group no longer knows;
* **a perturbation** (``RebalanceTimeoutOvertakes``, fault ``timeout``, one unit of budget) when it
  overtakes a running member, one slower than ``max.poll.interval.ms``: the static-member-left-behind
  story. Left free, every running static member was a possible straggler at every join phase, and the
  state space of four members grew about 80 times (docs/scale.md) by runs Kafka shows only with a slow
  member.

This module is a mixin of :class:`~groupspec.model.classic.ClassicProtocol`: it uses its ``cfg``,
``delayed``, ``coordinator_assigns``, ``withhold_transfers``, ``alive``, ``metadata``,
``group_assignor``, ``withholds``, ``_set``, ``_with`` and ``_goto``. It imports only the model's core
and actions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, TypeVar, cast

from . import actions as A
from .core import AssignFn, Client, Config, Group, GroupStatus as GS, Id, Inbox, MemberMeta, Proc, Record, Reply, State

_V = TypeVar("_V")


class JoinPhase:
    """Prepare, time out and complete a join phase; remove a member; hold a departed worker's work."""

    if TYPE_CHECKING:  # what it uses of ClassicProtocol (module docstring)
        cfg: Config
        delayed: bool
        coordinator_assigns: bool
        withhold_transfers: bool
        _rebalance_timeout: A.RebalanceTimeout
        _rebalance_timeout_overtakes: A.RebalanceTimeoutOvertakes

        @staticmethod
        def alive(s: State, i: int) -> bool: ...
        def metadata(self, g: Group, members: list[int]) -> list[MemberMeta]: ...
        def group_assignor(self, g: Group) -> AssignFn: ...
        def withholds(self, g: Group) -> bool: ...
        @staticmethod
        def _set(tup: tuple[_V, ...], i: int, v: _V) -> tuple[_V, ...]: ...
        def _with(self, s: State, group: Group | None = None, clients: tuple[Client, ...] | None = None,
                  spend: bool = False) -> State: ...
        @staticmethod
        def _goto(g: Group, status: GS, **changes: object) -> Group: ...

    def _prepare_rebalance(self, g: Group, clients: list[Client]) -> Group:
        """Stable/CompletingRebalance -> PreparingRebalance: parked SyncGroups get REBALANCE_IN_PROGRESS."""
        records = list(g.records)
        for i, r in enumerate(records):
            if r is None:
                continue
            if r.awaiting_sync and clients[i].id == Id.CURRENT and clients[i].proc != Proc.DOWN:
                clients[i] = clients[i].but(inbox=Inbox(Reply.REBALANCE_IN_PROGRESS))
            keep = r.assignment if g.status == GS.STABLE else 0
            records[i] = r.but(joined=False, awaiting_sync=False, synced=False, assignment=keep)
        # (any new prepareRebalance also clears pendingSyncMembers, a replaced static member's stale id with it)
        return self._goto(g, GS.PREPARING_REBALANCE, records=tuple(records), target=None, stale_sync=False)

    def _remove(self, g: Group, clients: list[Client], i: int) -> Group:
        """Remove member ``i`` (LeaveGroup, session expiry): its process, if any, now holds a stale id."""
        r = g.records[i]
        assert r is not None
        if self.delayed and r.assignment and g.status in (GS.STABLE, GS.PREPARING_REBALANCE):
            # KIP-415: the departed member's partitions are lost; hold them back for the delay (added to
            # what is already held: one delay covers every worker that departs while it runs).
            g = self._hold(g, i, r.assignment)
        if clients[i].woke:
            clients[i] = clients[i].but(woke=False)  # late-expiry: its session is over now
        if clients[i].id == Id.CURRENT:
            parked = (r.joined and g.status == GS.PREPARING_REBALANCE) or r.awaiting_sync
            if parked and clients[i].proc != Proc.DOWN:
                # Its parked JoinGroup (or SyncGroup) is answered UNKNOWN_MEMBER_ID.
                clients[i] = clients[i].but(id=Id.STALE, inbox=Inbox(Reply.UNKNOWN_MEMBER_ID))
            else:
                clients[i] = clients[i].but(id=Id.STALE)
        records = self._set(g.records, i, None)
        leader = g.leader
        if leader == i:
            leader = next((k for k, rr in enumerate(records) if rr is not None), -1)
        g = g.but(records=records, leader=leader)
        if g.status in (GS.STABLE, GS.COMPLETING_REBALANCE):
            g = self._prepare_rebalance(g, clients)
        return self._maybe_complete_join(g, clients)

    def _maybe_complete_join(self, g: Group, clients: list[Client]) -> Group:
        if g.status != GS.PREPARING_REBALANCE or g.forming or g.pending:
            return g  # the initial delay runs, or a pending member id has not joined yet (model/formation.py)
        if all(r is None or r.joined for r in g.records):
            return self._complete_join(g, clients)
        return g

    def _complete_join(self, g: Group, clients: list[Client]) -> Group:
        """initNextGeneration: bump the generation, elect a leader if needed, answer parked JoinGroups."""
        records = list(g.records)
        for i, r in enumerate(records):
            if r is not None and not r.joined and not r.static:
                # A dynamic member that did not rejoin in time is dropped (coordinator.md §3.4).
                records[i] = None
                if clients[i].id == Id.CURRENT:
                    clients[i] = clients[i].but(id=Id.STALE)
                if self.delayed and r.assignment:
                    g = self._hold(g, i, r.assignment)  # KIP-415: it departed; its work is lost, held
        gen = g.generation + 1
        present = [i for i, r in enumerate(records) if r is not None]
        if not present:
            return self._goto(g, GS.EMPTY, generation=gen, leader=-1, records=tuple(records), target=None, held=0, held_for=-1)
        leader = g.leader
        if leader < 0 or records[leader] is None or not cast(Record, records[leader]).joined:
            leader = next(i for i in present if cast(Record, records[i]).joined)
        g = g.but(records=tuple(records), leader=leader, generation=gen)
        target = self.compute_target(g, present)
        for i in present:
            r = records[i]
            assert r is not None
            if r.joined and clients[i].id == Id.CURRENT and clients[i].proc != Proc.DOWN:
                clients[i] = clients[i].but(inbox=Inbox(Reply.JOIN, gen, target[i] if self.coordinator_assigns else 0))
            if clients[i].woke:
                clients[i] = clients[i].but(woke=False)  # every member's session timer restarts
            records[i] = r.but(
                joined=False, awaiting_sync=False, synced=False,
                assignment=target[i] if self.coordinator_assigns else 0,
            )
        g = self._goto(g, GS.COMPLETING_REBALANCE, records=tuple(records), target=target)
        if self.coordinator_assigns:
            g = self._goto(g, GS.STABLE)  # the assignment went out with the JoinGroup answers
        return g

    def compute_target(self, g: Group, present: list[int]) -> tuple[int, ...]:
        """The leader's assignment for the new generation (one bit mask per slot)."""
        cfg = self.cfg
        existing = g.partitions
        # KIP-415: while the delay runs, held work goes to nobody, not even to a departed worker that
        # came back in time (coordinator.md §6: it gets its work back at the scheduled rebalance, when
        # the delay is over; here the assignor then spreads the released work, see DelayExpired).
        held_back = g.held if self.delayed else 0
        meta = self.metadata(g, present)
        if held_back:
            meta = [(i, t, o & ~held_back, gen, st) for (i, t, o, gen, st) in meta]
        result = self.group_assignor(g)(cfg, meta, existing & ~held_back)
        if self.withholds(g) and self.withhold_transfers:
            # KIP-429: a partition that changes owner is withheld from its new owner this round; the
            # old owner revokes it and rejoins, and the next round gives it away.
            gaining = 0
            losing = 0
            for i in present:
                r = g.records[i]
                assert r is not None
                owned = r.owned
                gaining |= result[i] & ~owned
                losing |= owned & ~result[i]
            moving = gaining & losing
            if moving:
                for i in present:
                    r = g.records[i]
                    assert r is not None
                    result[i] &= ~(moving & ~r.owned)
        target = [0] * cfg.members
        for i, m in result.items():
            target[i] = m
        return tuple(target)

    def _rebalance_timer(self, s: State, perturb: bool) -> Iterator[tuple[A.Action, State]]:
        """The rebalance timer of the join phase under way: free, or overtaking a running member (module doc)."""
        g = s.group
        if not any(r is not None and r.joined for r in g.records):
            return
        live = [self.alive(s, k) for k, r in enumerate(g.records) if r is not None and not r.joined]
        action: A.Action
        if live and not any(live):
            action, spend = self._rebalance_timeout, False
        elif any(live) and perturb and "timeout" in self.cfg.faults:
            action, spend = self._rebalance_timeout_overtakes, True
        else:
            return
        clients = list(s.clients)
        g2 = self._complete_join(g, clients)
        yield action, self._with(s, group=g2, clients=tuple(clients), spend=spend)

    # -- timers and Connect's held-back work -------------------------------------------------------
    def _expire(self, s: State, i: int) -> State:
        clients = list(s.clients)
        g = self._remove(s.group, clients, i)
        return self._with(s, group=g, clients=tuple(clients))

    def _release_held(self, s: State) -> State:
        # The workers then find work nobody is assigned and rejoin (NoticeMetadata): the rebalance
        # Connect schedules at the end of the delay, which hands the released work out.
        return self._with(s, group=s.group.but(held=0, held_for=-1))

    @staticmethod
    def _hold(g: Group, i: int, work: int) -> Group:
        """KIP-415: hold back the work of departed member ``i`` (``held_for``: the first one held for)."""
        return g.but(held=g.held | work, held_for=i if g.held == 0 else g.held_for)
