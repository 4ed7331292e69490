"""Kafka wire encoding for the server: frames, request headers, request and response bodies.

Theory of operation
-------------------
Encoding is done by kafka-python's schema-driven codec (``kafka.protocol``, generated at import
from Kafka's own ``*Request.json`` / ``*Response.json`` message definitions), which handles
flexible versions (compact strings and arrays, tagged fields) and request header v1/v2 and response
header v0/v1 as Kafka does (ApiVersions answers always carry header v0). This module adds what a
*server* needs on top:

* ``SUPPORTED``: the APIs and version ranges the server answers (what ``ApiVersions`` advertises),
  chosen as the ranges the reference coordinator implements (JoinGroup 0-9, SyncGroup 0-5, ...);
* ``decode_request(frame)``: one frame (without its 4-byte length) to ``(header, body)``; a frame
  whose header cannot be read raises ``Unreadable``, a request of an API or version the server does
  not answer raises ``Unsupported``, a body that does not parse raises ``Malformed``: a lying length,
  a string that is not UTF-8, a null in a field that is not nullable at the request's version (an
  array, a string, bytes: kafka-python's codec reads a null anywhere, Kafka's generated ``read``
  refuses it: "non-nullable field ... was serialized as null"). Kafka 4.3.1 closes the connection
  in all three cases (``SocketServer``'s ``Processor.parseRequestHeader`` throws
  ``InvalidRequestException`` for an unknown key, a version not enabled or not supported, and
  ``RequestContext.parseRequest`` for a body that does not parse; ``processChannelException``
  closes the channel), except for ApiVersions: an unsupported version gets the v0 answer with
  UNSUPPORTED_VERSION and the supported list (KIP-511), so the client can retry with a version it
  knows;
* ``encode_response(header, body)``: the framed answer (length, response header, body);
* ``error_response(header, error, body)``: Kafka's ``AbstractRequest.getErrorResponse``: an answer
  of the request's API at the request's version whose every error code is ``error``, echoing the
  request's entities (topics, partitions, groups, coordinator keys) as Kafka's does (built by
  ``translate.error_body``), for injected errors, INVALID_REQUEST and UNKNOWN_SERVER_ERROR.
"""
from __future__ import annotations

import functools
import struct
import uuid
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse

from . import messages as _messages


# (kafka-python ships no types: ApiMessage is Any to the checker, and its class keyword load_json unknown)
class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_messages):  # type: ignore[call-arg, misc]
    """KIP-848's heartbeat (API key 68), generated from ``groupspec/serve/messages``."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_messages):  # type: ignore[call-arg, misc]
    """The answer to ``ConsumerGroupHeartbeatRequest``."""


__all__ = [
    "API_NAMES",
    "SUPPORTED",
    "WireError",
    "Unreadable",
    "Unsupported",
    "Malformed",
    "decode_request",
    "encode_response",
    "error_response",
    "response_class",
    "frame_request",
    "supported_for",
]

# api key -> (name, request class, response class, min version, max version)
APIS: dict[int, tuple[str, Any, Any, int, int]] = {
    0: ("Produce", ProduceRequest, ProduceResponse, 3, 9),
    1: ("Fetch", FetchRequest, FetchResponse, 4, 12),
    2: ("ListOffsets", ListOffsetsRequest, ListOffsetsResponse, 1, 7),
    3: ("Metadata", MetadataRequest, MetadataResponse, 0, 12),
    8: ("OffsetCommit", OffsetCommitRequest, OffsetCommitResponse, 2, 9),
    9: ("OffsetFetch", OffsetFetchRequest, OffsetFetchResponse, 1, 9),
    10: ("FindCoordinator", FindCoordinatorRequest, FindCoordinatorResponse, 0, 4),
    11: ("JoinGroup", JoinGroupRequest, JoinGroupResponse, 0, 9),
    12: ("Heartbeat", HeartbeatRequest, HeartbeatResponse, 0, 4),
    13: ("LeaveGroup", LeaveGroupRequest, LeaveGroupResponse, 0, 5),
    14: ("SyncGroup", SyncGroupRequest, SyncGroupResponse, 0, 5),
    18: ("ApiVersions", ApiVersionsRequest, ApiVersionsResponse, 0, 3),
    19: ("CreateTopics", CreateTopicsRequest, CreateTopicsResponse, 2, 7),
    22: ("InitProducerId", InitProducerIdRequest, InitProducerIdResponse, 0, 4),
    68: ("ConsumerGroupHeartbeat", ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, 0, 1),
}
_CLASSIC_ONLY = (11, 12, 13, 14)  # JoinGroup, Heartbeat, LeaveGroup, SyncGroup


def supported_for(protocol: str) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) versions the server answers with ``--protocol`` classic, consumer or both.

    ``classic``: no ConsumerGroupHeartbeat, OffsetCommit/OffsetFetch up to v8 (v9 is the first
    version meant for KIP-848 members); ``consumer``: no JoinGroup, SyncGroup, Heartbeat, LeaveGroup;
    ``both``: everything.
    """
    out = {k: (v[3], v[4]) for k, v in APIS.items()}
    if protocol == "classic":
        del out[68]
        out[8], out[9] = (2, 8), (1, 8)
    elif protocol == "consumer":
        for k in _CLASSIC_ONLY:
            del out[k]
    elif protocol != "both":
        raise ValueError(f"protocol {protocol!r}: choose classic, consumer or both")
    return out


#: api key -> (min version, max version) the server answers (``--protocol classic``, the default).
SUPPORTED: dict[int, tuple[int, int]] = supported_for("classic")
#: api key -> Kafka's API name.
API_NAMES: dict[int, str] = {k: v[0] for k, v in APIS.items()}

_UNSUPPORTED_VERSION = 35
ZERO_UUID = uuid.UUID(int=0)  # Kafka's Uuid.ZERO_UUID


class WireError(Exception):
    """A request the server cannot handle as asked."""


class Unreadable(WireError):
    """The request header itself cannot be read: Kafka closes the connection."""


@dataclass
class _HeaderInfo:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


class Unsupported(WireError):
    """An API key or version the server does not answer."""

    def __init__(self, header: _HeaderInfo, message: str) -> None:
        super().__init__(message)
        self.header = header


class Malformed(WireError):
    """The header is readable but the body does not parse at the header's version."""

    def __init__(self, header: _HeaderInfo, message: str) -> None:
        super().__init__(message)
        self.header = header


def _read_v1_header(frame: bytes) -> tuple[_HeaderInfo, int]:
    """The fixed part every request header version shares (key, version, correlation, client id)."""
    if len(frame) < 10:
        raise Unreadable(f"request of {len(frame)} bytes is shorter than a request header")
    api_key, api_version, correlation_id, n = struct.unpack_from(">hhih", frame, 0)
    pos = 10
    client_id: str | None = None
    if n >= 0:
        if pos + n > len(frame):
            raise Unreadable("request header's client id runs past the end of the request")
        try:
            client_id = frame[pos:pos + n].decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable("request header's client id is not UTF-8") from None
        pos += n
    elif n != -1:
        raise Unreadable(f"request header's client id has length {n}")
    return _HeaderInfo(api_key, api_version, correlation_id, client_id), pos


def _uvarint(frame: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(frame) or shift > 28:
            raise ValueError("bad varint")
        b = frame[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


class HeartbeatBody:
    """A decoded Heartbeat request (the hot path decodes it directly; same fields as the codec's)."""

    __slots__ = ("group_id", "generation_id", "member_id", "group_instance_id")

    def __init__(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None) -> None:
        self.group_id, self.generation_id = group_id, generation_id
        self.member_id, self.group_instance_id = member_id, group_instance_id


def _uvarint_fast(frame: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint; one byte (a value below 128, nearly always) without a call."""
    b = frame[pos]
    return (b, pos + 1) if b < 0x80 else _uvarint(frame, pos)


def _tagged(frame: bytes, pos: int) -> int:
    """Skip a tagged-field section; nearly always empty (one zero byte)."""
    if frame[pos] == 0:
        return pos + 1
    count, pos = _uvarint(frame, pos)
    for _ in range(count):
        _tag, pos = _uvarint(frame, pos)
        size, pos = _uvarint(frame, pos)
        pos += size
    return pos


def _heartbeat(frame: bytes, pos: int, version: int) -> HeartbeatBody:
    if version == 4:
        fast = _heartbeat_v4_plain(frame, pos)
        if fast is not None:
            return fast
    return _heartbeat_general(frame, pos, version)


def _heartbeat_v4_plain(frame: bytes, pos: int) -> HeartbeatBody | None:
    """The usual Heartbeat v4 read in one go: no header tags, group and member ids under 127 bytes, no
    instance id, no body tags, nothing after. Anything else (or too short): None, and the general read decides."""
    end = len(frame)
    if pos + 2 > end or frame[pos] != 0:
        return None
    n = frame[pos + 1] - 1
    if not 0 <= n < 0x7F:
        return None
    g_end = pos + 2 + n
    m_at = g_end + 4
    if m_at >= end:
        return None
    k = frame[m_at] - 1
    if not 0 <= k < 0x7F:
        return None
    m_end = m_at + 1 + k
    if m_end + 2 != end or frame[m_end] != 0 or frame[m_end + 1] != 0:
        return None
    return HeartbeatBody(frame[pos + 2:g_end].decode("utf-8"), int.from_bytes(frame[g_end:m_at], "big", signed=True),
                         frame[m_at + 1:m_end].decode("utf-8"), None)


def _heartbeat_general(frame: bytes, pos: int, version: int) -> HeartbeatBody:
    end = len(frame)
    flexible = version >= 4

    def string(pos: int, nullable: bool) -> tuple[str | None, int]:
        if flexible:
            n, pos = _uvarint_fast(frame, pos)
            n -= 1
        else:
            n = (frame[pos] << 8 | frame[pos + 1]) - (0x10000 if frame[pos] & 0x80 else 0)
            pos += 2
        if n < 0:
            if n == -1 and nullable:
                return None, pos
            raise ValueError("bad string length")
        if pos + n > end:
            raise ValueError("string runs past the end")
        return frame[pos:pos + n].decode("utf-8"), pos + n

    if flexible:
        pos = _tagged(frame, pos)  # header tagged fields
    group_id, pos = string(pos, False)
    if pos + 4 > end:
        raise ValueError("generation runs past the end")
    generation = int.from_bytes(frame[pos:pos + 4], "big", signed=True)
    member_id, pos = string(pos + 4, False)
    instance: str | None = None
    if version >= 3:
        instance, pos = string(pos, True)
    if flexible:
        pos = _tagged(frame, pos)
    if pos > end:
        raise ValueError("tagged fields run past the end")
    # bytes after the body are ignored, as Kafka's generated read (and kafka-python's codec) ignore them
    return HeartbeatBody(group_id or "", generation, member_id or "", instance)


class SyncGroupAssignment:
    __slots__ = ("member_id", "assignment")

    def __init__(self, member_id: str, assignment: bytes) -> None:
        self.member_id, self.assignment = member_id, assignment


class SyncGroupBody:
    """A decoded SyncGroup request (read directly, as Heartbeat is; same fields as the codec's). ``pairs``: the
    assignments as (member id, assignment bytes), the reference's form (a leader's SyncGroup carries one per member,
    kept so rather than as objects); ``assignments`` gives them as the codec's objects."""

    __slots__ = ("group_id", "generation_id", "member_id", "group_instance_id", "protocol_type", "protocol_name",
                 "pairs")

    def __init__(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                 protocol_type: str | None, protocol_name: str | None,
                 pairs: tuple[tuple[str, bytes], ...]) -> None:
        self.group_id, self.generation_id, self.member_id = group_id, generation_id, member_id
        self.group_instance_id, self.protocol_type, self.protocol_name = group_instance_id, protocol_type, protocol_name
        self.pairs = pairs

    @property
    def assignments(self) -> list[SyncGroupAssignment]:
        return [SyncGroupAssignment(mid, data) for mid, data in self.pairs]


_INT16 = struct.Struct(">h").unpack_from
_INT32 = struct.Struct(">i").unpack_from


def _sync_group(frame: bytes, pos: int, version: int) -> SyncGroupBody:
    """SyncGroup v0-5: a round of N members sends N of them (the leader's with N assignments)."""
    if type(frame) is not bytes:
        frame = bytes(frame)  # (the assignments are slices of it: bytes, as the reference takes them)
    end = len(frame)
    flexible = version >= 4

    def length(pos: int) -> tuple[int, int]:  # a string's, bytes' or array's length; -1: null
        if flexible:
            n, pos = _uvarint_fast(frame, pos)
            return n - 1, pos
        if pos + 2 > end:
            raise ValueError("length runs past the end")
        return (frame[pos] << 8 | frame[pos + 1]) - (0x10000 if frame[pos] & 0x80 else 0), pos + 2

    def string(pos: int, nullable: bool) -> tuple[str | None, int]:
        n, pos = length(pos)
        if n < 0:
            if n == -1 and nullable:
                return None, pos
            raise ValueError("bad string length")
        if pos + n > end:
            raise ValueError("string runs past the end")
        return frame[pos:pos + n].decode("utf-8"), pos + n

    def int32(pos: int) -> tuple[int, int]:
        if pos + 4 > end:
            raise ValueError("int32 runs past the end")
        return int.from_bytes(frame[pos:pos + 4], "big", signed=True), pos + 4

    if flexible:
        pos = _tagged(frame, pos)  # header tagged fields
    group_id, pos = string(pos, False)
    generation, pos = int32(pos)
    member_id, pos = string(pos, False)
    instance = ptype = pname = None
    if version >= 3:
        instance, pos = string(pos, True)
    if version >= 5:
        ptype, pos = string(pos, True)
        pname, pos = string(pos, True)
    count, pos = length(pos) if flexible else int32(pos)
    if count < 0:
        raise ValueError("null assignments")
    pairs: list[tuple[str, bytes]] = []
    if count:
        pos = (_flexible_assignments if flexible else _assignments)(frame, pos, count, pairs)
    if flexible:
        pos = _tagged(frame, pos)
    if pos > end:
        raise ValueError("tagged fields run past the end")
    return SyncGroupBody(group_id or "", generation, member_id or "", instance, ptype, pname, tuple(pairs))


def _assignments(frame: bytes, pos: int, count: int, out: list[tuple[str, bytes]]) -> int:
    """The assignments array of SyncGroup v0-3 (int16 member id, int32 bytes), read into ``out`` (the leader's holds
    one per member: one loop, no call per field); the same checks and errors as the fields' readers above."""
    end = len(frame)
    append = out.append
    for _ in range(count):
        if pos + 2 > end:
            raise ValueError("length runs past the end")
        (n,) = _INT16(frame, pos)
        pos += 2
        if n < 0:
            raise ValueError("bad string length")
        if pos + n > end:
            raise ValueError("string runs past the end")
        mid = frame[pos:pos + n].decode("utf-8")
        pos += n
        if pos + 4 > end:
            raise ValueError("int32 runs past the end")
        (n,) = _INT32(frame, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise ValueError("bad assignment length")
        append((mid, frame[pos:pos + n]))
        pos += n
    return pos


def _flexible_assignments(frame: bytes, pos: int, count: int, out: list[tuple[str, bytes]]) -> int:
    """The assignments array of SyncGroup v4-5 (compact member id and bytes, tagged fields), as :func:`_assignments`."""
    end = len(frame)
    append = out.append
    for _ in range(count):
        n = frame[pos]
        n, pos = (n - 1, pos + 1) if n < 0x80 else _minus_one(_uvarint(frame, pos))
        if n < 0:
            raise ValueError("bad string length")
        if pos + n > end:
            raise ValueError("string runs past the end")
        mid = frame[pos:pos + n].decode("utf-8")
        pos += n
        n = frame[pos]
        n, pos = (n - 1, pos + 1) if n < 0x80 else _minus_one(_uvarint(frame, pos))
        if n < 0 or pos + n > end:
            raise ValueError("bad assignment length")
        append((mid, frame[pos:pos + n]))
        pos += n
        pos = pos + 1 if frame[pos] == 0 else _tagged(frame, pos)
    return pos


def _minus_one(n_pos: tuple[int, int]) -> tuple[int, int]:
    return n_pos[0] - 1, n_pos[1]


def decode_request(frame: bytes, supported: dict[int, tuple[int, int]] = SUPPORTED) -> tuple[_HeaderInfo, Any]:
    """Decode one request frame (the bytes after the 4-byte size). See the module docstring."""
    info, pos = _read_v1_header(frame)
    if info.api_key == 12 and 0 <= info.api_version <= 4 and 12 in supported:
        try:
            return info, _heartbeat(frame, pos, info.api_version)
        except (ValueError, IndexError, struct.error, UnicodeDecodeError) as e:
            raise Malformed(info, f"Heartbeat v{info.api_version} does not parse: {e}") from None
    if info.api_key == 14 and 0 <= info.api_version <= 5 and 14 in supported:
        try:
            return info, _sync_group(frame, pos, info.api_version)
        except (ValueError, IndexError, struct.error, UnicodeDecodeError) as e:
            raise Malformed(info, f"SyncGroup v{info.api_version} does not parse: {e}") from None
    api = APIS.get(info.api_key)
    if api is None or info.api_key not in supported:
        raise Unsupported(info, f"API key {info.api_key} is not served")
    name, req_cls, _resp, _lo, _hi = api
    lo, hi = supported[info.api_key]
    if not lo <= info.api_version <= hi:
        raise Unsupported(info, f"{name} v{info.api_version} is not supported (versions {lo}-{hi})")
    try:
        if req_cls.flexible_version_q(info.api_version):
            # request header v2: the client id (read above) is followed by tagged fields
            count, pos = _uvarint(frame, pos)
            for _ in range(count):
                _tag, pos = _uvarint(frame, pos)
                size, pos = _uvarint(frame, pos)
                pos += size
            if pos > len(frame):
                raise ValueError("header tagged fields run past the end")
        body = req_cls.decode(memoryview(frame)[pos:], version=info.api_version)
        _refuse_nulls(req_cls._struct, body, info.api_version)
    except Exception as e:  # the codec raises many kinds on garbage; all mean "malformed"
        raise Malformed(info, f"{name} v{info.api_version} does not parse: {type(e).__name__}: {e}") from None
    return info, body


_NULLABLE_TYPES = ("string", "bytes", "records")


def _refuse_nulls(struct_field: Any, obj: Any, version: int) -> None:
    """Raise ValueError for a null in a field that is not nullable at ``version`` (see the module docstring)."""
    for f in struct_field.untagged_fields(version):
        value = getattr(obj, f.name, None)
        if value is None:
            if not f.nullable_for_version_q(version) and (
                    f.is_array() or f.is_struct() or f.type_str in _NULLABLE_TYPES):
                raise ValueError(f"non-nullable field {f._name} was serialized as null")
        elif f.is_struct_array():
            for item in value:
                _refuse_nulls(f.array_of, item, version)
        elif f.is_struct():
            _refuse_nulls(f, value, version)


def response_class(api_key: int, version: int) -> Any:
    return APIS[api_key][2][version]


def encode_response(header: _HeaderInfo, body: Any) -> bytes:
    """The framed answer to ``header`` (size, response header, body).

    Response header v0 is the correlation id; v1 (flexible versions, except ApiVersions, whose
    answer always has header v0 so that any client can read it) adds an empty tagged-field section.
    """
    data = body.encode(version=header.api_version)
    flexible = header.api_key != 18 and APIS[header.api_key][1].flexible_version_q(header.api_version)
    head = struct.pack(">ii", 4 + (1 if flexible else 0) + len(data), header.correlation_id)
    return head + (b"\x00" if flexible else b"") + bytes(data)


def heartbeat_response(header: _HeaderInfo, error: int) -> bytes:
    """A Heartbeat answer, encoded directly (the hot path): v0 error; v1-3 throttle, error; v4 flexible."""
    v = header.api_version
    if v == 0:
        return struct.pack(">iih", 6, header.correlation_id, error)
    if v < 4:
        return struct.pack(">iiih", 10, header.correlation_id, 0, error)
    return struct.pack(">iibihb", 12, header.correlation_id, 0, 0, error, 0)


def _uv(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@functools.lru_cache(maxsize=8192)
def _cstr(text: str | None) -> bytes:
    """A compact (nullable) string: length + 1 as an unsigned varint, 0 for null (remembered: a round's
    answers repeat the protocol, the leader and the member ids)."""
    if text is None:
        return b"\x00"
    data = text.encode("utf-8")
    return _uv(len(data) + 1) + data


def _framed(header: _HeaderInfo, body: bytes) -> bytes:
    """Size, correlation id and the empty tagged fields of response header v1, then the body."""
    return struct.pack(">ii", len(body) + 5, header.correlation_id) + b"\x00" + body


@functools.lru_cache(maxsize=8192)
def _str(text: str | None) -> bytes:
    """A (nullable) string of the versions before the flexible ones: an int16 length, -1 for null (remembered, as
    :func:`_cstr`)."""
    if text is None:
        return b"\xff\xff"
    data = text.encode("utf-8")
    return struct.pack(">h", len(data)) + data


def _framed_v0(header: _HeaderInfo, body: bytes) -> bytes:
    """Size and correlation id (response header v0), then the body."""
    return struct.pack(">ii", len(body) + 4, header.correlation_id) + body


def join_group_response(header: _HeaderInfo, error: int, generation: int, protocol_type: str | None,
                        protocol_name: str | None, leader: str, skip_assignment: bool, member_id: str,
                        members: list[tuple[str, str | None, bytes]]) -> bytes:
    """A JoinGroup answer, every version (0-9), encoded directly: a round of N members makes N of them (librdkafka
    asks for v5, Kafka's Java client for v9). ``members``: (member id, instance id, metadata). Checked against the
    codec byte for byte (tests/test_serve_wire.py)."""
    v = header.api_version
    if v < 6:
        parts = [struct.pack(">ihi", 0, error, generation) if v >= 2 else struct.pack(">hi", error, generation),
                 _str(protocol_name or ""), _str(leader), _str(member_id), struct.pack(">i", len(members))]
        for mid, instance, metadata in members:
            parts.append(_str(mid))
            if v >= 5:
                parts.append(_str(instance))
            parts += (struct.pack(">i", len(metadata)), metadata)
        return _framed_v0(header, b"".join(parts))
    parts = [struct.pack(">ihi", 0, error, generation)]
    if v >= 7:
        parts.append(_cstr(protocol_type))
        parts.append(_cstr(protocol_name))
    else:
        parts.append(_cstr(protocol_name or ""))
    parts.append(_cstr(leader))
    if v >= 9:
        parts.append(b"\x01" if skip_assignment else b"\x00")
    parts.append(_cstr(member_id))
    parts.append(_uv(len(members) + 1))
    for mid, instance, metadata in members:
        parts += (_cstr(mid), _cstr(instance), _uv(len(metadata) + 1), metadata, b"\x00")
    parts.append(b"\x00")
    return _framed(header, b"".join(parts))


_SYNC_V1_HEAD = struct.Struct(">iiihi").pack
_SYNC_V0_HEAD = struct.Struct(">iihi").pack
_SYNC_V4_HEAD = struct.Struct(">iibih").pack
_ONE_BYTE = [bytes((i,)) for i in range(0x80)]


def sync_group_response(header: _HeaderInfo, error: int, protocol_type: str | None, protocol_name: str | None,
                        assignment: bytes) -> bytes:
    """A SyncGroup answer, every version (0-5), encoded directly (a round of N members makes N of them)."""
    v = header.api_version
    if v < 4:  # size, correlation id, (v1+: throttle,) error, the assignment's size: one pack
        n = len(assignment)
        if v >= 1:
            return _SYNC_V1_HEAD(14 + n, header.correlation_id, 0, error, n) + assignment
        return _SYNC_V0_HEAD(10 + n, header.correlation_id, error, n) + assignment
    # size, correlation id, the header's tagged fields, throttle, error (one pack), (v5: protocol type and name,) the
    # assignment (compact bytes), the body's tagged fields
    protocol = _cstr_pair(protocol_type, protocol_name) if v >= 5 else b""
    n = len(assignment)
    size = _uv(n + 1) if n >= 0x7F else _ONE_BYTE[n + 1]
    return b"".join((_SYNC_V4_HEAD(12 + len(protocol) + len(size) + n, header.correlation_id, 0, 0, error), protocol,
                     size, assignment, b"\x00"))


@functools.lru_cache(maxsize=1024)
def _cstr_pair(first: str | None, second: str | None) -> bytes:
    """Two compact strings (a SyncGroup v5 answer's protocol type and name: the same in a round's N answers)."""
    return _cstr(first) + _cstr(second)


def _fill_errors(obj: Any, code: int) -> None:
    for name in getattr(obj, "__slots__", ()):
        value = getattr(obj, name, None)
        if name == "error_code":
            setattr(obj, name, code)
        elif isinstance(value, list):
            for item in value:
                if hasattr(item, "__slots__"):
                    _fill_errors(item, code)


def _supported_list(supported: dict[int, tuple[int, int]]) -> list[Any]:
    entry = ApiVersionsResponse.ApiVersion
    return [entry(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(supported.items())]


def api_versions_response(version: int, error: int = 0, supported: dict[int, tuple[int, int]] = SUPPORTED) -> Any:
    return ApiVersionsResponse(version=version, error_code=error, api_keys=_supported_list(supported), throttle_time_ms=0)


def error_response(header: _HeaderInfo, error: int, body: Any = None,
                   supported: dict[int, tuple[int, int]] = SUPPORTED) -> bytes | None:
    """Kafka's error answer to a request (see the module docstring); None when there is none to give.

    ``body``: an answer already holding the per-entity entries (topics, partitions) to mark with
    the error, as ``getErrorResponse`` echoes them; without it the answer has no entities.
    """
    api = APIS.get(header.api_key)
    if api is None:
        return None  # Kafka closes the connection on an unknown API key
    _name, _req, resp_cls, lo, hi = api
    if header.api_key == 18:
        version = header.api_version if lo <= header.api_version <= hi else 0
        body = api_versions_response(version, error, supported)
        return encode_response(_HeaderInfo(18, version, header.correlation_id, header.client_id), body)
    version = min(max(header.api_version, lo), hi)
    if body is None:
        body = resp_cls[version]()
    _fill_errors(body, error)
    return encode_response(_HeaderInfo(header.api_key, version, header.correlation_id, header.client_id), body)


def frame_request(body: Any, correlation_id: int, client_id: str | None, version: int) -> bytes:
    """Encode a request with header and size (tests and the benchmark's simulated members)."""
    body._header = None
    body.API_VERSION = version
    body.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(body.encode(header=True, framed=True))


def read_header_only(frame: bytes) -> _HeaderInfo:
    return _read_v1_header(frame)[0]

