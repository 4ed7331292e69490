"""sarama (github.com/IBM/sarama, the Go client most Go services run, from the Go module proxy) as a real-stack
client: its worker (groupspec/realstack/sarama/main.go, built once with the machine's Go, as franz-go's) records the
trace format, and its runs are checked like every other client's. The classic protocol only: eager (range),
cooperative (sarama's cooperative-sticky, KIP-429, sarama >= 1.61) and static (Consumer.Group.InstanceId); the
consumer protocol is refused in one line. Run against groupspec serve here (no broker start); against Apache Kafka
with `groupspec realstack run ... --client sarama --coordinator apache-kafka`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.realstack.harness import HarnessError, run, supported


def _lines(result) -> list[dict]:
    return [json.loads(x) for x in Path(result.trace_path).read_text().splitlines()]


@pytest.mark.parametrize("protocol", ["eager", "static"])
def test_sarama_pair_joins_holds(tmp_path: Path, protocol: str):
    result = run("pair-joins", "sarama", "groupspec", protocol=protocol, out_dir=str(tmp_path))
    assert result.ok and result.judged, result.summary()
    lines = _lines(result)
    assigned = [ln for ln in lines if ln.get("event") == "assigned"]
    assert {ln["member"] for ln in assigned} == {"c1", "c2"}
    assert all(ln["member_id"].startswith(ln["member"] + "-") and ln["generation"] >= 1 for ln in assigned)
    owned = {tuple(p) for ln in lines if ln.get("event") == "snapshot" for p in ln["partitions"]}
    assert owned == {("t", p) for p in range(6)}
    joined = [ln for ln in lines if ln.get("event") == "joined" and "member" in ln and "instance_id" in ln]
    assert [ln["instance_id"] for ln in joined] == (["c1-static", "c2-static"] if protocol == "static" else [])


def test_sarama_cooperative_revokes_only_what_moves(tmp_path: Path):
    """A consumer joins a cooperative group: the first member gives up only the partitions that move (one revoked
    line each, while it keeps consuming the others), the newcomer gets them in a later generation."""
    result = run("new-consumer-joins", "sarama", "groupspec", protocol="cooperative", out_dir=str(tmp_path))
    assert result.ok and result.judged, result.summary()
    lines = [ln for ln in _lines(result) if ln.get("member") == "c1" and ln.get("event") in ("assigned", "revoked")]
    revoked_first = [tuple(p) for ln in lines if ln["event"] == "revoked" and ln["generation"] == 2 for p in ln["partitions"]]
    assert 0 < len(revoked_first) < 6, lines  # not everything: cooperative, not eager
    assert all(ln["protocol"] == "cooperative" for ln in lines)


def test_sarama_refuses_the_consumer_protocol():
    assert "KIP-848" in (supported("sarama", "consumer") or "")
    assert "KIP-848" in (supported("sarama", "consumer-static") or "")
    assert supported("sarama", "cooperative") is None and supported("sarama", "static") is None


def test_no_go_is_one_line(tmp_path: Path, monkeypatch):
    import groupspec.realstack.franzgo as fg

    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))  # nothing built here
    monkeypatch.setattr(fg.shutil, "which", lambda name: None)
    monkeypatch.setattr(fg, "Path", lambda p: Path("/nonexistent") if p == "/usr/local/go/bin/go" else Path(p))
    with pytest.raises(HarnessError, match=r"^sarama: the worker is built with Go, and no go is on PATH"):
        run("pair-joins", "sarama", "groupspec", out_dir=str(tmp_path))
