"""The assignor checker's shapes and expected answers (assignors.md §2), around the invariant checks.

Theory of operation
-------------------
Everything here is a pure function of a *group state* and an *assignment*:

* a group state is ``(partitions_per_topic, subscriptions)`` in the shapes of the contract's form 1
  (``subscriptions[member_id] = {"topics", "owned", "generation", "instance_id", "rack"}``);
* an assignment is ``{member_id: [(topic, partition), ...]}`` after :func:`decode_output` has turned the
  candidate's raw return value into that shape (or raised :class:`Malformed`, which is an I11 failure).

Each ``check_*`` function returns ``None`` when the invariant holds, or a one-line explanation of the first
violation found. The eight invariant checks (I1–I6, I6′, I9) and the helpers they share live once, in the
reference's :mod:`groupspec.reference.assignors` (``properties.py``: the reference may import no tool, the
checker may import the reference), and are re-exported here; this module adds what only the checker needs:
decoding a candidate's return value (I11), Kafka's member order and the exact answers of Range and
RoundRobin (I7), and the follow-up rounds' state. The engine (:mod:`groupspec.assignorcheck.check`) drives
candidates over generated states and calls these functions; it never decides a verdict on its own.

Facts used (all from assignors.md, citing Kafka's classes):

* Kafka's ``MemberInfo.compareTo`` order: static members (with ``group.instance.id``) first, by instance id,
  then dynamic members by member id, both compared as Java strings (UTF-16 code units) — :func:`member_order`.
* ``AbstractPartitionAssignor``: only partitions of subscribed topics that exist are assigned, every member gets
  an entry (I1, I3, I4).
* ``CooperativeStickyAssignorTest.verifyCooperativeValidity``: added ∩ revoked = ∅ over raw owned partitions
  (I6), and at most 4 follow-up rounds (I8, KAFKA-9029/KAFKA-8767).
* ``AbstractStickyAssignorTest.isSticky``: no 2-cycles of movement per topic (I9).
* RangeAssignor: per topic, the first ``n mod k`` subscribers in MemberInfo order get ``n div k + 1``
  contiguous partitions (I7); RoundRobinAssignor: a circle over all members in MemberInfo order (I7).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from groupspec.reference.assignors import (
    check_complete, check_cooperative, check_generation_validated, check_members, check_movability,
    check_no_duplicates, check_no_two_cycles, check_subscribed_only, claims, java_string_key, owned_of,
    resolved_owners, subscribed_partitions, topics_of,
)

TP = tuple[str, int]
Assignment = dict[str, list[TP]]
Subscriptions = dict[str, dict[str, Any]]
PPT = dict[str, int]

#: Kafka's internal topics (``org.apache.kafka.common.internals.Topic``); brokers flag them ``is_internal``.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


__all__ = [
    "INTERNAL_TOPICS", "PPT", "TP", "Assignment", "Malformed", "Subscriptions", "as_sets", "canonical",
    "check_complete", "check_cooperative", "check_generation_validated", "check_members", "check_movability",
    "check_no_duplicates", "check_no_two_cycles", "check_subscribed_only", "claims", "decode_output",
    "describe_state", "diff_assignments", "eligible", "expected_range", "expected_roundrobin", "max_generation",
    "member_order", "next_round", "owned_of", "reorder", "resolved_owners", "subscribed_partitions", "topics_of",
]


class Malformed(Exception):
    """The candidate's return value is not ``{member_id: [(topic, partition), ...]}``."""


# ---------------------------------------------------------------------------------------------- shapes


def member_order(subscriptions: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Member ids in Kafka's ``MemberInfo`` order: static by instance id first, then dynamic by member id."""
    static = [m for m, s in subscriptions.items() if s.get("instance_id") is not None]
    dynamic = [m for m, s in subscriptions.items() if s.get("instance_id") is None]
    static.sort(key=lambda m: (java_string_key(subscriptions[m]["instance_id"]), java_string_key(m)))
    dynamic.sort(key=java_string_key)
    return static + dynamic


def eligible(ppt: Mapping[str, int], sub: Mapping[str, Any]) -> set[TP]:
    return {(t, p) for t in topics_of(sub) if t in ppt for p in range(max(0, int(ppt[t])))}


def decode_output(raw: Any) -> Assignment:
    """Turn a candidate's return value into ``{member: [(topic, partition), ...]}`` or raise :class:`Malformed`.

    Accepted: a mapping from ``str`` to an iterable of 2-item sequences ``(str, int)`` (tuples, lists,
    ``kafka.structs.TopicPartition``). Not accepted: anything else (``bool`` is not a partition number).
    """
    if not isinstance(raw, Mapping):
        raise Malformed(f"result is a {type(raw).__name__}, not a mapping of member id to partitions")
    out: Assignment = {}
    for member, parts in raw.items():
        if not isinstance(member, str):
            raise Malformed(f"member key {member!r} is a {type(member).__name__}, not a str")
        if isinstance(parts, (str, bytes, Mapping)) or not isinstance(parts, Iterable):
            raise Malformed(f"partitions of {member!r} are a {type(parts).__name__}, not a list")
        lst: list[TP] = []
        for item in parts:
            try:
                topic, part = item
            except (TypeError, ValueError):
                raise Malformed(f"item {item!r} of {member!r} is not a (topic, partition) pair") from None
            if not isinstance(topic, str) or isinstance(part, bool) or not isinstance(part, int):
                raise Malformed(f"item {item!r} of {member!r} is not a (str, int) pair")
            lst.append((topic, int(part)))
        out[member] = lst
    return out


def canonical(assignment: Mapping[str, Iterable[TP]]) -> dict[str, list[list[Any]]]:
    """JSON shape of the ``run`` contract: every list sorted, ``[topic, partition]`` pairs."""
    return {m: [[t, p] for t, p in sorted(parts)] for m, parts in sorted(assignment.items())}


def as_sets(assignment: Mapping[str, Iterable[TP]]) -> dict[str, frozenset[TP]]:
    return {m: frozenset(parts) for m, parts in assignment.items()}


# ------------------------------------------------------------------------------------ I7 (Range, RR)


def expected_range(ppt: PPT, subs: Subscriptions) -> Assignment:
    """RangeAssignor (assignors.md §1.1), non-rack: the assignment Java's Range gives; a spec, not a port."""
    order = member_order(subs)
    out: Assignment = {m: [] for m in subs}
    for t in sorted({t for s in subs.values() for t in topics_of(s)}):
        if ppt.get(t, 0) <= 0:
            continue
        members = [m for m in order if t in topics_of(subs[m])]
        q, r = divmod(ppt[t], len(members))
        start = 0
        for i, m in enumerate(members):
            n = q + (1 if i < r else 0)
            out[m].extend((t, p) for p in range(start, start + n))
            start += n
    return out


def expected_roundrobin(ppt: PPT, subs: Subscriptions) -> Assignment:
    """RoundRobinAssignor (assignors.md §1.2): one circle over all members in MemberInfo order."""
    order = member_order(subs)
    out: Assignment = {m: [] for m in subs}
    if not order:
        return out
    tps = sorted((t, p) for t, p in subscribed_partitions(ppt, subs))
    i = 0
    for t, p in tps:
        while t not in topics_of(subs[order[i % len(order)]]):
            i += 1
        out[order[i % len(order)]].append((t, p))
        i += 1
    return out


def diff_assignments(expected: Assignment, got: Assignment, label: str = "Kafka's algorithm gives") -> str | None:
    """First difference between two assignments compared as sets, as one line."""
    e, g = as_sets(expected), as_sets(got)
    for m in sorted(set(e) | set(g), key=java_string_key):
        a, b = e.get(m, frozenset()), g.get(m, frozenset())
        if a != b:
            def fmt(s: Iterable[TP]) -> str:
                return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(s)) + "]"
            return f"{m!r} got {fmt(b)} where {label} {fmt(a)}"
    return None


# ----------------------------------------------------------------------------------- state handling


def next_round(subs: Subscriptions, out: Assignment, generation: int) -> Subscriptions:
    """Subscriptions for the follow-up round: each member now owns what it was given, at ``generation``."""
    return {
        m: {**sub, "owned": [[t, p] for t, p in sorted(set(out.get(m, ())))], "generation": generation}
        for m, sub in subs.items()
    }


def max_generation(subs: Subscriptions) -> int:
    return max([int(s.get("generation") or -1) for s in subs.values()] + [0])


def reorder(subs: Subscriptions, order: list[str]) -> Subscriptions:
    """The same subscriptions with the members (and each member's topics and owned list) reordered."""
    res: Subscriptions = {}
    for m in order:
        s = dict(subs[m])
        s["topics"] = list(reversed(list(s.get("topics") or [])))
        s["owned"] = [list(x) for x in reversed(list(s.get("owned") or []))]
        res[m] = s
    return res


def describe_state(ppt: PPT, subs: Subscriptions) -> dict[str, Any]:
    """The ``run`` contract's input document for this state (used for counterexamples)."""
    doc = {"partitions_per_topic": dict(ppt), "subscriptions": {m: dict(s) for m, s in subs.items()}}
    racks = getattr(ppt, "partition_racks", None)  # a racked input (KIP-881, see racks.py)
    if racks is not None:
        doc["partition_racks"] = racks
    return doc
