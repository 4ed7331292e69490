"""Migration between the protocols (``classic-to-consumer``): classic members inside a consumer group,
and the online upgrade and downgrade of one group, as Kafka's group coordinator does them (4.0+).

The protocol
------------
A group id names one group at the coordinator, of one *type*: a **classic** group (JoinGroup /
SyncGroup / Heartbeat, a leader computes the assignment; see :mod:`~groupspec.model.classic`) or a
**consumer** group (ConsumerGroupHeartbeat, the coordinator computes the assignment; see
:mod:`~groupspec.model.consumer`). A rolling upgrade restarts the consumers one by one with
``group.protocol=consumer``; a rollback restarts them with ``group.protocol=classic``. The broker's
``group.consumer.migration.policy`` (``bidirectional``, the default, ``upgrade``, ``downgrade``,
``disabled``) says which conversions the coordinator may make. This page models ``bidirectional``.

1. **Online upgrade** (``GroupMetadataManager.getOrMaybeCreateConsumerGroup``). A ConsumerGroupHeartbeat
   with member epoch 0 arrives for a group id that names a classic group. An empty classic group is
   deleted and a new consumer group starts (group epoch 0). Otherwise, if the policy allows upgrades
   (``validateOnlineUpgrade``), the classic group is *converted* (``convertToConsumerGroup``): every
   parked JoinGroup and SyncGroup is answered REBALANCE_IN_PROGRESS, and
   ``ConsumerGroup.fromClassicGroup`` makes one consumer-group member per classic member: STABLE, member
   epoch and previous epoch = the classic **generation**, assigned partitions = the member's stored
   classic assignment, which is also its target; group epoch = assignment epoch = the generation. The
   heartbeat is then handled as any join (a new member: the group epoch is bumped, a new target).
2. **Classic members in a consumer group** keep speaking JoinGroup/SyncGroup/Heartbeat; the coordinator
   answers them from the consumer group (``classicGroupJoinToConsumerGroup`` and its siblings):

   * *JoinGroup* creates or updates the member (a new member bumps the group epoch), reconciles it
     (``CurrentAssignmentBuilder``) with the owned partitions its subscription metadata reports, and
     answers at once (no barrier, no leader) with **generation = member epoch**;
   * *SyncGroup* with another generation is ILLEGAL_GENERATION; if the group epoch is ahead of the
     member epoch and the member is not revoking, REBALANCE_IN_PROGRESS; else it answers the member's
     **assigned partitions** (never the target: partitions still held elsewhere are not given);
   * *Heartbeat* with another generation is ILLEGAL_GENERATION; it answers REBALANCE_IN_PROGRESS when
     the group epoch is ahead of the member epoch, the member must revoke (UNREVOKED_PARTITIONS), or
     partitions it waits for have been released — **revocation goes through a rejoin**: the classic
     (cooperative) client revokes what its SyncGroup answer no longer lists and rejoins, and its next
     JoinGroup, reporting fewer owned partitions, is the acknowledgement;
   * offset commits are checked against the member epoch as a generation (ILLEGAL_GENERATION).
3. **Online downgrade** (``consumerGroupFenceMember`` → ``convertToClassicGroup``). When a member using
   the consumer protocol leaves or is removed and every remaining member (at least one) uses the
   classic protocol, and the policy allows downgrades, ``ClassicGroup.fromConsumerGroup`` makes a
   classic group STABLE at generation = the group epoch with the remaining members, each storing its
   **target** assignment, and ``prepareRebalance`` starts a join phase at once: every member learns
   REBALANCE_IN_PROGRESS (or ILLEGAL_GENERATION if its member epoch was behind) at its next heartbeat.

The classic group is the cooperative protocol (KIP-429; the assignment the leader computes withholds a
partition another member still reports owned; a member that revoked something rejoins), with the
details that matter here: ``prepareRebalance`` in COMPLETING_REBALANCE empties every stored assignment
(``resetAndPropagateAssignmentWithError``), the leader's SyncGroup stores every member's new assignment
and makes the group STABLE before the followers have received theirs, and a classic commit is
accepted only in the member's generation and not while the group is COMPLETING_REBALANCE.

What is abstracted (and why it is safe to):

* The consumer-protocol side is :mod:`~groupspec.model.consumer`'s (same heartbeat, reconciliation,
  fencing); its abstractions apply. Its uniform assignor computes targets; the classic leader runs
  the model's sticky assignor (CooperativeStickyAssignor) with cooperative withholding.
* Upgrade and downgrade are one step each: the process closes (revoking its partitions, LeaveGroup or
  a heartbeat with epoch -1) and restarts speaking the other protocol (budgeted perturbations: a rolling
  upgrade is a sequence of them).
* A classic JoinGroup parked in a classic group is answered when the last member has joined (members
  that do not rejoin are removed by their session timeout: the model's processes that cannot rejoin
  are the paused and the crashed ones). A member id is tied to its slot; a member that the classic
  coordinator removed is told UNKNOWN_MEMBER_ID at its next request and rejoins without partitions (a
  consumer group instead re-creates a classic member whose JoinGroup carries an unknown member id).
* A consumer-protocol member removed while paused heartbeats later to a group that may be classic again:
  GROUP_ID_NOT_FOUND, which the client treats as fatal (it gives its partitions up and stops).
* One topic, no subscription changes (``subscription`` and ``partitions`` faults are refused).
"""
from __future__ import annotations

from collections.abc import Hashable
from typing import Iterator

from . import actions as A
from .spec import COMPILED_MIGRATION
from .assignors import sticky
from .consumer import (NOT_MEMBER, Consumer, ConsumerGroup, ConsumerGroupHeartbeat, ConsumerState, MemberState,
                       RevokePartitions, relative_epoch)
from .core import Config, GroupStatus, Proc, bits
from .migration_state import (ClassicGroup, ClassicHeartbeat, Client, Downgrade, JoinGroup, Kind, MigrationState, MMember,
                              Phase, SyncGroup, Upgrade)
from .migration_view import MigrationTimeline

SUPPORTED = frozenset({"join", "leave", "crash", "timeout", "zombie"})

# the page and the vocabulary it names (model/migration_state.py), which the tools read from this page
__all__ = ["ClassicToConsumer", "ClassicToConsumerAcked", "SUPPORTED", "ClassicGroup", "ClassicHeartbeat", "Client",
           "Downgrade", "JoinGroup", "Kind", "MigrationState", "MMember", "Phase", "SyncGroup", "Upgrade"]


class ClassicToConsumer(MigrationTimeline, Consumer[MigrationState]):
    """A group of classic consumers upgraded (and rolled back) online, one process at a time."""

    name = "classic-to-consumer"
    encoding = COMPILED_MIGRATION
    encoded = Consumer.encoded + (
        "_join", "_sync", "_heartbeat_classic", "_consumer_heartbeat", "_upgrade", "_settle", "_classic_remove",
        "_prepare", "_maybe_complete", "cooperative_assignment", "_drop", "_restart", "_lost", "_apply_sync",
        "_converged_consumer", "is_member", "epoch_of")
    z3 = False
    summary = "migration: classic members in a consumer group, online upgrade and downgrade (bidirectional policy)"
    assignors = ("uniform", "sticky")  # the server-side assignor after the upgrade; classic leaders run sticky
    # Switches that break the migration on purpose (see groupspec.model.broken).
    sync_gives_target = False  # BROKEN if True: a classic member's SyncGroup answers its target assignment
    classic_rejoin_signal = True  # BROKEN if False: a classic member's Heartbeat never answers REBALANCE_IN_PROGRESS
    # Kafka's fromClassicGroup gives each member its stored assignment, and treats every other partition as
    # free; a cooperative member may still own more (its SyncGroup answer not applied yet; or, after a
    # downgrade, the target was stored, not what it had). The fix proposed on the docs page: at the upgrade,
    # every partition outside a classic member's stored assignment is pending its revocation
    # (UNREVOKED_PARTITIONS) until the member's first JoinGroup reports what it really owns; and a classic
    # JoinGroup with a member id the consumer group does not know is UNKNOWN_MEMBER_ID, as in a classic group.
    upgrade_waits_for_ack = False
    # FENCED_MEMBER_EPOCH removes the member here, as the migration's compiled encoding has it (the consumer
    # family keeps the record as Kafka does: model/consumer_flight.py); the migration has no in-flight faults.
    fenced_keeps_record = False

    @classmethod
    def applicable_faults(cls) -> frozenset[str]:
        """One topic, no subscription or partition changes."""
        return SUPPORTED

    def __init__(self, cfg: Config) -> None:
        unsupported = set(cfg.faults) - SUPPORTED
        if unsupported:
            raise ValueError(f"fault {sorted(unsupported)[0]!r} is not modelled for protocol {self.name}")
        if cfg.topics != 1:
            raise ValueError(f"protocol {self.name} is modelled on one topic")
        super().__init__(cfg)
        self.symmetric = False  # the classic leader is the lowest slot: no member renaming
        n = cfg.members
        for cls in (JoinGroup, SyncGroup, ClassicHeartbeat, Upgrade, Downgrade):
            self._acts[cls] = tuple(cls(i) for i in range(n))
        self._empty_classic = ClassicGroup(reported=(0,) * n, assignment=(0,) * n, pending=(0,) * n)
        self._empty_consumer = ConsumerGroup(target=(0,) * n, members=(None,) * n, partitions=(1 << cfg.partitions) - 1)
        self._coop: dict[tuple[int, tuple[int, ...]], tuple[int, ...]] = {}

    # ---------------------------------------------------------------------------------------------
    # (the two overrides below build this page's states, not the KIP-848 page's: Consumer builds ConsumerState
    # in them, so their return types differ from Consumer's; every override that only reads a state is typed on
    # Consumer's state parameter, MigrationState here)
    def init_states(self) -> list[MigrationState]:  # type: ignore[override]
        """A classic group, STABLE at generation 1, every member owning its assignment."""
        cfg = self.cfg
        n = cfg.members
        full = (1 << cfg.partitions) - 1
        res = sticky(cfg, [(i, cfg.all_topics, 0, 1, False) for i in range(n)], full)
        assignment = tuple(res.get(i, 0) for i in range(n))
        cg = self._empty_classic.but(status=GroupStatus.STABLE, generation=1, members=(1 << n) - 1,
                                     assignment=assignment, leader=0)
        clients = tuple(Client(proc=Proc.UP, epoch=1, owned=assignment[i], topics=cfg.all_topics, classic=True)
                        for i in range(n))
        return [MigrationState(Kind.CLASSIC, cg, self._empty_consumer, clients, cfg.budget)]

    # -- the classic group ---------------------------------------------------------------------------
    def cooperative_assignment(self, members: int, reported: tuple[int, ...]) -> tuple[int, ...]:
        """The leader's CooperativeStickyAssignor: sticky over the reported owned partitions, then every
        partition another member still reports owned is withheld (it moves in a follow-up round)."""
        k = (members, reported)
        hit = self._coop.get(k)
        if hit is None:
            cfg = self.cfg
            slots = bits(members)
            res = sticky(cfg, [(i, cfg.all_topics, reported[i], 0, False) for i in slots], (1 << cfg.partitions) - 1)
            out = [0] * cfg.members
            for i in slots:
                others = 0
                for j in slots:
                    if j != i:
                        others |= reported[j]
                out[i] = res.get(i, 0) & ~others
            hit = self._coop[k] = tuple(out)
        return hit

    def _prepare(self, cg: ClassicGroup) -> ClassicGroup:
        """``prepareRebalance``: a new join phase (COMPLETING_REBALANCE first empties the stored assignments)."""
        n = self.cfg.members
        if cg.status == GroupStatus.COMPLETING_REBALANCE:
            cg = cg.but(assignment=(0,) * n, unsynced=cg.members)
        return cg.but(status=GroupStatus.PREPARING_REBALANCE, joined=0, pending=(0,) * n)

    def _maybe_complete(self, cg: ClassicGroup, clients: tuple[Client, ...]) -> tuple[ClassicGroup, tuple[Client, ...]]:
        """Every member rejoined: ``initNextGeneration`` and the parked JoinGroups answered."""
        if cg.status != GroupStatus.PREPARING_REBALANCE or cg.joined != cg.members:
            return cg, clients
        gen = cg.generation + 1
        if not cg.members:
            return cg.but(status=GroupStatus.EMPTY, generation=gen, leader=-1), clients
        pending = self.cooperative_assignment(cg.members, cg.reported)
        out = list(clients)
        for i in bits(cg.members):
            out[i] = out[i].but(phase=Phase.SYNC, epoch=gen)
        leader = bits(cg.members)[0]
        return cg.but(status=GroupStatus.COMPLETING_REBALANCE, generation=gen, pending=pending, leader=leader), tuple(out)

    def _classic_remove(self, s: MigrationState, i: int) -> MigrationState:
        """A member leaves or is removed from the classic group (LeaveGroup, session timeout)."""
        cg = s.classic
        bit = 1 << i
        cg = cg.but(members=cg.members & ~bit, joined=cg.joined & ~bit, unsynced=cg.unsynced & ~bit,
                    reported=self._set(cg.reported, i, 0), assignment=self._set(cg.assignment, i, 0))
        if cg.status in (GroupStatus.STABLE, GroupStatus.COMPLETING_REBALANCE):
            cg = self._prepare(cg)
        clients = s.clients
        if clients[i].classic and clients[i].phase == Phase.WAIT:
            clients = self._set(clients, i, self._lost(clients[i]))  # its parked JoinGroup: UNKNOWN_MEMBER_ID
        cg, clients = self._maybe_complete(cg, clients)
        return s.but(classic=cg, clients=clients)

    # -- the consumer group ------------------------------------------------------------------------
    def _remove(self, g: ConsumerGroup, i: int) -> ConsumerGroup:
        """Remove member ``i``; when only classic members remain, keep the group epoch and the target:
        the state is then downgraded (``_settle``) instead of bumped."""
        members = g.members[:i] + (None,) + g.members[i + 1:]
        rest = [m for m in members if m is not None]
        if rest and all(getattr(m, "classic", False) for m in rest) and not getattr(g.members[i], "classic", False):
            return g.but(members=members)
        return self._bump(g.but(members=members))

    def _settle(self, s: MigrationState) -> MigrationState:
        """The online downgrade, after any step of the consumer group that left only classic members."""
        if s.kind != Kind.CONSUMER:
            return s
        g = s.group
        rest = [i for i, m in enumerate(g.members) if m is not None]
        if not rest or not all(getattr(g.members[i], "classic", False) for i in rest):
            return s
        mask = 0
        assignment = [0] * self.cfg.members
        for i in rest:
            mask |= 1 << i
            assignment[i] = g.target[i]
        cg = self._empty_classic.but(status=GroupStatus.STABLE, generation=g.epoch, members=mask,
                                     assignment=tuple(assignment), leader=rest[0])
        return MigrationState(Kind.CLASSIC, self._prepare(cg), self._empty_consumer, s.clients, s.budget)

    def _upgrade(self, s: MigrationState) -> MigrationState | None:
        """``convertToConsumerGroup`` (or, for an empty classic group, a new consumer group); ``None``: refused."""
        cg = s.classic
        if not cg.members:
            return MigrationState(Kind.CONSUMER, self._empty_classic, self._empty_consumer, s.clients, s.budget)
        if cg.unsynced:
            return None  # fromClassicGroup cannot parse an empty assignment: SchemaException
        gen = cg.generation
        full = (1 << self.cfg.partitions) - 1
        members = list(self._empty_consumer.members)
        target = [0] * self.cfg.members
        clients = list(s.clients)
        for i in bits(cg.members):
            rev = full & ~cg.assignment[i] if self.upgrade_waits_for_ack else 0
            members[i] = MMember(state=MemberState.UNREVOKED_PARTITIONS if rev else MemberState.STABLE, epoch=gen,
                                 previous_epoch=gen, assigned=cg.assignment[i], revoking=rev,
                                 topics=self.cfg.all_topics, classic=True)
            target[i] = cg.assignment[i]
            if clients[i].phase in (Phase.WAIT, Phase.SYNC):
                clients[i] = clients[i].but(phase=Phase.JOIN)  # parked requests: REBALANCE_IN_PROGRESS
        g = self._empty_consumer.but(epoch=gen, target_epoch=gen, target=tuple(target), members=tuple(members))
        return MigrationState(Kind.CONSUMER, self._empty_classic, g, tuple(clients), s.budget)

    @staticmethod
    def _consumer_view(s: MigrationState) -> ConsumerState:
        return ConsumerState(group=s.group, clients=s.clients, budget=s.budget)

    def _consumer_heartbeat(self, s: MigrationState, i: int) -> MigrationState:
        c = s.clients[i]
        if s.kind == Kind.CLASSIC:
            u = self._upgrade(s) if c.epoch == 0 else None
            if u is None:
                # GROUP_ID_NOT_FOUND (a member epoch > 0, or an upgrade that cannot be made): fatal for the
                # client (AbstractHeartbeatRequestManager): it gives its partitions up and stops.
                return s.but(clients=self._set(s.clients, i, Client(topics=c.topics)))
            s = u
        t = self.heartbeat(self._consumer_view(s), i)
        # (t.clients are this page's Clients: the KIP-848 heartbeat copies a client with ``but``, which keeps its class)
        return self._settle(MigrationState(Kind.CONSUMER, s.classic, t.group, t.clients, t.budget))  # type: ignore[arg-type]

    # -- classic clients ---------------------------------------------------------------------------
    @staticmethod
    def _lost(c: Client) -> Client:
        """UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: onPartitionsLost, reset the generation, rejoin."""
        return c.but(epoch=NOT_MEMBER, owned=0, phase=Phase.JOIN)

    def _apply_sync(self, c: Client, assignment: int) -> Client:
        """onJoinComplete (cooperative): revoke what is not assigned, add what is; rejoin if it revoked."""
        revoked = c.owned & ~assignment
        return c.but(owned=assignment, phase=Phase.JOIN if revoked else Phase.STABLE)

    def _join(self, s: MigrationState, i: int) -> MigrationState:
        c = s.clients[i]
        if s.kind == Kind.CLASSIC:
            cg = s.classic
            known = cg.members >> i & 1
            if not known and c.epoch != NOT_MEMBER:
                return s.but(clients=self._set(s.clients, i, self._lost(c)))  # UNKNOWN_MEMBER_ID
            if cg.status != GroupStatus.PREPARING_REBALANCE:
                cg = self._prepare(cg)
            if not known:
                cg = cg.but(unsynced=cg.unsynced | 1 << i)
            cg = cg.but(members=cg.members | 1 << i, joined=cg.joined | 1 << i, reported=self._set(cg.reported, i, c.owned))
            clients = self._set(s.clients, i, c.but(phase=Phase.WAIT))
            cg, clients = self._maybe_complete(cg, clients)
            return s.but(classic=cg, clients=clients)
        g = s.group
        r = g.members[i]
        if r is None:
            # getOrMaybeSubscribeDynamicConsumerGroupMember(createIfNotExists=true): whatever member id the
            # JoinGroup carries, a member is created, and the owned partitions it reports are not looked at.
            if self.upgrade_waits_for_ack and c.epoch != NOT_MEMBER:
                return s.but(clients=self._set(s.clients, i, self._lost(c)))  # the fix: UNKNOWN_MEMBER_ID
            if not any(m is not None for m in g.members):
                # An empty consumer group is deleted; the JoinGroup creates a classic group.
                cg = self._empty_classic
                s = MigrationState(Kind.CLASSIC, cg, self._empty_consumer, s.clients, s.budget)
                return self._join(s, i)
            r = MMember(topics=c.topics, classic=True)
            g = self._bump(g.but(members=self._set(g.members, i, r)))
            r = g.members[i]
        r = self.reconcile(g, i, r, c.owned)  # type: ignore[arg-type]  # (_bump keeps every member)
        g = g.but(members=self._set(g.members, i, r))
        return s.but(group=g, clients=self._set(s.clients, i, c.but(epoch=r.epoch, phase=Phase.SYNC)))

    def _sync(self, s: MigrationState, i: int) -> MigrationState | None:
        """The SyncGroup of client ``i`` (``None``: parked, nothing happens yet)."""
        c = s.clients[i]
        if s.kind == Kind.CLASSIC:
            cg = s.classic
            if not cg.members >> i & 1 or c.epoch != cg.generation:
                return s.but(clients=self._set(s.clients, i, self._lost(c)))
            if cg.status == GroupStatus.PREPARING_REBALANCE:
                return s.but(clients=self._set(s.clients, i, c.but(phase=Phase.JOIN)))  # REBALANCE_IN_PROGRESS
            if cg.status == GroupStatus.COMPLETING_REBALANCE:
                if i != cg.leader:
                    return None  # parked until the leader's SyncGroup
                cg = cg.but(status=GroupStatus.STABLE, assignment=cg.pending, pending=(0,) * self.cfg.members, unsynced=0)
            return s.but(classic=cg, clients=self._set(s.clients, i, self._apply_sync(c, cg.assignment[i])))
        g = s.group
        r = g.members[i]
        if r is None or c.epoch != r.epoch:
            return s.but(clients=self._set(s.clients, i, self._lost(c)))
        if g.epoch > r.epoch and r.state != MemberState.UNREVOKED_PARTITIONS:
            return s.but(clients=self._set(s.clients, i, c.but(phase=Phase.JOIN)))  # REBALANCE_IN_PROGRESS
        given = g.target[i] if self.sync_gives_target else r.assigned
        return s.but(clients=self._set(s.clients, i, self._apply_sync(c, given)))

    def _heartbeat_classic(self, s: MigrationState, i: int) -> MigrationState | None:
        """A classic Heartbeat: ``None`` when the answer is NONE (nothing changes)."""
        c = s.clients[i]
        if s.kind == Kind.CLASSIC:
            cg = s.classic
            if not cg.members >> i & 1 or c.epoch != cg.generation:
                return s.but(clients=self._set(s.clients, i, self._lost(c)))
            if cg.status == GroupStatus.PREPARING_REBALANCE:
                return s.but(clients=self._set(s.clients, i, c.but(phase=Phase.JOIN)))
            return None
        g = s.group
        r = g.members[i]
        if r is None or c.epoch != r.epoch:
            return s.but(clients=self._set(s.clients, i, self._lost(c)))
        if not self.classic_rejoin_signal:
            return None
        waiting = g.target[i] & ~r.assigned
        if (r.epoch < g.epoch or r.state == MemberState.UNREVOKED_PARTITIONS
                or (r.state == MemberState.UNRELEASED_PARTITIONS and not waiting & self.held_by_others(g, i))):
            return s.but(clients=self._set(s.clients, i, c.but(phase=Phase.JOIN)))
        return None

    # -- removal, whatever the group's type ---------------------------------------------------------
    def is_member(self, s: MigrationState, i: int) -> bool:
        if s.kind == Kind.CLASSIC:
            return bool(s.classic.members >> i & 1)
        return s.group.members[i] is not None

    def _drop(self, s: MigrationState, i: int) -> MigrationState:
        if s.kind == Kind.CLASSIC:
            return self._classic_remove(s, i)
        return self._settle(s.but(group=self._remove(s.group, i)))

    def _restart(self, c: Client, classic: bool) -> Client:
        if classic:
            return Client(proc=Proc.UP, epoch=NOT_MEMBER, topics=c.topics, classic=True, phase=Phase.JOIN)
        return Client(proc=Proc.UP, epoch=0, topics=c.topics)

    # -- steps ------------------------------------------------------------------------------------
    def successors(self, s: MigrationState) -> Iterator[tuple[A.Action, MigrationState]]:  # type: ignore[override]  # (see init_states)
        acts = self._acts
        faults = self.cfg.faults
        spend = s.budget > 0
        t: MigrationState | None  # (a step's target; None: the step changes nothing)
        for i, c in enumerate(s.clients):
            member = self.is_member(s, i)
            if c.proc == Proc.UP:
                if not c.classic:
                    if c.epoch >= 0:
                        t = self._consumer_heartbeat(s, i)
                        if t != s:
                            yield acts[ConsumerGroupHeartbeat][i], t
                    if c.owned & ~c.assigned:
                        yield acts[RevokePartitions][i], s.but(clients=self._set(s.clients, i, c.but(owned=c.owned & c.assigned)))
                elif c.phase == Phase.JOIN:
                    yield acts[JoinGroup][i], self._join(s, i)
                elif c.phase == Phase.SYNC:
                    t = self._sync(s, i)
                    if t is not None:
                        yield acts[SyncGroup][i], t
                elif c.phase == Phase.STABLE:
                    t = self._heartbeat_classic(s, i)
                    if t is not None:
                        yield acts[ClassicHeartbeat][i], t
            elif c.proc == Proc.PAUSED:
                yield acts[A.Resume][i], s.but(clients=self._set(s.clients, i, c.but(proc=Proc.UP)))
            if member and c.proc != Proc.UP:
                yield acts[A.SessionExpired][i], self._drop(s, i)
            if not spend:
                continue
            s1 = s.but(budget=s.budget - 1)
            live = c.proc == Proc.UP and member and (c.classic or c.epoch > 0)
            if live and c.classic:
                t = self._drop(s1, i)
                yield acts[Upgrade][i], t.but(clients=self._set(t.clients, i, self._restart(c, False)))
            if live and not c.classic:
                t = self._drop(s1, i)
                yield acts[Downgrade][i], t.but(clients=self._set(t.clients, i, self._restart(c, True)))
            if "join" in faults and c.proc == Proc.DOWN and not member:
                yield acts[A.Start][i], s1.but(clients=self._set(s.clients, i, self._restart(c, c.classic)))
            if "leave" in faults and live:
                t = self._drop(s1, i)
                yield acts[A.LeaveGroup][i], t.but(clients=self._set(t.clients, i, Client(topics=c.topics, classic=c.classic)))
            if "crash" in faults and c.proc != Proc.DOWN:
                yield acts[A.Crash][i], s1.but(clients=self._set(s.clients, i, Client(topics=c.topics, classic=c.classic)))
            if "timeout" in faults and live:
                yield acts[A.ExpireLive][i], self._drop(s1, i)
            if "zombie" in faults and live:
                yield acts[A.Pause][i], s1.but(clients=self._set(s.clients, i, c.but(proc=Proc.PAUSED)))

    # -- what the properties ask ------------------------------------------------------------------
    def epoch_of(self, s: MigrationState) -> int:
        """The group's epoch, whatever its type: the classic generation or the consumer group epoch."""
        return s.classic.generation if s.kind == Kind.CLASSIC else s.group.epoch

    def live_member(self, s: MigrationState, i: int) -> bool:
        c = s.clients[i]
        if c.proc == Proc.DOWN or not self.is_member(s, i):
            return False
        return c.classic or c.epoch > 0

    def commit_accepted(self, s: MigrationState, i: int, ghost: bool = False) -> bool:
        """An OffsetCommit from process ``i`` with its member id and generation / member epoch."""
        c = s.clients[i]
        if s.kind == Kind.CLASSIC:
            cg = s.classic
            if not c.classic or not cg.members >> i & 1:
                return False  # UNKNOWN_MEMBER_ID (a consumer-protocol client is no member of a classic group)
            return c.epoch == cg.generation and cg.status != GroupStatus.COMPLETING_REBALANCE
        r = s.group.members[i]
        if r is None:
            return False
        return c.epoch == r.epoch  # ILLEGAL_GENERATION for classic members, STALE_MEMBER_EPOCH otherwise

    def commit_violation(self, s: MigrationState) -> str | None:
        live = dict(self.live_ownership(s))
        for i, c in enumerate(s.clients):
            if c.proc != Proc.UP or not c.owned or not self.commit_accepted(s, i):
                continue
            who = self.member_name(i)
            if not self.live_member(s, i):
                return f"{who} is not a member any more, yet its commit for {self.partition_name(bits(c.owned)[0])} is accepted"
            if s.kind == Kind.CONSUMER:
                r = s.group.members[i]
                stray = c.owned & ~(r.assigned | r.revoking)  # type: ignore[union-attr]  # (live: it has its record)
                if stray:
                    name = self.partition_name(bits(stray)[0])
                    return f"{who}'s commit for {name} is accepted, but the coordinator has not given it {name}"
            for k, o in live.items():
                if k != i and o & c.owned:
                    p = bits(o & c.owned)[0]
                    return f"{who}'s commit for {self.partition_name(p)} is accepted while {self.member_name(k)} owns it too"
        return None

    def generation_violation(self, s: MigrationState, t: MigrationState) -> str | None:
        """The group's epoch (generation or group epoch) grows by at most one per step and never goes down
        (unless an empty group is deleted); members' epochs never go down; nobody is ahead of the group."""
        e0, e1 = self.epoch_of(s), self.epoch_of(t)
        emptied = (s.kind == Kind.CLASSIC and not s.classic.members) or (
            s.kind == Kind.CONSUMER and all(m is None for m in s.group.members))
        if (e1 < e0 and not (emptied and s.kind != t.kind)) or e1 > e0 + 1:
            return f"the group's epoch went from {e0} to {e1}"
        if t.kind == Kind.CONSUMER:
            g, h = s.group, t.group
            if h.target_epoch > h.epoch:
                return f"the assignment epoch {h.target_epoch} is ahead of the group epoch {h.epoch}"
            for i in range(len(t.clients)):
                b = h.members[i]
                a = g.members[i] if s.kind == Kind.CONSUMER else None
                if a is not None and b is not None and b.epoch < a.epoch:
                    return f"{self.member_name(i)}'s member epoch went down from {a.epoch} to {b.epoch}"
                if b is not None and b.epoch > h.target_epoch:
                    return f"{self.member_name(i)}'s member epoch {b.epoch} is ahead of the assignment epoch {h.target_epoch}"
        for i in range(len(t.clients)):
            ca, cb = s.clients[i], t.clients[i]
            if cb.epoch > 0 and cb.epoch < ca.epoch and ca.classic == cb.classic:
                return f"{self.member_name(i)}'s epoch went down from {ca.epoch} to {cb.epoch} on the client"
            if cb.epoch > e1 and self.is_member(t, i):
                return f"{self.member_name(i)} believes it is at epoch {cb.epoch}, ahead of the group's {e1}"
        return None

    def members_in_group(self, s: MigrationState) -> int:
        if s.kind == Kind.CLASSIC:
            return s.classic.members.bit_count()
        return sum(1 for m in s.group.members if m is not None)

    def converged(self, s: MigrationState) -> bool:
        """Nothing left to do: every running process is a member that owns exactly its share of a complete
        assignment that the group's assignor would not change, and no request is on its way."""
        if s.kind == Kind.CONSUMER:
            return self._converged_consumer(s)
        cg = s.classic
        if cg.status != GroupStatus.STABLE and cg.members:
            return False
        assigned = 0
        for i, c in enumerate(s.clients):
            member = cg.members >> i & 1
            if c.proc == Proc.PAUSED or (c.proc == Proc.DOWN and member):
                return False
            if c.proc == Proc.DOWN:
                continue
            if not c.classic or not member or c.phase != Phase.STABLE or c.epoch != cg.generation:
                return False
            if c.owned != cg.assignment[i] or c.owned & assigned:
                return False
            assigned |= c.owned
        if not cg.members:
            return True
        if assigned != (1 << self.cfg.partitions) - 1:
            return False
        return self.cooperative_assignment(cg.members, cg.assignment) == cg.assignment

    def _converged_consumer(self, s: MigrationState) -> bool:
        g = s.group
        if g.target_epoch != g.epoch:
            return False
        assigned = 0
        for i, c in enumerate(s.clients):
            r = g.members[i]
            if c.proc == Proc.PAUSED or (c.proc == Proc.DOWN and r is not None):
                return False
            if c.proc == Proc.DOWN:
                continue
            if r is None or r.state != MemberState.STABLE or r.revoking or r.epoch != g.epoch or c.epoch != r.epoch:
                return False
            if r.assigned != g.target[i] or c.owned != r.assigned or r.assigned & assigned:
                return False
            if c.classic and c.phase != Phase.STABLE:
                return False
            if not c.classic and c.assigned != r.assigned:
                return False
            assigned |= r.assigned
        if any(m is not None for m in g.members) and assigned != g.partitions:
            return False
        return self.compute_target(g) == g.target

    # -- keys for the explorer --------------------------------------------------------------------
    def exact_key(self, s: MigrationState) -> Hashable:
        base = self.epoch_of(s)
        rows = []
        for c in s.clients:
            rows.append((int(c.proc), c.classic, int(c.phase), relative_epoch(c.epoch, base), c.owned, c.assigned))
        if s.kind == Kind.CLASSIC:
            cg = s.classic
            grp: tuple[Hashable, ...] = (int(cg.status), cg.members, cg.joined, cg.reported, cg.assignment, cg.pending, cg.leader, cg.unsynced)
        else:
            g = s.group
            grp = (g.epoch - g.target_epoch, g.target, tuple(
                () if r is None else (int(r.state), relative_epoch(r.epoch, base), relative_epoch(r.previous_epoch, base), r.assigned,
                                      r.revoking, getattr(r, "classic", False))
                for r in g.members))
        return (int(s.kind), s.budget, grp, tuple(rows))

    key = exact_key

    def orbit_size(self, s: MigrationState) -> int:
        return 1


class ClassicToConsumerAcked(ClassicToConsumer):
    """The proposed fix: after the upgrade, no partition outside the stored assignments is given before
    every classic member's first JoinGroup has reported what it owns; a classic JoinGroup with an unknown
    member id is refused (UNKNOWN_MEMBER_ID) instead of creating a member that may still own partitions."""

    name = "classic-to-consumer-acked"
    summary = "migration, the upgrade holding partitions until each classic member's first JoinGroup (a proposed fix)"
    upgrade_waits_for_ack = True
