"""Benchmark of the Kafka oracle: requests per second through Kafka 4.3.1's own group coordinator (one JVM,
JSON lines over pipes), beside the reference coordinator's own rate on the same requests, measured in the same run.

Workload: a group of N dynamic members joins (two-step), the leader syncs an assignment, the followers sync,
then R rounds in which every member heartbeats and commits an offset (the steady state a coordinator mostly
sees). The join phase is sent one request at a time (the next request needs the ids of the last answers); the
rounds are sent both one at a time and pipelined (64 requests written before their answers are read).
Besides wall-clock rates (which on a shared machine include waiting for a CPU), the JVM's own CPU time gives
the rate the oracle sustains per CPU-second.
"""
from __future__ import annotations

import os
import time

from groupspec.oracle import KafkaOracle
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator
from groupspec.reference.classic import HeartbeatRequest, JoinGroupRequest, OffsetCommitRequest, SyncGroupRequest

N = int(os.environ.get("BENCH_ORACLE_MEMBERS", "20"))
ROUNDS = int(os.environ.get("BENCH_ORACLE_ROUNDS", "100"))
PROTOCOLS = [["range", "00"]]
START = 10_000  # the join phase has completed (initial delay 3 s, extended once) and sessions are fresh


def _form_group(oracle: KafkaOracle) -> tuple[list[str], int, int]:
    """N two-step joins during the initial delay, the join phase completed by time passing, then the syncs."""
    oracle.reset({"initial_rebalance_delay_ms": 3000})
    ids, sent = [], 0
    for i in range(N):
        a = oracle.send({"op": "JoinGroup", "at": 0, "conn": f"m{i}", "member_id": "", "protocols": PROTOCOLS})
        ids.append(a["responses"][0]["member_id"])
        oracle.send({"op": "JoinGroup", "at": 0, "conn": f"m{i}", "member_id": ids[i], "protocols": PROTOCOLS})
        sent += 2
    state = oracle.send({"op": "advance", "at": START})["state"]
    gen, leader = state["generation"], state["leader"]
    assert state["state"] == "CompletingRebalance" and len(state["members"]) == N, state
    assignment = [[m, "00"] for m in ids]
    for m in [leader] + [m for m in ids if m != leader]:
        a = oracle.send({"op": "SyncGroup", "at": START, "conn": m, "member_id": m, "generation": gen,
                         "assignments": assignment if m == leader else []})
        assert a["responses"][0]["error"] == "NONE", a
        sent += 1
    return ids, gen, sent


def _round_ops(ids: list[str], gen: int, r: int) -> list[dict]:
    ops = []
    for m in ids:
        ops.append({"op": "Heartbeat", "at": START + r, "conn": m, "member_id": m, "generation": gen})
        ops.append({"op": "OffsetCommit", "at": START + r, "conn": m, "member_id": m, "generation": gen,
                    "offsets": [["t", 0, r]]})
    return ops


def bench_oracle() -> tuple[float, float, float]:
    with KafkaOracle(fetch=True) as oracle:
        for _ in range(2):  # warm the JIT on the same workload first
            ids, gen, _ = _form_group(oracle)
            for r in range(20):
                oracle.send_many(_round_ops(ids, gen, r))
        cpu0, t0 = oracle.cpu_seconds(), time.perf_counter()
        ids, gen, join_sent = _form_group(oracle)
        t1 = time.perf_counter()
        sent = 0
        for r in range(ROUNDS // 2):
            for op in _round_ops(ids, gen, r):
                oracle.send(op)
                sent += 1
        t2 = time.perf_counter()
        for r in range(ROUNDS // 2, ROUNDS):
            answers = oracle.send_many(_round_ops(ids, gen, r))
            assert all(a["responses"][0]["error"] == "NONE" for a in answers), answers[0]
        t3 = time.perf_counter()
        cpu = oracle.cpu_seconds() - cpu0
        piped = (ROUNDS - ROUNDS // 2) * 2 * N
        total = join_sent + sent + piped
        print(f"oracle, join phase: {join_sent} requests one at a time in {t1 - t0:.2f}s "
              f"({join_sent / (t1 - t0):,.0f} requests/s)")
        print(f"oracle, steady state one at a time: {sent} requests in {t2 - t1:.2f}s ({sent / (t2 - t1):,.0f} requests/s)")
        print(f"oracle, steady state pipelined: {piped} requests in {t3 - t2:.2f}s ({piped / (t3 - t2):,.0f} requests/s)")
        per_cpu = total / cpu if cpu else float("nan")
        print(f"oracle JVM: {cpu:.2f} CPU-s for {total} requests ({per_cpu:,.0f} requests per CPU-second)")
        return sent / (t2 - t1), piped / (t3 - t2), per_cpu


def bench_reference() -> float:
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=3000))
    protos = (("range", b"\x00"),)
    ids = []
    for i in range(N):
        r = c.handle(0, i, JoinGroupRequest("g", "", "consumer", protos, 10000, 60000))[0].response
        c.handle(0, i, JoinGroupRequest("g", r.member_id, "consumer", protos, 10000, 60000))
        ids.append(r.member_id)
    c.advance(START)
    view = c.group("g")
    gen, leader = view.generation, view.leader
    c.handle(START, ids.index(leader), SyncGroupRequest("g", leader, gen, tuple((m, b"\x00") for m in ids)))
    for i, m in enumerate(ids):
        if m != leader:
            c.handle(START, i, SyncGroupRequest("g", m, gen))
    start = time.perf_counter()
    sent = 0
    for r in range(ROUNDS):
        for i, m in enumerate(ids):
            assert c.handle(START + r, i, HeartbeatRequest("g", m, gen))[0].response.error.name == "NONE"
            c.handle(START + r, i, OffsetCommitRequest("g", (("t", 0, r),), m, gen))
            sent += 2
    elapsed = time.perf_counter() - start
    print(f"reference, steady state (in-process): {sent} requests in {elapsed:.2f}s ({sent / elapsed:,.0f} requests/s)")
    return sent / elapsed


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Kafka oracle benchmark: {N} members, {ROUNDS} rounds of heartbeat + commit; load average {load:.1f} "
          f"on {os.cpu_count()} CPUs (wall-clock rates include waiting for a CPU)")
    one, piped, per_cpu = bench_oracle()
    ref = bench_reference()
    print(f"ratio reference/oracle: {ref / one:.1f}x one at a time, {ref / piped:.1f}x pipelined; "
          f"target >= 2,000 requests/s through the oracle: {'met' if max(one, piped) >= 2000 else 'NOT met'} "
          f"(wall, pipelined {piped:,.0f}/s), {per_cpu:,.0f} per JVM CPU-second")


if __name__ == "__main__":
    main()
