"""Real Kafka clients against `groupspec serve`: consumers that record their listener events as a trace.

Each driver runs one consumer in a thread of its own (as an application would) and writes what its
rebalance listener saw in the trace format (joined, assigned, revoked, lost, commit, left), with
``ts_ms`` from one shared clock. ``run_scenario`` is the scenario of issue 14: three consumers
join, consume records produced to the server, commit, survive an injected REBALANCE_IN_PROGRESS
and a failover, consume what is produced after it, commit again and leave.
"""
from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

TOPIC = "t"
PARTITIONS = 6


@dataclass
class Recorder:
    t0: float = field(default_factory=time.monotonic)
    events: list[dict[str, Any]] = field(default_factory=list)
    consumed: set[tuple[int, int]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    errors: list[str] = field(default_factory=list)

    def now(self) -> int:
        return int((time.monotonic() - self.t0) * 1000)

    def event(self, member: str, event: str, **fields: Any) -> None:
        with self.lock:
            self.events.append({"ts_ms": self.now(), "group": "g", "member": member, "event": event, **fields})

    def records(self, pairs: list[tuple[int, int]]) -> None:
        with self.lock:
            self.consumed.update(pairs)


def _parts(tps: Any) -> list[list[Any]]:
    return sorted([[tp.topic, tp.partition] for tp in tps])


# ---------------------------------------------------------------------------------------------
# drivers: start(name, bootstrap, rec, stop) runs a consumer until stop is set
# ---------------------------------------------------------------------------------------------

def kafka_python_consumer(name: str, bootstrap: str, rec: Recorder, stop: threading.Event) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.consumer.subscription_state import ConsumerRebalanceListener
    from kafka.structs import OffsetAndMetadata

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            rec.event(name, "revoked", partitions=_parts(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            rec.event(name, "assigned", partitions=_parts(assigned))

        def on_partitions_lost(self, lost: Any) -> None:
            rec.event(name, "lost", partitions=_parts(lost))

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g", client_id=name, auto_offset_reset="earliest",
                      enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=300,
                      retry_backoff_ms=50, request_timeout_ms=15000)
    rec.event(name, "joined")
    c.subscribe([TOPIC], listener=Listener())
    try:
        while not stop.is_set():
            batch = c.poll(1000)  # long enough to cover a rejoin: kafka-python 3.0.12 strands a member otherwise (findings.md, 7)
            if not batch:
                continue
            offsets = {}
            for tp, rs in batch.items():
                rec.records([(tp.partition, r.offset) for r in rs])
                offsets[TopicPartition(tp.topic, tp.partition)] = OffsetAndMetadata(rs[-1].offset + 1, "", -1)
            parts = [[tp.topic, tp.partition, o.offset] for tp, o in offsets.items()]
            try:
                c.commit(offsets)
                rec.event(name, "commit", partitions=parts, accepted=True)
            except Exception as e:  # CommitFailedError during a rebalance: the records come again
                rec.event(name, "commit", partitions=parts, accepted=False)
                rec.errors.append(f"{name}: commit: {type(e).__name__}")
    finally:
        c.close()
        rec.event(name, "left")


def confluent_consumer(name: str, bootstrap: str, rec: Recorder, stop: threading.Event,
                       group_protocol: str = "classic") -> None:
    from confluent_kafka import Consumer, KafkaException

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": "g", "client.id": name,
                            "auto.offset.reset": "earliest", "enable.auto.commit": False, "reconnect.backoff.ms": 50,
                            "reconnect.backoff.max.ms": 500, "retry.backoff.ms": 50}
    if group_protocol == "consumer":  # KIP-848: the timeouts and the assignor are the broker's
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"session.timeout.ms": 10000, "heartbeat.interval.ms": 300})
    c = Consumer(conf)
    rec.event(name, "joined")
    c.subscribe([TOPIC], on_assign=lambda _c, ps: rec.event(name, "assigned", partitions=_parts(ps)),
                on_revoke=lambda _c, ps: rec.event(name, "revoked", partitions=_parts(ps)),
                on_lost=lambda _c, ps: rec.event(name, "lost", partitions=_parts(ps)))
    try:
        while not stop.is_set():
            msgs = c.consume(num_messages=100, timeout=0.1)
            good = [m for m in msgs if m.error() is None]
            if not good:
                continue
            rec.records([(m.partition(), m.offset()) for m in good])
            last: dict[int, int] = {}
            for m in good:
                last[m.partition()] = max(last.get(m.partition(), -1), m.offset())
            parts = [[TOPIC, p, o + 1] for p, o in sorted(last.items())]
            try:
                result = c.commit(asynchronous=False)
                ok = all(tp.error is None for tp in result or [])
                rec.event(name, "commit", partitions=parts, accepted=ok)
            except KafkaException as e:
                rec.event(name, "commit", partitions=parts, accepted=False)
                rec.errors.append(f"{name}: commit: {e}")
    finally:
        c.close()
        rec.event(name, "left")


def aiokafka_consumer(name: str, bootstrap: str, rec: Recorder, stop: threading.Event) -> None:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
    from aiokafka.errors import CommitFailedError, KafkaError

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            rec.event(name, "revoked", partitions=_parts(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            rec.event(name, "assigned", partitions=_parts(assigned))

    async def main() -> None:
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id="g", client_id=name,
                             auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=10000,
                             heartbeat_interval_ms=300, retry_backoff_ms=50)
        rec.event(name, "joined")
        c.subscribe([TOPIC], listener=Listener())
        await c.start()
        try:
            while not stop.is_set():
                batch = await c.getmany(timeout_ms=100)
                if not batch:
                    continue
                offsets = {}
                for tp, rs in batch.items():
                    rec.records([(tp.partition, r.offset) for r in rs])
                    offsets[TopicPartition(tp.topic, tp.partition)] = rs[-1].offset + 1
                parts = [[tp.topic, tp.partition, o] for tp, o in offsets.items()]
                try:
                    await c.commit(offsets)
                    rec.event(name, "commit", partitions=parts, accepted=True)
                except (CommitFailedError, KafkaError) as e:
                    rec.event(name, "commit", partitions=parts, accepted=False)
                    rec.errors.append(f"{name}: commit: {type(e).__name__}")
        finally:
            await c.stop()
            rec.event(name, "left")

    asyncio.run(main())


CLIENTS: dict[str, Callable[[str, str, Recorder, threading.Event], None]] = {
    "kafka-python": kafka_python_consumer,
    "confluent-kafka": confluent_consumer,
    "aiokafka": aiokafka_consumer,
}


def produce(bootstrap: str, count: int, start: int = 0) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(start, start + count):
        p.send(TOPIC, f"record-{i}".encode(), partition=i % PARTITIONS)
    p.flush()
    p.close()


def wait_for(cond: Callable[[], bool], timeout: float, what: str, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class Outcome:
    rec: Recorder
    generations: list[int]
    end_offsets: list[int]
    committed: dict[tuple[str, int], int]
    script: str
    transcript: str
    stats: dict[str, int]


def run_scenario(client: str, *, inject_rebalance: bool = True, failover: bool = True, expire: bool = False,
                 faults: Any = None) -> Outcome:
    """Three consumers of ``client`` against a served group; see the module docstring."""
    from groupspec.reference.classic import CoordinatorConfig
    from groupspec.serve import Cluster, Server

    cluster = Cluster(topics={TOPIC: PARTITIONS}, config=CoordinatorConfig(initial_rebalance_delay_ms=500),
                      record_group="g", faults=faults or frozenset())
    server = Server(cluster).start()
    rec = Recorder()
    rec.events.append({"ts_ms": 0, "group": "g", "member": "-", "event": "topic", "topic": TOPIC, "partitions": PARTITIONS})
    stop = threading.Event()
    generations: list[int] = []

    def stable(n: int = 3) -> bool:
        v = server.call(lambda c: c.coordinator.group("g"))
        if v is None or v.status.value != "Stable" or len(v.members) != n:
            return False
        return all(len(m.assignment) > 0 for m in v.members)

    def generation() -> int:
        v = server.call(lambda c: c.coordinator.group("g"))
        return -1 if v is None else v.generation

    threads = []
    try:
        produce(server.bootstrap, 60)
        for i in range(3):
            t = threading.Thread(target=CLIENTS[client], args=(f"{client}-{i}", server.bootstrap, rec, stop), daemon=True)
            t.start()
            threads.append(t)
        wait_for(lambda: len(rec.consumed) >= 60 and stable(), 60, "three members consuming the first 60 records")
        generations.append(generation())
        if inject_rebalance:
            # the member that gets it rejoins; a follower rejoining a Stable group with unchanged
            # metadata gets the current generation back (no new generation), a leader starts one
            joins = server.call(lambda c: c.stats.get("JoinGroup", 0))
            server.inject({"on": {"api": "Heartbeat", "nth": 1, "count": 1}, "do": "error", "error": "REBALANCE_IN_PROGRESS"})
            wait_for(lambda: server.call(lambda c: c.stats.get("JoinGroup", 0)) > joins and stable(), 60,
                     "the member that got REBALANCE_IN_PROGRESS to rejoin, and the group to be Stable")
            generations.append(generation())
        if failover:
            server.failover(load_ms=300)
            wait_for(lambda: server.call(lambda c: c.coordinator_node) == 1 and stable(), 60, "the group to be Stable on node 1")
            time.sleep(1.0)  # heartbeats and commits reach the new coordinator
            generations.append(generation())
        if expire:
            # the first consumer's heartbeats are lost until the coordinator expires its session
            def lose(c: Any) -> str:
                v = c.coordinator.group("g")
                mid = next(m.member_id for m in v.members if m.client_id == f"{client}-0")
                c.expire_session(mid)
                return mid

            lost_id = server.call(lose)
            # the coordinator's record of the expiry goes into the trace as a `removed` line, as soon as it is
            # seen (every 5 ms): what tells the trace checker that the member was a zombie from then on, when
            # the client learns it only later and says so with a plain `revoked` (aiokafka) rather than `lost`
            wait_for(lambda: lost_id not in server.call(lambda c: c.coordinator.group("g").member_ids), 30,
                     "the coordinator to expire the session", every=0.005)
            rec.event(f"{client}-0", "removed")
            wait_for(lambda: stable(), 60, "the expired consumer to rejoin and the group to be Stable")
            generations.append(generation())
        produce(server.bootstrap, 60, start=60)
        end = [60 // PARTITIONS * 2] * PARTITIONS

        def committed_all() -> bool:
            v = server.call(lambda c: c.coordinator.group("g"))
            got = {} if v is None else {(t, p): o for t, p, o in v.offsets}
            return all(got.get((TOPIC, p)) == end[p] for p in range(PARTITIONS))

        wait_for(lambda: len(rec.consumed) >= 120 and committed_all(), 60, "all 120 records consumed and committed")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        view = server.call(lambda c: c.coordinator.group("g"))
        committed = {} if view is None else {(t, p): o for t, p, o in view.offsets}
        end_offsets = server.call(lambda c: [log.end_offset for log in c.log.logs[TOPIC]])
        stats = server.call(lambda c: dict(c.stats))
        script = cluster.recorder.script_text() if cluster.recorder else ""
        transcript = cluster.recorder.transcript_text() if cluster.recorder else ""
        server.stop()
    return Outcome(rec, generations, end_offsets, committed, script, transcript, stats)


def run_consumer_protocol_scenario(failover: bool = True) -> Outcome:
    """Three confluent-kafka consumers with ``group.protocol=consumer`` (KIP-848) against
    ``groupspec serve --protocol consumer``: they join, consume 60 records, commit, go through a
    failover (the coordinator moves to node 1; the groups move with their state), consume 60 more
    and commit again. ``generations`` holds the group epoch at each stage; ``script`` and
    ``transcript`` are the session in the consumer-protocol script format."""
    from groupspec.serve import Cluster, Server

    cluster = Cluster(topics={TOPIC: PARTITIONS}, protocol="consumer", record_group="g",
                      consumer_heartbeat_interval_ms=300, consumer_session_timeout_ms=10_000)
    server = Server(cluster).start()
    rec = Recorder()
    rec.events.append({"ts_ms": 0, "group": "g", "member": "-", "event": "topic", "topic": TOPIC, "partitions": PARTITIONS})
    stop = threading.Event()
    epochs: list[int] = []

    def describe() -> dict[str, Any]:
        return server.call(lambda c: c.consumer.groups["g"].describe() if "g" in c.consumer.groups else {})

    def stable(n: int = 3) -> bool:
        d = describe()
        members = d.get("members", {})
        return len(members) == n and all(m["state"] == "stable" and m["epoch"] == d["assignment_epoch"]
                                         and sum(len(ps) for ps in m["assigned"].values()) > 0
                                         for m in members.values())

    def committed() -> dict[tuple[str, int], int]:
        return server.call(lambda c: {tp: off for tp, (_m, _e, off) in c.consumer.groups["g"].commits.items()}
                           if "g" in c.consumer.groups else {})

    threads = []
    try:
        produce(server.bootstrap, 60)
        for i in range(3):
            t = threading.Thread(target=confluent_consumer, args=(f"confluent-next-{i}", server.bootstrap, rec, stop),
                                 kwargs={"group_protocol": "consumer"}, daemon=True)
            t.start()
            threads.append(t)
        wait_for(lambda: len(rec.consumed) >= 60 and stable(), 60, "three members consuming the first 60 records")
        epochs.append(describe()["group_epoch"])
        if failover:
            server.failover()
            # the group moves unchanged; wait until every member heartbeats to node 1 (a commit sent to
            # node 0 meanwhile gets NOT_COORDINATOR, and librdkafka may then loop: docs/serve.md)
            def moved() -> bool:
                members = list(describe()["members"])
                return stable() and server.call(lambda c: all(c.consumer.last_node.get(m) == 1 for m in members))

            wait_for(moved, 60, "every member heartbeating to node 1")
            epochs.append(describe()["group_epoch"])
        produce(server.bootstrap, 60, start=60)
        end = 60 // PARTITIONS * 2
        wait_for(lambda: len(rec.consumed) >= 120 and all(committed().get((TOPIC, p)) == end for p in range(PARTITIONS)),
                 60, "all 120 records consumed and committed")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        final = committed()
        end_offsets = server.call(lambda c: [log.end_offset for log in c.log.logs[TOPIC]])
        stats = server.call(lambda c: dict(c.stats))
        script = server.call(lambda c: c.consumer.script_text())
        transcript = server.call(lambda c: c.consumer.transcript_text())
        server.stop()
    return Outcome(rec, epochs, end_offsets, final, script, transcript, stats)


def ownership_overlaps(events: list[dict[str, Any]]) -> list[str]:
    """Listener-level exclusive ownership: a partition assigned to a member while another still owns it."""
    owner: dict[tuple[str, int], str] = {}
    owned: dict[str, set[tuple[str, int]]] = {}
    bad = []
    for e in sorted(events, key=lambda e: e["ts_ms"]):
        m = e["member"]
        mine = owned.setdefault(m, set())
        parts = {(t, p) for t, p in e["partitions"]} if e["event"] in ("assigned", "revoked", "lost") else set()
        if e["event"] == "assigned":
            for tp in parts:
                other = owner.get(tp)
                if other is not None and other != m:
                    bad.append(f"{tp} assigned to {m} at {e['ts_ms']} while {other} owns it")
                owner[tp] = m
            mine |= parts
        elif e["event"] in ("revoked", "lost"):
            for tp in parts:
                if owner.get(tp) == m:
                    del owner[tp]
            mine -= parts
        elif e["event"] == "left":
            for tp in mine:
                if owner.get(tp) == m:
                    del owner[tp]
            mine.clear()
    return bad
