"""franz-go (the pure-Go Kafka client, github.com/twmb/franz-go from the Go module proxy) as a real-stack client:
its worker (groupspec/realstack/franzgo/main.go, built once with the machine's Go) records the trace format, and
its runs are checked like every other client's. Run against groupspec serve here (no broker start); against
Apache Kafka with `groupspec realstack run ... --client franz-go --coordinator apache-kafka`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.realstack.harness import HarnessError, run, supported


@pytest.mark.parametrize("protocol", ["eager", "cooperative"])
def test_franz_go_pair_joins_holds(tmp_path: Path, protocol: str):
    result = run("pair-joins", "franz-go", "groupspec", protocol=protocol, out_dir=str(tmp_path))
    assert result.ok and result.judged, result.summary()
    lines = [json.loads(x) for x in Path(result.trace_path).read_text().splitlines()]
    assigned = [ln for ln in lines if ln.get("event") == "assigned"]
    assert {ln["member"] for ln in assigned} == {"c1", "c2"}
    assert all(ln["member_id"].startswith(ln["member"] + "-") and ln["generation"] >= 1 for ln in assigned)
    owned = {tuple(p) for ln in lines if ln.get("event") == "snapshot" for p in ln["partitions"]}
    assert owned == {("t", p) for p in range(6)}


def test_franz_go_refuses_the_consumer_protocol():
    assert "KIP-848" in (supported("franz-go", "consumer") or "")
    assert supported("franz-go", "static") is None


def test_no_go_is_one_line(tmp_path: Path, monkeypatch):
    import groupspec.realstack.franzgo as fg

    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))  # nothing built here
    monkeypatch.setattr(fg.shutil, "which", lambda name: None)
    monkeypatch.setattr(fg, "Path", lambda p: Path("/nonexistent") if p == "/usr/local/go/bin/go" else Path(p))
    with pytest.raises(HarnessError, match=r"^franz-go: the worker is built with Go, and no go is on PATH"):
        run("pair-joins", "franz-go", "groupspec", out_dir=str(tmp_path))
