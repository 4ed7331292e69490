"""The server-side ``range`` assignor's compact target (reference/assignors/server.py, issue 32): a member whose
topics all give it the same range gets a :class:`RangeTarget` (its group's topics and one ``range``), a member in
several groups of topics a dict of ``range`` objects. What must not change is the target itself: compared here, as
JSON in the same member and topic order, with the plain per-topic walk written out below (one list per member and
topic), on random groups (homogeneous, heterogeneous, members in two groups, empty topics, topics nobody has).
Kafka's own ``RangeAssignor`` is compared in tests/test_server_assignors_vs_kafka.py."""
from __future__ import annotations

import json
import os
import random

import pytest

from groupspec.reference.assignors.server import RangeServerAssignor, RangeTarget, plain


def walk(partitions_per_topic: dict[str, int], subscriptions: dict[str, list[str]]) -> dict[str, dict[str, list[int]]]:
    """The range target topic by topic in name order: subscribers in id order, the first ``n % k`` one more."""
    out: dict[str, dict[str, list[int]]] = {m: {} for m in sorted(subscriptions)}
    for t in sorted(partitions_per_topic):
        subs = [m for m in sorted(subscriptions) if t in subscriptions[m]]
        n = partitions_per_topic[t]
        if not subs:
            continue
        q, r = divmod(n, len(subs))
        at = 0
        for i, m in enumerate(subs):
            size = q + (i < r)
            if size:
                out[m][t] = list(range(at, at + size))
            at += size
    return out


def group(rng: random.Random) -> tuple[dict[str, int], dict[str, list[str]]]:
    topics = {f"t{j}": rng.choice([0, 1, 2, 3, 5, 8, 13]) for j in range(rng.randint(0, 7))}
    members = [f"m{j}" for j in rng.sample(range(30), rng.randint(0, 9))]
    kind = rng.random()
    if kind < 0.4:
        shared = rng.sample(sorted(topics), rng.randint(0, len(topics)))
        return topics, {m: shared for m in members}
    if kind < 0.6:  # two halves of the members on two topic sets that may overlap
        a = rng.sample(sorted(topics), rng.randint(0, len(topics)))
        b = rng.sample(sorted(topics), rng.randint(0, len(topics)))
        return topics, {m: list(a if i % 2 else b) for i, m in enumerate(members)}
    return topics, {m: rng.sample(sorted(topics) + ["gone"], rng.randint(0, len(topics) + 1)) for m in members}


def test_the_compact_target_is_the_per_topic_walk_as_json() -> None:
    seed = int(os.environ.get("GROUPSPEC_ASSIGNOR_SEED", random.randrange(10**6)))
    print(f"server range compact vs the per-topic walk: seed {seed} (replay: GROUPSPEC_ASSIGNOR_SEED={seed})")
    rng = random.Random(seed)
    compact = 0
    for _ in range(2000):
        topics, subs = group(rng)
        got = RangeServerAssignor().assign(topics, subs)
        want = walk(topics, subs)
        assert json.dumps(plain(got)) == json.dumps(want), (topics, subs)
        assert got == want and want == got  # equal as mappings too, either way round
        compact += any(isinstance(v, RangeTarget) for v in got.values())
    assert compact > 300  # the compact form was compared in many of the cases (the others: the dicts of lists)


def test_a_range_target_reads_as_the_dict_it_stands_for() -> None:
    out = RangeServerAssignor().assign({"a": 5, "b": 5, "c": 2}, {"x": ["a", "b"], "y": ["b", "a"]})
    x = out["x"]
    assert isinstance(x, RangeTarget)
    assert list(x) == ["a", "b"] and len(x) == 2 and "a" in x and "c" not in x
    assert list(x.items()) == [("a", range(0, 3)), ("b", range(0, 3))] and list(x.values()) == [range(0, 3)] * 2
    assert x["b"] == range(0, 3) and x.get("c") is None and x.get("c", ()) == ()
    with pytest.raises(KeyError):
        x["c"]
    assert x == {"a": [0, 1, 2], "b": [0, 1, 2]} and out["y"] == {"a": [3, 4], "b": [3, 4]}
    assert x != {"a": [0, 1, 2], "b": [0, 1]} and x != {"a": [0, 1, 2]} and x != {"a": [0, 1, 2], "c": [0, 1, 2]}
    assert x != out["y"] and x == RangeServerAssignor().assign({"a": 5, "b": 5}, {"x": ["a", "b"], "y": ["a", "b"]})["x"]
    assert plain(out) == {"x": {"a": [0, 1, 2], "b": [0, 1, 2]}, "y": {"a": [3, 4], "b": [3, 4]}}


class _OffByOne(RangeServerAssignor):  # mutant: the last member of each range group loses its last partition
    def assign(self, partitions_per_topic, subscriptions, current=None):  # type: ignore[no-untyped-def]
        out = plain(super().assign(partitions_per_topic, subscriptions, current))
        for per in out.values():
            for ps in per.values():
                if len(ps) > 1:
                    ps.pop()
        return out


def test_the_comparison_catches_a_broken_range() -> None:
    rng = random.Random(1)
    cases = [group(rng) for _ in range(200)]
    assert any(json.dumps(plain(_OffByOne().assign(t, s))) != json.dumps(walk(t, s)) for t, s in cases)
