"""The coordinator side of the next-generation consumer protocol (KIP-848): ``ConsumerGroupHeartbeat``.

Theory of operation
-------------------
A sans-IO state machine beside the classic coordinator (``coordinator.py``): requests go in as
values, answers come out as values, time is a number the caller passes in. It follows Kafka's
``GroupMetadataManager.consumerGroupHeartbeat`` and ``CurrentAssignmentBuilder``:

* **Group epoch / target assignment.** A member joining (epoch 0), leaving (epoch -1), being fenced
  or removed, changing its subscription, or a subscribed topic growing bumps the group epoch; the
  target assignment is then recomputed by the server-side assignor (``uniform`` or ``range``,
  ``reference.assignors.server``) from the previous target, and stamped with the new epoch.
* **Reconciliation.** A member behind the assignment epoch first gets its kept partitions only
  (``UNREVOKED_PARTITIONS``, same epoch) until a heartbeat reports that it no longer owns the
  revoked ones; then it moves to the target epoch and gets every partition of its target that no
  other member holds (assigned or pending revocation); the rest it gets at later heartbeats
  (``UNRELEASED_PARTITIONS``) once their owners released them.
* **Validation and fencing** (Kafka's error names, ``reference.errors.Error``): unknown member id
  with epoch > 0 → ``UNKNOWN_MEMBER_ID``; an epoch ahead of the member's, or behind it unless it is
  the previous epoch and the member reports nothing outside its assignment → ``FENCED_MEMBER_EPOCH``
  (the member keeps its record: Kafka writes nothing). A static member's instance id held by a live member →
  ``UNRELEASED_INSTANCE_ID``. Offset commits: unknown member → ``UNKNOWN_MEMBER_ID``, epoch other
  than the member's → ``STALE_MEMBER_EPOCH``.
* **Timers.** :meth:`tick` expires members silent past the session timeout, and members that did not
  acknowledge a revocation within their rebalance timeout (:meth:`expire_session`,
  :meth:`expire_rebalance` are the timer callbacks, callable directly by harnesses).

Fault switches (``faults``): deliberate bugs for the conformance check's mutation table, each named
after what it breaks: ``no_wait_release``, ``no_epoch_bump``, ``unfenced_commits``,
``early_epoch`` (a revoking member gets the new epoch before it acknowledged), ``keep_removed_holding``
(a removed member's partitions are never released), ``no_rebalance_timeout``, ``accept_unknown_member``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable

from ..actor import Command, Event, Received, Send, TimerFired
from ..assignors.server import get_server
from ..errors import Error

__all__ = [
    "HeartbeatRequest", "HeartbeatResponse", "MemberState", "ConsumerGroupCoordinator", "COORDINATOR_FAULTS",
    "LEAVE_GROUP_MEMBER_EPOCH", "LEAVE_GROUP_STATIC_MEMBER_EPOCH", "ConsumerOffsetCommit",
]

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
COORDINATOR_FAULTS = frozenset({
    "no_wait_release", "no_epoch_bump", "unfenced_commits", "early_epoch", "keep_removed_holding",
    "no_rebalance_timeout", "accept_unknown_member",
})

TP = tuple[str, int]


class MemberState(Enum):
    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    UNRELEASED_PARTITIONS = "unreleased_partitions"


@dataclass
class HeartbeatRequest:
    """ConsumerGroupHeartbeatRequest (the fields the protocol reads). ``None`` means "unchanged"."""

    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: dict[str, list[int]] | None = None  # owned partitions


@dataclass(frozen=True)
class ConsumerOffsetCommit:
    """An OffsetCommit of a consumer-protocol member: its id, its member epoch, the offsets."""

    member_id: str
    member_epoch: int
    offsets: dict[TP, int]


@dataclass
class HeartbeatResponse:
    error: Error
    member_id: str | None = None
    member_epoch: int = -1
    heartbeat_interval_ms: int = 0
    assignment: dict[str, list[int]] | None = None  # None: unchanged / not sent
    error_message: str = ""


@dataclass
class Member:
    member_id: str
    instance_id: str | None
    topics: frozenset[str]
    regex: str | None = None
    state: MemberState = MemberState.STABLE
    epoch: int = 0
    previous_epoch: int = 0
    assigned: set[TP] = field(default_factory=set)
    revoking: set[TP] = field(default_factory=set)
    rebalance_timeout_ms: int = 300_000
    last_heartbeat_ms: int = 0
    revoke_deadline_ms: int | None = None
    left: bool = False  # static member that left with epoch -2
    since: dict[TP, int] = field(default_factory=dict)  # the epoch it was assigned at (its assignment epoch)


class ConsumerGroupCoordinator:
    """One consumer group managed with the ``consumer`` protocol."""

    # KIP-1251 (in Kafka 4.3.1): an OffsetCommit with an epoch older than the member's is accepted for the
    # partitions the member has held since that epoch or earlier. The migration's groups turn it off (their
    # model keeps the strict rule).
    kip_1251 = True
    # Kafka 4.3.1 (GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid throws before any write): a heartbeat
    # answered FENCED_MEMBER_EPOCH leaves the member's record as it was; the member keeps its partitions until it
    # rejoins with epoch 0 (KAFKA-19233: not validated) or its session expires (model/consumer.py,
    # ``fenced_keeps_record``; found by the Kafka oracle). The migration's groups turn it off (their model removes).
    fenced_keeps_record = True

    def __init__(self, group_id: str, topics: dict[str, int], assignor: str = "uniform",
                 session_timeout_ms: int = 45_000, heartbeat_interval_ms: int = 5_000,
                 faults: frozenset[str] = frozenset()) -> None:
        unknown = set(faults) - COORDINATOR_FAULTS
        if unknown:
            raise ValueError(f"unknown coordinator fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(COORDINATOR_FAULTS))}")
        self.group_id = group_id
        self.topics = dict(topics)
        self.assignor = get_server(assignor)
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.faults = frozenset(faults)
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.target: dict[str, set[TP]] = {}  # member id -> its partitions
        self.members: dict[str, Member] = {}
        self.static: dict[str, str] = {}  # instance id -> member id
        self.holder: dict[TP, str] = {}  # partition -> member holding it (assigned or revoking): its epoch is set
        self.commits: dict[TP, tuple[str, int, int]] = {}  # partition -> (member, epoch, offset)
        self.log: list[dict[str, Any]] = []  # what happened, for narrations and transcripts

    # -- the target assignment --------------------------------------------------------------------
    def _resolve(self, m: Member) -> frozenset[str]:
        if m.regex is not None:
            rx = re.compile(m.regex)
            return frozenset(t for t in self.topics if rx.fullmatch(t))
        return m.topics

    def _bump(self, why: str) -> None:
        subs = {mid: sorted(t for t in self._resolve(m) if t in self.topics) for mid, m in self.members.items()}
        current = {mid: _by_topic(self.target.get(mid, ())) for mid in self.members}
        result = self.assignor.assign(self.topics, subs, current)
        self.target = {mid: {(t, p) for t, ps in per.items() for p in ps} for mid, per in result.items()}
        if "no_epoch_bump" in self.faults and self.group_epoch > 0:
            self.log.append({"event": "target", "why": why, "epoch": self.assignment_epoch})
            return
        self.group_epoch += 1
        self.assignment_epoch = self.group_epoch
        self.log.append({"event": "target", "why": why, "epoch": self.group_epoch})

    def _set_holding(self, m: Member, assigned: set[TP], revoking: set[TP]) -> None:
        for tp in (m.assigned | m.revoking) - (assigned | revoking):
            if self.holder.get(tp) == m.member_id:
                del self.holder[tp]
        for tp in assigned | revoking:
            self.holder[tp] = m.member_id
        m.assigned, m.revoking = assigned, revoking

    def _next_assignment(self, m: Member, now: int) -> None:
        target = self.target.get(m.member_id, set())
        keep = m.assigned & target
        revoke = (m.assigned | m.revoking) - target
        # Kafka 4.3.1: every outcome goes through ConsumerGroupMember.Builder.updateMemberEpoch, which makes the
        # previous epoch the epoch the member had, also when its epoch stays (UNREVOKED_PARTITIONS at its own epoch,
        # UNRELEASED_PARTITIONS reconciled again); found by the model's Kafka walks with lost answers
        if revoke:
            m.previous_epoch = m.epoch
            if "early_epoch" in self.faults and m.epoch != self.assignment_epoch:
                m.epoch = self.assignment_epoch  # BUG: before the revocation is acknowledged
            if m.state != MemberState.UNREVOKED_PARTITIONS:
                m.revoke_deadline_ms = now + m.rebalance_timeout_ms
            m.state = MemberState.UNREVOKED_PARTITIONS
            self._set_holding(m, keep, revoke)
            return
        want = target - keep
        if "no_wait_release" in self.faults:
            free = set(want)
        else:
            free = {tp for tp in want if self.holder.get(tp, m.member_id) == m.member_id}
        m.previous_epoch = m.epoch
        m.epoch = self.assignment_epoch
        m.since = {tp: (m.since.get(tp, m.epoch) if tp in keep else m.epoch) for tp in keep | free}
        m.state = MemberState.UNRELEASED_PARTITIONS if want - free else MemberState.STABLE
        m.revoke_deadline_ms = None
        self._set_holding(m, keep | free, set())

    def _reconcile(self, m: Member, owned: set[TP] | None, now: int, changed: bool = False) -> None:
        if m.left:
            return
        if m.state == MemberState.UNREVOKED_PARTITIONS:
            if owned is None or owned & m.revoking:
                if changed:
                    # Kafka 4.3.1 (CurrentAssignmentBuilder.build, withHasSubscriptionChanged: updateCurrentAssignment):
                    # the partitions of topics it no longer subscribes to go from its assignment to those pending
                    # revocation at once; found by the model's Kafka walks
                    topics = self._resolve(m)
                    drop = {tp for tp in m.assigned if tp[0] not in topics}
                    if drop:  # (updateCurrentAssignment -> updateMemberEpoch, as in _next_assignment)
                        m.previous_epoch = m.epoch
                        self._set_holding(m, m.assigned - drop, m.revoking | drop)
                return
            self._set_holding(m, m.assigned, set())
            self._next_assignment(m, now)
            return
        if m.epoch != self.assignment_epoch or m.state == MemberState.UNRELEASED_PARTITIONS:
            self._next_assignment(m, now)

    def _remove(self, member_id: str, why: str) -> None:
        m = self.members.pop(member_id)
        if "keep_removed_holding" not in self.faults:  # BUG when set: its partitions' epochs stay set
            self._set_holding(m, set(), set())
        if m.instance_id is not None and self.static.get(m.instance_id) == member_id:
            del self.static[m.instance_id]
        self.log.append({"event": "removed", "member": member_id, "why": why})
        self._bump(f"{member_id} {why}")

    # -- requests -----------------------------------------------------------------------------------
    # -- the one actor contract (reference/actor.py) ---------------------------------------------------
    def handle(self, now_ms: int, event: Event) -> list[Command]:
        """One event in, the commands out: a ``HeartbeatRequest`` or ``ConsumerOffsetCommit`` received from a
        member is answered (``Send`` back to it: the ``HeartbeatResponse``, or the commit's ``Error``);
        ``TimerFired("timers")`` fires the session and rebalance timeouts due (:meth:`tick`; nothing is sent,
        as in Kafka: a removed member learns it at its next heartbeat)."""
        if isinstance(event, Received):
            msg = event.message
            if isinstance(msg, HeartbeatRequest):
                return [Send(event.sender, self.heartbeat(msg, now_ms))]
            if isinstance(msg, ConsumerOffsetCommit):
                return [Send(event.sender, self.offset_commit(msg.member_id, msg.member_epoch, msg.offsets))]
        elif isinstance(event, TimerFired) and event.key == "timers":
            self.tick(now_ms)
        return []

    def heartbeat(self, req: HeartbeatRequest, now: int = 0) -> HeartbeatResponse:
        """Handle one ConsumerGroupHeartbeat at time ``now`` (ms)."""
        owned = None
        if req.topic_partitions is not None:
            owned = {(t, p) for t, ps in req.topic_partitions.items() for p in ps}
        epoch = req.member_epoch
        m = self.members.get(req.member_id)
        if epoch != 0 and self.group_epoch == 0 and not self.members:
            # no member has joined yet, so Kafka has no group: GROUP_ID_NOT_FOUND (GroupMetadataManager.consumerGroup;
            # found by the Kafka oracle)
            return HeartbeatResponse(Error.GROUP_ID_NOT_FOUND, req.member_id, epoch)
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            if m is None:
                return HeartbeatResponse(Error.UNKNOWN_MEMBER_ID, req.member_id, epoch)
            if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and m.instance_id is not None:
                # Kafka 4.3.1 (GroupMetadataManager.consumerGroupStaticMemberGroupLeave) keeps it at epoch -2 with its
                # assignment, nothing pending revocation (free at once) and its assignment epochs reset to 0; found by
                # the model's Kafka walks
                self._set_holding(m, m.assigned, set())
                m.since = {tp: 0 for tp in m.assigned}
                m.left = True
                m.last_heartbeat_ms = now
                self.log.append({"event": "left", "member": m.member_id, "static": True})
            else:
                self._remove(m.member_id, "left the group")
            # Kafka 4.3.1 (GroupMetadataManager.consumerGroupLeave) answers a leave with no heartbeat interval (0);
            # found by the Kafka oracle
            return HeartbeatResponse(Error.NONE, req.member_id, epoch)
        if epoch == 0 and req.instance_id is not None and req.instance_id in self.static:
            held = self.members[self.static[req.instance_id]]
            if not held.left:
                # Kafka 4.3.1 (throwIfInstanceIdIsUnreleased): an instance id held by a static member that has not
                # left (epoch -2) cannot join, whatever the member id, the holder's own included; found by the
                # Kafka oracle
                return HeartbeatResponse(Error.UNRELEASED_INSTANCE_ID, req.member_id, 0,
                                         error_message=f"instance {req.instance_id} is still held by {held.member_id}")
        changed = False  # the heartbeat changed the member's subscription (hasSubscriptionChanged)
        if epoch == 0 and (m is None or m.left):
            if req.instance_id is not None and req.instance_id in self.static:
                old = self.members[self.static[req.instance_id]]
                if not old.left and old.member_id != req.member_id:
                    return HeartbeatResponse(Error.UNRELEASED_INSTANCE_ID, req.member_id, 0,
                                             error_message=f"instance {req.instance_id} is still held by {old.member_id}")
                # The static member comes back: it takes the old member over, with its assignment.
                del self.members[old.member_id]
                old_id = old.member_id
                old.member_id, old.left = req.member_id, False
                self.members[req.member_id] = old
                self.static[req.instance_id] = req.member_id
                for tp in old.assigned | old.revoking:
                    self.holder[tp] = req.member_id
                if old_id in self.target:
                    self.target[req.member_id] = self.target.pop(old_id)
                m = old
                self.log.append({"event": "replaced", "member": req.member_id, "old": old_id})
                topics = frozenset(req.subscribed_topic_names or ())
                if req.subscribed_topic_names is not None and topics != m.topics:
                    m.topics = topics
                    self._bump(f"{m.member_id} changed its subscription")
            else:
                if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
                    return HeartbeatResponse(Error.INVALID_REQUEST, req.member_id, 0,
                                             error_message="a joining member must send its subscription")
                m = Member(req.member_id, req.instance_id, frozenset(req.subscribed_topic_names or ()),
                           regex=req.subscribed_topic_regex)
                if req.rebalance_timeout_ms > 0:
                    m.rebalance_timeout_ms = req.rebalance_timeout_ms
                self.members[m.member_id] = m
                if req.instance_id is not None:
                    self.static[req.instance_id] = m.member_id
                self.log.append({"event": "joined", "member": m.member_id})
                self._bump(f"{m.member_id} joined")
        elif m is None:
            if "accept_unknown_member" in self.faults and epoch > 0:
                m = Member(req.member_id, req.instance_id, frozenset(req.subscribed_topic_names or ()))
                self.members[m.member_id] = m
                self._bump(f"{m.member_id} joined")
            else:
                return HeartbeatResponse(Error.UNKNOWN_MEMBER_ID, req.member_id, epoch,
                                         error_message=f"member {req.member_id} is not in group {self.group_id}")
        else:
            # a member the coordinator has: with its epoch checked, or with epoch 0 not (a fenced member rejoining, or
            # one whose join answer was lost: Kafka 4.3.1 throwIfConsumerGroupMemberEpochIsInvalid returns at once for
            # epoch 0, KAFKA-19233); either way the request updates its subscription (found by the model's Kafka walks)
            if epoch != 0 and epoch != m.epoch and not (
                    epoch == m.previous_epoch and owned is not None and owned <= m.assigned):
                if not self.fenced_keeps_record:
                    self._remove(m.member_id, f"was fenced (epoch {epoch}, member epoch {m.epoch})")
                return HeartbeatResponse(Error.FENCED_MEMBER_EPOCH, req.member_id, epoch,
                                         error_message=f"epoch {epoch} is not the member epoch {m.epoch}")
            if req.subscribed_topic_names is not None and frozenset(req.subscribed_topic_names) != m.topics:
                m.topics = frozenset(req.subscribed_topic_names)
                changed = True
            if req.subscribed_topic_regex is not None and req.subscribed_topic_regex != m.regex:
                m.regex = req.subscribed_topic_regex
                changed = True
            if changed:
                self._bump(f"{m.member_id} changed its subscription")
        m.last_heartbeat_ms = now
        before = (m.epoch, frozenset(m.assigned))
        self._reconcile(m, owned, now, changed)
        send = (m.epoch, frozenset(m.assigned)) != before or epoch == 0 or owned is not None
        return HeartbeatResponse(Error.NONE, m.member_id, m.epoch, self.heartbeat_interval_ms,
                                 _by_topic(m.assigned) if send else None)

    def offset_commit(self, member_id: str, member_epoch: int, offsets: dict[TP, int]) -> Error:
        """OffsetCommit for this group, fenced by member epoch."""
        if self.group_epoch == 0 and not self.members and member_epoch >= 0:
            # no member has joined yet, so Kafka has no group: OffsetCommit v9+ with a generation or epoch
            # answers GROUP_ID_NOT_FOUND (OffsetMetadataManager.validateOffsetCommit; found by the Kafka oracle)
            return Error.GROUP_ID_NOT_FOUND
        if member_epoch < 0 and not self.members:
            # Kafka 4.3.1 (ConsumerGroup.validateOffsetCommit): epoch -1 is the admin client or a consumer without
            # group management, which may commit while the group is empty; found by the Kafka oracle
            for tp, off in offsets.items():
                self.commits[tp] = (member_id, member_epoch, off)
            return Error.NONE
        if "unfenced_commits" not in self.faults:
            m = self.members.get(member_id)
            if m is not None and m.left:
                # Kafka 4.3.1 keeps a static member that left temporarily, at epoch -2: a commit with another
                # epoch is newer than that, STALE_MEMBER_EPOCH (ConsumerGroup.validateOffsetCommit; the oracle)
                if member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    return Error.STALE_MEMBER_EPOCH
                for tp, off in offsets.items():
                    self.commits[tp] = (member_id, member_epoch, off)
                return Error.NONE
            if m is None:
                return Error.UNKNOWN_MEMBER_ID
            if not self._epoch_ok(m, member_epoch, offsets):
                return Error.STALE_MEMBER_EPOCH
        for tp, off in offsets.items():
            self.commits[tp] = (member_id, member_epoch, off)
        return Error.NONE

    def _epoch_ok(self, m: Member, epoch: int, partitions) -> bool:  # type: ignore[no-untyped-def]
        """``ConsumerGroup.validateOffsetCommit``: the member's epoch; or (KIP-1251) an older one for partitions
        assigned or pending revocation whose assignment epoch is not newer than it."""
        if epoch == m.epoch:
            return True
        if epoch > m.epoch or not self.kip_1251:
            return False
        held = m.assigned | m.revoking
        return all(tp in held and m.since.get(tp, 0) <= epoch for tp in partitions)

    def commit_accepted(self, member_id: str, member_epoch: int, partitions=()) -> bool:  # type: ignore[no-untyped-def]
        """Would a commit of ``partitions`` be accepted (without writing it)?"""
        if "unfenced_commits" in self.faults:
            return True
        m = self.members.get(member_id)
        return m is not None and not m.left and self._epoch_ok(m, member_epoch, partitions)

    # -- timers and metadata ---------------------------------------------------------------------------
    def expire_session(self, member_id: str) -> None:
        if member_id in self.members:
            self._remove(member_id, "missed its session timeout")

    def expire_rebalance(self, member_id: str) -> None:
        m = self.members.get(member_id)
        if m is None or m.state != MemberState.UNREVOKED_PARTITIONS or "no_rebalance_timeout" in self.faults:
            return
        self._remove(member_id, "did not revoke within its rebalance timeout")

    def tick(self, now: int) -> list[str]:
        """Fire the timers due at ``now``: the members removed, in member-id order."""
        gone = []
        for mid in sorted(self.members):
            m = self.members[mid]
            if now - m.last_heartbeat_ms >= self.session_timeout_ms:
                self.expire_session(mid)
                gone.append(mid)
            elif m.revoke_deadline_ms is not None and now >= m.revoke_deadline_ms and "no_rebalance_timeout" not in self.faults:
                self.expire_rebalance(mid)
                gone.append(mid)
        return gone

    def add_partitions(self, topic: str, count: int) -> None:
        """A topic gets ``count`` partitions (metadata change): members subscribed see a new target."""
        self.topics[topic] = count
        if self.members:
            self._bump(f"topic {topic} has {count} partitions")

    def describe(self) -> dict[str, Any]:
        """ConsumerGroupDescribe, roughly: the group, each member and the target."""
        return {
            "group_epoch": self.group_epoch, "assignment_epoch": self.assignment_epoch,
            "members": {
                mid: {"state": m.state.value, "epoch": m.epoch, "previous_epoch": m.previous_epoch,
                      "assigned": _by_topic(m.assigned), "revoking": _by_topic(m.revoking),
                      "topics": sorted(m.topics), "instance_id": m.instance_id, "left": m.left,
                      "target": _by_topic(self.target.get(mid, ()))}
                for mid, m in sorted(self.members.items())
            },
        }


def _by_topic(tps: Iterable[TP]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out
