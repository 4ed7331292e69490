"""The classic group protocol (JoinGroup / SyncGroup / Heartbeat), shared by its variants.

Theory of operation
-------------------
This module is the common text of the eager, static, cooperative, connect-delayed and
coordinator-assigns variants; each variant's own module sets the switches that make it that variant
and explains them. Read it as the protocol, step by step (coordinator.md §1–§5):

1. A consumer that is not in the group sends **JoinGroup** with its subscription (and, from
   KIP-429 on, the partitions it owns and its generation). Before it does, it runs *onJoinPrepare*:
   an **eager** member revokes everything it owns; a **cooperative** member keeps its partitions
   and only revokes those of topics it no longer subscribes to; a member whose generation was reset
   treats everything as *lost*.
2. The coordinator parks the JoinGroup and moves the group to ``PREPARING_REBALANCE``; members
   learn of the rebalance from their next **Heartbeat** (``REBALANCE_IN_PROGRESS``) and rejoin. The
   first member added to a group without a leader becomes the **leader**, and stays leader while it
   is a member.
3. When every member has rejoined (or the rebalance timeout drops those that did not), the join
   phase completes: the **generation** grows by one, the group moves to ``COMPLETING_REBALANCE``
   and every parked JoinGroup is answered. The leader's answer carries everyone's metadata and it
   computes the assignment with the group's **assignor**.
4. Every member sends **SyncGroup**; the leader's carries the assignment. The coordinator stores
   it, moves to ``STABLE`` and answers the parked SyncGroups, each with that member's partitions.
   Answers arrive in any order: that is where ownership could overlap.
5. On the answer (*onJoinComplete*) an eager member owns its new assignment. A cooperative member
   revokes what it owned but was not given and, if it revoked anything, rejoins at once: the
   follow-up round hands the freed partitions to their new owner, because the assignment of the
   first round *withheld* every partition that changes owner.
6. Offset commits carry the member id and generation; the coordinator accepts them only from a
   current member in the current generation (**fencing**), and not while completing a rebalance.

What is abstracted (and why it is safe to):

* Requests answered at once are handled in the same step as they are sent (an RPC). Only answers
  the coordinator *parks* (JoinGroup until the join phase completes, a follower's SyncGroup until
  the leader's) travel separately, in the client's *inbox*, and may arrive in any order.
* Real time is left out. By default so are the MEMBER_ID_REQUIRED two-step join and the initial
  rebalance delay, and this is **not** only a delay: in Kafka the initial delayed join (a timer even at
  delay 0) and a pending member id holding back completion (KIP-394) let several members form the first
  generation together, while here the join phase that starts from ``EMPTY`` completes at the first
  JoinGroup, so every first generation has one member. The faults ``initial-delay`` and
  ``two-step-join`` put both in (:mod:`groupspec.model.formation`).
* The coordinator's timers that remove a member whose process cannot answer — session timeout,
  pending-sync timeout, new-member join timeout — are one fair step, ``SessionExpired``. A member
  whose process is alive is only expired by the ``timeout`` perturbation, and by default neither the
  pending-sync timer forcing a rebalance that removes nobody (a static member replaced before its
  SyncGroup) nor the expiry of a member soon after it resumed from a long pause is a step: the faults
  ``sync-timeout`` and ``late-expiry`` put them in (:mod:`groupspec.model.formation`), as does
  ``sync-timeout`` for a live member too slow to send SyncGroup.
* A consumer whose poll loop stalls past ``max.poll.interval.ms`` (or whose process was paused that long)
  leaves the group from its heartbeat thread and resets, its process running on: the fault
  ``poll-timeout`` puts that step in (``PollTimeoutLeave``, :mod:`groupspec.model.formation`); without it
  a close and a restart (``LeaveGroup``, ``Start``) stand for it.
* The rebalance timeout completes a join phase for free (``RebalanceTimeout``) only when none of the
  members that have not rejoined can (crashed, paused, or holding an id the group no longer knows). A
  running member hears of the join phase within a heartbeat and rejoins at its next poll, long before
  ``max.poll.interval.ms``; the timer overtaking it (a member slower than that, KAFKA-8220's static
  member left behind) is the ``timeout`` perturbation ``RebalanceTimeoutOvertakes``.
* A crashed *dynamic* consumer restarts (``Start``) only after the coordinator dropped its old
  member id; a quick restart of a dynamic member is the same as a new member joining while an old
  one crashed, which other slots cover.
* A member that learns its id is unknown forgets its partitions at once (Kafka reports them lost at
  its next onJoinPrepare; it cannot commit in between because it is no longer ``STABLE``).
"""
from __future__ import annotations

from typing import Hashable, Iterator, TypeVar, cast

from . import actions as A
from .assignors import ASSIGNORS, COOPERATIVE_CAPABLE, EQUIVARIANT
from .formation import FormationRules
from .join_phase import JoinPhase
from .properties import ClassicObservations
from .spec import BASE_FAULTS, COMPILED_CLASSIC, SpecBase
from .symmetry import Canonicalizer, orbit_size, plain_key
from .core import TIMING_FAULTS
from .core import (
    CONSUMER_FLIGHT_FAULTS,
    AssignFn,
    NO_GENERATION,
    Client,
    Config,
    Group,
    GroupStatus as GS,
    Id,
    Inbox,
    MemberMeta,
    MemberStatus as MS,
    Proc,
    Record,
    Reply,
    State,
    check_transition,
)

_V = TypeVar("_V")


class ClassicProtocol(JoinPhase, FormationRules, ClassicObservations, SpecBase):
    """A variant of the classic protocol; subclasses set the switches below."""

    name = "classic"
    encoding = COMPILED_CLASSIC  # the kernel reads the switches below (not keep_work_on_reset: see compiled_encoding)
    z3 = True
    summary = ""
    rebalance = "eager"  # "eager" or "cooperative": what onJoinPrepare / onJoinComplete do
    static_members = False  # KIP-345: every member has a group.instance.id (its slot)
    coordinator_assigns = False  # the coordinator computes the assignment (no SyncGroup round)
    delayed = False  # KIP-415: a departed member's partitions are held back for a delay
    keep_work_on_reset = False  # Connect: a worker keeps (and reports) its work across a member-id reset
    # Switches that break the protocol on purpose (see groupspec.model.broken).
    revoke_before_join = True  # eager: revoke everything before JoinGroup
    withhold_transfers = True  # cooperative: never hand a still-owned partition to a new owner
    fence_commits = True  # commits validated by member id and generation
    broken = False
    bug = ""  # for broken variants: the bug, in one sentence
    expect_violation = ""  # for broken variants: the property the checker must find violated
    canon: Canonicalizer

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        name = getattr(self, "forced_assignor", None) or cfg.assignor
        if self.rebalance == "cooperative" and name not in COOPERATIVE_CAPABLE:
            # Kafka refuses it: the assignor supports only EAGER (its consumers run the eager protocol).
            raise ValueError(f"the {name} assignor supports only the eager protocol; {self.name} needs a "
                             f"cooperative one ({', '.join(sorted(COOPERATIVE_CAPABLE - {'flappy'}))})")
        self.assignor_name = name
        self.assignor = ASSIGNORS[name]
        self.symmetric = name in EQUIVARIANT
        self.canon = Canonicalizer(cfg, self.symmetric)
        n = cfg.members
        self._actions = {
            cls: tuple(cls(i) for i in range(n))
            for cls in (
                A.SendJoinGroup, A.ReceiveJoinResponse, A.ReceiveSyncResponse, A.ReceiveError,
                A.Heartbeat, A.Resume, A.GhostFenced, A.NoticeMetadata, A.SessionExpired,
                A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause, A.ChangeSubscription,
            )
        }
        self._rebalance_timeout = A.RebalanceTimeout()
        self._rebalance_timeout_overtakes = A.RebalanceTimeoutOvertakes()
        self._delay_expired = A.DelayExpired()
        self._add_partition = A.AddPartition()
        self._formation_init()  # faults initial-delay, two-step-join, sync-timeout, late-expiry (model/formation.py)
        flight = sorted(CONSUMER_FLIGHT_FAULTS & set(cfg.faults))
        if flight:
            raise ValueError(f"fault {flight[0]!r} is modelled for the KIP-848 consumer protocol only, not {self.name}")

    # ---------------------------------------------------------------------------------------------
    # Initial states
    # ---------------------------------------------------------------------------------------------
    def init_states(self) -> list[State]:
        """Every consumer is started (but one held back when ``join`` is a fault), none has joined."""
        cfg = self.cfg
        n = cfg.members
        late = "join" in cfg.faults and n > 1
        clients = tuple(
            Client(proc=Proc.DOWN if (late and i == n - 1) else Proc.UP, topics=cfg.all_topics)
            for i in range(n)
        )
        existing = (1 << cfg.partitions) - 1
        if "partitions" in cfg.faults and cfg.partitions > cfg.topics:
            existing &= ~(1 << (cfg.partitions - 1))  # the last partition is added later
        group = Group(records=(None,) * n, partitions=existing)
        return [State(group=group, clients=clients, budget=cfg.budget)]

    # ---------------------------------------------------------------------------------------------
    # Helpers
    # ---------------------------------------------------------------------------------------------
    @staticmethod
    def alive(s: State, i: int) -> bool:
        """The coordinator's member ``i`` has a running process holding its current member id."""
        c = s.clients[i]
        return c.proc == Proc.UP and c.id == Id.CURRENT and s.group.records[i] is not None

    def live_member(self, s: State, i: int) -> bool:
        """A member of the current generation: the coordinator knows the id this process holds.

        Paused or not. A static member that a completed join phase left behind (kept in the group by
        the rebalance timeout without rejoining, KAFKA-8220) is *not* one until it rejoins: its
        generation is older than the group's and no answer of the current generation is on its way.
        Until its next heartbeat tells it ILLEGAL_GENERATION it is a zombie, and fencing guards it.
        """
        c = s.clients[i]
        if c.proc == Proc.DOWN or c.id != Id.CURRENT or s.group.records[i] is None:
            return False
        g = s.group
        if NO_GENERATION < c.generation < g.generation:
            ib = c.inbox
            return ib is not None and ib.reply == Reply.JOIN and ib.generation == g.generation
        return True

    @staticmethod
    def _set(tup: tuple[_V, ...], i: int, v: _V) -> tuple[_V, ...]:
        return tup[:i] + (v,) + tup[i + 1 :]

    def _with(self, s: State, group: Group | None = None, clients: tuple[Client, ...] | None = None,
              spend: bool = False) -> State:
        g = group if group is not None else s.group
        return State(group=g, clients=clients if clients is not None else s.clients, budget=s.budget - (1 if spend else 0))

    @staticmethod
    def _goto(g: Group, status: GS, **changes: object) -> Group:
        """Move the group to ``status``; an illegal move (coordinator.md §1.3) raises, naming both."""
        check_transition(g.status, status)
        return g.but(status=status, **changes)  # type: ignore[arg-type]  # changes: Group's fields, as callers name them

    def metadata(self, g: Group, members: list[int]) -> list[MemberMeta]:
        out = []
        for i in members:
            r = g.records[i]
            assert r is not None
            out.append((i, r.topics, r.owned, r.generation, r.static))
        return out

    # Hooks for a group whose members run different protocols (model/upgrade.py); here one for all:
    # the protocol member c runs, the assignor the group selected, whether it withholds moving partitions.
    def member_rebalance(self, c: Client) -> str:
        return self.rebalance

    def group_assignor(self, g: Group) -> AssignFn:
        return self.assignor

    def withholds(self, g: Group) -> bool:
        return self.rebalance == "cooperative"

    # ---------------------------------------------------------------------------------------------
    # Requests (each handled in the step that sends it)
    # ---------------------------------------------------------------------------------------------
    def _join(self, s: State, i: int) -> State:
        cfg = self.cfg
        clients = list(s.clients)
        c = clients[i]
        g = s.group
        sub = cfg.subscribed_partitions(c.topics, g.partitions)
        # onJoinPrepare (coordinator.md §5.4)
        previous = c.owned  # what a sticky eager member reports in its userData
        if (c.generation == NO_GENERATION or c.id == Id.NONE) and not self.keep_work_on_reset:
            owned = 0  # lost
            previous = 0
        elif self.member_rebalance(c) == "eager":
            owned = 0 if self.revoke_before_join else c.owned
        else:
            owned = c.owned & sub  # cooperative: revoke only partitions of dropped topics
        c = c.but(owned=owned, status=MS.PREPARING_REBALANCE, rejoin=False)
        reported_owned = owned if self.member_rebalance(c) == "cooperative" else previous
        reported_gen = c.generation
        r = g.records[i]
        if c.id == Id.STALE:
            if self.static_members and r is not None:
                # The instance id now maps to another member id: FENCED_INSTANCE_ID is fatal.
                clients[i] = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)
            else:
                # UNKNOWN_MEMBER_ID (coordinator.md §2, member validation): also for a static member whose
                # instance expired, so the coordinator no longer knows its instance id. It resets and
                # joins again as a new member (one more rebalance), as the heartbeat path does.
                clients[i] = c.but(id=Id.NONE, generation=NO_GENERATION, owned=0, status=MS.UNJOINED)
            return self._with(s, clients=tuple(clients))
        if c.id == Id.NONE and self.two_step:
            return self._member_id_required(s, clients, i, c)  # KIP-394 (model/formation.py)
        if c.id == Id.PENDING:
            unknown = self._pending_unknown(s, clients, i, c)
            if unknown is not None:
                return unknown
            g = g.but(pending=g.pending & ~(1 << i))  # the pending id becomes a member's
        meta = (c.topics, reported_owned, reported_gen)
        if c.id == Id.NONE and r is not None and self.static_members:
            return self._static_replace(s, clients, i, c, meta)
        new = c.id in (Id.NONE, Id.PENDING)
        if new:
            r = Record(static=self.static_members)
            c = c.but(id=Id.CURRENT)
        assert r is not None
        same = (r.topics, r.owned, r.generation) == meta and not new
        records = self._set(g.records, i, r.but(topics=meta[0], owned=meta[1], generation=meta[2]))
        g = g.but(records=records)
        clients[i] = c
        if g.status == GS.EMPTY:
            g = self._goto(g, GS.PREPARING_REBALANCE, forming=self.initial_delay)  # KIP-134: initial delayed join
        elif g.status in (GS.STABLE, GS.COMPLETING_REBALANCE):
            immediate = same and (g.status == GS.COMPLETING_REBALANCE or g.leader != i)
            if immediate:
                # A follower (or anyone while completing) rejoining with the same metadata: answered at
                # once with the current generation; it then syncs as usual.
                clients[i] = c.but(inbox=Inbox(Reply.JOIN, g.generation))
                return self._with(s, group=g, clients=tuple(clients))
            g = self._prepare_rebalance(g, clients)
        if g.leader < 0:
            g = g.but(leader=i)
        g = g.but(records=self._set(g.records, i, cast(Record, g.records[i]).but(joined=True)))
        g = self._maybe_complete_join(g, clients)
        return self._with(s, group=g, clients=tuple(clients))

    def _static_replace(self, s: State, clients: list[Client], i: int, c: Client, meta: tuple[int, int, int]) -> State:
        """KIP-345: a known group.instance.id joins with no member id: the old id is fenced."""
        g = s.group
        r = g.records[i]
        assert r is not None
        c = c.but(id=Id.CURRENT)
        r = r.but(topics=meta[0], owned=meta[1], generation=meta[2])
        if g.status == GS.STABLE:
            # Same selected protocol: no rebalance. JoinGroup is answered with the current generation,
            # and the SyncGroup that follows returns the stored assignment.
            a = r.assignment
            if a & ~self.cfg.subscribed_partitions(c.topics, g.partitions | a):
                # The stored assignment has a partition outside the restarted process's (narrower)
                # subscription: onJoinComplete requests a rejoin and applies nothing (coordinator.md
                # §5.7), exactly as in _receive_sync; the rejoin then rebalances.
                clients[i] = c.but(generation=g.generation, status=MS.STABLE, owned=0, rejoin=True)
            else:
                clients[i] = c.but(generation=g.generation, status=MS.STABLE, owned=a)
            # sync-timeout: the old id stays in pendingSyncMembers if it had not synced (model/formation.py)
            stale = g.stale_sync or (self.sync_timer and not r.synced)
            g = g.but(records=self._set(g.records, i, r.but(synced=True)), stale_sync=stale)
            return self._with(s, group=g, clients=tuple(clients))
        clients[i] = c
        g = g.but(records=self._set(g.records, i, r.but(awaiting_sync=False)))
        if g.status == GS.COMPLETING_REBALANCE:
            g = self._prepare_rebalance(g, clients)  # forced (KAFKA-9801)
        g = g.but(records=self._set(g.records, i, cast(Record, g.records[i]).but(joined=True)))
        g = self._maybe_complete_join(g, clients)
        return self._with(s, group=g, clients=tuple(clients))

    def _sync(self, s: State, i: int, clients: list[Client]) -> State:
        """The client at ``i`` (in COMPLETING_REBALANCE) sends SyncGroup."""
        g = s.group
        c = clients[i]
        r = g.records[i]
        if r is None or c.id != Id.CURRENT:
            clients[i] = c.but(id=Id.NONE, generation=NO_GENERATION, owned=0, status=MS.UNJOINED)
            return self._with(s, clients=tuple(clients))
        if c.generation != g.generation:
            clients[i] = c.but(generation=NO_GENERATION, owned=0, status=MS.UNJOINED)  # ILLEGAL_GENERATION
            return self._with(s, clients=tuple(clients))
        if g.status == GS.PREPARING_REBALANCE:
            clients[i] = c.but(rejoin=True)
            return self._with(s, clients=tuple(clients))
        if g.status == GS.STABLE:
            clients[i] = c.but(inbox=Inbox(Reply.SYNC, g.generation, r.assignment), woke=False)
            g = g.but(records=self._set(g.records, i, r.but(synced=True)))
            return self._with(s, group=g, clients=tuple(clients))
        assert g.status == GS.COMPLETING_REBALANCE
        if i != g.leader:
            g = g.but(records=self._set(g.records, i, r.but(awaiting_sync=True, synced=True)))
            return self._with(s, group=g, clients=tuple(clients))
        # The leader's SyncGroup: store the assignment and answer every parked SyncGroup.
        target = g.target
        assert target is not None
        records = list(g.records)
        for k, rk in enumerate(records):
            if rk is None:
                continue
            if rk.awaiting_sync or k == i:
                if clients[k].id == Id.CURRENT and clients[k].proc != Proc.DOWN:
                    clients[k] = clients[k].but(inbox=Inbox(Reply.SYNC, g.generation, target[k]), woke=False)
            records[k] = rk.but(assignment=target[k], awaiting_sync=False, synced=rk.synced or k == i)
        g = self._goto(g, GS.STABLE, records=tuple(records))
        return self._with(s, group=g, clients=tuple(clients))

    # ---------------------------------------------------------------------------------------------
    # The transition relation
    # ---------------------------------------------------------------------------------------------
    def successors(self, s: State) -> Iterator[tuple[A.Action, State]]:
        """Every enabled action and the state it leads to, in a fixed order."""
        cfg = self.cfg
        g = s.group
        acts = self._actions
        perturb = s.budget > 0
        faults = cfg.faults
        for i, c in enumerate(s.clients):
            r = g.records[i]
            if c.proc == Proc.UP:
                inbox = c.inbox
                if inbox is not None:
                    if inbox.reply == Reply.JOIN:
                        yield acts[A.ReceiveJoinResponse][i], self._receive_join(s, i)
                    elif inbox.reply == Reply.SYNC:
                        yield acts[A.ReceiveSyncResponse][i], self._receive_sync(s, i)
                    else:
                        yield acts[A.ReceiveError][i], self._receive_error(s, i)
                else:
                    if c.status != MS.PREPARING_REBALANCE and (c.status == MS.UNJOINED or c.rejoin):
                        yield acts[A.SendJoinGroup][i], self._join(s, i)
                    if c.status in (MS.STABLE, MS.COMPLETING_REBALANCE) and c.id != Id.NONE:
                        t = self._heartbeat(s, i)
                        if t is not None:
                            yield acts[A.Heartbeat][i], t
                    if (
                        ("partitions" in faults or self.delayed) and (g.leader == i or self.delayed)
                        and c.status == MS.STABLE and not c.rejoin
                        and g.status == GS.STABLE and self.alive(s, i) and self._unassigned_new(s)
                    ):
                        # The leader notices work nobody is assigned (a topic grew). A Connect worker,
                        # leader or not, rejoins on its own when the delay in its assignment is over or
                        # the connector's task count changed (it reads the config topic).

                        yield acts[A.NoticeMetadata][i], self._with(
                            s, clients=self._set(s.clients, i, c.but(rejoin=True))
                        )
            elif c.proc == Proc.PAUSED:
                woke = self.late_expiry and c.id == Id.CURRENT and r is not None  # its session may still run out
                yield acts[A.Resume][i], self._with(s, clients=self._set(s.clients, i, c.but(proc=Proc.UP, woke=woke)))
            if c.ghost is not None:
                yield acts[A.GhostFenced][i], self._with(s, clients=self._set(s.clients, i, c.but(ghost=None)))
            if r is not None and not self.alive(s, i) and not (g.status == GS.PREPARING_REBALANCE and r.joined) \
                    or c.woke and self._late_expirable(s, i):
                yield acts[A.SessionExpired][i], self._expire(s, i)
            if perturb:
                yield from self._perturbations(s, i, c, r)
        if g.status == GS.PREPARING_REBALANCE and not g.forming:
            yield from self._rebalance_timer(s, perturb)  # model/join_phase.py
        if self.delayed and g.held:
            yield self._delay_expired, self._release_held(s)
        if g.forming or g.pending or g.stale_sync or self.sync_timer:
            yield from self._formation_steps(s)
        if perturb and "partitions" in faults and g.partitions != (1 << cfg.partitions) - 1:
            p = (~g.partitions & ((1 << cfg.partitions) - 1)) & -(~g.partitions & ((1 << cfg.partitions) - 1))
            yield self._add_partition, self._with(s, group=g.but(partitions=g.partitions | p), spend=True)

    def _perturbations(self, s: State, i: int, c: Client, r: Record | None) -> Iterator[tuple[A.Action, State]]:
        faults = self.cfg.faults
        acts = self._actions
        if "join" in faults and (
            (c.proc == Proc.DOWN and (r is None or self.static_members) and not s.group.pending >> i & 1)
            or (c.proc == Proc.PAUSED and self.static_members and "zombie" in faults and c.ghost is None)
        ):
            yield acts[A.Start][i], self._start(s, i)
        if c.proc == Proc.UP:
            if "leave" in faults:
                yield acts[A.LeaveGroup][i], self._leave(s, i)
            if "zombie" in faults and c.id == Id.CURRENT:
                yield acts[A.Pause][i], self._with(s, clients=self._set(s.clients, i, c.but(proc=Proc.PAUSED)), spend=True)
            if "subscription" in faults and c.status == MS.STABLE and c.id == Id.CURRENT and self.cfg.topics > 1:
                last = 1 << (self.cfg.topics - 1)
                c2 = c.but(topics=c.topics ^ last, rejoin=True)
                yield acts[A.ChangeSubscription][i], self._with(s, clients=self._set(s.clients, i, c2), spend=True)
        if c.proc != Proc.DOWN and "crash" in faults:
            crashed = self._set(s.clients, i, Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost))
            yield acts[A.Crash][i], self._with(s, clients=crashed, spend=True)
        if "timeout" in faults and r is not None and self.alive(s, i):
            clients = list(s.clients)
            g = self._remove(s.group, clients, i)
            yield acts[A.ExpireLive][i], self._with(s, group=g, clients=tuple(clients), spend=True)
        if self.poll_timeout:
            yield from self._poll_timeout_steps(s, i)  # poll-timeout (model/formation.py)

    def _unassigned_new(self, s: State) -> bool:
        g = s.group
        assigned = 0
        wanted = 0
        for k, r in enumerate(g.records):
            if r is not None:
                assigned |= r.assignment | r.owned  # withheld partitions are still owned: not new
                wanted |= self.cfg.subscribed_partitions(r.topics, g.partitions)
        return bool(wanted & ~assigned & ~g.held)

    # -- client-side handlers ---------------------------------------------------------------------
    def _receive_join(self, s: State, i: int) -> State:
        c = s.clients[i]
        inbox = c.inbox
        assert inbox is not None
        clients = list(s.clients)
        if self.coordinator_assigns:
            clients[i] = c.but(inbox=None, generation=inbox.generation, status=MS.STABLE, owned=inbox.assignment)
            return self._with(s, clients=tuple(clients))
        clients[i] = c.but(inbox=None, generation=inbox.generation, status=MS.COMPLETING_REBALANCE)
        return self._sync(s, i, clients)

    def _receive_sync(self, s: State, i: int) -> State:
        """onJoinComplete (coordinator.md §5.7)."""
        c = s.clients[i]
        inbox = c.inbox
        assert inbox is not None
        a = inbox.assignment
        sub = self.cfg.subscribed_partitions(c.topics, s.group.partitions | a)
        if a & ~sub:
            # An assigned partition is not in the subscription: rejoin, apply nothing.
            c2 = c.but(inbox=None, status=MS.STABLE, rejoin=True)
        elif self.member_rebalance(c) == "cooperative":
            revoked = c.owned & ~a
            c2 = c.but(inbox=None, status=MS.STABLE, owned=a, rejoin=c.rejoin or bool(revoked))
        else:
            c2 = c.but(inbox=None, status=MS.STABLE, owned=a)
        return self._with(s, clients=self._set(s.clients, i, c2))

    def _receive_error(self, s: State, i: int) -> State:
        c = s.clients[i]
        assert c.inbox is not None
        reply = c.inbox.reply
        if reply == Reply.REBALANCE_IN_PROGRESS:
            c2 = c.but(inbox=None, rejoin=True)
        elif reply == Reply.UNKNOWN_MEMBER_ID:
            c2 = c.but(inbox=None, id=Id.NONE, generation=NO_GENERATION, owned=0, status=MS.UNJOINED)
        else:  # FENCED_INSTANCE_ID: fatal
            c2 = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)
        return self._with(s, clients=self._set(s.clients, i, c2))

    def _heartbeat(self, s: State, i: int) -> State | None:
        """A heartbeat; None when the answer is NONE and nothing changes (a stutter)."""
        g = s.group
        c = s.clients[i]
        r = g.records[i]
        if c.id == Id.STALE or r is None:
            if self.static_members and r is not None:
                c2 = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)  # FENCED_INSTANCE_ID
            else:
                c2 = c.but(id=Id.NONE, generation=NO_GENERATION, owned=0, status=MS.UNJOINED, rejoin=False)
        elif c.generation != g.generation:
            c2 = c.but(generation=NO_GENERATION, owned=0, status=MS.UNJOINED, rejoin=False)  # ILLEGAL_GENERATION
        elif g.status == GS.PREPARING_REBALANCE and c.status == MS.STABLE and not c.rejoin:
            c2 = c.but(rejoin=True, woke=False)  # REBALANCE_IN_PROGRESS (accepted: the session is refreshed)
        elif c.woke:
            c2 = c.but(woke=False)  # late-expiry: accepted, its session is refreshed
        else:
            return None
        return self._with(s, clients=self._set(s.clients, i, c2))

    # -- perturbations ----------------------------------------------------------------------------
    def _start(self, s: State, i: int) -> State:
        c = s.clients[i]
        ghost = c.ghost
        if c.proc == Proc.PAUSED:
            ghost = (c.generation, c.owned)  # the old process lives on, paused: a zombie
        fresh = Client(proc=Proc.UP, topics=c.topics or self.cfg.all_topics, ghost=ghost)
        clients = list(s.clients)
        clients[i] = fresh
        return self._with(s, clients=tuple(clients), spend=True)

    def _leave(self, s: State, i: int) -> State:
        c = s.clients[i]
        clients = list(s.clients)
        clients[i] = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)
        g = s.group
        if c.id == Id.CURRENT and g.records[i] is not None and not self.static_members:
            g = self._remove(g, clients, i)
        elif c.id == Id.PENDING and g.pending >> i & 1:
            g = g.but(pending=g.pending & ~(1 << i))  # the pending id is dropped
            if g.status in (GS.STABLE, GS.COMPLETING_REBALANCE):
                # Kafka 4.3.1 (classicGroupLeaveToClassicGroup): a pending member that leaves counts as a member
                # that left, so a Stable or CompletingRebalance group rebalances (the Scala coordinator did not)
                g = self._prepare_rebalance(g, clients)
            g = self._maybe_complete_join(g, clients)
        clients[i] = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)
        return self._with(s, group=g, clients=tuple(clients), spend=True)

    # ---------------------------------------------------------------------------------------------
    # The public interface used by the checker, the proofs and the tests
    # ---------------------------------------------------------------------------------------------
    has_generations = True

    @classmethod
    def applicable_faults(cls) -> frozenset[str]:
        """Every fault, and the group formation and timer faults (model/formation.py) for the correct variants
        written on this page's rules alone (not the protocol vote's, ``python_only``): ``two-step-join`` not for
        static members (they never get MEMBER_ID_REQUIRED), ``sync-timeout`` not where the coordinator assigns
        (no SyncGroup)."""
        if cls.broken or cls.python_only:
            return BASE_FAULTS
        timing = set(TIMING_FAULTS)
        if cls.static_members:
            timing.discard("two-step-join")
        if cls.coordinator_assigns:
            timing.discard("sync-timeout")
        return BASE_FAULTS | timing

    def compiled_encoding(self) -> str | None:
        """The classic kernel, but not for a Connect worker that keeps its work across a reset."""
        return None if self.keep_work_on_reset else super().compiled_encoding()

    def orbit_size(self, s: State) -> int:
        """Concrete states ``s``'s key stands for (``symmetry.orbit_size``)."""
        return orbit_size(s, self.cfg, self.canon)

    def key(self, s: State) -> Hashable:
        """The explorer's key for ``s``: generations up to a shift, slots and partitions up to symmetry."""
        return self.canon.key(s)

    def exact_key(self, s: State) -> Hashable:
        """Generations up to a shift, and nothing else: member and partition labels are kept."""
        return plain_key(s)

    def enabled(self, s: State) -> list[A.Action]:
        return [a for a, _t in self.successors(s)]

    def step(self, s: State, a: A.Action) -> State:
        for b, t in self.successors(s):
            if b == a:
                return t
        raise ValueError(f"{a!r} is not enabled")

    def commit_accepted(self, s: State, i: int, ghost: bool = False) -> bool:
        """Would the coordinator accept an offset commit from process ``i`` (or its ghost)?

        The client commits only while it believes it is STABLE (``generationIfStable``), with its
        member id and generation (coordinator.md §2.6).
        """
        g = s.group
        if g.status == GS.DEAD:
            return False
        if not self.fence_commits:
            return True
        if ghost:
            return False  # its member id was replaced: FENCED_INSTANCE_ID
        c = s.clients[i]
        r = g.records[i]
        if c.id != Id.CURRENT or r is None:
            return False
        if c.generation != g.generation:
            return False
        return g.status in (GS.STABLE, GS.PREPARING_REBALANCE)

    def converged(self, s: State) -> bool:
        """Stable, every member alive and STABLE with owned = assigned = the assignor's complete answer."""
        g = s.group
        if g.status == GS.EMPTY and all(c.proc == Proc.DOWN and c.ghost is None for c in s.clients):
            return not g.held and not g.pending and all(r is None for r in g.records)  # everyone is gone
        if g.status != GS.STABLE or g.held or g.pending or g.stale_sync:
            return False
        assigned = 0
        wanted = 0
        present: list[int] = []
        for i, c in enumerate(s.clients):
            r = g.records[i]
            if c.proc == Proc.PAUSED or c.ghost is not None or c.woke:
                return False
            if c.proc == Proc.UP and (c.id != Id.CURRENT or r is None):
                return False
            if r is None:
                continue
            if not self.alive(s, i):
                return False
            if c.status != MS.STABLE or c.inbox is not None or c.rejoin or c.generation != g.generation:
                return False
            if c.owned != r.assignment:
                return False
            sub = self.cfg.subscribed_partitions(c.topics, g.partitions)
            if r.assignment & ~sub or r.assignment & assigned:
                return False
            assigned |= r.assignment
            wanted |= sub
            present.append(i)
        if assigned != wanted:
            return False
        # A fixpoint of the assignor: re-running it on what the members own changes nothing.
        # (present: slots with a record, as the loop above checked)
        meta = [(i, s.clients[i].topics, g.records[i].assignment, g.generation, g.records[i].static)  # type: ignore[union-attr]
                for i in present]
        again = self.group_assignor(g)(self.cfg, meta, g.partitions)
        return all(again[i] == g.records[i].assignment for i in present)  # type: ignore[union-attr]
