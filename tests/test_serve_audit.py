"""`groupspec coordinator check`: a served session replayed against the reference and checked by the model."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from groupspec.reference.sim import run_script
from groupspec.serve.audit import check_session, transcript_events

DATA = pathlib.Path(__file__).resolve().parent / "serve_data"
SESSIONS = ["kafka-python", "confluent-kafka", "aiokafka", "confluent-kafka-consumer-protocol"]
EXE = os.path.join(os.path.dirname(sys.executable), "groupspec")


def _session(name: str) -> tuple[str, str]:
    return (DATA / f"{name}.script.jsonl").read_text(), (DATA / f"{name}.transcript.jsonl").read_text()


@pytest.mark.parametrize("name", SESSIONS)
def test_recorded_real_client_sessions_replay_and_hold_every_invariant(name):
    script, transcript = _session(name)
    r = check_session(script, transcript)
    assert r.replay_ok, r.first_difference
    assert r.trace.ok, json.dumps(r.trace.to_dict())[:2000]
    g = r.trace.to_dict()["groups"][0]
    assert g["against_model"]["explained"] and g["against_model"]["events"] == len(r.events) > 10
    assert {e["event"] for e in r.events} >= {"joined", "assigned", "commit", "left"}
    assert r.holding == ([] if "consumer-protocol" in name else None)
    assert r.ok


def _tamper_sync_answer(transcript: str) -> tuple[str, int]:
    """The last SyncGroup answer with an assignment now holds every partition (two owners per partition)."""
    lines = transcript.splitlines()
    n = max(i for i, x in enumerate(lines) if '"request": "SyncGroup"' in x and '"assignment": [[' in x)
    obj = json.loads(lines[n])
    obj["assignment"] = [["t", p] for p in range(6)]
    lines[n] = json.dumps(obj)
    return "".join(x + "\n" for x in lines), n + 1


def test_a_tampered_transcript_is_caught_by_the_replay_and_by_the_model():
    script, transcript = _session("aiokafka")
    tampered, line = _tamper_sync_answer(transcript)
    r = check_session(script, tampered)
    assert not r.replay_ok and r.first_difference["line"] == line
    verdicts = {p["id"]: p["verdict"] for p in r.trace.to_dict()["groups"][0]["properties"]}
    # two members of one generation own a partition: the older owner counts as left behind (a zombie
    # overlap), and its accepted commit breaks commit fencing
    assert verdicts["commit_fencing"] == "violated" and not r.trace.ok
    assert not r.ok


def test_a_transcript_written_by_a_broken_coordinator_is_caught_by_the_model():
    # the consumer-protocol session as a coordinator that hands out partitions before their owner
    # released them would have answered: the model's exclusive ownership fails on its state lines
    script, transcript = _session("confluent-kafka-consumer-protocol")
    broken = "".join(x + "\n" for x in run_script(script, faults=frozenset({"no_wait_release"})))
    r = check_session(script, broken)
    assert not r.replay_ok
    assert r.holding and r.holding[0]["partition"][0] == "t"
    assert not r.ok


def test_the_derived_trace_follows_the_answers():
    script, transcript = _session("confluent-kafka")
    events = transcript_events(script, transcript)
    # eager members revoke everything before they rejoin, and each SyncGroup answer is an 'assigned'
    syncs = sum(1 for x in transcript.splitlines() if '"request": "SyncGroup", "error": "NONE"' in x)
    assert sum(1 for e in events if e["event"] == "assigned") == syncs
    commits = [e for e in events if e["event"] == "commit"]
    assert commits and all(e["accepted"] for e in commits)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, "coordinator", "check", *args], capture_output=True, text=True, timeout=120)


def test_cli_exit_status_and_json(tmp_path):
    script = str(DATA / "kafka-python.script.jsonl")
    r = _cli(script, str(DATA / "kafka-python.transcript.jsonl"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ok"] is True
    tampered, line = _tamper_sync_answer((DATA / "kafka-python.transcript.jsonl").read_text())
    bad = tmp_path / "transcript.jsonl"
    bad.write_text(tampered)
    r = _cli(script, str(bad))
    assert r.returncode == 1
    assert f"line {line} differs" in r.stdout and "violated" in r.stdout
    garbage = tmp_path / "script.jsonl"
    garbage.write_text('{"at": 0, "from": "A", "send": "Nope"}\n')
    r = _cli(str(garbage), str(bad))
    assert r.returncode == 2 and r.stderr.startswith("groupspec: error: ") and r.stderr.count("\n") == 1


_ANY_JSON = [{"x": 1}, ["a"], [], [["t", 0]], [1, 2], "s", 1, -1, 1.5, True, None, {"A": 1}, {"A": {"assigned": 1}}]


@pytest.mark.parametrize("name", ["kafka-python", "confluent-kafka-consumer-protocol"])
def test_a_transcript_field_of_any_json_type_is_checked_or_refused(name: str) -> None:
    """Every field of the first lines of a recorded transcript (and "request", "event"), given a value of every JSON
    type: the session is checked, or refused as a MalformedTranscript naming the line; never another exception (a
    line that was an array was an AttributeError)."""
    from groupspec.serve.audit import MalformedTranscript

    script, transcript = _session(name)
    lines = transcript.splitlines()
    crashes = []
    for i in range(min(8, len(lines))):
        obj = json.loads(lines[i])
        for field in sorted(set(obj) | {"request", "event"}):
            for value in _ANY_JSON:
                edited = lines[:i] + [json.dumps({**obj, field: value})] + lines[i + 1:]
                try:
                    check_session(script, "\n".join(edited))
                except MalformedTranscript as e:
                    assert str(e).startswith("line ")
                except Exception as e:  # noqa: BLE001 - what this looks for
                    crashes.append(f"line {i + 1} {field}={json.dumps(value)}: {type(e).__name__}: {e}")
    assert crashes == []
