"""The ``apache-kafka`` coordinator: a single-node KRaft broker of the pinned Apache Kafka release, started here.

Theory of operation
-------------------
1. Set-up comes from ``groupspec.kafka``: Java from the machine (17 or newer) and the pinned release's jars,
   fetched once by ``make setup`` (``python -m groupspec.kafka fetch``). A run never fetches: a machine without
   the jars, or without Java, gets one line saying so (:class:`CoordinatorError`), as does a port that is taken.
2. :class:`KafkaBroker` makes a temporary directory, writes ``server.properties`` (one node that is both broker and
   KRaft controller, two free loopback ports: the client listener and the controller's) and a log4j2 configuration,
   formats the storage with ``kafka.tools.StorageTool format``, then runs ``kafka.Kafka`` in its own process group
   and waits until the client listener answers (at most :data:`START_TIMEOUT_S`; a broker that exits first is
   reported with the last error line of its log). ``stop`` signals the whole process group and removes the
   directory; the harness calls it in a ``finally`` (an error, Ctrl-C), and a Ctrl-C is held while the process is
   started (``interrupts_held``), so no broker runs without a handle to stop it by.
3. The group settings are the harness's (:data:`GROUP_SETTINGS`): no initial rebalance delay, and the consumer
   protocol's session timeout and heartbeat interval set to the classic clients' own (6 s and 1.5 s, the
   real-stack scenarios' ``TIMEOUTS``), with the minimums lowered to allow them; both group protocols are
   enabled (Kafka's default, ``classic,consumer,streams``); the classic-to-consumer migration policy is
   ``bidirectional`` unless a run sets ``group.consumer.migration.policy``. They are written in the trace's
   header line (``{"event": "coordinator", ...}``) and the verdict.
4. For a test run the broker is started once and shared (:func:`shared_broker`): each harness run then attaches
   to it, uses a group id of its own (``g-1``, ``g-2``, ...: the SIGKILLed members of the previous run stay in
   their group until their session times out) and makes its topics again when their partition counts differ.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from groupspec.kafka import KAFKA_VERSION, KafkaSetupError, classpath, java_binary

from .coordinators import Coordinator, CoordinatorError, free_port, interrupts_held, kill_group

__all__ = ["ApacheKafka", "KafkaBroker", "GROUP_SETTINGS", "shared_broker", "START_TIMEOUT_S"]

#: How long the broker may take to answer on its port (a busy 2-core machine: ~7 s measured).
START_TIMEOUT_S = 90.0
#: The broker's group settings for quick rebalances (the harness's choice; written in the trace's header).
GROUP_SETTINGS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "0",          # default 3000: the first join phase waits for no one
    "group.min.session.timeout.ms": "6000",           # classic: the clients' session.timeout.ms (6 s) is allowed
    "group.consumer.session.timeout.ms": "6000",      # consumer protocol (default 45000): as the classic clients'
    "group.consumer.min.session.timeout.ms": "6000",
    "group.consumer.heartbeat.interval.ms": "1500",   # default 5000: as the classic clients'
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.assignment.interval.ms": "0",     # default 1000: a new target assignment at once
    "group.consumer.migration.policy": "bidirectional",
}
#: Broker settings for one node (replication factors of 1, one partition for the internal topics).
NODE_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1", "share.coordinator.state.topic.min.isr": "1",
    "num.partitions": "1", "auto.create.topics.enable": "false",
}
JVM_OPTIONS = ["-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
               "-Djava.awt.headless=true"]

_LOG4J2 = """status = error
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
logger.group.name = org.apache.kafka.coordinator.group
logger.group.level = {group_level}
"""


def _port_taken(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _first_error(log: str) -> str:
    """The first line of a JVM's output that says what went wrong (not a stack frame), cut to one short line."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
    for ln in lines:
        if " ERROR " in ln or " FATAL " in ln or "Exception" in ln or "Error:" in ln:
            return ln[:240]
    return lines[-1][:240] if lines else "no output"


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64 without padding (not starting with '-')."""
    import base64

    while True:
        cid = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


class KafkaBroker:
    """One single-node KRaft broker of the pinned release, in a temporary directory, in its own process group."""

    def __init__(self, settings: dict[str, str] | None = None, port: int | None = None, verbose: bool = False) -> None:
        self.settings = dict(GROUP_SETTINGS, **(settings or {}))
        self.port = port
        self.verbose = verbose
        self.proc: subprocess.Popen[Any] | None = None
        self.dir: Path | None = None
        self.bootstrap = ""
        self.started_at = 0.0  # time.time() when the start began
        self.start_seconds = 0.0  # start began -> the client listener answered (format included)
        self.format_seconds = 0.0

    def _write_config(self, port: int, cport: int) -> Path:
        assert self.dir is not None
        props = {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{cport}",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.dir / "data"), **NODE_SETTINGS, **self.settings,
        }
        path = self.dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
        (self.dir / "log4j2.properties").write_text(_LOG4J2.format(group_level="DEBUG" if self.verbose else "INFO"),
                                                    encoding="utf-8")
        return path

    def _java(self) -> list[str]:
        try:
            java, cp = java_binary(), classpath(fetch=False)
        except KafkaSetupError as e:
            raise CoordinatorError(str(e)) from None
        assert self.dir is not None
        return [java, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}", "-cp", cp]

    def log_tail(self, n: int = 4000) -> str:
        try:
            return (self.dir / "broker.log").read_text(encoding="utf-8", errors="replace")[-n:] if self.dir else ""
        except OSError:
            return ""

    def _why(self) -> str:
        """The broker's own reason for dying, from its log: one line."""
        text = self.log_tail(20000)
        if "Address already in use" in text or "BindException" in text:
            return f"port {self.port} or its controller port is taken (Address already in use)"
        return _first_error(text)

    def start(self) -> str:
        port = self.port or free_port()
        if _port_taken(port):
            raise CoordinatorError(f"port 127.0.0.1:{port} is taken")
        self.port = port
        cport = free_port()
        while cport == port:
            cport = free_port()
        self.started_at = time.time()
        t0 = time.monotonic()
        self.dir = Path(tempfile.mkdtemp(prefix="gs-kafka-"))
        try:
            config = self._write_config(port, cport)
            java = self._java()
            # the format tool is held like the broker: started under interrupts_held so a Ctrl-C cannot lose its
            # handle, kept in self.proc so stop() kills its process group on any way out
            with interrupts_held(), open(self.dir / "format.log", "w", encoding="utf-8") as flog:
                self.proc = subprocess.Popen([*java, "kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c",
                                              str(config)], stdin=subprocess.DEVNULL, stdout=flog,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            try:
                returncode = self.proc.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise CoordinatorError(f"formatting the broker's storage took over {START_TIMEOUT_S:.0f} s") from None
            self.proc = None
            if returncode != 0:
                why = _first_error((self.dir / "format.log").read_text(errors="replace"))
                raise CoordinatorError(f"kafka.tools.StorageTool format failed: {why}")
            self.format_seconds = time.monotonic() - t0
            with interrupts_held(), open(self.dir / "broker.log", "w", encoding="utf-8") as blog:
                self.proc = subprocess.Popen([*java, "kafka.Kafka", str(config)], stdin=subprocess.DEVNULL, stdout=blog,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise CoordinatorError(f"the broker exited at start with status {self.proc.returncode}: {self._why()}")
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    self.bootstrap = f"127.0.0.1:{port}"
                    self.start_seconds = time.monotonic() - t0
                    return self.bootstrap
                except OSError:
                    time.sleep(0.1)
            raise CoordinatorError(f"the broker did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S:.0f} s")
        except BaseException:
            self.stop()
            raise

    def stop(self, log: IO[str] | None = None) -> None:
        """Stop the broker (its whole process group), copy its log into ``log`` and remove its directory."""
        with interrupts_held():
            kill_group(self.proc, grace_s=5.0)
            self.proc = None
            if log is not None and self.dir is not None:
                with contextlib.suppress(OSError):
                    log.write((self.dir / "broker.log").read_text(encoding="utf-8", errors="replace"))
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None

    def header(self) -> dict[str, Any]:
        return {"coordinator": "apache-kafka", "version": KAFKA_VERSION, "settings": dict(self.settings),
                "group_protocols": "classic,consumer,streams (the default)"}


_SHARED: list[KafkaBroker] = []
_GROUP_NUMBERS = itertools.count(1)


@contextlib.contextmanager
def shared_broker(settings: dict[str, str] | None = None) -> Iterator[KafkaBroker]:
    """Start one broker for many harness runs (a test session): ``apache-kafka`` runs inside attach to it."""
    broker = KafkaBroker(settings)
    broker.start()
    _SHARED.append(broker)
    try:
        yield broker
    finally:
        _SHARED.remove(broker)
        broker.stop()


class ApacheKafka(Coordinator):
    name = "apache-kafka"
    summary = (f"Apache Kafka {KAFKA_VERSION}: a single-node KRaft broker (the jars of make setup, Java from the "
               "machine), both group protocols, quick-rebalance settings in the trace's header")

    #: Broker settings of the next runs on top of GROUP_SETTINGS (the CLI's --broker-config KEY=VALUE).
    overrides: dict[str, str] = {}

    def __init__(self, log: IO[str] | None = None) -> None:
        self.log = log
        self.notes = []
        self.broker: KafkaBroker | None = None
        self.own = False
        self.group_suffix = ""
        self._started_at: float | None = None

    def start(self) -> str:
        if _SHARED and not self.overrides:
            self.broker = _SHARED[-1]
            self.group_suffix = f"-{next(_GROUP_NUMBERS)}"
        else:
            port = os.environ.get("GROUPSPEC_KAFKA_PORT")
            if port is not None and not port.isdigit():
                raise CoordinatorError(f"GROUPSPEC_KAFKA_PORT={port!r} is not a port number")
            self.broker = KafkaBroker(self.overrides, port=int(port) if port else None, verbose=self.verbose)
            self.own = True
            self.broker.start()
            self._started_at = self.broker.started_at
            self.notes.append(f"Apache Kafka {KAFKA_VERSION} started in {self.broker.start_seconds:.1f} s "
                              f"(storage format {self.broker.format_seconds:.1f} s)")
        self.bootstrap = self.broker.bootstrap
        return self.bootstrap

    def group_id(self, group: str) -> str:
        return group + self.group_suffix

    def header(self) -> dict[str, Any] | None:
        return self.broker.header() if self.broker else None

    def started_at(self) -> float | None:
        """When this run's broker began to start (time.time()), None when it attached to a shared one."""
        return self._started_at

    def create_topic(self, topic: str, partitions: int) -> int:
        if not self.own:
            from confluent_kafka.admin import AdminClient

            admin = AdminClient({"bootstrap.servers": self.bootstrap})
            t = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
            if t is not None and t.error is None and t.partitions:
                if len(t.partitions) == partitions:
                    return partitions
                admin.delete_topics([topic])[topic].result(15)
                deadline = time.monotonic() + 15
                while topic in admin.list_topics(timeout=5).topics and time.monotonic() < deadline:
                    time.sleep(0.2)
        return super().create_topic(topic, partitions)

    def stop(self) -> None:
        if self.broker is not None and self.own:
            self.broker.stop(self.log)
        self.broker = None
