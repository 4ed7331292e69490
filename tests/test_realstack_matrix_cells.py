"""The real-stack matrix runs each (scenario, client, protocol, coordinator) cell once.

online-upgrade's own protocol is cooperative, and the default client list names confluent-kafka both plain (the
scenario's protocol) and ``:cooperative``: the 2026-11-29 matrix ran 18 such cells twice (183 rows for 165 cells).
"""
from __future__ import annotations

from typing import Any

import groupspec.realstack.matrix as matrix


class _Run:
    def __init__(self, sc: str, client: str, coord: str, protocol: str) -> None:
        self.row = {"scenario": sc, "client": client, "coordinator": coord, "protocol": protocol, "ok": True}

    def summary(self) -> dict[str, Any]:
        return self.row


def test_a_cell_named_twice_runs_once(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ran: list[tuple[str, str, str, str]] = []

    def fake_run(sc: str, client: str, coord: str, protocol: str, out_dir: str) -> _Run:
        ran.append((sc, client, protocol, coord))
        return _Run(sc, client, coord, protocol)

    monkeypatch.setattr(matrix, "run", fake_run)
    monkeypatch.setattr(matrix, "supported", lambda client, protocol: None)
    ticks: list[int] = []
    rows = matrix.run_matrix(["online-upgrade", "new-consumer-joins"], [("confluent-kafka", None),
                             ("confluent-kafka", "cooperative")], ["groupspec"], str(tmp_path),
                             done=lambda: ticks.append(1))
    assert sorted(ran) == sorted(set(ran)), ran
    assert ("online-upgrade", "confluent-kafka", "cooperative", "groupspec") in ran
    assert ("new-consumer-joins", "confluent-kafka", "cooperative", "groupspec") in ran
    assert len(rows) == len(ran) == 3          # online-upgrade once; new-consumer-joins eager and cooperative
    assert len(ticks) == 4                     # every cell of the grid is counted as done, the skipped one too
