"""Kafka Connect's embedded group protocol: the bytes a worker puts inside JoinGroup / SyncGroup.

Theory of operation
-------------------
Connect workers join a group of protocol type ``connect``. Like the consumer's, their metadata and
assignments are opaque to the coordinator; Kafka's ``IncrementalCooperativeConnectProtocol`` frames them
as a big-endian ``int16`` version followed by a non-flexible schema (strings: ``int16`` length + UTF-8;
arrays: ``int32`` count, ``-1`` = null; nullable bytes: ``int32`` length, ``-1`` = null)::

    Worker metadata (JoinGroup, protocols "compatible" = version 1, "sessioned" = version 2)
        Version            int16
        Url                string
        ConfigOffset       int64
        Allocation         nullable bytes     the worker's current assignment, itself a Connect
                                              assignment (below, with its own version prefix),
                                              null when the worker runs nothing yet

    Connect assignment (SyncGroup)
        Version            int16
        Error              int16              0 = none (1 = CONFIG_MISMATCH, not produced here)
        Leader             string             the leader's member id
        LeaderUrl          string
        ConfigOffset       int64              the config-topic offset the leader assigned with
        Assignment         nullable [Connector Assignment]   what the worker is to start
        Revoked            nullable [Connector Assignment]   what the worker is to stop
        ScheduledDelay     int32              ms until the worker should rejoin (0 = none)

    Connector Assignment
        Connector          string
        Tasks              [int32]            task indexes; -1 (``CONNECTOR_TASK``) = the connector
                                              instance itself

Protocol names and versions are Kafka's ``ConnectProtocolCompatibility``: ``default`` (eager, version
0, not offered by the reference worker), ``compatible`` (1), ``sessioned`` (2, the default since Kafka
2.4, KIP-507; the same layout, the version says the group uses session keys).

Decoding tolerates a version above the highest known one (the layout only grows at the end) and
ignores trailing bytes, as Kafka's schema reader does; malformed bytes raise
:class:`~groupspec.reference.classic.consumer_protocol.ConsumerProtocolError` naming the field.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..classic.consumer_protocol import ConsumerProtocolError, Reader, write_bytes, write_i16, write_i32, write_string

__all__ = [
    "CONNECTOR_TASK",
    "PROTOCOL_VERSIONS",
    "ConnectAssignment",
    "WorkerMetadata",
    "encode_connect_assignment",
    "decode_connect_assignment",
    "encode_worker_metadata",
    "decode_worker_metadata",
]

CONNECTOR_TASK = -1  # the sentinel task index naming the connector instance itself
PROTOCOL_VERSIONS = {"default": 0, "compatible": 1, "sessioned": 2}
_I64 = struct.Struct(">q")

Item = tuple[str, int]  # (connector, task index); task index -1 = the connector instance


@dataclass(frozen=True)
class ConnectAssignment:
    """One worker's assignment (Kafka's ``ConnectAssignment``/``ExtendedAssignment``), by item.

    ``assigned`` and ``revoked`` are ``(connector, task)`` pairs, the connector instance being
    ``(connector, CONNECTOR_TASK)``."""

    version: int = 1
    error: int = 0
    leader: str = ""
    leader_url: str = ""
    config_offset: int = -1
    assigned: tuple[Item, ...] = ()
    revoked: tuple[Item, ...] = ()
    delay: int = 0


@dataclass(frozen=True)
class WorkerMetadata:
    """What a worker reports in its JoinGroup (Kafka's ``ExtendedWorkerState``)."""

    url: str
    config_offset: int
    allocation: ConnectAssignment | None = None  # its current assignment (None: runs nothing yet)
    version: int = 1

    @property
    def running(self) -> tuple[Item, ...]:
        """The items the worker reports running."""
        return () if self.allocation is None else self.allocation.assigned


def _w_i64(out: list[bytes], v: int, what: str) -> None:
    if not -(1 << 63) <= v < (1 << 63):
        raise ConsumerProtocolError(f"{what}: {v} does not fit in int64")
    out.append(_I64.pack(v))


def _grouped(items: tuple[Item, ...]) -> list[tuple[str, list[int]]]:
    by: dict[str, list[int]] = {}
    for c, t in items:
        by.setdefault(c, []).append(int(t))
    return list(by.items())


def _w_connector_assignments(out: list[bytes], items: tuple[Item, ...], what: str) -> None:
    grouped = _grouped(items)
    out.append(struct.pack(">i", len(grouped)))
    for connector, tasks in grouped:
        write_string(out, connector, f"{what}.connector")
        out.append(struct.pack(">i", len(tasks)))
        for t in tasks:
            write_i32(out, t, f"{what}.task")


def encode_connect_assignment(a: ConnectAssignment) -> bytes:
    """``IncrementalCooperativeConnectProtocol.serializeAssignment`` (a non-null assignment)."""
    out: list[bytes] = []
    write_i16(out, a.version, "version")
    write_i16(out, a.error, "error")
    write_string(out, a.leader, "leader")
    write_string(out, a.leader_url, "leader_url")
    _w_i64(out, a.config_offset, "config_offset")
    _w_connector_assignments(out, a.assigned, "assignment")
    _w_connector_assignments(out, a.revoked, "revoked")
    write_i32(out, a.delay, "delay")
    return b"".join(out)


def encode_worker_metadata(m: WorkerMetadata) -> bytes:
    """``IncrementalCooperativeConnectProtocol.serializeMetadata``: header, config state, allocation."""
    out: list[bytes] = []
    write_i16(out, m.version, "version")
    write_string(out, m.url, "url")
    _w_i64(out, m.config_offset, "config_offset")
    write_bytes(out, None if m.allocation is None else encode_connect_assignment(m.allocation))
    return b"".join(out)


def _i64(r: Reader, what: str) -> int:
    r._need(8, what)
    (v,) = _I64.unpack_from(r.buf, r.pos)
    r.pos += 8
    return int(v)


def _connector_assignments(r: Reader, what: str) -> tuple[Item, ...]:
    n = r.i32(what)
    if n == -1:
        return ()
    if n < 0 or n * 2 > len(r.buf) - r.pos:
        raise ConsumerProtocolError(f"{what}: array length {n} at offset {r.pos - 4}")
    out: list[Item] = []
    for _ in range(n):
        connector = r.string(f"{what}.connector")
        assert connector is not None
        for _ in range(r.count(f"{what}.tasks")):
            out.append((connector, r.i32(f"{what}.task")))
    return tuple(out)


def decode_connect_assignment(data: bytes) -> ConnectAssignment:
    """``deserializeAssignment``; raises ConsumerProtocolError on malformed bytes."""
    r = Reader(bytes(data))
    version = r.i16("version")
    if version < 0:
        raise ConsumerProtocolError(f"unsupported Connect assignment version {version}")
    error = r.i16("error")
    leader = r.string("leader") or ""
    leader_url = r.string("leader_url") or ""
    offset = _i64(r, "config_offset")
    assigned = _connector_assignments(r, "assignment")
    revoked = _connector_assignments(r, "revoked")
    delay = r.i32("delay") if r.pos < len(r.buf) else 0  # a missing field takes its default
    return ConnectAssignment(version, error, leader, leader_url, offset, assigned, revoked, delay)


def decode_worker_metadata(data: bytes) -> WorkerMetadata:
    """``deserializeMetadata``; raises ConsumerProtocolError on malformed bytes."""
    r = Reader(bytes(data))
    version = r.i16("version")
    if version < 0:
        raise ConsumerProtocolError(f"unsupported Connect metadata version {version}")
    url = r.string("url") or ""
    offset = _i64(r, "config_offset")
    blob = r.nullable_bytes("allocation")
    return WorkerMetadata(url, offset, None if blob is None else decode_connect_assignment(blob), version)
