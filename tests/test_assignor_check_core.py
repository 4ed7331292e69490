"""The pure invariant checks on hand-made inputs, including Kafka's worked examples (assignors.md §1.4)."""
from __future__ import annotations

import pytest

from groupspec.assignorcheck.core import (
    Malformed, check_cooperative, check_generation_validated, check_movability, check_no_two_cycles,
    decode_output, diff_assignments, expected_range, expected_roundrobin, member_order,
)


def _subs(**topics):
    return {m: {"topics": t, "owned": [], "generation": -1, "instance_id": None} for m, t in topics.items()}


def test_member_order_static_first_and_java_utf16():
    subs = _subs(**{"consumer-b": ["t"], "consumer-a": ["t"], "z": ["t"]})
    subs["consumer-b"]["instance_id"] = "instance1"
    subs["consumer-a"]["instance_id"] = "instance2"
    assert member_order(subs) == ["consumer-b", "consumer-a", "z"]
    # U+1F600 is a surrogate pair in UTF-16 (0xD83D…), so Java puts it before U+FFEE; Python would not.
    odd = _subs(**{"\U0001F600": ["t"], "\uffee": ["t"]})
    assert member_order(odd) == ["\U0001F600", "\uffee"]


def test_range_worked_examples():
    # RA testMultipleConsumersMixedTopics
    subs = _subs(consumer1=["topic1"], consumer2=["topic1", "topic2"], consumer3=["topic1"])
    assert expected_range({"topic1": 3, "topic2": 2}, subs) == {
        "consumer1": [("topic1", 0)], "consumer2": [("topic1", 1), ("topic2", 0), ("topic2", 1)],
        "consumer3": [("topic1", 2)]}
    # RA testStaticMemberRangeAssignmentPersistent
    subs = _subs(consumer1=["t1", "t2"], consumer2=["t1", "t2"], consumer3=["t1", "t2"], consumer4=["t1", "t2"])
    for i in (1, 2, 3):
        subs[f"consumer{i}"]["instance_id"] = f"instance{i}"
    got = expected_range({"t1": 5, "t2": 4}, subs)
    assert got["consumer1"] == [("t1", 0), ("t1", 1), ("t2", 0)] and got["consumer4"] == [("t1", 4), ("t2", 3)]


def test_roundrobin_worked_examples():
    # RoundRobinAssignor javadoc: C0⊂{t0}, C1⊂{t0,t1}, C2⊂{t0,t1,t2}; 1/2/3 partitions
    subs = _subs(C0=["t0"], C1=["t0", "t1"], C2=["t0", "t1", "t2"])
    assert expected_roundrobin({"t0": 1, "t1": 2, "t2": 3}, subs) == {
        "C0": [("t0", 0)], "C1": [("t1", 0)], "C2": [("t1", 1), ("t2", 0), ("t2", 1), ("t2", 2)]}
    # RR testStaticMemberRoundRobinAssignmentPersistent
    subs = _subs(consumer1=["t1", "t2"], consumer2=["t1", "t2"], consumer3=["t1", "t2"], consumer4=["t1", "t2"])
    for i in (1, 2, 3):
        subs[f"consumer{i}"]["instance_id"] = f"instance{i}"
    got = expected_roundrobin({"t1": 3, "t2": 3}, subs)
    assert got == {"consumer1": [("t1", 0), ("t2", 1)], "consumer2": [("t1", 1), ("t2", 2)],
                   "consumer3": [("t1", 2)], "consumer4": [("t2", 0)]}


def test_generation_validated_strict_and_java_parity():
    subs = {"old": {"topics": ["t"], "owned": [["t", 0]], "generation": 3},
            "cur": {"topics": ["t"], "owned": [["t", 0]], "generation": 5}}
    stale = {"old": [("t", 0)], "cur": []}
    assert check_cooperative(subs, stale) is None  # Kafka's I6 passes: "old" listed t-0 as owned
    assert "stale claimant" in check_generation_validated(subs, stale)
    assert check_generation_validated(subs, stale, java_parity=True) is None
    assert check_generation_validated(subs, {"old": [], "cur": [("t", 0)]}) is None
    tie = {"a": {"topics": ["t"], "owned": [["t", 0]], "generation": 5},
           "b": {"topics": ["t"], "owned": [["t", 0]], "generation": 5}}
    for parity in (False, True):
        assert "multiply claimed" in check_generation_validated(tie, {"a": [("t", 0)], "b": []}, parity)
        assert check_generation_validated(tie, {"a": [], "b": []}, parity) is None


def test_movability_and_two_cycles():
    subs = _subs(a=["t"], b=["t"], c=["u"])
    assert "could move" in check_movability({"t": 3, "u": 0}, subs, {"a": [("t", 0), ("t", 1), ("t", 2)], "b": [], "c": []})
    assert check_movability({"t": 3}, subs, {"a": [("t", 0), ("t", 1)], "b": [("t", 2)], "c": []}) is None
    owned = {"a": {"topics": ["t"], "owned": [["t", 0]], "generation": 1},
             "b": {"topics": ["t"], "owned": [["t", 1]], "generation": 1}}
    assert "moves" in check_no_two_cycles(owned, {"a": [("t", 1)], "b": [("t", 0)]})
    assert check_no_two_cycles(owned, {"a": [("t", 0)], "b": [("t", 1)]}) is None


@pytest.mark.parametrize("raw", [[("a", [])], {"a": "t-0"}, {"a": [("t",)]}, {"a": [("t", True)]}, {1: []},
                                 {"a": [("t", "0")]}])
def test_decode_output_rejects_malformed(raw):
    with pytest.raises(Malformed):
        decode_output(raw)


def test_decode_output_accepts_lists_and_tuples():
    assert decode_output({"a": [["t", 0], ("t", 1)]}) == {"a": [("t", 0), ("t", 1)]}
    assert diff_assignments({"a": [("t", 0)]}, {"a": [("t", 0)]}) is None
