"""One sweep point measured (pipeline/runs.py) and the report's claims on rows computed without Spark."""
from __future__ import annotations

from pathlib import Path

from groupspec.pipeline.grid import parse_grid, preset
from groupspec.pipeline.runs import METRICS, ROW_SCHEMA, _optimum, run_point
from groupspec.pipeline.sweep import frame_rows, read_rows, rows_locally, write_rows


def _rows(doc: dict) -> list[dict]:
    return [run_point(p, "t") for p in parse_grid(doc, "t").points]


def test_a_point_gives_the_same_row_every_time() -> None:
    p = preset("smoke").points[0]
    assert run_point(p, "s") == run_point(p, "s")
    assert set(run_point(p, "s")) == {n for n, _ in ROW_SCHEMA}


def test_static_members_do_not_rebalance_on_a_bounce_within_the_session_timeout() -> None:
    rows = _rows({"protocol": ["eager", "static"], "churn": "bounce", "bounce_ms": [4000, 20000]})
    by = {(r["protocol"], r["bounce_ms"]): r["rebalances"] for r in rows}
    assert by[("static", 4000)] == 0
    assert by[("eager", 4000)] == 2  # it leaves, it comes back
    assert by[("static", 20000)] > 0  # back after the session timeout: removed, then rejoins


def test_sticky_moves_fewer_partitions_than_range_when_a_member_leaves() -> None:
    rows = _rows({"protocol": "eager", "assignor": ["range", "sticky"], "churn": "leave", "members": 6,
                  "partitions": 24})
    by = {r["assignor"]: r for r in rows}
    assert by["sticky"]["partitions_moved"] == by["sticky"]["moves_optimum"]
    assert by["range"]["partitions_moved"] > by["sticky"]["partitions_moved"]


def test_connect_delay_keeps_a_bounced_workers_tasks_in_place() -> None:
    rows = _rows({"protocol": "connect", "churn": "bounce", "connect_delay_ms": [0, 60000], "partitions": 6})
    by = {r["connect_delay_ms"]: r for r in rows}
    assert by[60000]["partitions_moved"] < by[0]["partitions_moved"]


def test_zookeeper_herd_grows_with_the_group() -> None:
    rows = _rows({"protocol": "zookeeper", "churn": "join", "members": [2, 8], "partitions": 16})
    by = {r["members"]: r for r in rows}
    assert by[2]["notifications"] == 2 and by[8]["notifications"] == 8
    assert by[8]["rebalance_attempts"] > by[2]["rebalance_attempts"]


def test_optimum_moves() -> None:
    parts = [("t", i) for i in range(6)]
    before = {tp: "a" if tp[1] < 3 else "b" for tp in parts}
    assert _optimum(before, ["a", "b"], parts) == 0
    assert _optimum(before, ["a", "b", "c"], parts) == 2
    assert _optimum(before, ["a"], parts) == 3


def test_rows_round_trip_through_parquet_and_the_report_states_numbers(tmp_path: Path) -> None:
    from groupspec.pipeline.report import claims, write_report

    g = preset("smoke")
    rows = rows_locally(g)
    write_rows(rows, tmp_path / "rows")
    assert sorted(p.name for p in (tmp_path / "rows").iterdir()) == ["protocol=cooperative", "protocol=eager",
                                                                      "protocol=static", "protocol=zookeeper"]
    df = read_rows(tmp_path / "rows")
    assert frame_rows(df) == rows  # every column, every value, through Parquet and back
    cs = {c["id"]: c for c in claims(df)}
    assert cs["static-bounce"]["figures"]["static_within"] == 0
    assert cs["static-bounce"]["figures"]["eager_within"] == 2
    assert cs["herd"]["figures"]["by_members"][-1]["notifications"] == 4
    write_report(df, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "static members 0.0 rebalances per bounce, dynamic (eager) members 2.0" in text
    assert (tmp_path / "plots" / "herd.png").stat().st_size > 1000
    assert set(METRICS) <= set(df.columns)
