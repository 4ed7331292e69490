"""The oracle process: one long-lived ``java groupspec.kafka.oracle.Oracle``, JSON lines in and out.

Started in its own process group (so a Ctrl-C at the terminal reaches Python, which then stops it), stopped by
``close()``, by the context manager, and at interpreter exit. A machine without Java, or without the pinned
release's jars fetched, gives one ``OracleError`` line saying what to do.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import threading
import weakref
from typing import Any

from groupspec.kafka import KafkaSetupError, classpath, java_binary

MAIN_CLASS = "groupspec.kafka.oracle.Oracle"
_LIVE: "weakref.WeakSet[KafkaOracle]" = weakref.WeakSet()


class OracleError(RuntimeError):
    """The oracle cannot run or answered nonsense; the message is one line."""


class KafkaOracle:
    """Kafka's group coordinator in a child JVM. ``reset(config)`` gives a fresh coordinator, ``send(op)`` one answer."""

    def __init__(self, fetch: bool = False) -> None:
        try:
            java = java_binary()
            cp = classpath(fetch=fetch)
        except KafkaSetupError as e:
            raise OracleError(str(e)) from None
        self._stderr_tail: list[str] = []
        self._proc = subprocess.Popen(
            [java, "-XX:+UseSerialGC", "-Dlog4j2.level=OFF", "-cp", cp, MAIN_CLASS],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            start_new_session=True)
        self._lock = threading.Lock()
        threading.Thread(target=self._drain, daemon=True).start()
        _LIVE.add(self)
        self.requests = 0

    def _drain(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr_tail.append(line.rstrip())
            del self._stderr_tail[:-20]

    def reset(self, config: dict[str, Any] | None = None) -> None:
        self.send({"op": "init", "config": config or {}})

    def send(self, op: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._proc.poll() is not None:
                raise OracleError(f"the Kafka oracle process has exited ({self._why()})")
            assert self._proc.stdin is not None and self._proc.stdout is not None
            try:
                self._proc.stdin.write(json.dumps(op) + "\n")
                self._proc.stdin.flush()
                line = self._proc.stdout.readline()
            except (BrokenPipeError, OSError) as e:
                raise OracleError(f"the Kafka oracle process stopped answering ({e}; {self._why()})") from None
        if not line:
            raise OracleError(f"the Kafka oracle process closed its output ({self._why()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer and "responses" not in answer and "ok" not in answer:
            raise OracleError(f"the Kafka oracle refused {op.get('op')}: {answer['error']}")
        self.requests += 1
        return answer

    def send_many(self, ops: list[dict[str, Any]], window: int = 64) -> list[dict[str, Any]]:
        """Pipelined ``send``: up to ``window`` ops written before their answers are read (fewer round trips)."""
        answers: list[dict[str, Any]] = []
        with self._lock:
            if self._proc.poll() is not None:
                raise OracleError(f"the Kafka oracle process has exited ({self._why()})")
            assert self._proc.stdin is not None and self._proc.stdout is not None
            for start in range(0, len(ops), window):
                chunk = ops[start:start + window]
                try:
                    self._proc.stdin.write("".join(json.dumps(op) + "\n" for op in chunk))
                    self._proc.stdin.flush()
                    lines = [self._proc.stdout.readline() for _ in chunk]
                except (BrokenPipeError, OSError) as e:
                    raise OracleError(f"the Kafka oracle process stopped answering ({e}; {self._why()})") from None
                for op, line in zip(chunk, lines):
                    if not line:
                        raise OracleError(f"the Kafka oracle process closed its output ({self._why()})")
                    answer = json.loads(line)
                    if "error" in answer and "responses" not in answer and "ok" not in answer:
                        raise OracleError(f"the Kafka oracle refused {op.get('op')}: {answer['error']}")
                    answers.append(answer)
        self.requests += len(ops)
        return answers

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the oracle's JVM has used so far (Linux /proc; 0.0 elsewhere)."""
        try:
            fields = open(f"/proc/{self._proc.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def _why(self) -> str:
        tail = [ln for ln in self._stderr_tail if ln.strip()]
        return tail[-1] if tail else f"exit status {self._proc.poll()}"

    def close(self) -> None:
        proc = self._proc
        if proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write('{"op": "quit"}\n')
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        _LIVE.discard(self)

    def __enter__(self) -> "KafkaOracle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@atexit.register
def _close_all() -> None:
    for oracle in list(_LIVE):
        oracle.close()
