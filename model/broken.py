"""Deliberately broken variants. They exist to prove that the checks can fail.

Each one changes one rule of a correct variant and says which property the checker must then find
violated. ``groupspec verify`` runs every one of them and fails if its violation is *not* found.
"""
from __future__ import annotations

from .cooperative import Cooperative
from .eager import Eager


class CooperativeDirectTransfer(Cooperative):
    name = "cooperative-direct-transfer"
    summary = "cooperative, but moving partitions are handed to their new owner in the same round"
    withhold_transfers = False
    broken = True
    bug = (
        "the assignment gives a partition to its new owner while its old owner still has it: whoever "
        "receives its SyncGroup answer first owns it while the other has not revoked it yet"
    )
    expect_violation = "exclusive_ownership"


class EagerNoRevoke(Eager):
    name = "eager-no-revoke"
    summary = "eager, but members keep their partitions across JoinGroup (no revoke-before-join)"
    revoke_before_join = False
    broken = True
    bug = (
        "without revoking before JoinGroup there is no barrier: a member that gets its new assignment "
        "first owns partitions that a slower member still holds from the previous generation"
    )
    expect_violation = "exclusive_ownership"


class UnfencedCommits(Eager):
    name = "unfenced-commits"
    summary = "eager, but the coordinator accepts offset commits without checking member id and generation"
    fence_commits = False
    broken = True
    bug = (
        "a zombie (a member expired while paused) wakes up believing it still owns its partitions and "
        "commits offsets for a partition that now belongs to someone else; nothing rejects the commit"
    )
    expect_violation = "commit_fencing"


class CooperativeFlappy(Cooperative):
    name = "cooperative-flappy"
    summary = "cooperative with a non-sticky assignor that moves a partition every round"
    broken = True
    bug = (
        "the assignor always wants to move partition 0 to the next member, so every follow-up round "
        "revokes something and triggers another round: the group rebalances forever"
    )
    expect_violation = "convergence"
    forced_assignor = "flappy"


# -- the next-generation protocol (KIP-848) --------------------------------------------------------
from .consumer import Consumer  # noqa: E402


class ConsumerNoWaitForRelease(Consumer):
    name = "consumer-no-wait-release"
    summary = "KIP-848, but a partition goes to its new owner before its previous owner revoked it"
    wait_for_release = False
    broken = True
    bug = (
        "the coordinator ignores partition epochs: a member reaching the new target epoch gets every "
        "partition of its target at once, while the previous owner has not acknowledged revoking it"
    )
    expect_violation = "exclusive_ownership"


class ConsumerUnfencedCommits(Consumer):
    name = "consumer-unfenced-commits"
    summary = "KIP-848, but offset commits are accepted without checking member id and member epoch"
    fence_commits = False
    broken = True
    bug = (
        "a paused member removed at its session timeout wakes up still owning its partitions and "
        "commits for a partition that now belongs to another member; nothing rejects the commit"
    )
    expect_violation = "commit_fencing"


class ConsumerNoEpochBump(Consumer):
    name = "consumer-no-epoch-bump"
    z3 = False
    summary = "KIP-848, but a new target assignment keeps the old assignment epoch"
    bump_on_change = False
    broken = True
    bug = (
        "members reconcile only when their epoch is behind the assignment epoch; a target changed "
        "without a new epoch is never looked at, so the new member never gets its partitions"
    )
    expect_violation = "convergence"


class ConsumerCommitAnyEpoch(Consumer):
    name = "consumer-commit-any-epoch"
    z3 = False
    summary = "KIP-848, but an OffsetCommit from a known member is accepted whatever its epoch"
    fence_commit_epoch = False
    broken = True
    bug = (
        "an OffsetCommit sent before the member revoked a partition arrives after the partition went to "
        "another member; the coordinator checks only the member id (the same under KIP-1082) and accepts it"
    )
    expect_violation = "commit_fencing"


class ConsumerFencedKeepsPartitions(Consumer):
    name = "consumer-fenced-keeps-partitions"
    z3 = False
    summary = "KIP-848, but a client answered FENCED_MEMBER_EPOCH keeps its partitions and its epoch"
    lose_on_fence = False
    broken = True
    bug = (
        "a fenced client does not call onPartitionsLost and does not rejoin: it heartbeats with its old "
        "epoch, is fenced again and again, and the group never converges (its record, kept by the "
        "coordinator, still holds the partitions, so no other member gets them: safety holds)"
    )
    expect_violation = "convergence"


# -- the migration between the protocols ----------------------------------------------------------
from .migration import ClassicToConsumerAcked  # noqa: E402


class ClassicToConsumerSyncTarget(ClassicToConsumerAcked):
    name = "classic-to-consumer-sync-target"
    summary = "migration, but a classic member's SyncGroup answers its target assignment, not its assigned partitions"
    sync_gives_target = True
    broken = True
    bug = (
        "a classic member in a consumer group is given its whole target at SyncGroup, including partitions "
        "whose previous owner has not acknowledged revoking them: both own them"
    )
    expect_violation = "exclusive_ownership"


class ClassicToConsumerNoRejoin(ClassicToConsumerAcked):
    name = "classic-to-consumer-no-rejoin"
    summary = "migration, but a classic member's Heartbeat never answers REBALANCE_IN_PROGRESS"
    classic_rejoin_signal = False
    broken = True
    bug = (
        "a classic member learns of a new target only through REBALANCE_IN_PROGRESS; without it, it never "
        "rejoins, never revokes, and the consumer-protocol member waits for those partitions forever"
    )
    expect_violation = "convergence"


from .migration import ClassicToConsumer  # noqa: E402
from .migration_state import Kind, MigrationState  # noqa: E402


class ClassicToConsumerDowngradeMemberGeneration(ClassicToConsumer):
    name = "classic-to-consumer-gen-drops"
    summary = "migration, but the downgraded classic group's generation is its members' latest epoch, not the group's"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "the online downgrade starts the classic group at the highest epoch its remaining members hold instead of "
        "the consumer group's epoch (Kafka's ClassicGroup.fromConsumerGroup takes the group epoch): when a "
        "consumer-protocol member joined and left while a classic member lagged, the group's epoch goes down"
    )
    expect_violation = "generation_monotonic"

    def _settle(self, s: MigrationState) -> MigrationState:
        t = super()._settle(s)
        if t is s or t.kind != Kind.CLASSIC:
            return t
        cg = t.classic
        latest = max(t.clients[k].epoch for k in range(len(t.clients)) if cg.members >> k & 1)
        return t.but(classic=cg.but(generation=latest))


class ClassicToConsumerOwnedIgnored(ClassicToConsumer):
    name = "classic-to-consumer-two-owners"
    summary = "migration, but the classic group's cooperative assignment ignores what the other members still own"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "before the upgrade, the classic group's leader assigns a partition another member reported as owned (it "
        "has not revoked it yet): both own it, and the current-generation member's commit is accepted"
    )
    expect_violation = "commit_fencing"

    def cooperative_assignment(self, members: int, reported: tuple[int, ...]) -> tuple[int, ...]:
        return super().cooperative_assignment(members, (0,) * len(reported))


# -- the eager -> cooperative upgrade --------------------------------------------------------------
from .upgrade import EagerToCooperative  # noqa: E402


class UpgradeOneBounce(EagerToCooperative):
    name = "upgrade-one-bounce"
    summary = "the upgrade, but a consumer listing [old, cooperative-sticky] already rebalances cooperatively"
    protocol_rule = "any"
    broken = True
    bug = (
        "a consumer turns COOPERATIVE in the first bounce (one assignor it lists supports it) while the group "
        "still votes the old eager assignor: it keeps what it owns across the rejoin, the old assignor hands a "
        "partition it still owns to another member, and an eager leader does not check the assignment"
    )
    expect_violation = "exclusive_ownership"


class UpgradeUnvalidated(UpgradeOneBounce):
    name = "upgrade-unvalidated"
    summary = "upgrade-one-bounce, and a cooperative leader skips validateCooperativeAssignment"
    validate_assignment = False
    bug = (
        "as upgrade-one-bounce, and a cooperative leader sends the old assignor's output although it moves a "
        "still-owned partition: even a group whose leader is cooperative reaches two owners"
    )
    expect_violation = "exclusive_ownership"


# -- Connect's delayed rebalance (KIP-415) ---------------------------------------------------------
from .connect_delayed import ConnectDelayed  # noqa: E402
from typing import Iterator  # noqa: E402

from . import actions as _A  # noqa: E402
from .core import Client as _Client, Group as _Group, GroupStatus as _GS, Proc as _Proc, State as _State  # noqa: E402


class ConnectHoldOutlivesGroup(ConnectDelayed):
    """The held work outlives a group every worker left, and its delay never ends: the timer ran in a worker."""

    name = "connect-hold-outlives-group"
    summary = "KIP-415, but work held for departed workers outlives the group, and with nobody left the delay never ends"
    broken = True
    python_only = True
    z3 = False  # the proofs encode connect-delayed itself, not this broken variant
    bug = (
        "every worker departs while work is held: the group empties but keeps holding the work, and the delay, "
        "which a worker's timer ends, never expires with no worker left: the group never converges"
    )
    expect_violation = "convergence"

    def _complete_join(self, g: _Group, clients: list[_Client]) -> _Group:
        out = super()._complete_join(g, clients)
        if out.status != _GS.EMPTY:
            return out
        # the group empties: a correct one forgets the hold; this one keeps it, the work of the members the
        # completion dropped included
        held, held_for = g.held, g.held_for
        for i, r in enumerate(g.records):
            if r is not None and not r.joined and not r.static and r.assignment:
                held, held_for = held | r.assignment, held_for if held else i
        return out.but(held=held, held_for=held_for)

    def successors(self, s: _State) -> Iterator[tuple[_A.Action, _State]]:
        nobody = all(r is None for r in s.group.records)
        for a, t in super().successors(s):
            if nobody and a is self._delay_expired:
                continue  # no worker left to end the delay
            yield a, t


class ConnectNoScheduledRebalance(ConnectDelayed):
    """Connect workers that never rejoin for work nobody is assigned: no scheduled rebalance (KIP-415)."""

    name = "connect-no-scheduled-rebalance"
    summary = "KIP-415, but the workers never rejoin when the delay is over: the released work is never handed out"
    broken = True
    python_only = True
    z3 = False  # the proofs encode connect-delayed itself, not this broken variant
    bug = (
        "a worker departs, the next round holds its work back, the delay ends after that round: no worker rejoins "
        "for the released work (Kafka's workers rejoin when the delay in their assignment is over), which nobody "
        "runs ever after: the group never converges"
    )
    expect_violation = "convergence"

    def _unassigned_new(self, s: _State) -> bool:
        return False  # (the scheduled rebalance of KIP-415 never comes: nobody notices the released work)


from .connect_delayed import ConnectKeepWork  # noqa: E402


class ConnectIgnoresRevocation(ConnectKeepWork):
    """A Connect worker that never stops revoked work (the herder's ``onRevoked`` skipped)."""

    name = "connect-ignores-revocation"
    summary = "KIP-415 workers that keep their work across a reset, but never stop work the leader revokes"
    broken = True
    python_only = True
    bug = (
        "a worker applies what its assignment starts but not what it revokes: work it kept across a reset and the "
        "leader gave to another worker meanwhile runs twice, both workers STABLE in one generation"
    )
    expect_violation = "duplicate_work_settles"

    def _receive_sync(self, s: _State, i: int) -> _State:
        t = super()._receive_sync(s, i)
        a, b = s.clients[i], t.clients[i]
        if b.proc != _Proc.DOWN and a.owned & ~b.owned:
            t = self._with(t, clients=self._set(t.clients, i, b.but(owned=b.owned | a.owned)))
        return t


# -- the fifth campaign's gaps (issue 30): each shows one rule of a property (or of the model) matters ------
from .core import MemberStatus as _MS  # noqa: E402


class EagerJoinGenerationAhead(Eager):
    """A member that takes the generation its JoinGroup opens before the coordinator answers."""

    name = "eager-join-generation-ahead"
    summary = "eager, but a member counts generations itself: its JoinGroup puts it in the next generation at once"
    broken = True
    python_only = True
    z3 = False  # the proofs encode eager itself, not this broken variant
    bug = (
        "a member sending JoinGroup sets its own generation to the one the join phase will open: while the group "
        "waits for the others it claims a generation the group has not reached (Kafka's client takes its "
        "generation from the JoinGroup answer only)"
    )
    expect_violation = "generation_monotonic"

    def _join(self, s: _State, i: int) -> _State:
        t = super()._join(s, i)
        c = t.clients[i]
        if t.group is not s.group and c.status == _MS.PREPARING_REBALANCE and c.inbox is None:
            # the JoinGroup is parked (no answer yet): the member "moves on" to the generation it expects
            t = self._with(t, clients=self._set(t.clients, i, c.but(generation=t.group.generation + 1)))
        return t


class ClassicToConsumerShortAssignment(ClassicToConsumer):
    """A classic leader that assigns from metadata one partition short, and never refreshes it."""

    name = "classic-to-consumer-short-assignment"
    summary = "migration, but the classic group's leader assigns every partition but the last one"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "the classic group's leader assigns from a metadata cache that lacks the topic's last partition and never "
        "refreshes it: every member is STABLE and owns its assignment, but nobody consumes that partition, "
        "and the group never converges"
    )
    expect_violation = "convergence"

    def cooperative_assignment(self, members: int, reported: tuple[int, ...]) -> tuple[int, ...]:
        last = 1 << (self.cfg.partitions - 1)
        return tuple(a & ~last for a in super().cooperative_assignment(members, reported))


class ClassicToConsumerCrashLingers(ClassicToConsumer):
    """A crashed process's member is never expired: the coordinator's session timer is not armed for it."""

    name = "classic-to-consumer-crash-lingers"
    summary = "migration, but the session of a member whose process crashed never runs out"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "a member whose process crashed keeps its record for ever (its session timer is never armed): the group "
        "waits for it and never converges (a paused member's session still runs out)"
    )
    expect_violation = "convergence"

    def successors(self, s: MigrationState) -> Iterator[tuple[_A.Action, MigrationState]]:  # type: ignore[override]
        for a, t in super().successors(s):
            if isinstance(a, _A.SessionExpired) and s.clients[a.member].proc == _Proc.DOWN:
                continue
            yield a, t


# -- issue 30, the migration family's full run: each shows one rule of generation_violation matters ----------------
class ClassicToConsumerUpgradeReplaces(ClassicToConsumer):
    """An online upgrade that deletes the classic group whatever its members, instead of converting it."""

    name = "classic-to-consumer-upgrade-replaces"
    summary = "migration, but a consumer-protocol heartbeat replaces a classic group that still has members"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "the first ConsumerGroupHeartbeat deletes the classic group even when it has members and starts a new consumer "
        "group at epoch 0 (Kafka deletes only an empty classic group; a group with members is converted at its "
        "generation, ConsumerGroup.fromClassicGroup): after a rebalance the group's epoch goes down, and a zombie of "
        "the old generation could match an epoch of the new group"
    )
    expect_violation = "generation_monotonic"

    def _upgrade(self, s: MigrationState) -> MigrationState | None:
        return MigrationState(Kind.CONSUMER, self._empty_classic, self._empty_consumer, s.clients, s.budget)


class ClassicToConsumerEmptyGroupReset(ClassicToConsumer):
    """An empty consumer group started afresh (epoch 0) by the next member's heartbeat."""

    name = "classic-to-consumer-empty-group-reset"
    summary = "migration, but a consumer group left empty is started again at epoch 0 by the next member's heartbeat"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "a ConsumerGroupHeartbeat that joins a consumer group with no member starts a new group at epoch 0 instead of "
        "bumping the existing group's epoch (Kafka's getOrMaybeCreateConsumerGroup returns the existing empty group): "
        "the group's epoch goes down without a change of the group's type"
    )
    expect_violation = "generation_monotonic"

    def _consumer_heartbeat(self, s: MigrationState, i: int) -> MigrationState:
        if s.kind == Kind.CONSUMER and s.clients[i].epoch == 0 and all(m is None for m in s.group.members):
            s = s.but(group=self._empty_consumer)
        return super()._consumer_heartbeat(s, i)


class ClassicToConsumerEpochRollback(ClassicToConsumer):
    """Removing a member restores the others' records from their previous epoch."""

    name = "classic-to-consumer-epoch-rollback"
    summary = "migration, but removing a member of a consumer group rolls the others' member epochs back"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "when a member of a consumer group is removed, the coordinator restores every other member's record at its "
        "previous epoch (Kafka's consumerGroupFenceMember writes the removed member's tombstone only): a member epoch "
        "goes down, and the member is fenced at its next heartbeat"
    )
    expect_violation = "generation_monotonic"

    def _remove(self, g, i):  # type: ignore[no-untyped-def]  # (ConsumerGroup, int) -> ConsumerGroup
        g = super()._remove(g, i)
        return g.but(members=tuple(r if r is None or not 0 <= r.previous_epoch < r.epoch else r.but(epoch=r.previous_epoch)
                                   for r in g.members))


class ClassicToConsumerUnfencedClassicCommits(ClassicToConsumer):
    """The classic group accepting OffsetCommits without checking member id and generation."""

    name = "classic-to-consumer-unfenced-classic-commits"
    summary = "migration, but the classic group accepts offset commits without checking member id and generation"
    python_only = True  # the migration kernel does not encode this bug
    broken = True
    bug = (
        "a classic member removed while paused (its session ran out) wakes up still owning its partitions: it has not "
        "heard of its removal yet (UNKNOWN_MEMBER_ID comes with its next request), and its commit for a partition "
        "that now belongs to someone else is accepted"
    )
    expect_violation = "commit_fencing"

    def commit_accepted(self, s: MigrationState, i: int, ghost: bool = False) -> bool:
        if s.kind == Kind.CLASSIC:
            return s.clients[i].classic
        return super().commit_accepted(s, i, ghost)


# -- issue 30, the KIP-848 family's last survivors: each needs an answer in flight to show -------------------------
from .consumer import ConsumerGroupHeartbeat as _ConsumerGroupHeartbeat  # noqa: E402
from .consumer_flight import FENCED as _FENCED  # noqa: E402


class ConsumerRejoinFenced(Consumer):
    """A heartbeat with epoch 0 from a member the coordinator still has is fenced, not handled."""

    name = "consumer-rejoin-fenced"
    summary = "KIP-848, but a heartbeat with epoch 0 from a member the coordinator has is answered FENCED_MEMBER_EPOCH"
    python_only = True  # the compiled kernel does not encode this bug
    z3 = False  # the proofs encode consumer itself, not this broken variant
    broken = True
    bug = (
        "the coordinator validates epoch 0 as any other epoch when it already has the member (Kafka 4.3.1 handles it: "
        "KAFKA-19233): a client whose join answer was lost retries with epoch 0, is fenced, rejoins with epoch 0, is "
        "fenced again, and the group never converges"
    )
    expect_violation = "convergence"

    def handle(self, s, i):  # type: ignore[no-untyped-def]  # (KIP848State, int) -> (ConsumerGroup, Answer)
        c, r = s.clients[i], s.group.members[i]
        if c.epoch == 0 and r is not None and not r.left and not self.static_members:
            return s.group, (_FENCED,)
        return super().handle(s, i)


class ConsumerSecondHeartbeat(Consumer):
    """A client that heartbeats again while its previous heartbeat's answer is still on its way."""

    name = "consumer-second-heartbeat"
    summary = "KIP-848, but a client sends its next heartbeat before the answer to the previous one arrived"
    python_only = True  # the compiled kernel does not encode this bug
    z3 = False  # the proofs encode consumer itself, not this broken variant
    broken = True
    bug = (
        "the client does not keep one heartbeat in flight (Kafka's ConsumerHeartbeatRequestManager does): it heartbeats "
        "again while a late answer is on its way, and when that older answer arrives it takes the older epoch and "
        "assignment back, partitions it has since revoked and the coordinator has given to another member included"
    )
    expect_violation = "exclusive_ownership"

    def successors(self, s):  # type: ignore[no-untyped-def]  # (ConsumerState) -> Iterator[(Action, ConsumerState)]
        yield from super().successors(s)
        for i, c in enumerate(s.clients):
            if c.proc == _Proc.UP and c.answer is not None and c.epoch >= 0:
                t = self.heartbeat(s, i)  # (the client keeps the late answer: it is still on its way)
                if t != s:
                    yield self._acts[_ConsumerGroupHeartbeat][i], t


# -- the classic family's first full run (issue 30) ----------------------------------------------------------------
from .coordinator_assigns import CoordinatorAssigns  # noqa: E402


class CoordinatorAssignsNoRevoke(CoordinatorAssigns):
    """The coordinator assigns in the JoinGroup answer, but members keep their partitions across JoinGroup."""

    name = "coordinator-assigns-no-revoke"
    summary = "pre-0.9 coordinator-side assignment, but members keep their partitions across JoinGroup (no revoke)"
    revoke_before_join = False
    broken = True
    python_only = True
    z3 = False  # the proofs encode coordinator-assigns itself, not this broken variant
    bug = (
        "the assignment comes with the JoinGroup answer: a member that reads its answer first owns a partition the "
        "other still holds, whose answer (of the new generation) is still on its way; the old owner gives it up "
        "only when it reads that answer, so the double ownership exists only while a member of the previous "
        "generation has the new generation's JoinGroup answer unread"
    )
    expect_violation = "exclusive_ownership"


# -- issue 30, the classic family's survivors (cprops): one broken variant per branch of a property ------------------
class EagerJoinKeepsGeneration(Eager):
    """A coordinator whose completed join phase keeps the generation it had."""

    name = "eager-join-keeps-generation"
    summary = "eager, but a completed join phase does not bump the group's generation"
    broken = True
    python_only = True
    z3 = False  # the proofs encode eager itself, not this broken variant
    bug = (
        "initNextGeneration without generationId + 1: the join phase completes (the group moves to "
        "COMPLETING_REBALANCE) and answers its JoinGroups with the generation the group already had, so a member "
        "of the previous round is never told ILLEGAL_GENERATION (generation_monotonic's check of the group)"
    )
    expect_violation = "generation_monotonic"

    def _complete_join(self, g: _Group, clients: list[_Client]) -> _Group:
        # the parent adds one to the generation it is given: give it one less, so the group keeps its own
        return super()._complete_join(g.but(generation=g.generation - 1), clients)


class EagerSyncBumpsGeneration(Eager):
    """A coordinator that bumps the generation again when the leader's SyncGroup makes the group STABLE."""

    name = "eager-sync-bumps-generation"
    summary = "eager, but the generation grows again when the leader's SyncGroup makes the group STABLE"
    broken = True
    python_only = True
    z3 = False  # the proofs encode eager itself, not this broken variant
    bug = (
        "the coordinator counts a generation at both ends of a round: at the completed join phase and again at "
        "the move to STABLE, which is no join phase; every member then holds the generation before, is told "
        "ILLEGAL_GENERATION at its next heartbeat, and the group rebalances forever (generation_monotonic's "
        "check that the generation grows only at a completed join phase)"
    )
    expect_violation = "generation_monotonic"

    def _goto(self, g: _Group, status: _GS, **changes: object) -> _Group:  # type: ignore[override]
        if status == _GS.STABLE and g.status == _GS.COMPLETING_REBALANCE and "generation" not in changes:
            changes["generation"] = g.generation + 1
        return super()._goto(g, status, **changes)


class EagerSyncRollsBackGeneration(Eager):
    """A member that takes the generation before its own when its SyncGroup answer arrives."""

    name = "eager-sync-rolls-back-generation"
    summary = "eager, but a member goes back one generation when it reads its SyncGroup answer"
    broken = True
    python_only = True
    z3 = False  # the proofs encode eager itself, not this broken variant
    bug = (
        "the member reads its SyncGroup answer and records the generation before the one its JoinGroup answer "
        "gave it (its generation goes down by one on a step of its own, the coordinator untouched); Kafka's "
        "client takes its generation from the JoinGroup answer and keeps it (generation_monotonic's check of "
        "a member's step)"
    )
    expect_violation = "generation_monotonic"

    def _receive_sync(self, s: _State, i: int) -> _State:
        t = super()._receive_sync(s, i)
        c = t.clients[i]
        return self._with(t, clients=self._set(t.clients, i, c.but(generation=c.generation - 1)))


class EagerGroupMaxSizeOne(Eager):
    """A coordinator that takes one member only (group.max.size 1): every other consumer fails."""

    name = "eager-group-max-size-one"
    summary = "eager, but the coordinator refuses every member past the first (GROUP_MAX_SIZE_REACHED, fatal)"
    broken = True
    python_only = True
    z3 = False  # the proofs encode eager itself, not this broken variant
    bug = (
        "a JoinGroup from a new member of a group that has one is answered GROUP_MAX_SIZE_REACHED, fatal to the "
        "consumer (it stops): the group converges, but never with every started consumer in it, so the model is "
        "vacuous for groups of two (sometimes_all_stable: no reachable state is converged with every member in)"
    )
    expect_violation = "sometimes_all_stable"

    def _join(self, s: _State, i: int) -> _State:
        g = s.group
        if g.records[i] is None and any(r is not None for r in g.records):
            c = s.clients[i]
            return self._with(s, clients=self._set(s.clients, i, _Client(proc=_Proc.DOWN, topics=c.topics, ghost=c.ghost)))
        return super()._join(s, i)
