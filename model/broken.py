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
