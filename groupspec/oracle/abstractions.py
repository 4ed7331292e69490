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
    key = lambda a: (str(a.get("to")), str(a.get("request")), str(a.get("at")))  # noqa: E731
    ref, kafka = sorted(ref, key=key), sorted(kafka, key=key)
    if [key(a) for a in ref] != [key(a) for a in kafka]:
        return None
    return list(zip(ref, kafka))


def _leader_choice(d: Any) -> bool:
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
    if d.what == "state":
        return d.reference.get("protocol") != d.kafka.get("protocol") and \
            _without(d.reference, "protocol") == _without(d.kafka, "protocol")
    pairs = _pairs(d)
    if not pairs:
        return False
    return all(_without(r, "protocol") == _without(k, "protocol") for r, k in pairs) and \
        any(r.get("protocol") != k.get("protocol") for r, k in pairs)


ABSTRACTIONS: list[Abstraction] = [
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
