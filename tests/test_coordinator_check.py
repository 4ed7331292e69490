"""`groupspec coordinator check` on sessions of real clients served by `groupspec serve` (issue #31):
a session with two groups, and one in which a consumer was killed (SIGKILL: no LeaveGroup; the
coordinator removes it when its session expires).

Recorded with `groupspec serve --brokers 1 --partitions t=6 --initial-rebalance-delay-ms 500
--transcript DIR --duration 40` and kafka-python consumers, each its own process (session.timeout.ms
6000, a commit of its positions every 2 s): `two-groups` — a1, a2 in group g1 and b1, b2 in g2 (the
second of each 2 s after the first), closing at 20-25 s; `killed-consumer` — c1, c2, c3 in group g, c3
SIGKILLed at 10 s, the others closing at 30 s.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from groupspec.serve.audit import check_session, transcript_events

DATA = pathlib.Path(__file__).resolve().parent / "serve_data"
EXE = os.path.join(os.path.dirname(sys.executable), "groupspec")


def _session(name: str) -> tuple[str, str]:
    return (DATA / f"{name}.script.jsonl").read_text(), (DATA / f"{name}.transcript.jsonl").read_text()


def test_a_session_with_two_groups_holds_in_each_group():
    script, transcript = _session("kafka-python-two-groups")
    r = check_session(script, transcript)
    assert r.replay_ok, r.first_difference
    groups = r.trace.to_dict()["groups"]
    assert sorted(g["group"] for g in groups) == ["g1", "g2"]
    for g in groups:
        assert all(p["verdict"] == "held" for p in g["properties"]), json.dumps(g)[:2000]
        assert g["against_model"]["explained"], g["against_model"]
        assert len(g["members"]) == 2
    assert r.ok
    # each member's events carry its own group
    events = transcript_events(script, transcript)
    by_member = {}
    for e in events:
        by_member.setdefault(e["member"], set()).add(e["group"])
    assert all(len(gs) == 1 for gs in by_member.values()) and {g for gs in by_member.values() for g in gs} == {"g1", "g2"}


def test_a_session_with_a_killed_consumer_holds_against_the_model():
    script, transcript = _session("kafka-python-killed-consumer")
    r = check_session(script, transcript)
    assert r.replay_ok, r.first_difference
    [g] = r.trace.to_dict()["groups"]
    assert all(p["verdict"] == "held" for p in g["properties"]), json.dumps(g)[:2000]
    am = g["against_model"]
    assert am["explained"], am
    assert any(e["event"] == "removed" for e in r.events)  # the killed member, dropped at its session's expiry
    assert any(k.startswith("SessionExpired") for k in am["steps"])
    assert r.ok


def test_giving_away_a_live_members_partition_is_still_unexplained():
    """The `removed` step explains only partitions of a member the coordinator had removed: the same
    session with the removal line dropped from the derived trace is not explained."""
    from groupspec.trace import check_events

    script, transcript = _session("kafka-python-killed-consumer")
    events = [e for e in transcript_events(script, transcript) if e["event"] != "removed"]
    [g] = check_events(events, against_model=True).to_dict()["groups"]
    assert not g["against_model"]["explained"]
    assert "never shows" in g["against_model"]["first_unexplained"]["reason"]


@pytest.mark.parametrize("name", ["kafka-python-two-groups", "kafka-python-killed-consumer"])
def test_the_cli_holds(name):
    out = subprocess.run([EXE, "coordinator", "check", "--json", str(DATA / f"{name}.script.jsonl"),
                          str(DATA / f"{name}.transcript.jsonl")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    assert json.loads(out.stdout)["ok"] is True


@pytest.mark.parametrize("script, transcript, needle", [
    ("", "", "script.jsonl: empty script"),                      # was exit 0: "replays to every line", held
    ("# only a comment\n\n", "", "script.jsonl: empty script"),
    (None, "", "transcript.jsonl: empty transcript"),            # was exit 1: the replay "differs" at line 1
])
def test_an_empty_script_or_transcript_is_refused_in_one_line(tmp_path, script, transcript, needle):
    """Nothing to check is never "held" (as `coordinator replay` and `trace check` refuse an empty input)."""
    s, t = tmp_path / "script.jsonl", tmp_path / "transcript.jsonl"
    s.write_text(_session("kafka-python-two-groups")[0] if script is None else script)
    t.write_text(transcript)
    out = subprocess.run([EXE, "coordinator", "check", "--json", str(s), str(t)], capture_output=True, text=True,
                         timeout=300)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr.startswith("groupspec: error: ") and out.stderr.count("\n") == 1 and needle in out.stderr
