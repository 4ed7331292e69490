"""Kafka's assignors from the pinned jars, in one JVM driven over a pipe: the client-side ones (kafka-clients,
:class:`JavaAssignors`) and the consumer protocol's server-side ones (kafka-group-coordinator, :class:`JavaServerAssignors`).

``java/groupspec/kafka/AssignorBench.java`` (compiled by :func:`compiled_classes`) takes one command per line
(see its Javadoc); :class:`JavaAssignors` starts it once and sends commands, so a benchmark can interleave
Java's runs with groupspec's in one run and a test can compare outputs on many generated groups with one JVM
start. Used by ``bench/bench_assignors.py`` and ``tests/test_assignors_vs_kafka.py``.
"""
from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any, Self

from .jars import KafkaSetupError, classpath, java_binary

STEPS = ("fresh", "second", "add")
# A line Kafka logs on the JVM's stdout ("06:46:47.505 [main] ERROR org.apache.kafka...": AbstractStickyAssignor logs
# every partition claimed twice in one generation), not an answer
_KAFKA_LOG = re.compile(r"\d\d:\d\d:\d\d\.\d+ \[[^]]*\] [A-Z]+ ")


class _JavaPipe:
    """A Java program of ``java/`` answering commands over its stdin and stdout; ``quit`` ends it."""

    proc: subprocess.Popen[str]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class JavaAssignors(_JavaPipe):
    """A running ``groupspec.kafka.AssignorBench``; close it (or use ``with``)."""

    def __init__(self, heap: str = "4g") -> None:
        java = java_binary()
        cp = classpath()
        self.version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        self.proc = subprocess.Popen([java, f"-Xmx{heap}", "-cp", cp, "groupspec.kafka.AssignorBench"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._expect("ready")

    def _ask(self, command: str, head: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._expect(head)

    def _expect(self, head: str) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        while _KAFKA_LOG.match(line):  # Kafka's own log lines (e.g. the sticky assignors' conflicting claims)
            line = self.proc.stdout.readline()
        if not line.startswith(head):
            raise KafkaSetupError("Kafka's assignors (Java) answered " + (line.strip()[:300] or "nothing (it exited)"))
        return line

    def shape(self, kind: str, topics: int, partitions: int, consumers: int) -> None:
        """``uniform`` (everyone on every topic) or ``nonequal`` (i % 4 == 0 on the first half of the topics)."""
        self._ask(f"shape {kind} {topics} {partitions} {consumers}", "ok")

    def prepare(self, assignor: str) -> None:
        """The inputs of the steps fresh, second, add, each from Java's own previous result."""
        self._ask(f"prepare {assignor}", "ok")

    def run(self, assignor: str, step: str) -> tuple[float, float, float, float]:
        """One timed assignment: (wall, thread CPU, process CPU, GC) seconds."""
        wall, thread, process, gc = (float(x) for x in self._ask(f"run {assignor} {step}", "run ").split()[1:])
        return wall, thread, process, gc

    def digest(self, assignor: str, step: str) -> str:
        return self._ask(f"digest {assignor} {step}", "digest ").split()[1]

    def assign(self, assignor: str, partitions: dict[str, int], members: dict[str, dict[str, Any]],
               racks: dict[str, list[list[str | None]]] | None = None) -> dict[str, list[tuple[str, int]]]:
        """One assignment of a plain group by Kafka's ``assignor`` (lists sorted by topic, partition)."""
        case = {"assignor": assignor, "partitions": partitions, "members": members, "racks": racks}
        line = self._ask("case " + json.dumps(case, separators=(",", ":")), "{")
        return {m: [(t, p) for t, p in tps] for m, tps in json.loads(line).items()}



class JavaServerAssignors(_JavaPipe):
    """A running ``groupspec.kafka.ServerAssignors``: Kafka's ``UniformAssignor`` and ``RangeAssignor`` (KIP-848)
    called as its coordinator calls them; close it (or use ``with``). Used by ``tests/test_server_assignors_vs_kafka.py``."""

    def __init__(self, heap: str = "256m") -> None:
        self.proc = subprocess.Popen([java_binary(), f"-Xmx{heap}", "-cp", classpath(), "groupspec.kafka.ServerAssignors"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise KafkaSetupError("Kafka's server assignors (Java) answered " + (line.strip()[:300] or "nothing (it exited)"))

    def assign(self, assignor: str, partitions: dict[str, int], subscriptions: dict[str, list[str]],
               current: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> dict[str, dict[str, list[int]]]:
        """The target assignment Kafka's ``assignor`` (uniform or range) computes: ``{member: {topic: [partitions]}}``,
        the same shape as ``reference.assignors.server``'s ``assign``; ``current`` may be any such target (a
        ``range`` target's views and ranges included: written as lists)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        current = current or {}
        case = {"assignor": assignor, "partitions": partitions,
                "members": {m: {"topics": list(ts), "current": {t: list(ps) for t, ps in current.get(m, {}).items()}} for m, ts in subscriptions.items()}}
        self.proc.stdin.write(json.dumps(case, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline() or '{"error": "it exited"}')
        if "error" in out and not isinstance(out["error"], dict):
            raise KafkaSetupError(f"Kafka's {assignor} assignor failed: {out['error']}")
        result: dict[str, dict[str, list[int]]] = out
        return result



SERVER_STEPS = ("fresh", "join")


class JavaServerAssignorBench(JavaAssignors):
    """A running ``groupspec.kafka.ServerAssignorBench``: Kafka's ``UniformAssignor`` and ``RangeAssignor`` timed on
    homogeneous groups built inside the JVM (see its Javadoc). Used by ``bench/bench_assignors.py --server``."""

    def __init__(self, heap: str = "4g") -> None:
        java = java_binary()
        cp = classpath()
        self.version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        self.proc = subprocess.Popen([java, f"-Xmx{heap}", "-cp", cp, "groupspec.kafka.ServerAssignorBench"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._expect("ready")

    def server_shape(self, topics: int, partitions: int, members: int) -> None:
        """``topics`` x ``partitions``; members consumer0.. each on every topic."""
        self._ask(f"shape {topics} {partitions} {members}", "ok")

    def server_digest(self, assignor: str, step: str) -> tuple[str, int, int, int]:
        """(SHA-256 of the step's result, partitions moved from the fresh result, smallest load, largest load)."""
        _, hexd, moved, lo, hi = self._ask(f"digest {assignor} {step}", "digest ").split()
        return hexd, int(moved), int(lo), int(hi)
