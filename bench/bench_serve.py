"""Benchmark of `groupspec serve` on loopback.

1. Heartbeats per second from 200 simulated members: the server runs as its own process
   (`groupspec serve --port 0 --json`); this process opens 200 connections, joins the 200 members to
   one group over the wire (JoinGroup v9 two-step, SyncGroup v5), then every member sends
   heartbeats one at a time (the next one when the answer came, as a member does) for --seconds.
   Target: >= 20,000 heartbeats/s.
2. A JoinGroup/SyncGroup round of 100 members against a server with initial rebalance delay D:
   the initial delay aside (it is extended while members keep joining, so it is measured, not
   assumed: last JoinGroup sent -> first JoinGroup answer), wall time from the join phase completing
   to the last SyncGroup answer received, against what the protocol itself needs, measured in the
   same run: the same completion and syncs handled by the sans-IO reference coordinator in-process
   (no IO), plus two loopback round trips (JoinGroup answer to the leader's SyncGroup, SyncGroup
   to its answer) measured with ApiVersions pings. Target: ratio <= 2.

Prints wall and CPU seconds and the load average (the machine may be shared).
Usage: python bench/bench_serve.py [--members 200] [--seconds 5] [--round-members 100] [--delay-ms 300]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import struct
import subprocess
import sys
import time

from groupspec.reference import messages as m
from groupspec.reference.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from groupspec.reference.coordinator import CoordinatorConfig, GroupCoordinator
from groupspec.serve import wire
from groupspec.serve.server import run_loop
from kafka.protocol.consumer import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

META = encode_subscription(Subscription(("t",)))


class Member:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str) -> None:
        self.r, self.w, self.name = reader, writer, name
        self.member_id = ""
        self.generation = -1
        self.corr = 0

    async def call(self, req, version: int) -> bytes:
        self.corr += 1
        self.w.write(wire.frame_request(req, self.corr, self.name, version))
        size = struct.unpack(">i", await self.r.readexactly(4))[0]
        return await self.r.readexactly(size)

    def join_request(self) -> JoinGroupRequest:
        p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)
        return JoinGroupRequest(version=9, group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=60000,
                                member_id=self.member_id, group_instance_id=None, protocol_type="consumer",
                                protocols=[p], reason=None)


async def connect(port: int, n: int) -> list[Member]:
    out = []
    for i in range(n):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        out.append(Member(r, w, f"m{i}"))
    return out


async def join_all(members: list[Member]) -> tuple[float, float, float]:
    """Two-step join and sync of every member.

    Returns the times the last JoinGroup was sent, the first JoinGroup answer came (the join phase
    completed: the initial delay, extended while members kept joining, is over) and all were synced.
    """
    async def first(mb: Member) -> None:
        resp = JoinGroupResponse.decode(await mb.call(mb.join_request(), 9), version=9, header=True)
        assert resp.error_code == 79, resp
        mb.member_id = resp.member_id

    await asyncio.gather(*(first(mb) for mb in members))
    last_sent = 0.0
    first_answer = float("inf")
    results: dict[str, JoinGroupResponse] = {}

    async def second(mb: Member) -> None:
        nonlocal last_sent, first_answer
        req = mb.join_request()
        mb.corr += 1
        mb.w.write(wire.frame_request(req, mb.corr, mb.name, 9))
        last_sent = max(last_sent, time.perf_counter())
        size = struct.unpack(">i", await mb.r.readexactly(4))[0]
        first_answer = min(first_answer, time.perf_counter())
        results[mb.name] = JoinGroupResponse.decode(await mb.r.readexactly(size), version=9, header=True)

    await asyncio.gather(*(second(mb) for mb in members))
    leader_id = next(iter(results.values())).leader
    ids = [mb.member_id for mb in members]
    asg = SyncGroupRequest.SyncGroupRequestAssignment

    async def sync(mb: Member) -> None:
        r = results[mb.name]
        assert r.error_code == 0, r
        mb.generation = r.generation_id
        assignments = []
        if mb.member_id == leader_id:
            assignments = [asg(member_id=mid, assignment=encode_assignment(Assignment((("t", i),)))) for i, mid in enumerate(ids)]
        req = SyncGroupRequest(version=5, group_id="g", generation_id=mb.generation, member_id=mb.member_id,
                               group_instance_id=None, protocol_type="consumer", protocol_name="range",
                               assignments=assignments)
        s = SyncGroupResponse.decode(await mb.call(req, 5), version=5, header=True)
        assert s.error_code == 0, s

    await asyncio.gather(*(sync(mb) for mb in members))
    return last_sent, first_answer, time.perf_counter()


async def heartbeats(members: list[Member], seconds: float) -> int:
    count = 0
    stop = time.perf_counter() + seconds

    async def loop(mb: Member) -> None:
        nonlocal count
        frame = wire.frame_request(HeartbeatRequest(version=4, group_id="g", generation_id=mb.generation,
                                                    member_id=mb.member_id, group_instance_id=None), 1, mb.name, 4)
        while time.perf_counter() < stop:
            mb.w.write(frame)
            size = struct.unpack(">i", await mb.r.readexactly(4))[0]
            data = await mb.r.readexactly(size)
            if data[-3:-1] != b"\x00\x00":  # error code (int16) before the empty tagged-field byte
                raise AssertionError(f"heartbeat error {data.hex()}")
            count += 1

    await asyncio.gather(*(loop(mb) for mb in members))
    return count


async def ping_rtt(port: int, n: int = 200) -> float:
    r, w = await asyncio.open_connection("127.0.0.1", port)
    frame = struct.pack(">hhih", 18, 0, 1, -1)
    frame = struct.pack(">i", len(frame)) + frame
    t0 = time.perf_counter()
    for _ in range(n):
        w.write(frame)
        size = struct.unpack(">i", await r.readexactly(4))[0]
        await r.readexactly(size)
    w.close()
    return (time.perf_counter() - t0) / n


def inprocess_round(n: int) -> float:
    """The same round's completion handled by the sans-IO coordinator, no IO (virtual time): from the
    join phase completing (the answers to every JoinGroup) to every SyncGroup answered."""
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=300))
    ids = {}
    for i in range(n):
        out = c.handle(0, f"m{i}", m.JoinGroupRequest("g", "", "consumer", (("range", META),), 30000, 60000, client_id=f"m{i}"))
        ids[f"m{i}"] = out[0].response.member_id
    for i in range(n):
        c.handle(1, f"m{i}", m.JoinGroupRequest("g", ids[f"m{i}"], "consumer", (("range", META),), 30000, 60000, client_id=f"m{i}"))
    t0 = time.perf_counter()
    out = c.advance(10_000)
    leader = out[0].response.leader
    gen = out[0].response.generation_id
    order = list(ids.values())
    for i in range(n):
        mid = ids[f"m{i}"]
        assignments = tuple((x, encode_assignment(Assignment((("t", k),)))) for k, x in enumerate(order)) if mid == leader else ()
        c.handle(10_001, f"m{i}", m.SyncGroupRequest("g", mid, gen, assignments, protocol_type="consumer", protocol_name="range"))
    return time.perf_counter() - t0


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
    for _ in range(n):
        c.request(conn, frame)
        c.out.clear()
    return n / (time.process_time() - t0)


def start_server(delay_ms: int, partitions: int) -> tuple[subprocess.Popen, int]:
    exe = os.path.join(os.path.dirname(sys.executable), "groupspec")
    proc = subprocess.Popen([exe, "serve", "--port", "0", "--json", "--brokers", "1", "--partitions", f"t={partitions}",
                             "--initial-rebalance-delay-ms", str(delay_ms)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = json.loads(line)["listening"][0]["port"]
    return proc, port


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main_async(args: argparse.Namespace) -> int:
    ok = True
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"== heartbeats through the server's code without sockets: {inprocess_heartbeats():,.0f} per CPU-second")
    # 1. heartbeats
    proc, port = start_server(delay_ms=300, partitions=args.members)
    try:
        members = await connect(port, args.members)
        await join_all(members)
        await asyncio.sleep(0.5)
        c0, w0, s0 = time.process_time(), time.perf_counter(), cpu_of(proc.pid)
        count = await heartbeats(members, args.seconds)
        wall = time.perf_counter() - w0
        rate = count / wall
        server_cpu = cpu_of(proc.pid) - s0
        print(f"== heartbeats: {args.members} members, {count} heartbeats in {wall:.2f} s: {rate:,.0f}/s "
              f"(server CPU {server_cpu:.2f} s = {server_cpu / count * 1e6:.0f} us a heartbeat, i.e. "
              f"{count / server_cpu:,.0f} per server CPU-second; load generator CPU {time.process_time() - c0:.2f} s); "
              f"target >= 20,000/s: {'met' if rate >= 20000 else 'NOT met'}")
        ok &= rate >= 20000
        for mb in members:
            mb.w.close()
    finally:
        proc.terminate()
        proc.wait(10)
    # 2. a round of N members
    proc, port = start_server(delay_ms=args.delay_ms, partitions=args.round_members)
    try:
        rtt = await ping_rtt(port)
        members = await connect(port, args.round_members)
        last_join, first_answer, synced = await join_all(members)
        wire_s = synced - first_answer
        core = inprocess_round(args.round_members)
        need = core + 2 * rtt
        ratio = wire_s / need
        print(f"== round: {args.round_members} members, delay {args.delay_ms} ms: last JoinGroup sent -> join complete "
              f"{(first_answer - last_join) * 1000:.1f} ms (the delay, extended while members joined); join complete -> all "
              f"synced {wire_s * 1000:.1f} ms; the protocol needs {need * 1000:.1f} ms (coordinator in-process "
              f"{core * 1000:.1f} ms + 2 x RTT {rtt * 1e6:.0f} us); ratio {ratio:.2f}; target <= 2: {'met' if ratio <= 2 else 'NOT met'}")
        ok &= ratio <= 2
        for mb in members:
            mb.w.close()
    finally:
        proc.terminate()
        proc.wait(10)
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--round-members", type=int, default=100)
    ap.add_argument("--delay-ms", type=int, default=300)
    return run_loop(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
