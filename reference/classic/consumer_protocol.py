"""Consumer embedded protocol: the bytes a consumer puts inside JoinGroup / SyncGroup.

Theory of operation
-------------------
The group coordinator never looks inside a consumer's protocol metadata or assignment: they are
opaque ``bytes``. The consumer client (Kafka's ``ConsumerProtocol``, generated from
``ConsumerProtocolSubscription.json`` / ``ConsumerProtocolAssignment.json``) frames them as a
big-endian ``int16`` version followed by a non-flexible (no tagged fields) schema:

ConsumerProtocolSubscription (valid versions 0-3)::

    Topics           [string]                 v0+
    UserData         nullable bytes           v0+   (int32 length, -1 = null)
    OwnedPartitions  [Topic Partitions]       v1+   (KIP-429, Kafka 2.4)
        Topic        string
        Partitions   [int32]
    GenerationId     int32 (default -1)       v2+   (KAFKA-13715, Kafka 3.4)
    RackId           nullable string          v3+   (KIP-881, Kafka 3.5; int16 length, -1 = null)

ConsumerProtocolAssignment (valid versions 0-3, same layout in all of them)::

    AssignedPartitions [Topic Partitions]     v0+
    UserData           nullable bytes         v0+

Arrays carry an ``int32`` count, strings an ``int16`` length of UTF-8 bytes.

Reading follows Kafka's ``ConsumerProtocol.deserializeSubscription`` /
``deserializeAssignment``: a negative version is a schema error; a version above the highest known
one is parsed with the highest known schema (the JSON files promise that later versions only add
fields at the end), and bytes after the last known field are ignored. Fields a lower version does not
carry take their defaults (no owned partitions, generation -1, no rack).

Writing groups owned/assigned partitions by topic, topics in order of first appearance, partitions
in the order given (Kafka's generated ``OwnedPartitions`` collection is keyed by topic in insertion
order). The consumer in :mod:`groupspec.reference.classic.client` passes sorted lists, as Kafka's
``ConsumerCoordinator.metadata`` does.

Malformed bytes raise :class:`ConsumerProtocolError` naming the field and byte offset; nothing else
escapes from the decoders.

Assignor user data (inside ``UserData``, no version prefix):

* ``sticky`` (``StickyAssignor``, EAGER): ``StickyAssignorUserData`` v1 = PreviousAssignment
  ``[Topic Partitions]`` + Generation ``int32`` (v0 lacks the generation). An eager member revokes
  everything before it joins, so its owned partitions are empty and this blob is the only way the
  leader learns the previous assignment. Readers try v1, then v0, and ignore data they cannot
  parse (previous assignment empty, generation -1), as ``StickyAssignor.memberData`` does.
* ``cooperative-sticky``: the member's generation as one ``int32``, for leaders that read
  subscriptions older than v2 (``CooperativeStickyAssignor.subscriptionUserData``).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

__all__ = [
    "HIGHEST_SUBSCRIPTION_VERSION",
    "HIGHEST_ASSIGNMENT_VERSION",
    "TopicPartition",
    "Subscription",
    "Assignment",
    "ConsumerProtocolError",
    "encode_subscription",
    "decode_subscription",
    "encode_assignment",
    "decode_assignment",
    "peek_version",
    "encode_sticky_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "decode_cooperative_user_data",
]

HIGHEST_SUBSCRIPTION_VERSION = 3
HIGHEST_ASSIGNMENT_VERSION = 3

TopicPartition = tuple[str, int]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class ConsumerProtocolError(ValueError):
    """The bytes are not a valid ConsumerProtocolSubscription / ConsumerProtocolAssignment."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """A decoded ConsumerProtocolSubscription (what one member sends for one assignor)."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None
    version: int = field(default=HIGHEST_SUBSCRIPTION_VERSION, compare=False)


@dataclass(frozen=True, slots=True)
class Assignment:
    """A decoded ConsumerProtocolAssignment (what the leader hands one member)."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None
    version: int = field(default=HIGHEST_ASSIGNMENT_VERSION, compare=False)


# --------------------------------------------------------------------------------- writing


def write_i16(out: list[bytes], v: int, what: str) -> None:
    if not -0x8000 <= v <= 0x7FFF:
        raise ConsumerProtocolError(f"{what}: {v} does not fit in int16")
    out.append(_I16.pack(v))


def write_i32(out: list[bytes], v: int, what: str) -> None:
    if not -0x80000000 <= v <= 0x7FFFFFFF:
        raise ConsumerProtocolError(f"{what}: {v} does not fit in int32")
    out.append(_I32.pack(v))


def write_string(out: list[bytes], s: str | None, what: str, nullable: bool = False) -> None:
    if s is None:
        if not nullable:
            raise ConsumerProtocolError(f"{what}: null is not allowed")
        out.append(_I16.pack(-1))
        return
    raw = s.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise ConsumerProtocolError(f"{what}: string of {len(raw)} bytes is too long")
    out.append(_I16.pack(len(raw)))
    out.append(raw)


def write_bytes(out: list[bytes], b: bytes | None) -> None:
    if b is None:
        out.append(_I32.pack(-1))
    else:
        out.append(_I32.pack(len(b)))
        out.append(bytes(b))


def _group_by_topic(parts: tuple[TopicPartition, ...] | list[TopicPartition]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for topic, p in parts:
        by_topic.setdefault(topic, []).append(p)
    return list(by_topic.items())


def _w_topic_partitions(out: list[bytes], parts: tuple[TopicPartition, ...], what: str) -> None:
    grouped = _group_by_topic(parts)
    out.append(_I32.pack(len(grouped)))
    for topic, ps in grouped:
        write_string(out, topic, f"{what}.topic")
        out.append(_I32.pack(len(ps)))
        for p in ps:
            write_i32(out, p, f"{what}.partition")


def _check_version(version: int, highest: int, what: str) -> None:
    if not 0 <= version <= highest:
        raise ConsumerProtocolError(f"{what} version {version} is not in 0..{highest}")


def encode_subscription(sub: Subscription, version: int = HIGHEST_SUBSCRIPTION_VERSION) -> bytes:
    """Serialize at ``version`` (fields the version lacks are silently not written, as in Kafka)."""
    _check_version(version, HIGHEST_SUBSCRIPTION_VERSION, "subscription")
    out: list[bytes] = []
    write_i16(out, version, "version")
    out.append(_I32.pack(len(sub.topics)))
    for t in sub.topics:
        write_string(out, t, "topics")
    write_bytes(out, sub.user_data)
    if version >= 1:
        _w_topic_partitions(out, sub.owned_partitions, "owned_partitions")
    if version >= 2:
        write_i32(out, sub.generation_id, "generation_id")
    if version >= 3:
        write_string(out, sub.rack_id, "rack_id", nullable=True)
    return b"".join(out)


def encode_assignment(asg: Assignment, version: int = HIGHEST_ASSIGNMENT_VERSION) -> bytes:
    """Serialize an assignment; all versions 0-3 share one layout (only the prefix differs)."""
    _check_version(version, HIGHEST_ASSIGNMENT_VERSION, "assignment")
    out: list[bytes] = []
    write_i16(out, version, "version")
    _w_topic_partitions(out, asg.partitions, "assigned_partitions")
    write_bytes(out, asg.user_data)
    return b"".join(out)


# --------------------------------------------------------------------------------- reading


class Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def _need(self, n: int, what: str) -> None:
        if self.pos + n > len(self.buf):
            raise ConsumerProtocolError(
                f"{what}: needs {n} bytes at offset {self.pos}, only {len(self.buf) - self.pos} left"
            )

    def i16(self, what: str) -> int:
        self._need(2, what)
        (v,) = _I16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return int(v)

    def i32(self, what: str) -> int:
        self._need(4, what)
        (v,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return int(v)

    def count(self, what: str) -> int:
        n = self.i32(what)
        if n < 0:
            raise ConsumerProtocolError(f"{what}: non-nullable array has length {n}")
        # each element takes at least 2 bytes: reject absurd counts before looping
        if n * 2 > len(self.buf) - self.pos:
            raise ConsumerProtocolError(f"{what}: array length {n} exceeds the remaining bytes")
        return n

    def string(self, what: str, nullable: bool = False) -> str | None:
        n = self.i16(what)
        if n < 0:
            if nullable and n == -1:
                return None
            raise ConsumerProtocolError(f"{what}: string length {n} at offset {self.pos - 2}")
        self._need(n, what)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConsumerProtocolError(f"{what}: invalid UTF-8 ({e.reason})") from None

    def nullable_bytes(self, what: str) -> bytes | None:
        n = self.i32(what)
        if n == -1:
            return None
        if n < 0:
            raise ConsumerProtocolError(f"{what}: bytes length {n} at offset {self.pos - 4}")
        self._need(n, what)
        raw = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return raw

    def topic_partitions(self, what: str) -> tuple[TopicPartition, ...]:
        out: list[TopicPartition] = []
        for _ in range(self.count(what)):
            topic = self.string(f"{what}.topic")
            assert topic is not None
            for _ in range(self.count(f"{what}.partitions")):
                out.append((topic, self.i32(f"{what}.partition")))
        return tuple(out)


def peek_version(data: bytes) -> int:
    """The int16 version prefix of an embedded-protocol blob."""
    return Reader(bytes(data)).i16("version")


def _effective_version(r: Reader, highest: int, what: str) -> int:
    version = r.i16("version")
    if version < 0:
        raise ConsumerProtocolError(f"unsupported {what} version {version}")
    return min(version, highest)


def decode_subscription(data: bytes) -> Subscription:
    """Parse a subscription; the result's ``version`` is the version it was parsed with."""
    r = Reader(bytes(data))
    version = _effective_version(r, HIGHEST_SUBSCRIPTION_VERSION, "subscription")
    topics: list[str] = []
    for _ in range(r.count("topics")):
        t = r.string("topics")
        assert t is not None
        topics.append(t)
    user_data = r.nullable_bytes("user_data")
    owned: tuple[TopicPartition, ...] = ()
    generation = -1
    rack: str | None = None
    if version >= 1:
        owned = r.topic_partitions("owned_partitions")
    if version >= 2:
        generation = r.i32("generation_id")
    if version >= 3:
        rack = r.string("rack_id", nullable=True)
    return Subscription(tuple(topics), user_data, owned, generation, rack, version)


def decode_assignment(data: bytes) -> Assignment:
    """Parse an assignment; the result's ``version`` is the version it was parsed with."""
    r = Reader(bytes(data))
    version = _effective_version(r, HIGHEST_ASSIGNMENT_VERSION, "assignment")
    parts = r.topic_partitions("assigned_partitions")
    user_data = r.nullable_bytes("user_data")
    return Assignment(parts, user_data, version)


# --------------------------------------------------------------------------------- assignor user data


def encode_sticky_user_data(previous: tuple[TopicPartition, ...], generation: int | None) -> bytes:
    """``StickyAssignor.serializeTopicPartitionAssignment`` (v1; v0 when ``generation`` is None)."""
    out: list[bytes] = []
    _w_topic_partitions(out, previous, "previous_assignment")
    if generation is not None:
        write_i32(out, generation, "generation")
    return b"".join(out)


def decode_sticky_user_data(data: bytes | None) -> tuple[tuple[TopicPartition, ...], int | None]:
    """``StickyAssignor.memberData``: (previous assignment, generation or None). Never raises."""
    if not data:
        return (), None
    for with_generation in (True, False):
        r = Reader(bytes(data))
        try:
            parts = r.topic_partitions("previous_assignment")
            generation = r.i32("generation") if with_generation else None
            return parts, generation
        except ConsumerProtocolError:
            continue
    return (), -1


def encode_cooperative_user_data(generation: int) -> bytes:
    """``CooperativeStickyAssignor.subscriptionUserData``: the generation as an int32."""
    out: list[bytes] = []
    write_i32(out, generation, "generation")
    return b"".join(out)


def decode_cooperative_user_data(data: bytes | None) -> int | None:
    """The generation in a cooperative-sticky user data blob, or None if absent/short."""
    if data is None or len(data) < 4:
        return None
    return int(_I32.unpack_from(data, 0)[0])
