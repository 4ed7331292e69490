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


# ------------------------------------------------------------------ a round's burst of answers (issue 32)

def _frame(req, version: int, corr: int) -> bytes:
    from groupspec.serve import wire

    return wire.frame_request(req, corr, "c", version)


def _read_answer(s: socket.socket) -> bytes:
    s.settimeout(10)
    head = b""
    while len(head) < 4:
        more = s.recv(4 - len(head))
        assert more, "the server closed the connection"
        head += more
    (size,) = struct.unpack(">i", head)
    body = b""
    while len(body) < size:
        more = s.recv(size - len(body))
        assert more, "the server closed the connection"
        body += more
    return body


def _join_v5(group: str, member_id: str):
    from kafka.protocol.consumer import JoinGroupRequest

    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x00")
    return JoinGroupRequest(version=5, group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=60000,
                            member_id=member_id, group_instance_id=None, protocol_type="consumer", protocols=[p])


def _parse_join_v5(body: bytes) -> tuple[int, int, str, str]:
    def string(pos: int) -> tuple[str, int]:
        (n,) = struct.unpack_from(">h", body, pos)
        return body[pos + 2:pos + 2 + n].decode(), pos + 2 + n

    error, generation = struct.unpack_from(">hi", body, 8)
    _name, pos = string(14)
    leader, pos = string(pos)
    member_id, _ = string(pos)
    return error, generation, leader, member_id


def test_a_rounds_burst_of_answers_leaves_and_every_connection_is_served_after_it():
    """The leader's SyncGroup completes the round: every parked SyncGroup is answered from inside the cluster
    (``Cluster.answer_now``, written at once), and a connection that has a Heartbeat buffered behind its parked
    SyncGroup (one write of both) is declined there and answered in order by the usual path. Every member then
    heartbeats again on its connection: the burst left no connection waiting."""
    from kafka.protocol.consumer import HeartbeatRequest, SyncGroupRequest

    from groupspec.reference.classic import CoordinatorConfig

    srv = Server(Cluster(topics={"t": 5}, record=False, config=CoordinatorConfig(initial_rebalance_delay_ms=100))).start()
    socks = [socket.create_connection(("127.0.0.1", srv.cluster.ports[0])) for _ in range(5)]
    try:
        ids = []
        for s in socks:  # MEMBER_ID_REQUIRED, then the join with the id given
            s.sendall(_frame(_join_v5("burst", ""), 5, 1))
            error, _gen, _leader, member_id = _parse_join_v5(_read_answer(s))
            assert error == 79
            ids.append(member_id)
        for s, mid in zip(socks, ids):
            s.sendall(_frame(_join_v5("burst", mid), 5, 2))
        answers = [_parse_join_v5(_read_answer(s)) for s in socks]
        assert {a[0] for a in answers} == {0}
        generation, leader = answers[0][1], answers[0][2]

        def sync(mid: str, everyone: bool) -> bytes:
            asg = SyncGroupRequest.SyncGroupRequestAssignment
            return _frame(SyncGroupRequest(version=3, group_id="burst", generation_id=generation, member_id=mid,
                                           group_instance_id=None,
                                           assignments=[asg(member_id=m, assignment=b"") for m in ids] if everyone else []),
                          3, 3)

        def heartbeat(mid: str, corr: int) -> bytes:
            return _frame(HeartbeatRequest(version=3, group_id="burst", generation_id=generation, member_id=mid,
                                           group_instance_id=None), 3, corr)

        followers = [(s, mid) for s, mid in zip(socks, ids) if mid != leader]
        for k, (s, mid) in enumerate(followers):  # the first follower sends its Heartbeat with its SyncGroup
            s.sendall(sync(mid, False) + (heartbeat(mid, 4) if k == 0 else b""))
        assert _wait(lambda: srv.cluster.stats.get("SyncGroup", 0) == len(followers))
        lead_sock = socks[ids.index(leader)]
        lead_sock.sendall(sync(leader, True))
        for s in socks:
            answer = _read_answer(s)
            assert struct.unpack_from(">iih", answer)[::2] == (3, 0)  # correlation id, (throttle), error
        first = followers[0][0]
        answer = _read_answer(first)  # its buffered Heartbeat, answered after its SyncGroup
        assert struct.unpack_from(">i", answer)[0] == 4 and struct.unpack_from(">h", answer, 8)[0] == 0
        for s, mid in zip(socks, ids):
            s.sendall(heartbeat(mid, 5))
            answer = _read_answer(s)
            assert struct.unpack_from(">i", answer)[0] == 5 and struct.unpack_from(">h", answer, 8)[0] == 0
    finally:
        for s in socks:
            s.close()
        srv.stop()
