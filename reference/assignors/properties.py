"""Self-checks for assignor outputs: the invariants of assignors.md §2, and a cooperative driver.

Theory of operation
-------------------
Each ``check_*`` function takes the plain-callable inputs and one output and returns a list of
human-readable violations (empty when the property holds), so tests and benchmarks can assert
``== []`` and print what went wrong.  They are deliberately simple, independent re-statements of
the properties (no shared code with the assignors beyond the input normaliser):

* I1 :func:`check_members` — output keys equal the member set;
* I2 :func:`check_no_duplicates` — no partition twice, also inside one list;
* I3 :func:`check_subscribed` — only existing partitions of subscribed topics;
* I4 :func:`check_complete` — every partition of every subscribed existing topic is assigned;
* I5 :func:`check_movability` — for |A| > |B| + 1, A holds no partition of a topic B subscribes to;
* I6 :func:`check_cooperative` — added ∩ revoked = ∅ against the raw owned claims (Kafka's check);
* I6' :func:`check_generation_validated` — a partition appears in a member's round output only if
  nobody else claims it or the member claims it with a strictly higher generation than all others;
* I9 :func:`check_no_two_cycles` — per topic, no pair of members swaps partitions both ways.

:func:`converge` drives a cooperative assignor the way ``CooperativeStickyAssignorTest`` does:
after a round in which something was revoked, every member re-joins owning exactly what it got,
with the next generation, until a round revokes nothing.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable, Mapping

from ._frame import Assignment, check_partition_counts, normalize

Subs = Mapping[str, Mapping[str, Any]]

__all__ = [
    "check_all",
    "check_complete",
    "check_cooperative",
    "check_members",
    "check_movability",
    "check_generation_validated",
    "check_no_duplicates",
    "check_no_two_cycles",
    "check_subscribed",
    "converge",
]


def check_members(subs: Subs, out: Assignment) -> list[str]:
    missing = sorted(set(subs) - set(out))
    extra = sorted(set(out) - set(subs))
    return [f"I1: members missing from output: {missing}"] * bool(missing) + [f"I1: unknown members in output: {extra}"] * bool(extra)


def check_no_duplicates(out: Assignment) -> list[str]:
    seen = Counter(tp for parts in out.values() for tp in parts)
    dup = sorted(tp for tp, n in seen.items() if n > 1)
    return [f"I2: assigned more than once: {dup[:5]}"] if dup else []


def check_subscribed(counts: Mapping[str, int], subs: Subs, out: Assignment) -> list[str]:
    members = {m.member_id: m for m in normalize(subs)}
    bad = []
    for mid, parts in out.items():
        topics = members[mid].topic_set if mid in members else frozenset()
        for t, p in parts:
            if t not in topics or not (0 <= p < counts.get(t, 0)):
                bad.append((mid, t, p))
    return [f"I3: not subscribed or not existing: {bad[:5]}"] if bad else []


def check_complete(counts: Mapping[str, int], subs: Subs, out: Assignment) -> list[str]:
    valid = check_partition_counts(counts)
    topics = {t for m in normalize(subs) for t in m.topics if t in valid}
    wanted = {(t, p) for t in topics for p in range(valid[t])}
    got = {tp for parts in out.values() for tp in parts}
    missing = sorted(wanted - got)
    return [f"I4: unassigned partitions: {missing[:5]} ({len(missing)} in all)"] if missing else []


def check_movability(counts: Mapping[str, int], subs: Subs, out: Assignment) -> list[str]:
    members = {m.member_id: m for m in normalize(subs)}
    size = {mid: len(parts) for mid, parts in out.items()}
    topics_held = {mid: {t for t, _ in parts} for mid, parts in out.items()}
    for a in out:
        for b in out:
            if size[a] > size[b] + 1 and b in members:
                common = topics_held[a] & members[b].topic_set
                if common:
                    return [f"I5: {a!r} holds {size[a]} and {b!r} holds {size[b]}, yet {b!r} subscribes to {sorted(common)[0]!r} held by {a!r}"]
    return []


def _owned(subs: Subs) -> dict[str, set[tuple[str, int]]]:
    return {m.member_id: set(m.owned) for m in normalize(subs)}


def check_cooperative(subs: Subs, out: Assignment) -> list[str]:
    owned = _owned(subs)
    added = {tp for mid, parts in out.items() for tp in parts if tp not in owned.get(mid, set())}
    revoked = {tp for mid, parts in owned.items() for tp in parts if tp not in set(out.get(mid, []))}
    both = sorted(added & revoked)
    return [f"I6: moved directly between members in one round: {both[:5]}"] if both else []


def check_generation_validated(subs: Subs, out: Assignment) -> list[str]:
    members = normalize(subs)
    gen = {m.member_id: (m.generation if m.generation >= 0 else -1) for m in members}
    claimants: dict[tuple[str, int], set[str]] = defaultdict(set)
    for m in members:
        for tp in m.owned:
            claimants[tp].add(m.member_id)
    bad = []
    for mid, parts in out.items():
        for tp in parts:
            others = claimants.get(tp, set()) - {mid}
            if not others:
                continue
            if mid not in claimants[tp] or any(gen[o] >= gen[mid] for o in others):
                bad.append((mid, tp))
    return [f"I6': given while another member may still own it: {bad[:5]}"] if bad else []


def check_no_two_cycles(subs: Subs, out: Assignment) -> list[str]:
    """Kafka's ``isSticky``: previous owner = the unique raw claimant (contested claims are ignored)."""
    claimants: dict[tuple[str, int], list[str]] = defaultdict(list)
    for mid, parts in _owned(subs).items():
        for tp in parts:
            claimants[tp].append(mid)
    moves: set[tuple[str, str, str]] = set()
    for mid, parts in out.items():
        for tp in parts:
            c = claimants.get(tp, [])
            if len(c) == 1 and c[0] != mid:
                moves.add((tp[0], c[0], mid))
    cycles = sorted((t, a, b) for t, a, b in moves if (t, b, a) in moves and a < b)
    return [f"I9: topic {t!r} moved both ways between {a!r} and {b!r}" for t, a, b in cycles[:3]]


def check_all(counts: Mapping[str, int], subs: Subs, out: Assignment, *, complete: bool = True, balanced: bool = True,
              cooperative: bool = False, sticky: bool = False) -> list[str]:
    problems = check_members(subs, out) + check_no_duplicates(out) + check_subscribed(counts, subs, out)
    if complete:
        problems += check_complete(counts, subs, out)
    if balanced:
        problems += check_movability(counts, subs, out)
    if cooperative:
        problems += check_cooperative(subs, out) + check_generation_validated(subs, out)
    if sticky:
        problems += check_no_two_cycles(subs, out)
    return problems


def next_subscriptions(subs: Subs, out: Assignment) -> dict[str, dict[str, Any]]:
    """Every member re-joins owning what it got, one generation later."""
    gen = 1 + max((int(s.get("generation", -1) if s.get("generation") is not None else -1) for s in subs.values()), default=0)
    return {mid: {**dict(s), "owned": [list(tp) for tp in out[mid]], "generation": gen} for mid, s in subs.items()}


def converge(assign: Callable[[Mapping[str, int], Subs], Assignment], counts: Mapping[str, int], subs: Subs,
             max_rounds: int = 10, on_round: Callable[[Subs, Assignment], None] | None = None) -> tuple[int, Assignment]:
    """Run cooperative rounds until one revokes nothing; return (follow-up rounds used, final output)."""
    current: Subs = subs
    out = assign(counts, current)
    if on_round:
        on_round(current, out)
    followups = 0
    while True:
        owned = _owned(current)
        revoked = any(tp not in set(out[mid]) for mid, parts in owned.items() for tp in parts)
        if not revoked or followups >= max_rounds:
            return followups, out
        current = next_subscriptions(current, out)
        out = assign(counts, current)
        followups += 1
        if on_round:
            on_round(current, out)
