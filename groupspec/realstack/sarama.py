"""The sarama worker (``sarama/main.go``: github.com/IBM/sarama, the Go client most Go services run) built once per
source version into the cache (``~/.cache/groupspec/sarama-<digest>/``) with the machine's Go, as the franz-go worker
is (:func:`groupspec.realstack.franzgo.go_worker_binary`); the modules come from the Go module proxy on the first
build (``go.mod``/``go.sum`` pin them). ``python -m groupspec.realstack.sarama`` builds it ahead of time."""
from __future__ import annotations

import sys
from pathlib import Path

from .franzgo import go_worker_binary

__all__ = ["sarama_binary", "SaramaError"]

SOURCES = Path(__file__).with_name("sarama")


class SaramaError(RuntimeError):
    """Go is missing or the worker does not build (the message is one line)."""


def sarama_binary() -> Path:
    """The built worker, building it first if this source version has not been built here."""
    return go_worker_binary("sarama", SOURCES, "sarama", SaramaError)


if __name__ == "__main__":
    try:
        print(sarama_binary())
    except SaramaError as e:
        print(f"groupspec: error: {e}", file=sys.stderr)
        sys.exit(2)
