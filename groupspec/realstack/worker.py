"""One real consumer in its own OS process, recording what it observes as trace lines.

Run by the harness as ``python -m groupspec.realstack.worker SPEC_JSON``. SPEC_JSON names the client
library (``confluent-kafka``, ``kafka-python``, ``aiokafka``), the bootstrap address, the group, the
topics, the member name, the configuration (assignor, static ``group.instance.id``, timeouts), the
shared clock origin (``origin_ms``: every process of a run writes ``ts_ms`` = wall-clock ms minus
that origin, so all lines are on one clock) and the file to append trace lines to (one JSON object
per line, flushed at once: a SIGKILL loses nothing already observed).

What is recorded: ``joined`` when it subscribes; every rebalance-listener call (``assigned``,
``revoked``, ``lost``; with the client's member id, and generation where the client exposes one);
errors the client reports (``fenced`` for UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION /
FENCED_INSTANCE_ID / a max.poll.interval overrun, ``error`` otherwise); a ``snapshot`` of the polled
``assignment()`` whenever it changes; ``left`` after a clean close. Commands arrive on standard
input, one a line: ``leave`` (close cleanly and exit), ``pause SECONDS`` (stop polling: a slow
consumer), ``subscribe T1,T2`` (change the subscription). The client's log goes to standard error
(the run's ``.log`` file) at level WARNING, or ``GROUPSPEC_WORKER_LOG`` (e.g. ``INFO``).
"""
from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import time
from typing import Any

FENCING_ERRORS = ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID", "_MAX_POLL_EXCEEDED",
                  "MAX_POLL_EXCEEDED", "REBALANCE_IN_PROGRESS")


class Recorder:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.origin = float(spec["origin_ms"])
        self.member = spec["member"]
        self.group = spec["group"]
        self.protocol = spec.get("protocol", "eager")
        self.f = open(spec["out"], "a", buffering=1, encoding="utf-8")
        self.member_id: str | None = None
        self.generation: int | None = None
        self.last_snapshot: list[list[Any]] | None = None
        self.lock = threading.Lock()

    def now(self) -> int:
        return int(time.time() * 1000 - self.origin)

    def write(self, event: str, **fields: Any) -> None:
        line: dict[str, Any] = {"ts_ms": self.now(), "group": self.group, "member": self.member, "event": event}
        line.update(fields)
        line.setdefault("protocol", self.protocol)
        if self.generation is not None and "generation" not in line:
            line["generation"] = self.generation
        if self.member_id:
            line.setdefault("member_id", self.member_id)
        with self.lock:
            self.f.write(json.dumps(line, separators=(",", ":")) + "\n")
            self.f.flush()

    def snapshot(self, parts: list[list[Any]]) -> None:
        parts = sorted(parts)
        if parts != self.last_snapshot:
            self.last_snapshot = parts
            self.write("snapshot", partitions=parts)


def _commands() -> "queue.Queue[str]":
    q: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            q.put(line.strip())
        q.put("eof")

    threading.Thread(target=read, daemon=True).start()
    return q


def _next_command(cmds: "queue.Queue[str]") -> tuple[str, Any]:
    """The harness's next command for this member, parsed: ``("", None)`` when none is waiting, ``("leave",
    None)`` on ``leave`` or the end of the harness's input, ``("pause", seconds)``, ``("subscribe", topics)``."""
    try:
        cmd = cmds.get_nowait()
    except queue.Empty:
        return "", None
    if cmd in ("leave", "eof"):
        return "leave", None
    if cmd.startswith("pause "):
        return "pause", float(cmd.split()[1])
    if cmd.startswith("subscribe "):
        return "subscribe", cmd.split()[1].split(",")
    return "", None


def _obey(cmds: "queue.Queue[str]", rec: Recorder, close: Any, subscribe: Any) -> bool:
    """Carry out the next command of a client with a blocking API; True when the member has left."""
    kind, arg = _next_command(cmds)
    if kind == "leave":
        close()
        rec.write("left")
        return True
    if kind == "pause":
        time.sleep(arg)
    elif kind == "subscribe":
        subscribe(arg)
    return False


def _tp(items: Any) -> list[list[Any]]:
    return sorted([p.topic, p.partition] for p in items)


# ------------------------------------------------------------------------------------ confluent-kafka
def run_confluent(spec: dict[str, Any], rec: Recorder, cmds: "queue.Queue[str]") -> None:
    from confluent_kafka import Consumer, KafkaError

    conf = {
        "bootstrap.servers": spec["bootstrap"], "group.id": spec["group"],
        "session.timeout.ms": spec["session_timeout_ms"], "heartbeat.interval.ms": spec["heartbeat_interval_ms"],
        "max.poll.interval.ms": spec["max_poll_interval_ms"], "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "cooperative-sticky" if spec.get("protocol") == "cooperative" else "range",
    }
    consumer_protocol = spec.get("protocol") == "consumer"
    if consumer_protocol:
        # KIP-848: the session timeout, heartbeat interval and assignor are the broker's
        # (librdkafka refuses them with group.protocol=consumer).
        for key in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
            del conf[key]
        conf["group.protocol"] = "consumer"
        # A broker without ConsumerGroupHeartbeat is only told in librdkafka's cgrp debug log ("... not
        # supported by broker"): record it once as an error line, so that the verdict says why.
        conf["debug"] = "cgrp"
        conf["logger"] = _UnsupportedLog(rec).log
    if spec.get("instance_id"):
        conf["group.instance.id"] = spec["instance_id"]
    c = Consumer(conf)

    def mid() -> None:
        try:
            rec.member_id = c.memberid() or rec.member_id
        except Exception:  # noqa: BLE001 - not in a group yet
            pass
        if consumer_protocol:
            epoch = member_epoch(c.consumer_group_metadata())
            if epoch is not None:
                rec.generation = epoch  # the trace format's generation field holds the member epoch

    def on_assign(_c: Any, parts: Any) -> None:
        mid()
        rec.write("assigned", partitions=_tp(parts))

    def on_revoke(_c: Any, parts: Any) -> None:
        mid()
        rec.write("revoked", partitions=_tp(parts))

    def on_lost(_c: Any, parts: Any) -> None:
        rec.write("lost", partitions=_tp(parts))
        if consumer_protocol:
            rec.generation = 0  # it rejoins with epoch 0

    c.subscribe(list(spec["topics"]), on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    rec.write("joined", **({"instance_id": spec["instance_id"]} if spec.get("instance_id") else {}))
    def resubscribe(topics: list[str]) -> None:
        c.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

    while True:
        if _obey(cmds, rec, c.close, resubscribe):
            return
        msg = c.poll(0.1)
        err = msg.error() if msg is not None else None
        if err is not None:
            name = err.name() if hasattr(err, "name") else str(err.code())
            if name.lstrip("_") in [e.lstrip("_") for e in FENCING_ERRORS] and name != "REBALANCE_IN_PROGRESS":
                rec.write("fenced", error=name)
            elif err.code() != KafkaError._PARTITION_EOF:
                # librdkafka's own words too: a fatal error's name alone (_FATAL) does not say which error it was
                rec.write("error", error=name, **({"detail": err.str()[:300]} if hasattr(err, "str") else {}))
        try:
            rec.snapshot(_tp(c.assignment()))
        except Exception:  # noqa: BLE001 - closed or not ready
            pass


class _UnsupportedLog(logging.Handler):
    """A logger for librdkafka that keeps nothing but the first "not supported by broker" line."""

    def __init__(self, rec: Recorder) -> None:
        super().__init__()
        self.rec = rec
        self.seen = False
        self.log = logging.getLogger(f"groupspec.realstack.worker.{rec.member}")
        self.log.propagate = False
        self.log.setLevel(logging.DEBUG)
        self.log.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if not self.seen and "not supported by broker" in msg:
            self.seen = True
            self.rec.write("error", error=msg.split(": ", 1)[-1][:200])


def member_epoch(metadata: bytes) -> int | None:
    """The generation (the member epoch under group.protocol=consumer) in librdkafka's serialized
    consumer group metadata (``rd_kafka_consumer_group_metadata_write``: ``CGMDv2:``, then the
    generation as a 4-byte integer in the host's byte order, then the group id and member id)."""
    if not isinstance(metadata, (bytes, bytearray)) or not metadata.startswith(b"CGMDv2:") or len(metadata) < 11:
        return None
    return int.from_bytes(metadata[7:11], sys.byteorder, signed=True)


# ------------------------------------------------------------------------------------ kafka-python
def run_kafka_python(spec: dict[str, Any], rec: Recorder, cmds: "queue.Queue[str]") -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    kw: dict[str, Any] = {}
    if spec.get("instance_id"):
        kw["group_instance_id"] = spec["instance_id"]
    c = KafkaConsumer(
        bootstrap_servers=spec["bootstrap"], group_id=spec["group"], enable_auto_commit=False,
        session_timeout_ms=spec["session_timeout_ms"], heartbeat_interval_ms=spec["heartbeat_interval_ms"],
        max_poll_interval_ms=spec["max_poll_interval_ms"], auto_offset_reset="earliest",
        partition_assignment_strategy=[RangePartitionAssignor], **kw)

    def gen() -> None:
        try:
            g = c._coordinator._generation  # noqa: SLF001 - the client exposes no public accessor
            rec.generation = int(g.generation_id)
            rec.member_id = str(g.member_id) or rec.member_id
        except Exception:  # noqa: BLE001
            pass

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]  # kafka-python ships no types
        def on_partitions_revoked(self, revoked: Any) -> None:
            rec.write("revoked", partitions=_tp(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            gen()
            rec.write("assigned", partitions=_tp(assigned))

        def on_partitions_lost(self, lost: Any) -> None:
            rec.write("lost", partitions=_tp(lost))

    c.subscribe(list(spec["topics"]), listener=Listener())
    rec.write("joined", **({"instance_id": spec["instance_id"]} if spec.get("instance_id") else {}))
    while True:
        if _obey(cmds, rec, c.close, lambda topics: c.subscribe(topics, listener=Listener())):
            return
        try:
            c.poll(timeout_ms=100)
        except Exception as e:  # noqa: BLE001 - record what the client raised
            name = type(e).__name__
            rec.write("fenced" if any(x.replace("_", "").lower() in name.lower() for x in
                                      ("UnknownMemberId", "IllegalGeneration", "FencedInstanceId", "CommitFailed"))
                      else "error", error=name)
        rec.snapshot(_tp(c.assignment()))


# ------------------------------------------------------------------------------------ aiokafka
def run_aiokafka(spec: dict[str, Any], rec: Recorder, cmds: "queue.Queue[str]") -> None:
    import asyncio

    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor

    async def main() -> None:
        kw: dict[str, Any] = {}
        if spec.get("instance_id"):
            kw["group_instance_id"] = spec["instance_id"]
        c = AIOKafkaConsumer(
            bootstrap_servers=spec["bootstrap"], group_id=spec["group"], enable_auto_commit=False,
            session_timeout_ms=spec["session_timeout_ms"], heartbeat_interval_ms=spec["heartbeat_interval_ms"],
            max_poll_interval_ms=spec["max_poll_interval_ms"], auto_offset_reset="earliest",
            partition_assignment_strategy=(RangePartitionAssignor,), **kw)

        def gen() -> None:
            try:
                co = c._coordinator  # noqa: SLF001 - the client exposes no public accessor
                rec.generation = int(co.generation)
                rec.member_id = str(co.member_id) or rec.member_id
            except Exception:  # noqa: BLE001
                pass

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]  # kafka-python ships no types
            async def on_partitions_revoked(self, revoked: Any) -> None:
                rec.write("revoked", partitions=_tp(revoked))

            async def on_partitions_assigned(self, assigned: Any) -> None:
                gen()
                rec.write("assigned", partitions=_tp(assigned))

        c.subscribe(list(spec["topics"]), listener=Listener())
        # joined before start(): start() may already complete the first join and call the listener
        rec.write("joined", **({"instance_id": spec["instance_id"]} if spec.get("instance_id") else {}))
        await c.start()
        while True:
            kind, arg = _next_command(cmds)
            if kind == "leave":
                await c.stop()
                rec.write("left")
                return
            if kind == "pause":
                await asyncio.sleep(arg)
            elif kind == "subscribe":
                c.subscribe(arg, listener=Listener())
            try:
                await c.getmany(timeout_ms=100)
            except Exception as e:  # noqa: BLE001
                rec.write("error", error=type(e).__name__)
            rec.snapshot(_tp(c.assignment()))

    asyncio.run(main())


CLIENTS = {"confluent-kafka": run_confluent, "kafka-python": run_kafka_python, "aiokafka": run_aiokafka}


def main() -> int:
    import logging

    import os

    level = getattr(logging, os.environ.get("GROUPSPEC_WORKER_LOG", "WARNING").upper(), logging.WARNING)
    logging.basicConfig(level=level, stream=sys.stderr,
                        format=f"%(asctime)s {json.loads(sys.argv[1])['member']} %(name)s %(levelname)s %(message)s")
    spec = json.loads(sys.argv[1])
    rec = Recorder(spec)
    cmds = _commands()
    try:
        CLIENTS[spec["client"]](spec, rec, cmds)
    except Exception as e:  # noqa: BLE001 - recorded, and the harness sees the exit status
        rec.write("error", error=f"{type(e).__name__}: {e}"[:300])
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
