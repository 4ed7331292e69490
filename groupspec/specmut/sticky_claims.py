"""``assignor:sticky-claims``: the model's sticky assignor's claim resolution against Kafka's, in the reference.

The model's docstring promises that its sticky assignor resolves conflicting ownership claims by generation *as
Kafka's AbstractStickyAssignor does* (``model/assignors.py``: :func:`resolve_claims`, and what each of Kafka's two
paths keeps of them, :func:`kept_claims`). ``assignor:sticky`` cannot hold it to that: it checks the reference's
invariants and stability, which a misread conflict rule keeps. This check compares the rule itself with the
reference's claim resolution (``groupspec.reference.assignors.sticky_claims``: Kafka's walk over its ``HashMap`` of
member ids, written from Kafka's source, not from the model) on :data:`CASES` small random groups: 2–4 members with
overlapping claims, generations equal, higher, lower or absent, one or two topics (every member on the same topics
about half the time: Kafka's constrained path), sometimes a partition not created yet. Member ids are drawn at
random and the model's slots follow Kafka's walk order (slot ``k`` is the ``k``-th member id in ``HashMap`` order), as
the model's slots stand for member ids. Per case, per member:

* what it keeps after the conflicts (Kafka's ``consumerToOwnedPartitions``) and the multiply-claimed partitions
  (``partitionsWithMultiplePreviousOwners``) must be the reference's;
* what the sticky assignor keeps before placing anything must be what Kafka's path keeps (constrained: less the
  multiply-claimed partitions; general: on topics the member subscribes to).

Derandomized (:data:`SEED`): the same cases every run; a failure names the case, the seed and the group.

May import: ``groupspec.model`` and ``groupspec.reference.assignors`` (inside the function, once a mutant is in place).
"""
from __future__ import annotations

import random
from typing import Any

SEED = 20261129
CASES = 300


def _group(rng: random.Random) -> tuple[Any, ...]:
    """One random group: (cfg, existing, model members in slot order, where, counts, subscriptions by member id, ids)."""
    from groupspec.model import Config
    from groupspec.reference.assignors import java_hashmap_order

    from .mirror_driver import partition_names

    n, parts = rng.randint(2, 4), rng.randint(1, 5)
    topics = 2 if parts > 1 and rng.random() < 0.7 else 1
    cfg = Config(members=n, partitions=parts, topics=topics)
    names = [f"t{t}" for t in range(topics)]
    where = partition_names(cfg, names)  # model bit -> (topic, partition)
    existing = (1 << parts) - 1
    if parts > topics and rng.random() < 0.25:  # the last partition not created yet (claims on it are dropped)
        existing &= ~(1 << (parts - 1))
    counts = {t: sum(1 for b in range(parts) if existing >> b & 1 and where[b][0] == t) for t in names}
    ids = rng.sample([f"consumer-{i}" for i in range(40)] + [chr(c) for c in range(ord("a"), ord("z") + 1)], n)
    ids = [ids[i] for i in java_hashmap_order(ids)]  # slot k = the k-th member Kafka walks
    same = rng.randint(1, (1 << topics) - 1) if rng.random() < 0.5 else 0  # every member on these topics
    hot = rng.randint(0, (1 << parts) - 1)  # the partitions most claims go to (overlapping claims)
    gens = rng.sample([-1, 0, 1, 2, 3], rng.randint(1, 3))  # few generations: equal ones are frequent
    members: list[tuple[int, int, int, int, bool]] = []
    subs: dict[str, dict[str, Any]] = {}
    for slot, mid in enumerate(ids):
        tmask = same or rng.randint(1, (1 << topics) - 1)
        owned = (hot & rng.randint(0, (1 << parts) - 1)) | (rng.randint(0, (1 << parts) - 1) if rng.random() < 0.3 else 0)
        gen = rng.choice(gens)
        members.append((slot, tmask, owned, gen, False))
        sub: dict[str, Any] = {"topics": [names[t] for t in range(topics) if tmask >> t & 1],
                               "owned": [list(where[b]) for b in range(parts) if owned >> b & 1]}
        if gen >= 0:  # absent: Kafka's DEFAULT_GENERATION (-1), the model's -1
            sub["generation"] = gen
        subs[mid] = sub
    return cfg, existing, members, where, counts, subs, ids


def check(cases: int = CASES, seed: int = SEED) -> str | None:
    """None if the model resolves every case's claims as Kafka (the reference) does, else what differs."""
    from groupspec.model import kept_claims, resolve_claims
    from groupspec.reference.assignors import sticky_claims

    rng = random.Random(seed)
    for case in range(cases):
        cfg, existing, members, where, counts, subs, ids = _group(rng)

        def mask(parts: list[tuple[str, int]]) -> int:
            return sum(1 << where.index(tp) for tp in set(parts))

        want = sticky_claims(counts, subs)
        if want.order != ids:
            return f"case {case} (seed {seed}): the members are not in Kafka's walk order {want.order} (slots {ids})"
        claimable = 0
        for _slot, tmask, *_ in members:
            claimable |= cfg.subscribed_partitions(tmask, existing)
        where_ = f"case {case} (seed {seed}; partitions {counts}, subscriptions in Kafka's order {subs})"
        try:
            kept, multi = resolve_claims(members, claimable)
            valid = kept_claims(cfg, members, existing)
        except Exception as e:  # noqa: BLE001 - the mutated model raised: a difference too
            return f"{where_}: the model raised {type(e).__name__}: {e}"
        if multi != mask(want.multiply_claimed):
            got = sorted(where[b] for b in range(len(where)) if multi >> b & 1)
            return f"{where_}: multiply claimed: model {got}, Kafka's {want.multiply_claimed}"
        for slot, mid in enumerate(ids):
            if kept.get(slot, 0) != mask(want.owned[mid]):
                got = sorted(where[b] for b in range(len(where)) if kept.get(slot, 0) >> b & 1)
                return f"{where_}: {mid} (slot {slot}) keeps {got} after the conflicts, in Kafka {want.owned[mid]}"
            if valid.get(slot, 0) != mask(want.valid[mid]):
                got = sorted(where[b] for b in range(len(where)) if valid.get(slot, 0) >> b & 1)
                return (f"{where_}: {mid} (slot {slot}) starts the {want.path} path owning {got}, in Kafka "
                        f"{want.valid[mid]}")
    return None
