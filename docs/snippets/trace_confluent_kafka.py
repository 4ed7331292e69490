"""confluent-kafka: a rebalance listener that writes the groupspec trace format (JSON Lines).

Paste this file next to your consumer. One file per consumer process; `groupspec trace check`
reads each file as one trace, so put the files of one group together first
(`cat traces/*.jsonl > group.jsonl`): lines are ordered by `ts_ms` (wall-clock milliseconds).
"""
import json
import threading
import time


class TraceWriter:
    """Appends one JSON line per event to ``path``; ``member`` is a stable name for this process."""

    def __init__(self, path, member, group=None):
        self.member, self.group = member, group
        self._f = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event, **fields):
        line = {"ts_ms": int(time.time() * 1000), "member": self.member, "event": event, **fields}
        if self.group is not None:
            line["group"] = self.group
        with self._lock:
            self._f.write(json.dumps(line) + "\n")
            self._f.flush()

    def close(self):
        self.write("left")
        self._f.close()


def subscribe_with_trace(consumer, topics, trace, protocol="eager"):
    """``consumer.subscribe(topics)`` with callbacks that write assigned/revoked/lost to ``trace``.

    ``protocol`` says how to read ``assigned``: "eager" for the default ``partition.assignment.strategy``
    (range, roundrobin: the whole new assignment), "cooperative" for ``cooperative-sticky`` (only what
    was added), "consumer" for ``group.protocol=consumer`` (KIP-848: only what was added).
    """
    announced = set()

    def parts(tps):
        return sorted([tp.topic, tp.partition] for tp in tps)

    def on_assign(c, tps):
        for topic in sorted({tp.topic for tp in tps} - announced):  # partition counts, for completeness
            meta = c.list_topics(topic, timeout=5).topics.get(topic)
            if meta is not None and meta.error is None:
                trace.write("topic", topic=topic, partitions=len(meta.partitions))
                announced.add(topic)
        trace.write("assigned", partitions=parts(tps), protocol=protocol)

    def on_revoke(c, tps):
        trace.write("revoked", partitions=parts(tps), protocol=protocol)

    def on_lost(c, tps):
        trace.write("lost", partitions=parts(tps), protocol=protocol)

    trace.write("joined")
    consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)


# Usage:
#   consumer = Consumer({"bootstrap.servers": "localhost:9092", "group.id": "g", ...})
#   trace = TraceWriter(f"traces/{name}.jsonl", member=name, group="g")
#   subscribe_with_trace(consumer, ["t"], trace)
#   try:
#       while running:
#           msg = consumer.poll(1.0)
#           ...
#   finally:
#       consumer.close()   # runs the last revoke
#       trace.close()      # writes "left"
