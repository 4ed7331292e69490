"""Helper process: holds librdkafka's built-in mock cluster open and prints its bootstrap address.

Run as ``python -m groupspec.realstack.mock_cluster [BROKERS]``. It creates a confluent-kafka
producer with ``test.mock.num.brokers``, which makes librdkafka start an in-process mock cluster
on a loopback port; the address is read from librdkafka's own log line ("Mock cluster enabled ...
replaced with HOST:PORT") and printed as ``BOOTSTRAP HOST:PORT`` on stdout. The cluster lives as
long as this process: the harness stops it by signalling the process group.
"""
from __future__ import annotations

import logging
import re
import signal
import sys
import time


def main() -> int:
    try:
        from confluent_kafka import Producer
    except ImportError as e:  # said in one line; the harness reports it as it is
        print(f"ERROR librdkafka's mock cluster needs the Python package confluent-kafka, which is not installed "
              f"({e}); install it with: pip install confluent-kafka", flush=True)
        return 1

    brokers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    found: list[str] = []

    class _Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            m = re.search(r"replaced with (\S+)", record.getMessage())
            if m:
                found.append(m.group(1))

    log = logging.getLogger("groupspec.realstack.mock")
    log.addHandler(_Grab())
    log.setLevel(logging.INFO)
    producer = Producer({"test.mock.num.brokers": brokers, "bootstrap.servers": "unused:1", "logger": log})
    deadline = time.monotonic() + 20
    while not found and time.monotonic() < deadline:
        producer.poll(0.1)
    if not found:
        print("ERROR no mock cluster address in librdkafka's log within 20 s", flush=True)
        return 1
    print(f"BOOTSTRAP {found[0].split(',')[0]}", flush=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        producer.poll(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
