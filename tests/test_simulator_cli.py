"""`groupspec simulate`: the narrated timeline, totals, JSON, trace files and one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from groupspec.cli import cli, main


def run(*args: str) -> str:
    res = CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_cooperative_join_narration() -> None:
    out = run("new-consumer-joins", "--protocol", "cooperative")
    assert "seed 0" in out
    assert "c1 revokes t-4 (onPartitionsRevoked; two-phase revoke/assign, round 1: only what moves)" in out
    assert "c2 revokes t-5 (onPartitionsRevoked; two-phase revoke/assign, round 1: only what moves)" in out
    assert "c3 gains t-4,t-5 (generation 3, onPartitionsAssigned)" in out
    assert "owners: c1: t-0,t-2 | c2: t-1,t-3 | c3: t-4,t-5" in out
    assert "partitions revoked or lost" in out and "partition-seconds without an owner" in out


def test_narration_uses_the_historys_words() -> None:
    eager = run("new-consumer-joins", "--protocol", "eager")
    assert "(onPartitionsRevoked; stop-the-world: everything, before rejoining)" in eager
    connect = run("connect-worker-bounces")
    assert "holds back: scheduled rebalance delay, 10.0s left" in connect


def test_json_totals_show_the_difference() -> None:
    coop = json.loads(run("new-consumer-joins", "--protocol", "cooperative", "--json"))
    eager = json.loads(run("new-consumer-joins", "--protocol", "eager", "--json"))
    assert coop["totals"]["partitions_revoked"] == 2 and eager["totals"]["partitions_revoked"] == 6
    assert coop["totals"]["partitions_paused"] == 2 and eager["totals"]["partitions_paused"] == 6
    assert coop["seed"] == 0 and {"t-0", "t-5"} <= set(coop["unowned_ms"])
    assert coop["unowned_ms"]["t-0"] == 0 and eager["unowned_ms"]["t-0"] > 0


def test_trace_and_transcript_files_are_replayable(tmp_path: Path) -> None:
    files = []
    for i in range(2):
        t, s = tmp_path / f"a{i}.jsonl", tmp_path / f"s{i}.jsonl"
        run("consumer-bounces", "--seed", "9", "--delay", "1-40", "--loss", "0.01", "--trace", str(t), "--transcript", str(s))
        files.append((t.read_bytes(), s.read_bytes()))
    assert files[0] == files[1]
    first = json.loads(files[0][0].splitlines()[0])
    assert first == {"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 6}


def test_list() -> None:
    out = run("--list")
    for name in ("new-consumer-joins", "consumer-bounces", "consumer-leaves-permanently", "static-member-restart",
                 "rolling-restart", "eager-stop-the-world", "upgrade-eager-to-cooperative",
                 "scale-out", "zombie", "churn", "online-upgrade", "upgrade-mid-round"):  # every family
        assert name in out
    assert "[range] -> [range, cooperative-sticky]" in out  # summaries are text, not rich markup
    rows = json.loads(run("--list", "--json"))
    assert {r["default_protocol"] for r in rows} >= {"eager", "cooperative", "consumer", "classic-to-consumer"}


def test_a_scenario_of_another_family_needs_no_protocol_flag() -> None:
    out = run("scale-out")
    assert "--protocol consumer" in out and "no violation" in out
    assert "online-upgrade --protocol classic-to-consumer" in run("online-upgrade")


def test_exit_status_follows_the_verdict() -> None:
    res = CliRunner().invoke(cli, ["simulate", "new-consumer-joins", "--mutants", "ignore_owned"])
    old_name = CliRunner().invoke(cli, ["simulate", "new-consumer-joins", "--faults", "ignore_owned"])
    assert old_name.exit_code == 1 and old_name.output == res.output
    assert "--mutants ignore_owned" in res.output  # the replay line
    assert res.exit_code == 1 and res.output.rstrip().endswith("VIOLATION: a partition had two owners at 2 instant(s)")
    # the story whose point is Kafka's own double ownership is as expected, and says so
    out = run("static-member-left-behind")
    assert "as in Kafka (docs/specification.md): two owners" in out
    assert json.loads(run("new-consumer-joins", "--json"))["verdict"] == "no violation: no partition had two owners"


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["no-such"], "unknown scenario 'no-such'"),
        ([], "missing SCENARIO"),
        (["new-consumer-joins", "--members", "1"], "at least 2 members"),
        (["new-consumer-joins", "--protocol", "cooperative", "--assignor", "range"], "does not support the cooperative"),
        (["new-consumer-joins", "--assignor", "best"], "unknown assignor 'best'"),
        (["new-consumer-joins", "--delay", "soon"], "--delay"),
        (["new-consumer-joins", "--loss", "1.5"], "loss probability"),
        (["new-consumer-joins", "--mutants", "bogus"], "unknown fault(s) bogus"),
        (["new-consumer-joins", "--protocol", "lazy"], "--protocol"),
        # options the KIP-848 and migration drivers do not take were silently ignored (exit 0, no file written)
        (["scale-out", "--transcript", "never-written.jsonl"], "--transcript: the consumer scenarios record no"),
        (["zombie", "--failover-at", "100"], "--failover-at: the consumer scenarios have no standby"),
        (["online-upgrade", "--transcript", "never-written.jsonl"], "--transcript: the classic-to-consumer scenarios"),
        (["online-upgrade", "--failover-at", "100"], "--failover-at: the classic-to-consumer scenarios"),
        (["online-upgrade", "--mutants", "bogus"], "--mutants/--faults: the classic-to-consumer scenarios take no"),
        (["upgrade-mid-round", "--assignor", "range"], "--assignor: the classic-to-consumer scenarios run their own"),
        # one file for both outputs: the transcript overwrote the trace
        (["new-consumer-joins", "--trace", "same.jsonl", "--transcript", "./same.jsonl"], "name the same file"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], fragment: str, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(["simulate", *args])
    assert e.value.code == 2
    cap = capsys.readouterr()
    assert cap.out == "" and list(tmp_path.iterdir()) == []
    assert fragment in cap.err and cap.err.count("\n") == 1 and "Traceback" not in cap.err


def test_narrative_uses_the_historys_words():
    """The report ends in the vocabulary of docs/learn/: stop-the-world, two-phase revoke/assign, no rebalance."""
    from click.testing import CliRunner

    from groupspec.cli import cli

    words = {("new-consumer-joins", "eager"): "stop-the-world", ("new-consumer-joins", "cooperative"): "two-phase revoke/assign",
             ("static-member-restart", "static"): "no rebalance", ("connect-worker-leaves", "connect"): "scheduled rebalance delay"}
    for (scenario, protocol), word in words.items():
        r = CliRunner().invoke(cli, ["simulate", scenario, "--protocol", protocol])
        assert r.exit_code == 0 and word in r.output, (scenario, protocol, r.output[-400:])
