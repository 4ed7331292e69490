"""groupspec serve's connections: buffers freed on close, Kafka's connections.max.idle.ms and max.connections
(issue #31)."""
from __future__ import annotations

import gc
import socket
import struct
import time
import tracemalloc

import pytest

from groupspec.serve import Cluster, Server

_API_VERSIONS = struct.pack(">hhih", 18, 0, 77, -1)
_FRAME = struct.pack(">i", len(_API_VERSIONS)) + _API_VERSIONS


def _wait(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def _answered(s: socket.socket, timeout: float) -> bool:
    s.settimeout(timeout)
    try:
        data = s.recv(4)
    except socket.timeout:
        return False
    return len(data) == 4


def test_a_closed_connections_partial_frame_is_freed_without_a_gc():
    srv = Server(Cluster(topics={"t": 1}, record=False)).start()
    gc.collect()
    gc.disable()  # only reference counting: a buffer kept alive by a cycle stays
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        chunk = b"\x00" * (1 << 20)
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", srv.cluster.ports[0])) as s:
                s.sendall(struct.pack(">i", 20 << 20) + struct.pack(">hhih", 3, 12, 1, -1))  # a 20 MB frame announced
                for _ in range(5):
                    s.sendall(chunk)  # 5 MB of it sent
                assert _wait(lambda: any(len(x.buf) >= 5 << 20 for x in list(srv._links)))
        assert _wait(lambda: not srv._links)
        held = tracemalloc.get_traced_memory()[0] - base
        assert held < 4 << 20, f"{held / 2**20:.1f} MB still held after the connections closed"
    finally:
        tracemalloc.stop()
        gc.enable()
        srv.stop()


def test_an_idle_connection_is_closed_after_connections_max_idle_ms():
    srv = Server(Cluster(topics={"t": 1}, record=False), connections_max_idle_ms=300).start()
    try:
        idle = socket.create_connection(("127.0.0.1", srv.cluster.ports[0]))
        busy = socket.create_connection(("127.0.0.1", srv.cluster.ports[0]))
        for _ in range(8):  # 0.8 s of traffic on one, none on the other
            busy.sendall(_FRAME)
            assert _answered(busy, 2)
            busy.recv(65536)
            time.sleep(0.1)
        idle.settimeout(2)
        assert idle.recv(10) == b""  # closed by the server
        busy.sendall(_FRAME)
        assert _answered(busy, 2)
        assert srv.call(lambda c: c.stats.get("closed_idle", 0)) == 1
        idle.close()
        busy.close()
    finally:
        srv.stop()


def test_the_default_idle_timeout_is_kafkas():
    assert Server(Cluster(record=False)).connections_max_idle_ms == 600_000
    assert Server(Cluster(record=False)).max_connections == 2**31 - 1
    with pytest.raises(ValueError):
        Server(Cluster(record=False), max_connections=0)


def test_past_max_connections_a_new_connection_waits_for_a_slot():
    srv = Server(Cluster(topics={"t": 1}, record=False), max_connections=2).start()
    try:
        first = [socket.create_connection(("127.0.0.1", srv.cluster.ports[0])) for _ in range(2)]
        for s in first:
            s.sendall(_FRAME)
            assert _answered(s, 2)
        third = socket.create_connection(("127.0.0.1", srv.cluster.ports[0]))  # in the backlog
        third.sendall(_FRAME)
        assert not _answered(third, 0.5)
        assert len(srv._links) == 2
        first[0].close()
        assert _answered(third, 3)  # accepted once a slot was free
        for s in (first[1], third):
            s.close()
    finally:
        srv.stop()
