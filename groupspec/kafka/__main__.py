"""``python -m groupspec.kafka fetch``: resolve the pinned Apache Kafka jars and compile the Java programs (once).

``make setup`` runs it. Exit 0 when ready, 2 with one line saying what the machine lacks.
"""
from __future__ import annotations

import sys
import time

from .jars import KAFKA_VERSION, KafkaSetupError, compiled_classes, jars_dir


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in (["fetch"], ["path"]):
        print("usage: python -m groupspec.kafka fetch|path", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        classes = compiled_classes(fetch=args == ["fetch"], log=lambda m: print(f"groupspec.kafka: {m}", flush=True))
    except KafkaSetupError as exc:
        print(f"groupspec: error: {exc}", file=sys.stderr)
        return 2
    if args == ["path"]:
        print(f"{classes}:{jars_dir()}/*")
    else:
        print(f"groupspec.kafka: Apache Kafka {KAFKA_VERSION} ready ({jars_dir()}; {time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
