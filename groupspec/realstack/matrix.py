"""The matrix: every scenario for every client (and protocol) × coordinator, one run after another.

A run that cannot start (a coordinator that does not come up, a client that does not support the
protocol) is a row with ``error`` rather than a failure of the whole matrix. ``OUT/matrix.json``
holds every row (rows of an earlier matrix in the same directory are kept unless run again; scenario, client, protocol, coordinator, verdict, violated properties, trace and
verdict paths, notes such as errors the client reported).
"""
from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .coordinators import CoordinatorError
from .harness import CLIENTS, HarnessError, run, supported
from .scenarios import SCENARIOS

__all__ = ["default_cells", "run_matrix"]


def default_cells() -> list[tuple[str, str | None]]:
    """Each client with each scenario's default protocol, and confluent-kafka and Apache Kafka's Java consumer also
    cooperative-sticky and group.protocol=consumer (KIP-848)."""
    cells: list[tuple[str, str | None]] = [(c, None) for c in CLIENTS]
    return (cells + [(c, p) for c in ("confluent-kafka", "java") for p in ("cooperative", "consumer")]
            + [("franz-go", "cooperative"), ("sarama", "cooperative")])


def run_matrix(scenarios: list[str], clients: list[tuple[str, str | None]], coordinators: list[str], out_dir: str,
               progress: Callable[[str], None] | None = None, done: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    out = Path(out_dir)
    # rows of earlier matrices in the same directory are kept unless this one runs them again
    try:
        earlier = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = []
    with contextlib.ExitStack() as stack:
        if "apache-kafka" in coordinators:  # one broker for the whole matrix (each run has a group of its own)
            from .apache_kafka import shared_broker

            if progress:
                progress("starting apache-kafka (once for the matrix)")
            try:
                stack.enter_context(shared_broker())
            except CoordinatorError:
                pass  # every apache-kafka row then says why it cannot run
        _cells(scenarios, clients, coordinators, out_dir, progress, done, rows, earlier)
    return rows


def _cells(scenarios: list[str], clients: list[tuple[str, str | None]], coordinators: list[str], out_dir: str,
           progress: Callable[[str], None] | None, done: Callable[[], None] | None, rows: list[dict[str, Any]],
           earlier: list[Any]) -> None:
    out = Path(out_dir)

    def key(r: dict[str, Any]) -> tuple[str, str, str, str]:
        return (r.get("scenario", ""), r.get("client", ""), r.get("protocol", ""), r.get("coordinator", ""))

    cells: set[tuple[str, str, str, str]] = set()
    for sc in scenarios:
        for client, proto in clients:
            for coord in coordinators:
                protocol = proto or SCENARIOS[sc].default_protocol
                if proto in ("cooperative", "consumer") and SCENARIOS[sc].default_protocol.startswith("static"):
                    if done:  # the static story keeps its static members: the default cell runs it
                        done()
                    continue
                if (sc, client, protocol, coord) in cells:
                    # a scenario whose own protocol is one a client is also listed with (online-upgrade is
                    # cooperative, and confluent-kafka is listed plain and :cooperative): one run, not two
                    if done:
                        done()
                    continue
                cells.add((sc, client, protocol, coord))
                if progress:
                    progress(f"{sc} {client}:{protocol} × {coord}")
                why = supported(client, protocol)
                row: dict[str, Any]
                if why:
                    row = {"scenario": sc, "client": client, "protocol": protocol, "coordinator": coord,
                           "ok": None, "error": why}
                else:
                    try:
                        row = run(sc, client, coord, protocol, out_dir).summary()
                    except HarnessError as e:
                        row = {"scenario": sc, "client": client, "protocol": protocol, "coordinator": coord,
                               "ok": None, "error": str(e)}
                rows.append(row)
                mine = {key(r) for r in rows}
                merged = [r for r in earlier if isinstance(r, dict) and key(r) not in mine] + rows
                tmp = out / ".matrix.json.tmp"
                tmp.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
                os.replace(tmp, out / "matrix.json")
                if done:
                    done()
