"""aiokafka: a rebalance listener that writes the groupspec trace format (JSON Lines).

Paste this file next to your consumer. One file per consumer process; `groupspec trace check`
reads each file as one trace, so put the files of one group together first
(`cat traces/*.jsonl > group.jsonl`): lines are ordered by `ts_ms` (wall-clock milliseconds).
aiokafka's rebalances are eager: `assigned` lists the member's whole new assignment.
"""
import json
import time

from aiokafka import ConsumerRebalanceListener


class TraceWriter:
    """Appends one JSON line per event to ``path``; ``member`` is a stable name for this process."""

    def __init__(self, path, member, group=None):
        self.member, self.group = member, group
        self._f = open(path, "a", encoding="utf-8")

    def write(self, event, **fields):
        line = {"ts_ms": int(time.time() * 1000), "member": self.member, "event": event, **fields}
        if self.group is not None:
            line["group"] = self.group
        self._f.write(json.dumps(line) + "\n")
        self._f.flush()

    def close(self):
        self.write("left")
        self._f.close()


class TraceListener(ConsumerRebalanceListener):
    """Pass as ``consumer.subscribe(topics, listener=TraceListener(consumer, trace))``."""

    def __init__(self, consumer, trace):
        self.consumer, self.trace, self.announced = consumer, trace, set()
        trace.write("joined")

    @staticmethod
    def _parts(tps):
        return sorted([tp.topic, tp.partition] for tp in tps)

    async def on_partitions_assigned(self, assigned):
        for topic in sorted({tp.topic for tp in assigned} - self.announced):  # partition counts, for completeness
            known = self.consumer.partitions_for_topic(topic)
            if known:
                self.trace.write("topic", topic=topic, partitions=len(known))
                self.announced.add(topic)
        self.trace.write("assigned", partitions=self._parts(assigned), protocol="eager")

    async def on_partitions_revoked(self, revoked):
        self.trace.write("revoked", partitions=self._parts(revoked), protocol="eager")


# Usage (inside a coroutine):
#   consumer = AIOKafkaConsumer(bootstrap_servers="localhost:9092", group_id="g", ...)
#   trace = TraceWriter(f"traces/{name}.jsonl", member=name, group="g")
#   consumer.subscribe(["t"], listener=TraceListener(consumer, trace))
#   await consumer.start()
#   try:
#       while running:
#           batch = await consumer.getmany(timeout_ms=1000)
#           ...
#   finally:
#       await consumer.stop()   # leaves the group
#       trace.close()           # writes "left"
