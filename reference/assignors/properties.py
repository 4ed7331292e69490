"""The assignor invariants of assignors.md §2, once: pure checks used by the tests, the benchmarks and ``groupspec assignor check``.

Theory of operation
-------------------
Every check is a pure function of a *group state* and an *assignment* and returns ``None`` when the
invariant holds, or one line that explains the first violation found:

* a group state is ``(partitions_per_topic, subscriptions)`` in the plain-callable form of docs/formats.md
  (``subscriptions[member_id] = {"topics", "owned", "generation", "instance_id", "rack"}``, every key
  optional); the checks read it as given, they do not validate it (an assignor's input normaliser does);
* an assignment is ``{member_id: [(topic, partition), ...]}``.

The eight checks, deliberately simple, independent re-statements of the properties (no code shared with the
assignors beyond Java's string order):

* I1 :func:`check_members` — output keys equal the member set;
* I2 :func:`check_no_duplicates` — no partition twice, also inside one list;
* I3 :func:`check_subscribed_only` — only existing partitions of topics the receiving member subscribes to;
* I4 :func:`check_complete` — every partition of every subscribed existing topic is assigned;
* I5 :func:`check_movability` — for |A| > |B| + 1, A holds no partition of a topic B subscribes to;
* I6 :func:`check_cooperative` — added ∩ revoked = ∅ against the raw owned claims (Kafka's
  ``verifyCooperativeValidity``);
* I6' :func:`check_generation_validated` — a claimed partition goes only to its unique highest-generation
  claimant (``java_parity=True``: Java's allowance, KAFKA-12984);
* I9 :func:`check_no_two_cycles` — per topic, no pair of members swaps partitions both ways (Kafka's
  ``isSticky``; the previous owner is the unique highest-generation claimant, :func:`resolved_owners`).

:func:`check_all` runs a chosen set and returns the violations as a list of ``"I<n>: ..."`` lines (empty when
all hold), so tests and benchmarks can assert ``== []``. :func:`converge` drives a cooperative assignor the way
``CooperativeStickyAssignorTest`` does: after a round in which something was revoked, every member re-joins
owning exactly what it got, with the next generation, until a round revokes nothing.

``groupspec.assignorcheck`` (the assignor checker) judges every call of a candidate with these same checks:
they live here because ``reference/`` imports no tool, and the checker may import the reference.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable, Mapping, Sequence

from ._frame import Assignment, java_string_key

TP = tuple[str, int]
Subs = Mapping[str, Mapping[str, Any]]
Out = Mapping[str, Sequence[TP]]

__all__ = [
    "check_all",
    "check_complete",
    "check_cooperative",
    "check_generation_validated",
    "check_members",
    "check_movability",
    "check_no_duplicates",
    "check_no_two_cycles",
    "check_subscribed_only",
    "claims",
    "converge",
    "next_subscriptions",
    "owned_of",
    "resolved_owners",
    "subscribed_partitions",
    "topics_of",
]


# ------------------------------------------------------------------------------------------- shapes


def topics_of(sub: Mapping[str, Any]) -> set[str]:
    return set(sub.get("topics") or ())


def owned_of(sub: Mapping[str, Any]) -> set[TP]:
    return {(t, int(p)) for t, p in (sub.get("owned") or ())}


def subscribed_partitions(ppt: Mapping[str, int], subs: Subs) -> set[TP]:
    """Every partition that must be assigned: partitions of topics someone subscribes to and that exist."""
    topics = set().union(*(topics_of(s) for s in subs.values())) if subs else set()
    return {(t, p) for t in topics if t in ppt for p in range(max(0, int(ppt[t])))}


# ---------------------------------------------------------------------------------------- I1 – I4


def check_members(subs: Subs, out: Out) -> str | None:
    """I1: the output's keys are exactly the input's member ids."""
    missing = sorted(set(subs) - set(out))
    extra = sorted(set(out) - set(subs))
    if missing:
        return f"member {missing[0]!r} is missing from the output" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
    if extra:
        return f"output names {extra[0]!r}, which is not a member of the group"
    return None


def check_no_duplicates(out: Out) -> str | None:
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


def check_subscribed_only(ppt: Mapping[str, int], subs: Subs, out: Out) -> str | None:
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


def check_complete(ppt: Mapping[str, int], subs: Subs, out: Out) -> str | None:
    """I4: every partition of every subscribed, existing topic is assigned."""
    assigned = {tp for parts in out.values() for tp in parts}
    missing = sorted(subscribed_partitions(ppt, subs) - assigned)
    if missing:
        t, p = missing[0]
        more = f" ({len(missing)} partitions unassigned)" if len(missing) > 1 else ""
        return f"{t}-{p} is subscribed but assigned to nobody{more}"
    return None


# ------------------------------------------------------------------------------------- I5 balance


def check_movability(ppt: Mapping[str, int], subs: Subs, out: Out) -> str | None:
    """I5: for every pair A, B with |A| > |B| + 1, A holds no partition of a topic B subscribes to.

    Uniform subscriptions therefore give max − min ≤ 1 (the strong form of Kafka's ``verifyValidityAndBalance``).
    """
    sizes = {m: len(out.get(m, ())) for m in subs}
    by_size = sorted(subs, key=lambda m: (sizes[m], java_string_key(m)))
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


# --------------------------------------------------------------------------- cooperative (I6/I6')


def check_cooperative(subs: Subs, out: Out) -> str | None:
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


def claims(subs: Subs) -> dict[TP, list[tuple[int, str]]]:
    """Per partition, its claimants as ``(generation, member)`` (generation −1 when unknown)."""
    res: dict[TP, list[tuple[int, str]]] = defaultdict(list)
    for m, sub in subs.items():
        g = sub.get("generation")
        g = -1 if g is None or g < 0 else int(g)
        for tp in owned_of(sub):
            res[tp].append((g, m))
    return res


def check_generation_validated(subs: Subs, out: Out, java_parity: bool = False) -> str | None:
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


# -------------------------------------------------------------------------------------- I9 sticky


def resolved_owners(subs: Subs) -> dict[TP, str]:
    """The member that validly owns each partition: the unique highest-generation claimant, if any."""
    res: dict[TP, str] = {}
    for tp, cs in claims(subs).items():
        top = max(g for g, _ in cs)
        winners = [m for g, m in cs if g == top]
        if len(winners) == 1:
            res[tp] = winners[0]
    return res


def check_no_two_cycles(subs: Subs, out: Out) -> str | None:
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


# -------------------------------------------------------- all of them, and the cooperative driver


def check_all(counts: Mapping[str, int], subs: Subs, out: Out, *, complete: bool = True,
              balanced: bool = True, cooperative: bool = False, sticky: bool = False) -> list[str]:
    """The chosen checks' violations as ``"I<n>: ..."`` lines; I1–I3 always, the others on request."""
    found = [("I1", check_members(subs, out)), ("I2", check_no_duplicates(out)), ("I3", check_subscribed_only(counts, subs, out))]
    if complete:
        found.append(("I4", check_complete(counts, subs, out)))
    if balanced:
        found.append(("I5", check_movability(counts, subs, out)))
    if cooperative:
        found += [("I6", check_cooperative(subs, out)), ("I6'", check_generation_validated(subs, out))]
    if sticky:
        found.append(("I9", check_no_two_cycles(subs, out)))
    return [f"{name}: {why}" for name, why in found if why is not None]


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
        revoked = any(tp not in set(out[mid]) for mid, sub in current.items() for tp in owned_of(sub))
        if not revoked or followups >= max_rounds:
            return followups, out
        current = next_subscriptions(current, out)
        out = assign(counts, current)
        followups += 1
        if on_round:
            on_round(current, out)
