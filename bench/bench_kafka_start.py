"""Benchmark: broker start to first assignment, Apache Kafka (the real-stack harness's ``apache-kafka``) against Tansu.

For each coordinator, ``--runs`` times: the clock starts when the harness begins to start the coordinator (for
``apache-kafka``: the temporary directory, ``kafka.tools.StorageTool format``, then ``kafka.Kafka``), a topic of 6
partitions is made, and one confluent-kafka consumer (in this process, classic protocol, range) subscribes; the clock
stops when its first ``on_assign`` with partitions runs. Printed per coordinator: start (until the port answers),
start to first assignment (median and worst), and the ratio of Apache Kafka's median to the peer's, measured in the
same run. Target (issue #27): Apache Kafka's start to first assignment < 20 s on this machine.
The load average is printed before and after: the machine may be shared, and the figures are then upper bounds.

Usage: python bench/bench_kafka_start.py [--runs 3] [--peer tansu|groupspec|none]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def once(name: str) -> tuple[float, float]:
    from confluent_kafka import Consumer

    from groupspec.realstack import COORDINATORS

    coord = COORDINATORS[name]()
    t0 = time.monotonic()
    try:
        boot = coord.start()
        started = time.monotonic() - t0
        coord.create_topic("t", 6)
        got: list[float] = []
        c = Consumer({"bootstrap.servers": boot, "group.id": f"bench-{os.getpid()}", "session.timeout.ms": 6000,
                      "heartbeat.interval.ms": 1500, "partition.assignment.strategy": "range",
                      "enable.auto.commit": False})
        c.subscribe(["t"], on_assign=lambda _c, parts: got.append(time.monotonic()) if parts and not got else None)
        deadline = time.monotonic() + 120
        while not got and time.monotonic() < deadline:
            c.poll(0.05)
        c.close()
        if not got:
            raise SystemExit(f"{name}: no assignment within 120 s")
        return started, got[0] - t0
    finally:
        coord.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--peer", default="tansu", choices=["tansu", "groupspec", "none"])
    a = ap.parse_args()
    from groupspec.kafka import KAFKA_VERSION

    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    names = ["apache-kafka"] + ([] if a.peer == "none" else [a.peer])
    medians = {}
    for name in names:
        runs = [once(name) for _ in range(a.runs)]
        starts, firsts = [r[0] for r in runs], [r[1] for r in runs]
        medians[name] = statistics.median(firsts)
        label = f"{name} ({KAFKA_VERSION})" if name == "apache-kafka" else name
        print(f"{label:22} start {statistics.median(starts):6.2f} s   start to first assignment: median "
              f"{medians[name]:6.2f} s, worst {max(firsts):6.2f} s  ({a.runs} runs)", flush=True)
    if a.peer != "none":
        print(f"ratio apache-kafka / {a.peer} (start to first assignment, medians): "
              f"{medians['apache-kafka'] / medians[a.peer]:.1f}x")
    ok = medians["apache-kafka"] < 20.0
    print(f"target < 20 s: {'met' if ok else 'MISSED'}; load average after: {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
