"""bench/bench_serve.py's comparisons with its peers, interleaved (not a benchmark: `make bench` runs bench/bench_*.py).

* `heartbeats_interleaved`: at each depth, the given peers (groupspec serve and librdkafka's mock cluster; Tansu,
  whose joins take long, on its own) started and joined, then `rounds` windows per peer, the peers' order reversed
  every round, so a change of the machine's load falls on all of them alike (a peer's members stay in their group
  between its windows: a 10-minute session timeout); per peer and depth the median rate of its windows and its
  server CPU per heartbeat over all of them.
* `round_versus_mock`: the same JoinGroup/SyncGroup round of N members against `groupspec serve` and librdkafka's
  mock, alternately, a new group each time: JoinGroup v5 / SyncGroup v3 (versions both answer), every follower
  sends its SyncGroup on reading its JoinGroup answer; the leader, once it has its answer and every follower's
  SyncGroup has left, first makes one ApiVersions round trip and then sends its SyncGroup (the mock completes the
  sync on the leader's and refuses a SyncGroup that comes after; the round trip makes sure it has read the
  others: it reads every ready connection of one poll before it polls again). Timed from the first JoinGroup
  answer read (the join phase done; each server's own join delay is not counted) to the last SyncGroup answer
  read; the same clients, frames and rule against both.
"""
from __future__ import annotations

import os
import statistics
import struct
import time
from typing import Any, Callable

from groupspec.reference.classic import Assignment, encode_assignment
from groupspec.serve import wire
from serve_peers import META


def heartbeats_interleaved(peers: list[str], n_members: int, depths: list[int], seconds: float, rounds: int,
                           workers: int, start_peer: Callable[..., Any], connect: Callable[..., Any],
                           exchange: Callable[..., Any], heartbeats: Callable[..., Any],
                           session_timeout_ms: int = 30000) -> dict[tuple[str, int], tuple[float, float]]:
    """{(peer, depth): (median heartbeats/s, server CPU-seconds per heartbeat)}; prints one line per window. The
    members join with ``session_timeout_ms``: long enough to stay in the group while the other peers are measured
    (starting a load generator takes seconds on a busy machine)."""
    from serve_peers import join_any

    out: dict[tuple[str, int], tuple[float, float]] = {}
    for depth in depths:  # the peers started afresh for each depth (librdkafka's mock stops accepting connections
        running: dict[str, tuple[Callable[[], None], int, int, list[Any]]] = {}  # after a few hundred have come and gone)
        try:
            for name in sorted(peers, key=lambda p: p.startswith("groupspec")):  # groupspec's join is the quickest: the
                try:                                                      # others' members wait less meanwhile
                    halt, port, pid = start_peer(name, 300, n_members)
                except Exception as e:  # noqa: BLE001 - a peer that cannot start is said, the others go on
                    print(f"== heartbeats: {name} NOT RUN ({type(e).__name__}: {e})")
                    continue
                running[name] = (halt, port, pid, [])
                t0 = time.perf_counter()
                members = connect(port, n_members)
                join_any(members, exchange, session_timeout_ms=session_timeout_ms)
                for mb in members:  # the members heartbeat over the load generator's own connections
                    mb.sock.close()
                running[name] = (halt, port, pid, members)
                print(f"   {name} started on port {port}, {n_members} members joined in {time.perf_counter() - t0:.1f} s",
                      flush=True)
            windows: dict[str, list[tuple[int, float, float]]] = {name: [] for name in running}
            for r in range(rounds):
                order = list(running) if r % 2 == 0 else list(reversed(running))
                for name in order:
                    _halt, port, pid, members = running[name]
                    load = os.getloadavg()[0]
                    count, wall, server_cpu, gen_cpu, server_sys = heartbeats(port, members, seconds, depth, workers, pid)
                    windows[name].append((count, wall, server_cpu))
                    print(f"   window {r + 1}/{rounds} {name:<16} depth {depth}: {count / wall:9,.0f}/s, server "
                          f"{server_cpu / max(count, 1) * 1e6:5.1f} us a heartbeat ({server_sys / max(count, 1) * 1e6:4.1f} in the "
                          f"kernel), load generator {gen_cpu:.2f} CPU-s, "
                          f"load average {load:.1f}", flush=True)
            for name, ws in windows.items():
                rate = statistics.median(c / w for c, w, _s in ws)
                per = sum(s for _c, _w, s in ws) / max(1, sum(c for c, _w, _s in ws))
                out[(name, depth)] = (rate, per)
                print(f"== heartbeats, {name}: {n_members} members, {depth} in flight each: median {rate:,.0f}/s over "
                      f"{len(ws)} windows of {seconds:g} s; server {per * 1e6:.1f} us (CPU) a heartbeat")
        finally:
            for halt, *_rest in running.values():
                halt()
    return out


def _process_cpu(pid: int) -> float:
    """User and system CPU-seconds of process ``pid`` so far (/proc/PID/stat; clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _string(data: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", data, pos)
    pos += 2
    if n < 0:
        return "", pos
    return data[pos:pos + n].decode(), pos + n


def read_join_v5(answer: bytes) -> tuple[int, int, str, str]:
    """(error, generation, leader, member id) of a JoinGroup v5 answer (after the size): correlation id, throttle,
    error, generation, protocol name, leader, member id."""
    error, generation = struct.unpack_from(">hi", answer, 8)
    _name, pos = _string(answer, 14)
    leader, pos = _string(answer, pos)
    member_id, _ = _string(answer, pos)
    return error, generation, leader, member_id


def _join_v5(group: str, member_id: str, name: str) -> bytes:
    from kafka.protocol.consumer import JoinGroupRequest

    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)
    req = JoinGroupRequest(version=5, group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=60000,
                           member_id=member_id, group_instance_id=None, protocol_type="consumer", protocols=[p])
    return wire.frame_request(req, 2, name, 5)


def _sync_v3(group: str, generation: int, member_id: str, name: str, everyone: list[str] | None) -> bytes:
    from kafka.protocol.consumer import SyncGroupRequest

    asg = SyncGroupRequest.SyncGroupRequestAssignment
    assignments = [] if everyone is None else [asg(member_id=mid, assignment=encode_assignment(Assignment((("t", i),))))
                                               for i, mid in enumerate(everyone)]
    req = SyncGroupRequest(version=3, group_id=group, generation_id=generation, member_id=member_id,
                           group_instance_id=None, assignments=assignments)
    return wire.frame_request(req, 3, name, 3)


_API_VERSIONS_V0 = struct.pack(">ihhih", 10, 18, 0, 9, -1)
_SENTINEL = 0x5A17C0DE  # the generation of the SyncGroup frame whose head is cut out before the round


def _sync_head(group: str, name: str) -> bytes:
    """What a member's SyncGroup v3 frame holds before the generation (the request header and the group id), cut
    from one frame encoded before the round: the rest of it (generation, member id, no instance id, assignments)
    is known only during the round, and ``_sync_frame`` writes it with ``struct``, the same few microseconds for
    both servers, whether a server hands the member ids out before the join (MEMBER_ID_REQUIRED) or in it."""
    frame = _sync_v3(group, _SENTINEL, "", name, None)
    return frame[4:frame.index(struct.pack(">i", _SENTINEL))]


def _assignments(ids: list[str], parts: list[bytes]) -> bytes:
    """The leader's SyncGroup assignments array: member ``ids[i]`` gets ``parts[i]`` (encoded before the round)."""
    out = [struct.pack(">i", len(ids))]
    for mid, part in zip(ids, parts):
        raw = mid.encode()
        out.append(struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(part)) + part)
    return b"".join(out)


def _sync_frame(head: bytes, generation: int, member_id: str, assignments: bytes = b"\0\0\0\0") -> bytes:
    """A SyncGroup v3 frame from its ``_sync_head``: generation, member id, a null instance id, ``assignments``."""
    raw = member_id.encode()
    body = head + struct.pack(">ih", generation, len(raw)) + raw + b"\xff\xff" + assignments
    return struct.pack(">i", len(body)) + body


def _check_sync_frames(group: str, name: str, parts: list[bytes]) -> None:
    """``_sync_frame`` writes what the Kafka library encodes (checked before every round, not timed)."""
    ids = ["id-a", "member-b-0123456789", "c"]
    head = _sync_head(group, name)
    assert _sync_frame(head, 7, ids[1]) == _sync_v3(group, 7, ids[1], name, None)
    assert _sync_frame(head, 9, ids[0], _assignments(ids, parts[:3])) == _sync_v3(group, 9, ids[0], name, ids)


def one_round(members: list[Any], exchange: Callable[..., Any], group: str) -> tuple[float, float]:
    """One round (module docstring) of ``members`` (bench_serve.Member, connected) in a new ``group``: (seconds from
    the first JoinGroup answer read to the last SyncGroup answer read, this process's CPU-seconds meanwhile). What a
    SyncGroup frame holds that is known before the round (header, group, each member's assignment) is encoded before
    it; the rest is written with ``struct`` as the answers come (``_sync_frame``), for both servers alike."""
    parts = [encode_assignment(Assignment((("t", i),))) for i in range(len(members))]
    _check_sync_frames(group, members[0].name, parts)
    for mb in members:  # the member ids: a server that asks for one (MEMBER_ID_REQUIRED) gets its JoinGroup again
        mb.member_id, mb.frame, mb.phase = "", _join_v5(group, "", mb.name), "join"
        mb.sync_head = _sync_head(group, mb.name)
    ids: list[str] = []
    n = len(members)
    state: dict[str, Any] = {"first": None, "last": 0.0, "leader": None, "followers_sent": 0, "cpu0": 0.0}

    def leader_go(leader: Any) -> None:
        leader.phase = "ping"
        leader.sock.sendall(_API_VERSIONS_V0)

    def on_answer(mb: Any, answer: bytes, now: float) -> bytes | None:
        if mb.phase == "join":
            error, generation, leader, member_id = read_join_v5(answer)
            if error == 79:  # MEMBER_ID_REQUIRED: join again with the id given (not timed: the join phase)
                mb.member_id = member_id
                return _join_v5(group, member_id, mb.name)
            assert error == 0, f"JoinGroup answered error {error}"
            if state["first"] is None:
                state["first"], state["cpu0"] = now, time.process_time()
            mb.member_id, mb.generation = member_id, generation
            ids.append(member_id)
            if member_id == leader:
                state["leader"] = mb
                mb.phase = "leader"
                if state["followers_sent"] == n - 1:
                    leader_go(mb)
                return b""
            mb.phase = "sync"
            mb.sock.sendall(_sync_frame(mb.sync_head, generation, member_id))
            state["followers_sent"] += 1
            if state["followers_sent"] == n - 1 and state["leader"] is not None and state["leader"].phase == "leader":
                leader_go(state["leader"])
            return b""
        if mb.phase == "ping":  # the ApiVersions answer: every follower's SyncGroup has been read
            mb.phase = "sync"
            return _sync_frame(mb.sync_head, mb.generation, mb.member_id,
                               _assignments([x.member_id for x in members], parts))
        assert answer[8:10] == b"\x00\x00", f"SyncGroup answered error {struct.unpack_from('>h', answer, 8)[0]}"
        state["last"] = max(state["last"], now)
        return None

    exchange(members, on_answer)
    return state["last"] - state["first"], time.process_time() - state["cpu0"]


def round_versus_mock(n: int, rounds: int, start_peer: Callable[..., Any], connect: Callable[..., Any],
                      exchange: Callable[..., Any]) -> bool:
    """The round against groupspec serve and librdkafka's mock, alternately (module docstring); prints each and the
    medians; True if groupspec's median is at most the mock's."""
    servers: dict[str, tuple[Callable[[], None], list[Any], int]] = {}
    try:
        for name in ("groupspec", "librdkafka-mock"):
            try:
                halt, port, pid = start_peer(name, 300, n)
            except Exception as e:  # noqa: BLE001
                print(f"== round vs the mock: {name} NOT RUN ({type(e).__name__}: {e})")
                return False
            servers[name] = (halt, connect(port, n), pid)
        times: dict[str, list[float]] = {name: [] for name in servers}
        server_cpu = {name: 0.0 for name in servers}
        for k in range(rounds):
            order = list(servers) if k % 2 == 0 else list(reversed(servers))
            for name in order:
                _halt, members, pid = servers[name]
                c0 = _process_cpu(pid)
                wall, cpu = one_round(members, exchange, f"vs{k}")
                server_cpu[name] += _process_cpu(pid) - c0
                times[name].append(wall)
                print(f"   round {k + 1}/{rounds} {name:<16} {wall * 1000:7.2f} ms (clients' CPU {cpu * 1000:.1f} ms), "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
        for name in servers:
            print(f"   {name}: the server's CPU over a whole round (its join phase too), mean of {rounds}: "
                  f"{server_cpu[name] / rounds * 1000:.1f} ms")
        ours, mock = statistics.median(times["groupspec"]), statistics.median(times["librdkafka-mock"])
        met = ours <= mock
        print(f"== round of {n} members vs librdkafka's mock (join done -> every SyncGroup answered, median of {rounds}): "
              f"groupspec {ours * 1000:.2f} ms, mock {mock * 1000:.2f} ms: ratio {mock / ours:.2f}x (>= 1: groupspec "
              f"faster); target groupspec <= the mock: {'met' if met else 'NOT met'} (load average "
              f"{os.getloadavg()[0]:.1f})")
        return met
    finally:
        for halt, members, _pid in servers.values():
            for mb in members:
                mb.sock.close()
            halt()
