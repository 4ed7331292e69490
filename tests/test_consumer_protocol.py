"""ConsumerProtocolSubscription / ConsumerProtocolAssignment bytes: byte-compatible with Kafka.

kafka-python ships encoders generated from Kafka's own JSON schemas
(``kafka.protocol.consumer.metadata``); every encoding is compared with it, both directions.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupspec.reference.classic import (
    Assignment, ConsumerProtocolError, Subscription, decode_assignment, decode_subscription, encode_assignment,
    encode_subscription, peek_version,
)

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KA  # noqa: E402
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KS  # noqa: E402

names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=8)
partition_ids = st.integers(min_value=0, max_value=2**31 - 1)


def grouped_partitions() -> st.SearchStrategy[tuple[tuple[str, int], ...]]:
    """Partitions already grouped by topic (the encoder groups by first appearance)."""
    return st.dictionaries(names, st.lists(partition_ids, max_size=4), max_size=4).map(
        lambda d: tuple((t, p) for t, ps in d.items() for p in ps)
    )


subscriptions = st.builds(
    Subscription,
    topics=st.lists(names, max_size=5).map(tuple),
    user_data=st.none() | st.binary(max_size=10),
    owned_partitions=grouped_partitions(),
    generation_id=st.integers(min_value=-(2**31), max_value=2**31 - 1),
    rack_id=st.none() | names,
)
assignments = st.builds(Assignment, partitions=grouped_partitions(), user_data=st.none() | st.binary(max_size=10))


def _kafka_tp(cls, parts):  # noqa: ANN001, ANN202 - kafka-python's dynamic classes
    by: dict[str, list[int]] = {}
    for t, p in parts:
        by.setdefault(t, []).append(p)
    return [cls.TopicPartition(topic=t, partitions=ps) for t, ps in by.items()]


def _kafka_sub(sub: Subscription, version: int):  # noqa: ANN202
    return KS(
        topics=list(sub.topics),
        user_data=sub.user_data,
        owned_partitions=_kafka_tp(KS, sub.owned_partitions),
        generation_id=sub.generation_id,
        rack_id=sub.rack_id,
        version=version,
    )


def _strip(sub: Subscription, version: int) -> Subscription:
    """What survives a round trip at ``version``."""
    return Subscription(
        sub.topics,
        sub.user_data,
        sub.owned_partitions if version >= 1 else (),
        sub.generation_id if version >= 2 else -1,
        sub.rack_id if version >= 3 else None,
        version,
    )


@given(subscriptions, st.integers(min_value=0, max_value=3))
def test_subscription_bytes_equal_kafka(sub: Subscription, version: int) -> None:
    ours = encode_subscription(sub, version)
    theirs = _kafka_sub(sub, version).encode(version=version)
    assert ours == theirs
    assert peek_version(ours) == version
    back = decode_subscription(ours)
    assert back == _strip(sub, version) and back.version == version
    # kafka-python reads our bytes back to the same fields
    k = KS.decode(ours)
    assert list(k.topics) == list(sub.topics)
    assert k.user_data == sub.user_data


@given(assignments, st.integers(min_value=0, max_value=3))
def test_assignment_bytes_equal_kafka(asg: Assignment, version: int) -> None:
    ours = encode_assignment(asg, version)
    theirs = KA(assigned_partitions=_kafka_tp(KA, asg.partitions), user_data=asg.user_data, version=version).encode(
        version=version
    )
    assert ours == theirs
    assert decode_assignment(ours) == asg


@given(subscriptions)
def test_decode_kafka_bytes(sub: Subscription) -> None:
    theirs = _kafka_sub(sub, 3).encode(version=3)
    assert decode_subscription(theirs) == sub


def test_known_vector_v3() -> None:
    sub = Subscription(("a", "b"), None, (("a", 0), ("a", 1)), 5, "r")
    assert encode_subscription(sub).hex() == (
        "0003" "00000002" "000161" "000162" "ffffffff" "00000001" "000161" "00000002" "00000000" "00000001"
        "00000005" "000172"
    )


def test_owned_partitions_grouped_by_topic_in_first_appearance_order() -> None:
    sub = Subscription(("a", "b"), None, (("b", 1), ("a", 0), ("b", 0)), -1, None)
    back = decode_subscription(encode_subscription(sub))
    assert back.owned_partitions == (("b", 1), ("b", 0), ("a", 0))


def test_newer_version_parsed_with_highest_known_schema_and_trailing_ignored() -> None:
    sub = Subscription(("t",), b"x", (("t", 3),), 7, "rack")
    raw = bytearray(encode_subscription(sub, 3))
    raw[0:2] = (9).to_bytes(2, "big")
    raw += b"\x00\x01\x02"  # a field from the future
    back = decode_subscription(bytes(raw))
    assert back == sub and back.version == 3


def test_lower_version_gets_defaults() -> None:
    back = decode_subscription(encode_subscription(Subscription(("t",), None, (("t", 1),), 4, "r"), 0))
    assert back.owned_partitions == () and back.generation_id == -1 and back.rack_id is None


@pytest.mark.parametrize(
    "raw, fragment",
    [
        (b"", "version"),
        (b"\x00", "version"),
        (b"\xff\xff", "unsupported subscription version -1"),
        (b"\x00\x00\x00\x00\x00\x01", "topics"),
        (b"\x00\x00\xff\xff\xff\xfe", "non-nullable array"),
        (b"\x00\x00\x00\x00\x00\x01\xff\xfe", "string length"),
        (b"\x00\x00\x00\x00\x00\x01\x00\x02\xff\xfe\xff\xff\xff\xff", "invalid UTF-8"),
        (b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xfe", "bytes length"),
        (b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05ab", "user_data"),
        (b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff", "owned_partitions"),
        (b"\x00\x00\x7f\xff\xff\xff", "exceeds"),
    ],
)
def test_malformed_subscription_is_a_typed_error(raw: bytes, fragment: str) -> None:
    with pytest.raises(ConsumerProtocolError, match=fragment):
        decode_subscription(raw)


@given(st.binary(max_size=40))
def test_arbitrary_bytes_never_crash(raw: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        try:
            decode(raw)
        except ConsumerProtocolError:
            pass


@given(subscriptions, st.data())
def test_truncation_is_always_detected(sub: Subscription, data: st.DataObject) -> None:
    raw = encode_subscription(sub)
    cut = data.draw(st.integers(min_value=0, max_value=len(raw) - 1))
    with pytest.raises(ConsumerProtocolError):
        decode_subscription(raw[:cut])


def test_encoder_rejects_out_of_range_values() -> None:
    with pytest.raises(ConsumerProtocolError):
        encode_subscription(Subscription(("t",), generation_id=2**31))
    with pytest.raises(ConsumerProtocolError):
        encode_subscription(Subscription(("t",)), version=4)
    with pytest.raises(ConsumerProtocolError):
        encode_assignment(Assignment((("t", -(2**31) - 1),)))


# ------------------------------------------------------------------ assignor user data

from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData as KU  # noqa: E402

from groupspec.reference.classic import (
    decode_cooperative_user_data, decode_sticky_user_data, encode_cooperative_user_data, encode_sticky_user_data,
)


@given(grouped_partitions(), st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_sticky_user_data_bytes_equal_kafka(parts: tuple[tuple[str, int], ...], generation: int) -> None:
    ours = encode_sticky_user_data(parts, generation)
    theirs = KU(previous_assignment=_kafka_tp(KU, parts), generation=generation, version=1).encode(version=1, header=False)
    assert ours == theirs
    assert decode_sticky_user_data(ours) == (parts, generation)


def test_sticky_user_data_v0_fallback_and_garbage() -> None:
    v0 = encode_sticky_user_data((("t", 1),), None)
    assert decode_sticky_user_data(v0) == ((("t", 1),), None)
    assert decode_sticky_user_data(b"\x00\x00\x00\x05") == ((), -1)  # StickyAssignor ignores what it cannot parse
    assert decode_sticky_user_data(None) == ((), None) and decode_sticky_user_data(b"") == ((), None)


def test_cooperative_user_data_is_the_generation() -> None:
    assert encode_cooperative_user_data(7) == b"\x00\x00\x00\x07"
    assert decode_cooperative_user_data(encode_cooperative_user_data(-1)) == -1
    assert decode_cooperative_user_data(b"\x00") is None and decode_cooperative_user_data(None) is None
