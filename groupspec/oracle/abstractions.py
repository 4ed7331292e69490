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
