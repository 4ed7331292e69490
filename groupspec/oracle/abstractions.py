"""The documented differences between the reference coordinator and Kafka's (docs/conformance.md, "Kafka oracle").

Each entry names a choice Kafka leaves open (or a step Kafka's shard cannot take), the reason the reference may
differ, and a predicate that recognises a difference it explains. Nothing else is explained: a difference no entry
recognises is reported as unexplained (and fails ``tests/test_oracle_replay.py``). An entry marked ``diverges``
ends the comparison of the script: what follows depends on the open choice (e.g. which member leads).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Abstraction", "ABSTRACTIONS", "explain", "diverges"]


@dataclass(frozen=True)
class Abstraction:
    id: str
    reason: str
    matches: Callable[[Any], bool]   # Difference -> bool
    diverges: bool = False


def _without(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in keys}


def _pairs(d: Any) -> list[tuple[dict[str, Any], dict[str, Any]]] | None:
    """The answers of both sides paired by recipient and request, or None if they do not pair up."""
    ref, kafka = d.reference, d.kafka
    if len(ref) != len(kafka):
        return None

    def key(a: dict[str, Any]) -> tuple[str, str, str]:
        return str(a.get("to")), str(a.get("request")), str(a.get("at"))

    ref, kafka = sorted(ref, key=key), sorted(kafka, key=key)
    if [key(a) for a in ref] != [key(a) for a in kafka]:
        return None
    return list(zip(ref, kafka))


def _pairs_by_recipient(d: Any) -> list[tuple[dict[str, Any], dict[str, Any]]] | None:
    """The answers of both sides paired by recipient and request (whatever their times), or None."""
    ref, kafka = d.reference, d.kafka
    if not isinstance(ref, list) or len(ref) != len(kafka):
        return None

    def key(a: dict[str, Any]) -> tuple[str, ...]:
        return str(a.get("to")), str(a.get("request"))

    ref, kafka = sorted(ref, key=key), sorted(kafka, key=key)
    if [key(a) for a in ref] != [key(a) for a in kafka]:
        return None
    return list(zip(ref, kafka))


def _leader_choice(d: Any) -> bool:
    if d.what not in ("state", "answer") or "members" in d.reference and isinstance(d.reference["members"], dict):
        return False
    if d.what == "state":
        r, k = d.reference, d.kafka
        return (r.get("leader") != k.get("leader") and _without(r, "leader") == _without(k, "leader")
                and r.get("leader") in r.get("members", []) and k.get("leader") in k.get("members", []))
    pairs = _pairs(d)
    if not pairs:
        return False
    differs = False
    for r, k in pairs:
        if r.get("request") != "JoinGroup":
            if r != k:
                return False
            continue
        if _without(r, "leader", "members") != _without(k, "leader", "members"):
            return False
        for a in (r, k):  # the full member list goes to the leader only, on both sides
            if bool(a.get("members")) != (a.get("member") == a.get("leader")):
                return False
        differs = differs or r.get("leader") != k.get("leader")
    return differs


def _protocol_tie(d: Any) -> bool:
    if d.what == "state" and "protocol" not in d.reference:
        return False
    if d.what == "state":
        return d.reference.get("protocol") != d.kafka.get("protocol") and \
            _without(d.reference, "protocol") == _without(d.kafka, "protocol")
    pairs = _pairs(d)
    if not pairs:
        return False
    return all(_without(r, "protocol") == _without(k, "protocol") for r, k in pairs) and \
        any(r.get("protocol") != k.get("protocol") for r, k in pairs)


def _unchanged_assignment_not_resent(d: Any) -> bool:
    if d.what != "answer":
        return False
    pairs = _pairs(d)
    if not pairs:
        return False
    differs = False
    for r, k in pairs:
        if r == k:
            continue
        if (r.get("request") != "ConsumerGroupHeartbeat" or r.get("error") != "NONE"
                or _without(r, "assignment") != _without(k, "assignment") or k.get("assignment") is not None):
            return False
        differs = True
    return differs


def _target_computed_later(d: Any) -> bool:
    r, k = d.reference, d.kafka
    if d.what != "state" or not isinstance(r.get("members"), dict) or not isinstance(k.get("members"), dict):
        return False
    if r.get("group_epoch") != k.get("group_epoch") or set(r["members"]) != set(k["members"]):
        return False
    if not (k.get("assignment_epoch", 0) < k["group_epoch"] == r.get("assignment_epoch")):
        return False
    def same(m: str) -> bool:  # a static member that left shows epoch -2 on Kafka's side (static-left-epoch)
        rm, km = r["members"][m], k["members"][m]
        if km.get("epoch") == -2:
            return _without(rm, "target", "epoch") == _without(km, "target", "epoch")
        return _without(rm, "target") == _without(km, "target")

    return all(same(m) for m in r["members"])


def _error_answer_fields(d: Any) -> bool:
    if d.what != "answer":
        return False
    pairs = _pairs(d)
    if not pairs:
        return False
    differs = False
    for r, k in pairs:
        if r == k:
            continue
        fields = ("member", "member_epoch", "heartbeat_interval_ms", "assignment")
        if (r.get("request") != "ConsumerGroupHeartbeat" or r.get("error") == "NONE"
                or _without(r, *fields) != _without(k, *fields) or k.get("member") is not None
                or k.get("member_epoch") != 0):
            return False
        differs = True
    return differs


def _revocation_already_done(d: Any) -> bool:
    if d.what != "answer":
        return False
    pairs = _pairs(d)
    if not pairs:
        return False
    differs = False
    for r, k in pairs:
        if r == k:
            continue
        if (r.get("request") != "ConsumerGroupHeartbeat" or r.get("error") != "NONE" or k.get("error") != "NONE"
                or _without(r, "member_epoch", "assignment") != _without(k, "member_epoch", "assignment")
                or not (k.get("member_epoch", 0) > r.get("member_epoch", 0)) or k.get("assignment") is None):
            return False
        differs = True
    return differs


def _static_left_epoch(d: Any) -> bool:
    r, k = d.reference, d.kafka
    if d.what != "state" or not isinstance(r.get("members"), dict) or not isinstance(k.get("members"), dict):
        return False
    if _without(r, "members") != _without(k, "members") or set(r["members"]) != set(k["members"]):
        return False
    differs = [m for m in r["members"] if r["members"][m] != k["members"][m]]
    return bool(differs) and all(k["members"][m].get("epoch") == -2
                                 and _without(r["members"][m], "epoch") == _without(k["members"][m], "epoch")
                                 for m in differs)


def _assignor_choice(d: Any) -> bool:
    if d.what == "answer":
        pairs = _pairs(d)
        if not pairs:
            return False
        differs = False
        for r, k in pairs:
            if r == k:
                continue
            ra, ka = r.get("assignment"), k.get("assignment")
            if (r.get("request") != "ConsumerGroupHeartbeat" or ra is None or ka is None or abs(len(ra) - len(ka)) > 1
                    or _without(r, "assignment") != _without(k, "assignment")):
                return False
            differs = True
        return differs
    r, k = d.reference, d.kafka
    if d.what != "state" or not isinstance(r.get("members"), dict) or not isinstance(k.get("members"), dict):
        return False
    if _without(r, "members") != _without(k, "members") or set(r["members"]) != set(k["members"]):
        return False
    fields = ("assigned", "revoking", "target")

    def balanced(side: dict[str, Any]) -> bool:
        sizes = [len(v["target"]) for v in side["members"].values()]
        return not sizes or max(sizes) - min(sizes) <= 1

    return (all(_without(r["members"][m], *fields) == _without(k["members"][m], *fields) for m in r["members"])
            and sum(len(v["target"]) for v in r["members"].values())
            == sum(len(v["target"]) for v in k["members"].values())
            and balanced(r) and balanced(k))


ABSTRACTIONS: list[Abstraction] = [
    Abstraction(
        "assignor-choice",
        "KIP-848 target assignments: where several balanced assignments exist, Kafka 4.3.1's UniformAssignor and "
        "the reference's uniform assignor (reference/assignors/server.py) may pick different ones (which "
        "partitions a returning member gets back, which member takes the extra one). Recognised when only the "
        "assigned partitions differ, both targets balanced (sizes within one) over the same partition count, "
        "with the same epochs, states and errors. The assignors are compared on their "
        "own elsewhere; what follows here depends on the choice, so the comparison stops.",
        _assignor_choice, diverges=True),
    Abstraction(
        "static-left-epoch",
        "A static member that left temporarily (epoch -2) keeps its partitions until it returns or its session "
        "expires, on both sides; Kafka 4.3.1 stores -2 as the member's epoch, the reference keeps the last epoch "
        "and a 'left' flag. Only the state line's epoch of that member differs.",
        _static_left_epoch),
    Abstraction(
        "revocation-already-done",
        "KIP-848 reconciliation (kept deliberately; docs/conformance.md gives the decision): when the target "
        "moves partitions away from a member that, by the partitions it reports owning in the same heartbeat, no longer holds them (e.g. it rejoined with epoch 0 and owns nothing), "
        "Kafka 4.3.1 moves it to the new epoch in that heartbeat (CurrentAssignmentBuilder skips the revocation "
        "step); the reference first answers at the old epoch and waits for one more heartbeat. The member's "
        "partitions are the same; its epoch is one step behind in the reference, and what follows differs, so "
        "the comparison stops.",
        _revocation_already_done, diverges=True),
    Abstraction(
        "consumer-error-fields",
        "A ConsumerGroupHeartbeat answered with an error: Kafka 4.3.1 builds the answer from the error alone "
        "(GroupCoordinatorService's exception handler: no member id, epoch 0, no interval); the reference "
        "echoes the member id and epoch. The error is the same; a client reads nothing else from an error answer.",
        _error_answer_fields),
    Abstraction(
        "target-computed-later",
        "KIP-848: when a member leaves (or is removed), Kafka 4.3.1 bumps the group epoch but computes the new "
        "target assignment only at the next heartbeat of a remaining member (GroupMetadataManager."
        "consumerGroupHeartbeat -> maybeUpdateTargetAssignment); the reference computes it at once. Between the "
        "two, only the state's target assignment and assignment epoch differ; members' epochs, assigned and "
        "revoking partitions, and every answer are the same.",
        _target_computed_later),
    Abstraction(
        "assignment-resent",
        "ConsumerGroupHeartbeat (KIP-848): Kafka 4.3.1 puts the assignment in the answer only on a join (epoch 0), "
        "a full request (rebalance timeout, subscription and owned partitions all sent) or when the member's "
        "assigned partitions changed (GroupMetadataManager.consumerGroupHeartbeat); the reference also re-sends it "
        "when the request carries owned partitions or the member's epoch moved. A missing assignment means "
        "'unchanged' to a client, so both leave the member with the same partitions; only the answer's field "
        "differs (Kafka: null).",
        _unchanged_assignment_not_resent),
    Abstraction(
        "write-points",
        "A store_fails fault fails the next write of group metadata. Kafka 4.3.1's coordinator writes at more "
        "points than the reference (which keeps the Scala coordinator's writes: the leader's SyncGroup, a static "
        "member's replacement, the empty group at join completion): it also writes an empty group record when "
        "a JoinGroup creates the group (GroupMetadataManager.classicGroupJoinToClassicGroup) and the group "
        "record when a join phase completes. So the armed failure strikes a different request on each side. "
        "And Kafka makes every operation atomic with its write: a failed write reverts the whole operation and "
        "answers the mapped error (a LeaveGroup that empties the group answers COORDINATOR_NOT_AVAILABLE and the "
        "member stays), where the reference handles the failure as Kafka does only at the leader's SyncGroup and "
        "a static member's replacement and otherwise, as the Scala coordinator did, only logs it. What follows "
        "differs by construction, and the comparison stops. Recognised by the step at which each side consumed "
        "the armed failure and the kind of that step, not by the shape of the difference.",
        lambda d: False, diverges=True),
    Abstraction(
        "empty-group-record",
        "Kafka 4.3.1 writes an empty group record when a JoinGroup creates a group (even one that only hands "
        "out MEMBER_ID_REQUIRED), so after a failover the new coordinator loads an Empty group at generation 0; "
        "the reference (the Scala coordinator's writes) persists nothing for such a group, so it has no group. "
        "The two answer every request the same way (a missing group and an Empty generation-0 group with no "
        "members are alike to every request the scripts send); only the state line differs.",
        lambda d: d.what == "state" and d.reference.get("state") is None and d.kafka.get("state") == "Empty"
        and d.kafka.get("generation") == 0 and not d.kafka.get("members") and not d.kafka.get("pending")
        and _without(d.reference, "state", "generation") == _without(d.kafka, "state", "generation"),
        diverges=True),
    Abstraction(
        "group-expiration",
        "Kafka's coordinator runs a cleanup every offsets.retention.check.interval.ms (600 s) that deletes an "
        "Empty group with no committed offsets (GroupCoordinatorShard.cleanupGroupMetadata); the reference does "
        "not model offset retention and group expiry (offsets are kept for 7 days, groups forever), so the group "
        "exists on one side only from then on and the comparison stops.",
        lambda d: d.what == "state" and d.at >= 600_000 and d.kafka.get("state") is None
        and d.reference.get("state") == "Empty" and not d.reference.get("members") and not d.reference.get("pending"),
        diverges=True),
    Abstraction(
        "leader-choice",
        "When the leader leaves or misses a rebalance, Kafka makes the first member of its member HashMap "
        "(ClassicGroup.removeMember / maybeElectNewJoinedLeader) the leader; the order of that map follows the "
        "hashes of random member ids (<client.id>-<UUID>), so Kafka's own choice changes from run to run. The "
        "reference picks the first member in insertion order that rejoined (docs/coordinator.md). What follows "
        "in the script depends on who leads, so the comparison stops here.",
        _leader_choice, diverges=True),
    Abstraction(
        "protocol-vote-tie",
        "A tie in the protocol vote: Kafka's ClassicGroup.selectProtocol takes the first tied protocol in its "
        "HashMap's order of protocol names (range before roundrobin, whatever the members prefer); the reference "
        "takes the tied protocol the leader lists first (docs/coordinator.md). Both are protocols every member "
        "supports with the most votes.",
        _protocol_tie),
]


def explain(difference: Any) -> str | None:
    for a in ABSTRACTIONS:
        if a.matches(difference):
            return a.id
    return None


def diverges(abstraction_id: str | None) -> bool:
    return any(a.id == abstraction_id and a.diverges for a in ABSTRACTIONS)
