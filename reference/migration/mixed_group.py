"""Classic members inside a consumer group, and the online upgrade and downgrade of one group.

Theory of operation
-------------------
Kafka's coordinator (``GroupMetadataManager``, 4.0+) lets a group move between the classic protocol
(``coordinator.py``) and the next-generation one (``consumer_group.py``) while it runs:

* **Upgrade** (:meth:`MixedConsumerGroup.upgrade`): the first ConsumerGroupHeartbeat with member epoch 0
  for a classic group converts it (``convertToConsumerGroup``, ``ConsumerGroup.fromClassicGroup``): one
  member per classic member, ``STABLE``, member epoch = previous epoch = the classic generation, assigned
  partitions = its stored classic assignment, which is also its target; group epoch = assignment epoch
  = the generation. A stored assignment that is not a ConsumerProtocolAssignment (the empty bytes of a
  member that never got one) cannot be parsed: the conversion is refused and the heartbeat answered
  ``GROUP_ID_NOT_FOUND``. So is a group that does not use the ``consumer`` protocol type, or a policy
  (``group.consumer.migration.policy``) without upgrades.
* **Classic members** keep sending JoinGroup / SyncGroup / Heartbeat / OffsetCommit, answered from the
  consumer group: JoinGroup (a new member bumps the group epoch; the member is reconciled with the
  owned partitions of its subscription) is answered at once with generation = member epoch and no
  leader; SyncGroup with another generation is ``ILLEGAL_GENERATION``, while the group epoch is ahead and
  the member is not revoking ``REBALANCE_IN_PROGRESS``, else the member's *assigned* partitions;
  Heartbeat answers ``REBALANCE_IN_PROGRESS`` when the member must rejoin (the group epoch is ahead, it
  must revoke, or partitions it waits for are free); commits compare the generation with the member
  epoch (``ILLEGAL_GENERATION``).
* **Downgrade** (:attr:`MixedConsumerGroup.downgraded`): when a member using the consumer protocol leaves,
  is fenced or expires and only classic members (at least one) remain, ``convertToClassicGroup``: a
  classic group at generation = the group epoch, each member storing its *target*, which must rebalance
  at once. :class:`ClassicSeed` is what the classic coordinator is given.

The model of the same rules is ``groupspec.model.migration``; this module never imports it.
Fault switches (deliberate bugs for the conformance check): ``sync_gives_target`` (SyncGroup answers the
target), ``no_rejoin_signal`` (Heartbeat never answers ``REBALANCE_IN_PROGRESS``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..consumer.coordinator import (ConsumerGroupCoordinator, HeartbeatRequest as CGHeartbeat, HeartbeatResponse as CGAnswer,
                             LEAVE_GROUP_MEMBER_EPOCH, Member, MemberState)
from ..classic import (
    Assignment, ConsumerProtocolError, GroupView, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    SyncGroupRequest, SyncGroupResponse, decode_assignment, decode_subscription, encode_assignment,
)
from ..errors import Error

__all__ = ["MixedConsumerGroup", "ClassicSeed", "MigrationRefused", "POLICIES", "MIGRATION_FAULTS"]

POLICIES = {"bidirectional": (True, True), "upgrade": (True, False), "downgrade": (False, True), "disabled": (False, False)}
MIGRATION_FAULTS = frozenset({"sync_gives_target", "no_rejoin_signal"})
TP = tuple[str, int]


class MigrationRefused(Exception):
    """The conversion cannot be made: the heartbeat is answered ``error``."""

    def __init__(self, error: Error, message: str) -> None:
        super().__init__(message)
        self.error = error


@dataclass
class ClassicSeed:
    """A downgraded group, as ``ClassicGroup.fromConsumerGroup`` builds it: STABLE at ``generation``, each
    member storing its target; ``prepareRebalance`` follows at once."""

    generation: int
    assignments: dict[str, set[TP]] = field(default_factory=dict)  # member id -> its partitions
    protocols: dict[str, tuple[tuple[str, bytes], ...]] = field(default_factory=dict)


class MixedConsumerGroup:
    """A consumer group whose members may speak either protocol (wraps a :class:`ConsumerGroupCoordinator`)."""

    def __init__(self, group: ConsumerGroupCoordinator, policy: str = "bidirectional",
                 faults: frozenset[str] = frozenset()) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown migration policy {policy!r}; choose from {', '.join(POLICIES)}")
        unknown = set(faults) - MIGRATION_FAULTS
        if unknown:
            raise ValueError(f"unknown migration fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(MIGRATION_FAULTS))}")
        group.kip_1251 = False  # the migration's model validates commits by the strict rule (pre-KIP-1251)
        group.fenced_keeps_record = False  # the migration's model removes a fenced member (model/migration.py)
        self.group = group
        self.policy = policy
        self.faults = frozenset(faults)
        self.classic: dict[str, tuple[tuple[str, bytes], ...]] = {}  # classic members: their JoinGroup protocols
        self.downgraded: ClassicSeed | None = None
        self.deleted = False  # an empty consumer group deleted by a classic JoinGroup
        self._next_id = 0

    # -- the upgrade --------------------------------------------------------------------------------
    @classmethod
    def upgrade(cls, view: GroupView, topics: dict[str, int], assignor: str = "uniform", policy: str = "bidirectional",
                faults: frozenset[str] = frozenset(), now: int = 0) -> "MixedConsumerGroup":
        """Convert a classic group (``coordinator.GroupView``) into a consumer group; MigrationRefused if not."""
        if policy not in POLICIES:
            raise ValueError(f"unknown migration policy {policy!r}")
        if not POLICIES[policy][0]:
            raise MigrationRefused(Error.GROUP_ID_NOT_FOUND, f"online upgrade is disabled (policy {policy})")
        if view.protocol_type != "consumer":
            raise MigrationRefused(Error.GROUP_ID_NOT_FOUND, f"group {view.group_id} does not use the consumer protocol type")
        g = ConsumerGroupCoordinator(view.group_id, topics, assignor)
        g.group_epoch = g.assignment_epoch = view.generation
        out = cls(g, policy, faults)
        for mv in view.members:
            try:
                sub = decode_subscription(dict(mv.protocols)[view.protocol_name])  # type: ignore[index]  # None: a KeyError, refused
                asg = decode_assignment(mv.assignment)
            except (ConsumerProtocolError, KeyError) as e:
                raise MigrationRefused(Error.GROUP_ID_NOT_FOUND,
                                       f"cannot upgrade group {view.group_id}: member {mv.member_id}: {e}") from None
            if asg.user_data:
                # Kafka 4.3.1, ConsumerGroup.fromClassicGroup: UnsupportedVersionException "userData from a custom
                # assignor would be lost", answered GROUP_ID_NOT_FOUND. Seen on the real broker with librdkafka,
                # which copies each member's subscription userData into its assignment (docs/findings.md, 10).
                raise MigrationRefused(Error.GROUP_ID_NOT_FOUND,
                                       f"cannot upgrade classic group {view.group_id} to consumer group: "
                                       "userData from a custom assignor would be lost")
            assigned = {(t, p) for t, p in asg.partitions}
            m = Member(mv.member_id, mv.group_instance_id, frozenset(sub.topics), epoch=view.generation,
                       previous_epoch=view.generation, rebalance_timeout_ms=mv.rebalance_timeout_ms, last_heartbeat_ms=now)
            g.members[m.member_id] = m
            g._set_holding(m, assigned, set())
            g.target[m.member_id] = set(assigned)
            if mv.group_instance_id is not None:
                g.static[mv.group_instance_id] = m.member_id
            out.classic[m.member_id] = mv.protocols
        g.log.append({"event": "upgraded", "generation": view.generation, "members": sorted(g.members)})
        return out

    # -- consumer-protocol members --------------------------------------------------------------------
    def consumer_heartbeat(self, req: CGHeartbeat, now: int = 0) -> CGAnswer:
        """A ConsumerGroupHeartbeat; a consumer-protocol member leaving or fenced may downgrade the group."""
        if self.downgraded is not None:
            return CGAnswer(Error.GROUP_ID_NOT_FOUND, req.member_id, req.member_epoch,
                            error_message=f"group {self.group.group_id} is not a consumer group")
        m = self.group.members.get(req.member_id)
        if m is not None and req.member_id not in self.classic and req.member_epoch != 0:
            owned = None if req.topic_partitions is None else {(t, p) for t, ps in req.topic_partitions.items() for p in ps}
            fenced = req.member_epoch > 0 and req.member_epoch != m.epoch and not (
                req.member_epoch == m.previous_epoch and owned is not None and owned <= m.assigned)
            if (req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH or fenced) and self._downgrade_if_last(req.member_id):
                err = Error.FENCED_MEMBER_EPOCH if fenced else Error.NONE
                return CGAnswer(err, req.member_id, req.member_epoch)
        return self.group.heartbeat(req, now)

    def _downgrade_if_last(self, leaving: str) -> bool:
        """``validateOnlineDowngradeWithFencedMember`` and ``convertToClassicGroup``."""
        g = self.group
        rest = [mid for mid in g.members if mid != leaving]
        if not rest or any(mid not in self.classic for mid in rest) or not POLICIES[self.policy][1]:
            return False
        self.downgraded = ClassicSeed(g.group_epoch, {mid: set(g.target.get(mid, ())) for mid in rest},
                                      {mid: self.classic[mid] for mid in rest})
        g.log.append({"event": "downgraded", "generation": g.group_epoch, "members": sorted(rest)})
        return True

    def tick(self, now: int) -> list[str]:
        """The session timeouts; a consumer-protocol member expiring last downgrades the group."""
        g = self.group
        for mid in sorted(g.members):
            if mid not in self.classic and now - g.members[mid].last_heartbeat_ms >= g.session_timeout_ms:
                if self._downgrade_if_last(mid):
                    return [mid]
        return g.tick(now)

    # -- classic members ------------------------------------------------------------------------------
    def join_group(self, req: JoinGroupRequest, now: int = 0) -> JoinGroupResponse | None:
        """``classicGroupJoinToConsumerGroup``: answered at once, generation = member epoch, no leader.

        ``None``: the consumer group is empty; Kafka deletes it and the JoinGroup goes to a new classic
        group (the caller's classic coordinator)."""
        g = self.group
        if not g.members:
            self.deleted = True
            return None
        member_id = req.member_id
        if member_id == "":
            self._next_id += 1
            return JoinGroupResponse(Error.MEMBER_ID_REQUIRED, member_id=f"{req.client_id}-classic-{self._next_id}")
        if req.protocol_type != "consumer" or not req.protocols:
            return JoinGroupResponse(Error.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        try:
            sub = decode_subscription(req.protocols[0][1])
        except ConsumerProtocolError:
            return JoinGroupResponse(Error.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        m = g.members.get(member_id)
        topics = frozenset(sub.topics)
        if m is None:
            m = Member(member_id, req.group_instance_id, topics, rebalance_timeout_ms=req.rebalance_timeout_ms)
            g.members[member_id] = m
            g.log.append({"event": "joined", "member": member_id, "classic": True})
            g._bump(f"{member_id} joined (classic)")
        elif m.topics != topics:
            m.topics = topics
            g._bump(f"{member_id} changed its subscription")
        self.classic[member_id] = req.protocols
        m.last_heartbeat_ms = now
        g._reconcile(m, {(t, p) for t, p in sub.owned_partitions}, now)
        return JoinGroupResponse(Error.NONE, generation_id=m.epoch, protocol_type="consumer",
                                 protocol_name=req.protocols[0][0], leader="", member_id=member_id)

    def _classic_member(self, member_id: str, generation: int) -> tuple[Member | None, Error]:
        m = self.group.members.get(member_id)
        if m is None or member_id not in self.classic:
            return None, Error.UNKNOWN_MEMBER_ID
        if generation != m.epoch:
            return None, Error.ILLEGAL_GENERATION
        return m, Error.NONE

    def sync_group(self, req: SyncGroupRequest, now: int = 0) -> SyncGroupResponse:
        """``classicGroupSyncToConsumerGroup``: the member's assigned partitions."""
        m, err = self._classic_member(req.member_id, req.generation_id)
        if m is None:
            return SyncGroupResponse(err)
        if self.group.group_epoch > m.epoch and m.state != MemberState.UNREVOKED_PARTITIONS:
            return SyncGroupResponse(Error.REBALANCE_IN_PROGRESS)
        m.last_heartbeat_ms = now
        given = self.group.target.get(m.member_id, set()) if "sync_gives_target" in self.faults else m.assigned
        data = encode_assignment(Assignment(partitions=tuple(sorted(given))))
        return SyncGroupResponse(Error.NONE, data, protocol_type="consumer", protocol_name=req.protocol_name)

    def heartbeat(self, req: HeartbeatRequest, now: int = 0) -> HeartbeatResponse:
        """``classicGroupHeartbeatToConsumerGroup``."""
        m, err = self._classic_member(req.member_id, req.generation_id)
        if m is None:
            return HeartbeatResponse(err)
        m.last_heartbeat_ms = now
        g = self.group
        if "no_rejoin_signal" in self.faults:
            return HeartbeatResponse(Error.NONE)
        waiting = g.target.get(m.member_id, set()) - m.assigned
        free = not any(g.holder.get(tp, m.member_id) != m.member_id for tp in waiting)
        if (m.epoch < g.group_epoch or m.state == MemberState.UNREVOKED_PARTITIONS
                or (m.state == MemberState.UNRELEASED_PARTITIONS and free)):
            return HeartbeatResponse(Error.REBALANCE_IN_PROGRESS)
        return HeartbeatResponse(Error.NONE)

    def leave_group(self, member_id: str) -> Error:
        """A classic member's LeaveGroup (a consumer-protocol member leaves with epoch -1)."""
        if member_id not in self.group.members or member_id not in self.classic:
            return Error.UNKNOWN_MEMBER_ID
        del self.classic[member_id]
        self.group._remove(member_id, "left the group (classic)")
        return Error.NONE

    def offset_commit(self, member_id: str, epoch: int, offsets: dict[TP, int]) -> Error:
        """OffsetCommit: a classic member's generation must be its member epoch (ILLEGAL_GENERATION)."""
        if member_id in self.classic:
            m, err = self._classic_member(member_id, epoch)
            if m is None:
                return err
        return self.group.offset_commit(member_id, epoch, offsets)

    def owned_view(self) -> dict[str, dict[str, Any]]:
        """Per member: protocol, state, epoch, assigned and pending revocation (for tests and narrations)."""
        return {mid: {"protocol": "classic" if mid in self.classic else "consumer", "state": m.state.value,
                      "epoch": m.epoch, "assigned": sorted(m.assigned), "revoking": sorted(m.revoking)}
                for mid, m in sorted(self.group.members.items())}
