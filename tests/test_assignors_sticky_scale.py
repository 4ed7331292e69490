"""Kafka's property-only and scale tests for the sticky assignors (assignors.md §1.4 list, §3).

Randomised tests use ``random.Random(seed)`` with the seed printed and in the test id, so any run can
be replayed exactly.  The 1M-partition tests are marked ``deep`` (``make test-deep``).
"""
from __future__ import annotations

import random

import pytest

from conftest import DEEP
from groupspec.reference.assignors import get
from groupspec.reference.assignors.properties import check_all, converge, next_subscriptions

BOTH = ["sticky", "cooperative-sticky"]


def canonical(prefix: str, i: int, width_of: int) -> str:
    """Kafka's ``getCanonicalName``: zero-padded so names sort numerically."""
    return f"{prefix}{str(i).zfill(len(str(width_of)))}"


def rejoin(subs, out, generation):
    return {m: {**s, "owned": [list(tp) for tp in out[m]], "generation": generation} for m, s in subs.items()}


def final(name, counts, subs):
    if name == "sticky":
        return get(name).assign(counts, subs)
    rounds, out = converge(get(name).assign, counts, subs)
    assert rounds <= 4
    return out


@pytest.mark.parametrize("name", BOTH)
def test_reassignment_after_one_consumer_leaves(name):
    counts = {canonical("t", i, 20): i for i in range(1, 20)}
    subs = {canonical("c", i, 20): {"topics": [canonical("t", j, 20) for j in range(1, i + 1)]} for i in range(1, 20)}
    out = final(name, counts, subs)
    assert check_all(counts, subs, out) == []
    subs = rejoin(subs, out, 1)
    del subs["c10"]
    out2 = get(name).assign(counts, subs)
    assert check_all(counts, subs, out2, complete=name == "sticky", balanced=name == "sticky",
                     cooperative=name != "sticky", sticky=True) == []
    assert check_all(counts, subs, final(name, counts, subs), sticky=True) == []


def test_subscription_not_equal_and_same_partition_with_three_generations():
    """KAFKA-15106: every permutation of generations gives a valid assignment with 1..2 partitions each."""
    counts = {"topic": 6, "topic1": 1}
    for g1, g2, g3 in [(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)]:
        subs = {"consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 2]], "generation": g1},
                "consumer2": {"topics": ["topic"], "owned": [["topic", 1], ["topic", 2], ["topic", 3]], "generation": g2},
                "consumer3": {"topics": ["topic"], "owned": [["topic", 2], ["topic", 4], ["topic", 5]], "generation": g3},
                "consumer4": {"topics": ["topic1"], "owned": [["topic1", 0]], "generation": 2}}
        for name in BOTH:
            out = get(name).assign(counts, subs)
            flat = [tp for ps in out.values() for tp in ps]
            assert len(flat) == len(set(flat))
            if name == "sticky":
                assert all(1 <= len(ps) <= 2 for ps in out.values())
                assert check_all(counts, subs, out) == []


SEEDS = range(20) if DEEP else range(3)


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("seed", SEEDS)
def test_large_assignment_with_multiple_consumers_leaving_and_random_subscription(name, seed):
    rng = random.Random(seed)
    print(f"seed={seed}")
    topic_count, consumer_count = 40, 200
    counts = {canonical("t", i, topic_count): rng.randint(1, 10) for i in range(topic_count)}
    subs = {}
    for i in range(consumer_count):
        topics = [canonical("t", rng.randrange(topic_count), topic_count) for _ in range(rng.randrange(20))]
        subs[canonical("c", i, consumer_count)] = {"topics": topics}
    out = final(name, counts, subs)
    assert check_all(counts, subs, out) == []
    subs = rejoin(subs, out, 1)
    subs[canonical("c", 0, consumer_count)]["owned"] = []
    for _ in range(50):
        subs.pop(canonical("c", rng.randrange(consumer_count), consumer_count), None)
    out2 = get(name).assign(counts, subs)
    assert check_all(counts, subs, out2, complete=name == "sticky", balanced=name == "sticky",
                     cooperative=name != "sticky", sticky=True) == []
    assert check_all(counts, subs, final(name, counts, subs), sticky=True) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_reassignment_with_random_subscriptions_and_changes(seed):
    rng = random.Random(seed)
    print(f"seed={seed}")
    rounds = 100 if DEEP else 10
    for _ in range(rounds):
        n_topics = rng.randint(10, 19)
        topics = [canonical("t", i, 20) for i in range(n_topics)]
        counts = {t: i + 1 for i, t in enumerate(topics)}
        n_consumers = rng.randint(20, 39)
        subs = {canonical("c", i, 40): {"topics": sorted(rng.sample(topics, rng.randint(0, n_topics)))} for i in range(n_consumers)}
        out = get("sticky").assign(counts, subs)
        assert check_all(counts, subs, out) == []
        subs = {m: {"topics": sorted(rng.sample(topics, rng.randint(0, n_topics))), "owned": [list(tp) for tp in out[m]],
                    "generation": 1} for m in subs}
        out2 = get("sticky").assign(counts, subs)
        assert check_all(counts, subs, out2, sticky=True) == []


def test_cooperative_membership_churn_converges():
    """Members join and leave over many cooperative rebalances; every round is safe, each change settles in <= 4."""
    rng = random.Random(7)
    counts = {f"t{i}": rng.randint(1, 12) for i in range(8)}
    subs = {f"m{i}": {"topics": rng.sample(sorted(counts), rng.randint(1, 8))} for i in range(6)}
    coop = get("cooperative-sticky")
    problems: list[str] = []
    for step in range(15 if not DEEP else 100):
        if rng.random() < 0.5 and len(subs) > 1:
            subs.pop(rng.choice(sorted(subs)))
        else:
            subs[f"n{step}"] = {"topics": rng.sample(sorted(counts), rng.randint(1, 8))}
        rounds, out = converge(coop.assign, counts, subs,
                               on_round=lambda s, o: problems.extend(check_all(counts, s, o, complete=False, balanced=False, cooperative=True)))
        assert problems == [] and rounds <= 4
        assert check_all(counts, subs, out) == []
        subs = next_subscriptions(subs, out)


def _large(uniform: bool):
    counts = {f"topic{i}": 2000 for i in range(500)}
    topics = list(counts)
    subs = {f"consumer{i}": {"topics": topics} for i in range(2000)}
    if not uniform:
        subs["consumer1999"] = {"topics": topics[:1]}
    return counts, subs


@pytest.mark.deep
@pytest.mark.parametrize("uniform", [True, False], ids=["uniform", "non-equal"])
def test_large_assignment_and_group(uniform):
    """Kafka's 1M-partition tests: fresh, then members 1..n-1 rejoin with what they got and member 0 with nothing."""
    counts, subs = _large(uniform)
    coop = get("cooperative-sticky")
    d = coop.assign_detailed(counts, subs)
    assert d.path == ("constrained" if uniform else "general")
    assert check_all(counts, subs, d.ideal) == []
    subs2 = rejoin(subs, d.ideal, 1)
    subs2["consumer0"]["owned"] = []
    d2 = coop.assign_detailed(counts, subs2)
    assert check_all(counts, subs2, d2.ideal) == []
    assert check_all(counts, subs2, d2.round_one, complete=False, balanced=False, cooperative=True) == []
