"""The catalogue of input classes (groupspec/assignorcheck/classes.py, issue #34): every class is drawn on purpose,
the classifier recognises it, and every run reports which classes it hit and how often."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from groupspec import check_assignor
from groupspec.assignorcheck.classes import CLASS_IDS, class_states, classify

BIN = str(Path(sys.executable).with_name("groupspec"))

DOMAINS = [{}, {"topics_per_member": 1, "static": False}, {"small": True}, {"replica_racks": True}]


@pytest.mark.parametrize("domain", DOMAINS, ids=["default", "one-topic-dynamic", "small", "racked"])
def test_every_class_strategy_draws_states_of_its_class_within_the_domain(domain):
    for cid in CLASS_IDS:
        @settings(max_examples=12, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(class_states(cid, domain))
        def drawn(state):
            ppt, subs = state
            assert cid in classify(ppt, subs), (cid, state)
            if domain.get("topics_per_member"):
                assert all(len(s["topics"]) == 1 for s in subs.values())
            if domain.get("static") is False:
                assert all(s["instance_id"] is None for s in subs.values())
            if domain.get("replica_racks"):
                assert set(ppt.partition_racks) >= {t for t, n in ppt.items() if n > 0}

        drawn()


def _sub(topics, owned=(), gen=-1):
    return {"topics": list(topics), "owned": [list(x) for x in owned], "generation": gen, "instance_id": None,
            "rack": None}


def test_classifier_names_the_arrival_order_of_three_generations():
    # A (listed first) owned t-0 at 5; C (listed last) got it at 6; B (listed second) at 7: old, new, mid
    subs = {"A": _sub(["t"], [("t", 0)], 5), "B": _sub(["t"], [("t", 0)], 7), "C": _sub(["t"], [("t", 0)], 6)}
    got = classify({"t": 3}, subs)
    assert "claims-3-gens:old-new-mid" in got and "stale-rejoin" in got
    assert classify({"t": 3}, dict(reversed(list(subs.items())))) >= {"claims-3-gens:mid-new-old"}


def test_classifier_recognises_each_shape_of_the_issue():
    assert "gen-unknown-owned" in classify({"t": 2}, {"a": _sub(["t"], [("t", 1)], -1)})
    assert "owned-dropped-topic" in classify({"t": 2, "u": 1}, {"a": _sub(["t"], [("u", 0)], 3)})
    assert "owned-gone-partition" in classify({"t": 2}, {"a": _sub(["t"], [("t", 2)], 3)})
    three = {m: _sub(["t"]) for m in "abc"}
    assert "members-gt-partitions" in classify({"t": 2}, three)
    assert "members-eq-partitions" in classify({"t": 3}, three)
    assert "owns-member-count" in classify({"t": 3}, {"a": _sub(["t"], [("t", 0), ("t", 1)], 2), "b": _sub(["t"])})
    stale = {"a": _sub(["t"], [("t", 0)], 9), "b": _sub(["t"], [("t", 0)], 8), "c": _sub(["u"], [("t", 0)], 7)}
    assert "two-stale-one-unsubscribed" in classify({"t": 1, "u": 1}, stale)
    assert "two-stale-one-unsubscribed" not in classify({"t": 1, "u": 1}, {**stale, "c": _sub(["t"], [("t", 0)], 7)})
    assert "topics-different-sizes" in classify({"a": 1, "b": 2, "c": 3}, {"m": _sub(["a", "b", "c"])})
    assert "topics-different-sizes" not in classify({"a": 1, "b": 2, "c": 2}, {"m": _sub(["a", "b", "c"])})
    assert "racks" in classify({"t": 1}, {"m": {**_sub(["t"]), "rack": "r1"}})


@pytest.mark.parametrize("seed", range(1, 11))
def test_every_class_is_hit_whatever_the_seed(seed):
    """The default share (examples / 40 per class and property) is at least one example per class even for a
    40-example, one-property run; the report counts the hits."""
    rep = check_assignor("roundrobin", examples=40, seed=seed, properties=["I1"], quality=False)
    cov = rep.coverage
    assert cov["swept_properties"] == ["I1"] and cov["guaranteed_min"] == 1
    hits = {c["id"]: c["hits"] for c in cov["classes"]}
    assert set(hits) == set(CLASS_IDS)
    assert min(hits.values()) >= 1, {k: v for k, v in hits.items() if not v}
    assert rep["I1"].examples == 40 + len(CLASS_IDS)


def test_per_class_zero_turns_the_sweep_off_and_the_counts_stay_honest():
    rep = check_assignor("range", examples=30, seed=2, properties=["I2"], quality=False, per_class=0)
    assert rep.coverage["swept_properties"] == [] and rep["I2"].examples == 30
    assert rep.coverage["states"] == 30


def test_coverage_in_the_text_report_and_in_json(tmp_path):
    args = [BIN, "assignor", "check", "roundrobin", "--examples", "40", "--seed", "4", "--only", "I2"]
    text = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert text.returncode == 0, text.stderr
    assert "input classes over" in text.stdout and "claims-3-gens:old-new-mid" in text.stdout
    js = subprocess.run(args + ["--json"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    doc = json.loads(js.stdout)
    assert {c["id"] for c in doc["coverage"]["classes"]} == set(CLASS_IDS)
    assert all(c["hits"] >= doc["coverage"]["guaranteed_min"] >= 1 for c in doc["coverage"]["classes"])


def test_a_violation_found_in_a_class_names_its_classes():
    def drops_stale_rejoiners(ppt, subs):  # gives nothing to a member whose claims are all stale: I4 breaks
        top = max([s["generation"] for s in subs.values()] + [-1])
        members = sorted(m for m, s in subs.items() if not (s["owned"] and 0 <= s["generation"] < top))
        out = {m: [] for m in subs}
        for t in sorted(ppt):
            takers = [m for m in members if t in subs[m]["topics"]]
            for p in range(ppt[t]):
                if takers:
                    out[takers[p % len(takers)]].append((t, p))
        return out

    rep = check_assignor(drops_stale_rejoiners, examples=20, seed=1, properties=["I4"], quality=False, per_class=3)
    assert rep["I4"].verdict == "violated"
    assert isinstance(rep["I4"].counterexample["classes"], list)
