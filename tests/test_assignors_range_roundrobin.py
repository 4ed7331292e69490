"""Range and RoundRobin: Kafka's worked examples (assignors.md §1.4), member order, kafka-python parity."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, strategies as st

from groupspec.reference.assignors import NAMES, get
from groupspec.reference.assignors._frame import java_string_key, member_info_key, normalize


def subs(**members):
    return {k: {"topics": v} if isinstance(v, list) else v for k, v in members.items()}


def parts(spec: str) -> list[tuple[str, int]]:
    """'t1-0,t2-3' -> sorted [(t1,0),(t2,3)]."""
    out = []
    for item in spec.split(","):
        if item:
            topic, _, p = item.rpartition("-")
            out.append((topic, int(p)))
    return sorted(out)


# ---------------------------------------------------------------- interface

def test_names_and_get():
    assert NAMES == ("range", "roundrobin", "sticky", "cooperative-sticky")
    for name in NAMES:
        a = get(name)
        assert a.name == name
    assert get("range").protocol == "eager" and get("range").supported_protocols == ("eager",)
    assert get("cooperative-sticky").protocol == "cooperative"
    assert get("cooperative-sticky").supported_protocols == ("eager", "cooperative")
    with pytest.raises(ValueError, match=r"unknown assignor 'x'; choose from range, roundrobin, sticky, cooperative-sticky"):
        get("x")


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_every_member_present_and_lists_sorted(name):
    out = get(name).assign({"b": 3, "a": 2}, {"m2": {"topics": ["b", "a"]}, "m1": {}, "m3": {"topics": ["zz"]}})
    assert set(out) == {"m1", "m2", "m3"}
    assert out["m1"] == [] and out["m3"] == []
    assert out["m2"] == sorted(out["m2"]) == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2)]


@pytest.mark.parametrize("bad", [
    {"m": {"topics": "t"}},
    {"m": {"topics": [1]}},
    {"m": {"owned": [["t"]]}},
    {"m": {"generation": "x"}},
    {"m": 5},
])
def test_malformed_input_is_a_value_error(bad):
    with pytest.raises(ValueError):
        get("range").assign({"t": 1}, bad)



BAD_CLAIMS = [["t"]], [["t", 0, 1]], [[0, "t"]], [["t", True]], [["t", 1.0]], "t0", [("t", 0), "t0"], 5, [{"t": 0}]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", BAD_CLAIMS)
def test_malformed_claims_name_the_first_member_whatever_the_assignor(name, bad):
    """Range and roundrobin never read the claims but check them (all members' at once, in a few C passes):
    a malformed one raises the error that names its member, as the member-by-member check of the sticky
    assignors does; and when a later member's other field is bad, the earlier member's claims are still the
    error raised (the order of the checks is the members' order)."""
    good = {"topics": ["t"], "owned": [["t", 0]]}
    with pytest.raises(ValueError, match=r"subscription of member 'm2': .*owned"):
        get(name).assign({"t": 2}, {"m1": good, "m2": {"topics": ["t"], "owned": bad}, "m3": good})
    with pytest.raises(ValueError, match=r"subscription of member 'm2': .*owned"):
        get(name).assign({"t": 2}, {"m1": good, "m2": {"topics": ["t"], "owned": bad}, "m3": {"topics": 5}})
    with pytest.raises(ValueError, match=r"subscription of member 'm3': .*topics"):
        get(name).assign({"t": 2}, {"m1": good, "m2": good, "m3": {"topics": 5, "owned": bad}})


@pytest.mark.parametrize("name", NAMES)
def test_the_collector_is_paused_for_the_call_only(name):
    """Each assignor runs with the cycle collector paused and switches it back on after, also when it raises;
    a caller that switched it off finds it off."""
    import gc

    seen = []

    class Spy(dict):  # read during the call: records whether the collector was running then
        def get(self, key, default=None):
            seen.append(gc.isenabled())
            return super().get(key, default)

    assert gc.isenabled()
    get(name).assign({"t": 2}, {"m1": Spy(topics=["t"])})
    assert seen and not any(seen) and gc.isenabled()
    with pytest.raises(ValueError):
        get(name).assign({"t": 2}, {"m1": {"topics": 5}})
    assert gc.isenabled()
    gc.disable()
    try:
        get(name).assign({"t": 2}, {"m1": {"topics": ["t"]}})
        assert not gc.isenabled()
    finally:
        gc.enable()

def test_member_order_static_first_then_java_utf16():
    ms = normalize({
        "b": {}, "a": {}, "s2": {"instance_id": "i2"}, "s1": {"instance_id": "i1"},
        "\U0001f600": {}, "\uffff": {},
    })
    order = [m.member_id for m in sorted(ms, key=member_info_key)]
    # U+1F600 is the surrogate pair D83D DE00, which sorts before U+FFFF in Java (UTF-16), unlike code points.
    assert order == ["s1", "s2", "a", "b", "\U0001f600", "\uffff"]
    assert java_string_key("\U0001f600") < java_string_key("\uffff")


# ---------------------------------------------------------------- Range (RangeAssignorTest)

def test_range_multiple_consumers_mixed_topics():
    out = get("range").assign({"topic1": 3, "topic2": 2}, subs(consumer1=["topic1"], consumer2=["topic1", "topic2"], consumer3=["topic1"]))
    assert out == {"consumer1": parts("topic1-0"), "consumer2": parts("topic1-1,topic2-0,topic2-1"), "consumer3": parts("topic1-2")}


def test_range_two_consumers_two_topics_six_partitions():
    out = get("range").assign({"t1": 3, "t2": 3}, subs(c1=["t1", "t2"], c2=["t1", "t2"]))
    assert out == {"c1": parts("t1-0,t1-1,t2-0,t2-1"), "c2": parts("t1-2,t2-2")}


@pytest.mark.parametrize("instances", [("instance1", "instance2"), ("instance1", None)])
def test_range_static_consumers_instance_id_beats_member_id(instances):
    s = {"consumer-b": {"topics": ["t1", "t2"], "instance_id": instances[0]},
         "consumer-a": {"topics": ["t1", "t2"], "instance_id": instances[1]}}
    out = get("range").assign({"t1": 3, "t2": 3}, s)
    assert out == {"consumer-b": parts("t1-0,t1-1,t2-0,t2-1"), "consumer-a": parts("t1-2,t2-2")}


def test_range_static_member_assignment_persistent():
    def run(dynamic):
        s = {f"consumer{i}": {"topics": ["t1", "t2"], "instance_id": f"instance{i}"} for i in (1, 2, 3)}
        s[dynamic] = {"topics": ["t1", "t2"]}
        return get("range").assign({"t1": 5, "t2": 4}, s)
    first = run("consumer4")
    assert first == {"consumer1": parts("t1-0,t1-1,t2-0"), "consumer2": parts("t1-2,t2-1"),
                     "consumer3": parts("t1-3,t2-2"), "consumer4": parts("t1-4,t2-3")}
    second = run("consumer5")
    assert second["consumer5"] == first["consumer4"]
    assert all(second[f"consumer{i}"] == first[f"consumer{i}"] for i in (1, 2, 3))


@pytest.mark.parametrize("assignor,expected", [
    ("range", {"instance1": "t1-0,t1-1,t2-0,t2-1", "instance2": "t1-2,t1-3,t2-2,t2-3", "instance3": "t1-4,t2-4"}),
    ("roundrobin", {"instance1": "t1-0,t1-3,t2-1,t2-4", "instance2": "t1-1,t1-4,t2-2", "instance3": "t1-2,t2-0,t2-3"}),
])
def test_static_assignment_persistent_after_member_id_changes(assignor, expected):
    def run(ids):
        s = {mid: {"topics": ["t1", "t2"], "instance_id": f"instance{i + 1}"} for i, mid in enumerate(ids)}
        out = get(assignor).assign({"t1": 5, "t2": 5}, s)
        return {s[mid]["instance_id"]: out[mid] for mid in ids}
    before = run(["member-a", "member-b", "member-c"])
    after = run(["member-c", "member-a", "member-b"])
    assert before == after == {k: parts(v) for k, v in expected.items()}


def test_range_rack_rows_uniform_and_non_equal():
    counts = {"t1": 6, "t2": 7, "t3": 2}
    out = get("range").assign(counts, subs(consumer0=["t1", "t2", "t3"], consumer1=["t1", "t2", "t3"], consumer2=["t1", "t2", "t3"]))
    assert out == {"consumer0": parts("t1-0,t1-1,t2-0,t2-1,t2-2,t3-0"), "consumer1": parts("t1-2,t1-3,t2-3,t2-4,t3-1"),
                   "consumer2": parts("t1-4,t1-5,t2-5,t2-6")}
    out = get("range").assign(counts, subs(consumer0=["t1", "t2", "t3"], consumer1=["t1", "t2", "t3"], consumer2=["t1", "t3"]))
    assert out == {"consumer0": parts("t1-0,t1-1,t2-0,t2-1,t2-2,t2-3,t3-0"), "consumer1": parts("t1-2,t1-3,t2-4,t2-5,t2-6,t3-1"),
                   "consumer2": parts("t1-4,t1-5")}


def test_range_co_partitioned_same_subscription_missing_topics():
    counts = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    topics = [f"t{i}" for i in range(1, 10)]
    out = get("range").assign(counts, subs(consumer0=topics, consumer1=topics, consumer2=topics))
    assert out == {"consumer0": parts("t1-0,t1-1,t2-0,t2-1,t3-0,t4-0,t5-0,t5-1,t6-0,t6-1"),
                   "consumer1": parts("t1-2,t1-3,t2-2,t2-3,t3-1,t4-1,t5-2,t6-2"),
                   "consumer2": parts("t1-4,t1-5,t2-4,t2-5,t5-3,t6-3")}


def test_range_duplicate_topic_collapses_to_one_slot():
    out = get("range").assign({"t": 4}, subs(a=["t", "t"], b=["t"]))
    assert out == {"a": parts("t-0,t-1"), "b": parts("t-2,t-3")}


# ---------------------------------------------------------------- RoundRobin (RoundRobinAssignorTest)

def test_roundrobin_multiple_consumers_mixed_topics():
    out = get("roundrobin").assign({"topic1": 3, "topic2": 2}, subs(consumer1=["topic1"], consumer2=["topic1", "topic2"], consumer3=["topic1"]))
    assert out == {"consumer1": parts("topic1-0"), "consumer2": parts("topic1-1,topic2-0,topic2-1"), "consumer3": parts("topic1-2")}


def test_roundrobin_two_dynamic_consumers():
    out = get("roundrobin").assign({"t1": 3, "t2": 3}, subs(c1=["t1", "t2"], c2=["t1", "t2"]))
    assert out == {"c1": parts("t1-0,t1-2,t2-1"), "c2": parts("t1-1,t2-0,t2-2")}


def test_roundrobin_static_member_persistent():
    s = {f"consumer{i}": {"topics": ["t1", "t2"], "instance_id": f"instance{i}"} for i in (1, 2, 3)}
    s["consumer4"] = {"topics": ["t1", "t2"]}
    out = get("roundrobin").assign({"t1": 3, "t2": 3}, s)
    assert out == {"consumer1": parts("t1-0,t2-1"), "consumer2": parts("t1-1,t2-2"), "consumer3": parts("t1-2"), "consumer4": parts("t2-0")}


def test_roundrobin_javadoc_unbalanced_example():
    out = get("roundrobin").assign({"t0": 1, "t1": 2, "t2": 3}, subs(C0=["t0"], C1=["t0", "t1"], C2=["t0", "t1", "t2"]))
    assert out == {"C0": parts("t0-0"), "C1": parts("t1-0"), "C2": parts("t1-1,t2-0,t2-1,t2-2")}


# ---------------------------------------------------------------- parity with kafka-python on dynamic members

def _kafka_python(assignor_cls, counts, subscriptions):
    from kafka.coordinator.assignors.abstract import ConsumerProtocolSubscription

    cluster = SimpleNamespace(partitions_for_topic=lambda t: set(range(counts[t])) if counts.get(t, 0) > 0 else None)
    members = [SimpleNamespace(member_id=mid, group_instance_id=None,
                               metadata=ConsumerProtocolSubscription(0, list(s["topics"]), b""))
               for mid, s in subscriptions.items()]
    raw = assignor_cls.assign(cluster, members)
    return {mid: sorted((t, p) for t, ps in a.assigned_partitions for p in ps) for mid, a in raw.items()}


TOPICS = ["t0", "t1", "t2", "t3", "t4"]


@st.composite
def groups(draw):
    counts = {t: draw(st.integers(0, 7)) for t in TOPICS if draw(st.booleans())}
    member_ids = draw(st.lists(st.text(alphabet="abcXYZ-09", min_size=1, max_size=6), min_size=1, max_size=8, unique=True))
    # kafka-python raises on topics without metadata when no member has a partition of them; keep topics known.
    topic_pool = sorted(counts) or ["t0"]
    counts.setdefault(topic_pool[0], 0)
    subs_ = {mid: {"topics": draw(st.lists(st.sampled_from(topic_pool), max_size=4, unique=True))} for mid in member_ids}
    return counts, subs_


@given(groups())
def test_range_matches_kafka_python(g):
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    counts, subs_ = g
    assert get("range").assign(counts, subs_) == _kafka_python(RangePartitionAssignor, counts, subs_)


@given(groups())
def test_roundrobin_matches_kafka_python(g):
    """Uniform subscriptions only: kafka-python's RoundRobin raises KeyError as soon as it has to skip
    a member (it looks up ``member_topics`` with an ``(instance_id, member_id)`` tuple)."""
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    counts, subs_ = g
    topics = sorted({t for s in subs_.values() for t in s["topics"]})
    subs_ = {mid: {"topics": topics} for mid in subs_}
    assert get("roundrobin").assign(counts, subs_) == _kafka_python(RoundRobinPartitionAssignor, counts, subs_)


def test_parity_harness_catches_a_mutant():
    """The comparison above fails for a deliberately broken range (members in reverse order)."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    counts, subs_ = {"t": 3}, subs(a=["t"], b=["t"])
    ours = get("range").assign(counts, subs_)
    mutant = {"a": ours["b"], "b": ours["a"]}
    assert ours == _kafka_python(RangePartitionAssignor, counts, subs_) != mutant


# ---------------------------------------------------------------- invariants on random groups, static members included

@st.composite
def any_groups(draw):
    counts = {t: draw(st.integers(-1, 6)) for t in TOPICS}
    ids = draw(st.lists(st.text(alphabet="ab\U0001f600\uffff", min_size=1, max_size=4), min_size=1, max_size=7, unique=True))
    subs_ = {}
    for mid in ids:
        subs_[mid] = {"topics": draw(st.lists(st.sampled_from(TOPICS + ["ghost"]), max_size=5)),
                      "instance_id": draw(st.none() | st.text(alphabet="xy\U0001f600", min_size=1, max_size=3))}
    return counts, subs_


@pytest.mark.parametrize("name", ["range", "roundrobin"])
@given(g=any_groups())
def test_invariants_and_order_independence(name, g):
    from groupspec.reference.assignors.properties import check_all

    counts, subs_ = g
    out = get(name).assign(counts, subs_)
    assert check_all(counts, subs_, out, balanced=False) == []  # I1-I4 (no balance promise, assignors.md §2)
    assert get(name).assign(counts, dict(reversed(list(subs_.items())))) == out  # I10


@given(g=any_groups())
def test_range_is_contiguous_with_q_and_q_plus_one(g):
    """I7 for Range: per topic, each subscriber gets a contiguous block; sizes are q+1 then q in member order."""
    from groupspec.reference.assignors._frame import member_info_key

    counts, subs_ = g
    out = get("range").assign(counts, subs_)
    ordered = [m.member_id for m in sorted(normalize(subs_), key=member_info_key)]
    for t, n in counts.items():
        takers = [m for m in ordered if t in subs_[m]["topics"]]
        if n <= 0 or not takers:
            continue
        q, r = divmod(n, len(takers))
        start = 0
        for i, m in enumerate(takers):
            mine = [p for tt, p in out[m] if tt == t]
            size = q + (1 if i < r else 0)
            assert mine == list(range(start, start + size))
            start += size
