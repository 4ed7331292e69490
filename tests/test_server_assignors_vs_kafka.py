"""The consumer protocol's server-side assignors (KIP-848, ``group.protocol=consumer``): the reference's ``range``
and ``uniform`` (reference/assignors/server.py) against Kafka 4.3.1's own ``RangeAssignor`` and ``UniformAssignor``
(the pinned kafka-group-coordinator jar, called as its coordinator calls them by
``groupspec.kafka.assignors.JavaServerAssignors``), on generated groups: homogeneous and heterogeneous
subscriptions, topics nobody subscribes to, empty topics, a member leaving or joining with the previous target as
the current one.

* ``range``: identical targets (Kafka's algorithm is deterministic given the member ids).
* ``uniform``: Kafka's choice among balanced targets depends on its HashMap orders, so the targets themselves may
  differ (docs/assignors.md gives the measured share). What must agree: every subscribed partition assigned once,
  only to a subscriber; with homogeneous subscriptions the same multiset of member loads (balance) and, from the
  same current target, the same number of moved partitions (stickiness).
Each check is shown to catch a broken assignor (a mutant).
"""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.kafka.assignors import JavaServerAssignors
from groupspec.reference.assignors.server import RangeServerAssignor, UniformAssignor, get_server

Target = dict[str, dict[str, list[int]]]


@pytest.fixture(scope="module")
def java():
    with JavaServerAssignors() as j:
        yield j


def _group(rng: random.Random) -> tuple[dict[str, int], dict[str, list[str]]]:
    topics = {f"t{i}": rng.randint(0, 12) for i in range(rng.randint(1, 4))}
    members = [f"m{i}" for i in rng.sample(range(30), rng.randint(1, 7))]
    if rng.random() < 0.5:
        ts = rng.sample(sorted(topics), rng.randint(1, len(topics)))
        return topics, {m: list(ts) for m in members}
    return topics, {m: rng.sample(sorted(topics), rng.randint(0, len(topics))) for m in members}


def _changed(rng: random.Random, topics: dict[str, int], subs: dict[str, list[str]]) -> dict[str, list[str]]:
    """One member leaves, or one joins (with the others' subscription when they all share one)."""
    out = dict(subs)
    if rng.random() < 0.5 and len(out) > 1:
        out.pop(rng.choice(sorted(out)))
    elif len({tuple(sorted(v)) for v in subs.values()}) == 1:
        out["new"] = list(next(iter(subs.values())))
    else:
        out["new"] = rng.sample(sorted(topics), rng.randint(1, len(topics)))
    return out


def _owners(target: Target) -> dict[tuple[str, int], str]:
    return {(t, p): m for m, per in target.items() for t, ps in per.items() for p in ps}


def _moved(before: Target, after: Target) -> int:
    old, new = _owners(before), _owners(after)
    return sum(1 for tp, m in old.items() if tp in new and new[tp] != m)


def _loads(target: Target, subs: dict[str, list[str]]) -> list[int]:
    return sorted(sum(len(ps) for ps in target.get(m, {}).values()) for m in subs)


def _valid(target: Target, topics: dict[str, int], subs: dict[str, list[str]]) -> str | None:
    seen: dict[tuple[str, int], str] = {}
    for m, per in target.items():
        for t, ps in per.items():
            if t not in subs.get(m, ()):
                return f"{m} got {t} without subscribing"
            for p in ps:
                if (t, p) in seen:
                    return f"{t}-{p} twice"
                seen[(t, p)] = m
    wanted = {(t, p) for ts in subs.values() for t in ts for p in range(topics.get(t, 0))}
    return None if set(seen) == wanted else f"assigned {len(seen)} of {len(wanted)} subscribed partitions"


def _same(a: Target, b: Target, subs: dict[str, list[str]]) -> bool:
    def norm(x: Target) -> dict:
        return {m: {t: sorted(ps) for t, ps in x.get(m, {}).items() if ps} for m in subs}

    return norm(a) == norm(b)


def compare(java: JavaServerAssignors, seed: int, range_impl=None, uniform_impl=None) -> list[str]:
    """One generated case: the disagreements that must not happen (empty when the reference agrees with Kafka)."""
    rng = random.Random(seed)
    topics, subs = _group(rng)
    changed = _changed(rng, topics, subs)
    homogeneous = len({tuple(sorted(v)) for v in changed.values()}) == 1
    problems = []
    ours_range = range_impl or get_server("range")
    first = java.assign("range", topics, subs)
    if not _same(first, ours_range.assign(topics, subs, {}), subs):
        problems.append(f"seed {seed}: range differs on a fresh group")
    current = {m: first.get(m, {}) for m in changed}
    if not _same(java.assign("range", topics, changed, current), ours_range.assign(topics, changed, current), changed):
        problems.append(f"seed {seed}: range differs after a change")
    ours_uniform = uniform_impl or get_server("uniform")
    first = java.assign("uniform", topics, subs)
    current = {m: first.get(m, {}) for m in changed}
    kafka, ours = java.assign("uniform", topics, changed, current), ours_uniform.assign(topics, changed, current)
    for side, target in (("Kafka", kafka), ("ours", ours)):
        bad = _valid(target, topics, changed)
        if bad:
            problems.append(f"seed {seed}: uniform ({side}) is not a valid target: {bad}")
    if homogeneous and _loads(kafka, changed) != _loads(ours, changed):
        problems.append(f"seed {seed}: uniform loads {_loads(ours, changed)} against Kafka's {_loads(kafka, changed)}")
    if homogeneous and _moved(first, kafka) != _moved(first, ours):
        problems.append(f"seed {seed}: uniform moved {_moved(first, ours)} partitions, Kafka {_moved(first, kafka)}")
    return problems


def test_range_and_uniform_agree_with_kafkas_on_generated_groups(java):
    seed0 = int(os.environ.get("GROUPSPEC_ASSIGNOR_SEED", random.randrange(10**6)))
    print(f"server assignors vs Kafka: seeds {seed0}..{seed0 + 299} (replay: GROUPSPEC_ASSIGNOR_SEED={seed0})")
    problems = [p for s in range(seed0, seed0 + 300) for p in compare(java, s)]
    assert problems == [], problems[:5]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32))
def test_range_and_uniform_agree_with_kafkas_hypothesis(java, seed):
    assert compare(java, seed) == []


class _RangeBackwards(RangeServerAssignor):  # mutant: the first two members (in id order) swap their ranges
    def assign(self, partitions_per_topic, subscriptions, current=None):
        out = super().assign(partitions_per_topic, subscriptions, current)
        ms = sorted(out)
        if len(ms) >= 2:
            out[ms[0]], out[ms[1]] = out[ms[1]], out[ms[0]]
        return out


class _UniformForgetful(UniformAssignor):  # mutant: ignores the current target (not sticky)
    def assign(self, partitions_per_topic, subscriptions, current=None):
        return super().assign(partitions_per_topic, dict(reversed(list(subscriptions.items()))), {})


class _UniformLossy(UniformAssignor):  # mutant: drops the last partition of every topic
    def assign(self, partitions_per_topic, subscriptions, current=None):
        out = super().assign(partitions_per_topic, subscriptions, current)
        return {m: {t: [p for p in ps if p != partitions_per_topic[t] - 1] for t, ps in per.items()}
                for m, per in out.items()}


@pytest.mark.parametrize("mutant, expect", [
    (dict(range_impl=_RangeBackwards()), "range differs"),
    (dict(uniform_impl=_UniformForgetful()), "uniform moved"),
    (dict(uniform_impl=_UniformLossy()), "not a valid target"),
])
def test_a_broken_assignor_is_caught(java, mutant, expect):
    problems = [p for s in range(200) for p in compare(java, s, **mutant)]
    assert any(expect in p for p in problems), problems[:3]


def measure(java: JavaServerAssignors, seeds: range) -> dict[str, int]:
    """The figures of docs/assignors.md ("Kafka's server-side assignors"): how often the targets are identical,
    and how loads and moves compare from the same current target."""
    from collections import Counter

    c: Counter[str] = Counter()
    for seed in seeds:
        rng = random.Random(seed)
        topics, subs = _group(rng)
        changed = _changed(rng, topics, subs)
        kind = "homogeneous" if len({tuple(sorted(v)) for v in changed.values()}) == 1 else "heterogeneous"
        for name in ("range", "uniform"):
            first = java.assign(name, topics, subs)
            c[f"{name} {kind} fresh identical"] += _same(first, get_server(name).assign(topics, subs, {}), subs)
            current = {m: first.get(m, {}) for m in changed}
            kafka, ours = java.assign(name, topics, changed, current), get_server(name).assign(topics, changed, current)
            c[f"{name} {kind} cases"] += 1
            c[f"{name} {kind} changed identical"] += _same(kafka, ours, changed)
            c[f"{name} {kind} valid"] += _valid(ours, topics, changed) is None and _valid(kafka, topics, changed) is None
            c[f"{name} {kind} same loads"] += _loads(kafka, changed) == _loads(ours, changed)
            mk, mo = _moved(first, kafka), _moved(first, ours)
            c[f"{name} {kind} moves " + ("equal" if mk == mo else "fewer here" if mo < mk else "more here")] += 1
    return dict(sorted(c.items()))


if __name__ == "__main__":  # python tests/test_server_assignors_vs_kafka.py [N]: the docs' figures on seeds 0..N-1
    import sys

    with JavaServerAssignors() as j:
        for key, value in measure(j, range(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)).items():
            print(f"{key}: {value}")


def _bench_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "bench_assignors.py"
    spec = importlib.util.spec_from_file_location("bench_assignors_smoke", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_server_bench_runs_and_builds_the_same_groups_as_java(capsys):
    """bench/bench_assignors.py --server on its small shape (no figure is judged here, only that it runs and that
    the groups the JVM builds for itself are the ones groupspec's side gets: range identical, uniform the same loads
    and moves). A broken range on our side makes it say so."""
    bench = _bench_module()
    ok, rows = bench.vs_java_server(1, shapes=bench.SERVER_SHAPES[:1])
    assert ok and [(r[1], r[2]) for r in rows] == [("range", "fresh"), ("range", "join"), ("uniform", "fresh"), ("uniform", "join")]
    assert all(r[8] for r in rows if r[1] == "range"), capsys.readouterr().out

    import groupspec.reference.assignors.server as server

    real = server.get_server
    try:
        server.get_server = lambda name: _RangeBackwards() if name == "range" else real(name)
        ok, rows = bench.vs_java_server(1, only=("range",), shapes=bench.SERVER_SHAPES[:1])
    finally:
        server.get_server = real
    assert not ok and "DISAGREES" in capsys.readouterr().out


def test_a_compact_range_target_is_a_current_target_kafka_reads(java):
    """Our range target (RangeTarget views of ``range`` objects) handed to Kafka's assignors as the current target
    (written as lists): Kafka's range from it is ours, Kafka's uniform from it a valid target."""
    from groupspec.reference.assignors.server import RangeTarget

    topics = {"a": 5, "b": 5}
    subs = {"x": ["a", "b"], "y": ["a", "b"]}
    ours = get_server("range").assign(topics, subs)
    assert any(isinstance(v, RangeTarget) for v in ours.values())
    changed = {**subs, "z": ["a", "b"]}
    assert _same(java.assign("range", topics, changed, ours), get_server("range").assign(topics, changed, ours), changed)
    assert _valid(java.assign("uniform", topics, changed, ours), topics, changed) is None
