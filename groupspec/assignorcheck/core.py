"""Pure invariant checks for partition assignors (assignors.md §2: I1–I11 and I6′).

Theory of operation
-------------------
Everything here is a pure function of a *group state* and an *assignment*:

* a group state is ``(partitions_per_topic, subscriptions)`` in the shapes of the contract's form 1
  (``subscriptions[member_id] = {"topics", "owned", "generation", "instance_id", "rack"}``);
* an assignment is ``{member_id: [(topic, partition), ...]}`` after :func:`decode_output` has turned the
  candidate's raw return value into that shape (or raised :class:`Malformed`, which is an I11 failure).

Each ``check_*`` function returns ``None`` when the invariant holds, or a one-line explanation of the first
violation found. The engine (:mod:`groupspec.assignorcheck.check`) drives candidates over generated states and
calls these functions; it never decides a verdict on its own.

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

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping

TP = tuple[str, int]
Assignment = dict[str, list[TP]]
Subscriptions = dict[str, dict[str, Any]]
PPT = dict[str, int]

#: Kafka's internal topics (``org.apache.kafka.common.internals.Topic``); brokers flag them ``is_internal``.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class Malformed(Exception):
    """The candidate's return value is not ``{member_id: [(topic, partition), ...]}``."""


# ---------------------------------------------------------------------------------------------- shapes


def java_key(s: str) -> bytes:
    """Sort key equal to Java ``String.compareTo`` (UTF-16 code units), as assignors.md §1.0 prescribes."""
    return s.encode("utf-16-be", "surrogatepass")


def member_order(subscriptions: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Member ids in Kafka's ``MemberInfo`` order: static by instance id first, then dynamic by member id."""
    static = [m for m, s in subscriptions.items() if s.get("instance_id") is not None]
    dynamic = [m for m, s in subscriptions.items() if s.get("instance_id") is None]
    static.sort(key=lambda m: (java_key(subscriptions[m]["instance_id"]), java_key(m)))
    dynamic.sort(key=java_key)
    return static + dynamic


def topics_of(sub: Mapping[str, Any]) -> set[str]:
    return set(sub.get("topics") or ())


def subscribed_partitions(ppt: Mapping[str, int], subs: Mapping[str, Mapping[str, Any]]) -> set[TP]:
    """Every partition that must be assigned: partitions of topics someone subscribes to and that exist."""
    topics = set().union(*(topics_of(s) for s in subs.values())) if subs else set()
    return {(t, p) for t in topics if t in ppt for p in range(max(0, int(ppt[t])))}


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


def owned_of(sub: Mapping[str, Any]) -> set[TP]:
    return {(t, int(p)) for t, p in (sub.get("owned") or ())}


# ---------------------------------------------------------------------------------------- I1 – I4


def check_members(subs: Subscriptions, out: Assignment) -> str | None:
    """I1: the output's keys are exactly the input's member ids."""
    missing = sorted(set(subs) - set(out))
    extra = sorted(set(out) - set(subs))
    if missing:
        return f"member {missing[0]!r} is missing from the output" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
    if extra:
        return f"output names {extra[0]!r}, which is not a member of the group"
    return None


def check_no_duplicates(out: Assignment) -> str | None:
    """I2: no partition is assigned twice, within one member's list or across members."""
    seen: dict[TP, str] = {}
    for m in sorted(out):
        counts = Counter(out[m])
        for tp, n in sorted(counts.items()):
            if n > 1:
                return f"{tp[0]}-{tp[1]} appears {n} times in the list of {m!r}"
            if tp in seen:
                return f"{tp[0]}-{tp[1]} is assigned to both {seen[tp]!r} and {m!r}"
            seen[tp] = m
    return None


def check_subscribed_only(ppt: PPT, subs: Subscriptions, out: Assignment) -> str | None:
    """I3: only partitions that exist, of topics the receiving member subscribes to."""
    for m in sorted(out):
        sub = subs.get(m)
        if sub is None:
            continue  # I1's business
        mine = topics_of(sub)
        for t, p in sorted(out[m]):
            if t not in ppt:
                return f"{m!r} got {t}-{p} of topic {t!r}, which does not exist"
            if not 0 <= p < ppt[t]:
                return f"{m!r} got {t}-{p}, but {t!r} has partitions 0..{ppt[t] - 1}"
            if t not in mine:
                return f"{m!r} got {t}-{p} but subscribes only to {sorted(mine)}"
    return None


def check_complete(ppt: PPT, subs: Subscriptions, out: Assignment) -> str | None:
    """I4: every partition of every subscribed, existing topic is assigned."""
    assigned = {tp for parts in out.values() for tp in parts}
    missing = sorted(subscribed_partitions(ppt, subs) - assigned)
    if missing:
        t, p = missing[0]
        more = f" ({len(missing)} partitions unassigned)" if len(missing) > 1 else ""
        return f"{t}-{p} is subscribed but assigned to nobody{more}"
    return None


# --------------------------------------------------------------------------------------- I5 balance


def check_movability(ppt: PPT, subs: Subscriptions, out: Assignment) -> str | None:
    """I5: for every pair A, B with |A| > |B| + 1, A holds no partition of a topic B subscribes to.

    Uniform subscriptions therefore give max − min ≤ 1 (the strong form of Kafka's ``verifyValidityAndBalance``).
    """
    sizes = {m: len(out.get(m, ())) for m in subs}
    by_size = sorted(subs, key=lambda m: (sizes[m], java_key(m)))
    for b in by_size:
        b_topics = topics_of(subs[b]) & set(ppt)
        for a in reversed(by_size):
            if sizes[a] <= sizes[b] + 1:
                break
            movable = sorted(tp for tp in out.get(a, ()) if tp[0] in b_topics)
            if movable:
                t, p = movable[0]
                return (f"{a!r} holds {sizes[a]} partitions and {b!r} {sizes[b]}, yet {t}-{p} could move "
                        f"from {a!r} to {b!r} (both subscribe to {t!r})")
    return None


# ------------------------------------------------------------------------------- cooperative (I6/I6′)


def check_cooperative(subs: Subscriptions, out: Assignment) -> str | None:
    """I6 (Kafka's ``verifyCooperativeValidity``): added ∩ revoked = ∅ over the raw owned partitions."""
    added: dict[TP, str] = {}
    revoked: dict[TP, str] = {}
    for m, sub in subs.items():
        owned = owned_of(sub)
        got = set(out.get(m, ()))
        for tp in got - owned:
            added[tp] = m
        for tp in owned - got:
            revoked[tp] = m
    both = sorted(set(added) & set(revoked))
    if both:
        t, p = both[0]
        return f"{t}-{p} moves from {revoked[(t, p)]!r} to {added[(t, p)]!r} in one round (not revoked first)"
    return None


def claims(subs: Subscriptions) -> dict[TP, list[tuple[int, str]]]:
    """Per partition, its claimants as ``(generation, member)`` (generation −1 when unknown)."""
    res: dict[TP, list[tuple[int, str]]] = defaultdict(list)
    for m, sub in subs.items():
        g = sub.get("generation")
        g = -1 if g is None or g < 0 else int(g)
        for tp in owned_of(sub):
            res[tp].append((g, m))
    return res


def check_generation_validated(subs: Subscriptions, out: Assignment, java_parity: bool = False) -> str | None:
    """I6′: member m may hold a claimed partition p only if m is p's unique highest-generation claimant.

    Strict (default): allowed iff nobody claims p, or m is its only claimant at the top generation. This
    catches what Kafka's I6 misses: a stale, lower-generation claimant handed "its" partition while the
    current owner still holds it (I6 passes because the stale claimant listed p in its raw owned partitions).

    ``java_parity=True`` adds assignors.md's Java-parity allowance: p may also go to anyone when it is not
    multiply claimed at the top generation. What remains forbidden is handing out, in the same round, a
    partition two members claim at the top generation (Java strips and withholds those, KAFKA-12984).
    """
    cl = claims(subs)
    for m in sorted(out):
        for tp in sorted(out[m]):
            cs = cl.get(tp)
            if not cs:
                continue
            top = max(g for g, _ in cs)
            winners = sorted(c for g, c in cs if g == top)
            if winners == [m]:
                continue
            if java_parity and len(winners) == 1:
                continue
            mine = [g for g, c in cs if c == m]
            if len(winners) > 1:
                return (f"{tp[0]}-{tp[1]} is handed to {m!r} while {', '.join(map(repr, winners))} all claim it "
                        f"at generation {top} (multiply claimed: must be withheld this round)")
            how = f"a stale claimant (generation {mine[0]})" if mine else "not a claimant"
            return (f"{tp[0]}-{tp[1]} is handed to {m!r}, {how}, while {winners[0]!r} still owns it "
                    f"at generation {top}")
    return None


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
    for m in sorted(set(e) | set(g), key=java_key):
        a, b = e.get(m, frozenset()), g.get(m, frozenset())
        if a != b:
            def fmt(s: Iterable[TP]) -> str:
                return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(s)) + "]"
            return f"{m!r} got {fmt(b)} where {label} {fmt(a)}"
    return None


# ---------------------------------------------------------------------------------------- I9 sticky


def resolved_owners(subs: Subscriptions) -> dict[TP, str]:
    """The member that validly owns each partition: the unique highest-generation claimant, if any."""
    res: dict[TP, str] = {}
    for tp, cs in claims(subs).items():
        top = max(g for g, _ in cs)
        winners = [m for g, m in cs if g == top]
        if len(winners) == 1:
            res[tp] = winners[0]
    return res


def check_no_two_cycles(subs: Subscriptions, out: Assignment) -> str | None:
    """I9 (Kafka ``isSticky``): per topic, no two members swap partitions in opposite directions."""
    before = resolved_owners(subs)
    moves: dict[tuple[str, str, str], TP] = {}
    for m, parts in out.items():
        for tp in parts:
            prev = before.get(tp)
            if prev is not None and prev != m and prev in subs:
                moves.setdefault((tp[0], prev, m), tp)
    for (t, a, b), tp in sorted(moves.items()):
        back = moves.get((t, b, a))
        if back is not None:
            return (f"topic {t!r}: {tp[0]}-{tp[1]} moves {a!r}→{b!r} while {back[0]}-{back[1]} moves "
                    f"{b!r}→{a!r} in the same rebalance")
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
