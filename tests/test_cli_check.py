"""`groupspec check` and `groupspec verify` from the outside: exit codes, one-line errors, JSON."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


from pathlib import Path

GROUPSPEC = str(Path(sys.executable).parent / "groupspec")


def run(*args, timeout=300):
    return subprocess.run([GROUPSPEC, *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["check", "--protocol", "nosuch"], "unknown protocol 'nosuch'"),
        (["check", "--protocol", "eager", "--members", "-1"], "--members"),
        (["check", "--protocol", "eager", "--partitions", "100000"], "--partitions"),
        (["check", "--protocol", "eager", "--faults", "crash,meteor"], "unknown fault 'meteor'"),
        (["check", "--protocol", "eager", "--assignor", "nope"], "unknown assignor"),
        (["check", "--protocol", "eager", "--members", "lots"], "lots"),
        (["check"], "--protocol"),
        (["check", "--protocol", "zookeeper", "--assignor", "range", "--engine", "compiled"], "does not cover protocol 'zookeeper'"),
        (["check", "--protocol", "eager", "--engine", "warp"], "warp"),
        (["nosuchcommand"], "nosuchcommand"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, needle):
    r = run(*args)
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_correct_variant_exits_0_with_table():
    r = run("check", "--protocol", "cooperative", "--members", "2", "--partitions", "2", "--faults", "crash", "--budget", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "exclusive_ownership" in r.stdout and "held" in r.stdout
    assert "symmetry reduction" in r.stdout and "convergence bound" in r.stdout
    assert "on, members and partitions (--symmetry-factor measures it)" in r.stdout  # the costly pass is opt-in
    # no empty line of a progress bar first (a first run opens with the compilation notice, which stays on screen)
    assert r.stdout.strip("\n ") and not r.stdout.startswith("\n"), r.stdout[:80]
    assert r.stdout.lstrip(" ").startswith(("groupspec check:", "compiling the checker's engine")), r.stdout[:80]
    r = run("check", "--protocol", "cooperative", "--members", "2", "--partitions", "2", "--faults", "crash", "--budget",
            "1", "--symmetry-factor", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["symmetry_factor"] > 1.0


def test_broken_variant_exits_1_with_timeline():
    r = run("check", "--protocol", "cooperative-direct-transfer", "--members", "2", "--partitions", "2")
    assert r.returncode == 1
    assert "exclusive_ownership violated" in r.stdout
    assert " 1. c" in r.stdout and "owns" in r.stdout


def test_json_output():
    r = run("check", "--protocol", "eager-no-revoke", "--members", "2", "--partitions", "2", "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["protocol"] == "eager-no-revoke" and doc["ok"] is False
    props = {p["name"]: p for p in doc["properties"]}
    assert props["exclusive_ownership"]["verdict"] == "violated"
    steps = props["exclusive_ownership"]["counterexample"]
    assert steps[0]["action"] is None and steps[-1]["action"]
    mem = doc["memory"]
    assert mem["peak_bytes"] > 0 and mem["per_state_bytes"] is not None
    assert mem["store_bytes_per_state"] > 0 and 0 <= mem["fingerprint_collision_probability"] < 1e-20


def test_an_exploration_stopped_early_says_held_only_of_what_it_explored():
    """--max-states: an always- or action-property with no violation among the states stored is "held (search
    incomplete)", with how many were explored; a property reached (sometimes) or violated is said as it is; JSON says
    complete: false and, per property, partial: true where "held" covers only the states explored (the verdict string
    stays "held": scripts compare it)."""
    args = ("check", "--protocol", "cooperative", "--members", "3", "--partitions", "4", "--faults", "crash,timeout",
            "--max-states", "1000")
    r = run(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line.split("│")[1].strip(): line for line in r.stdout.splitlines() if line.count("│") >= 4}
    for name in ("exclusive_ownership", "commit_fencing", "generation_monotonic"):
        assert "held (search incomplete)" in rows[name] and "held in the 1,000 states explored" in rows[name], rows[name]
    assert "n/a" in rows["convergence"]
    doc = json.loads(run(*args, "--json").stdout)
    assert doc["complete"] is False and doc["states"] == 1000
    props = {p["name"]: p for p in doc["properties"]}
    assert "held in the 1,000 states explored (search incomplete" in props["exclusive_ownership"]["explanation"]
    for name in ("exclusive_ownership", "commit_fencing", "generation_monotonic"):
        assert props[name]["verdict"] == "held" and props[name]["partial"] is True, props[name]
    assert props["convergence"]["verdict"] == "not applicable" and props["convergence"]["partial"] is False
    full = run("check", "--protocol", "cooperative", "--members", "2", "--partitions", "2", "--faults", "crash", "--budget", "1")
    assert "incomplete" not in full.stdout and "states explored" not in full.stdout  # a whole exploration: held
    whole = json.loads(run("check", "--protocol", "cooperative", "--members", "2", "--partitions", "2", "--faults", "crash",
                           "--budget", "1", "--json").stdout)
    assert whole["complete"] is True and all(p["partial"] is False for p in whole["properties"])


def test_memory_is_reported_beside_states_per_second():
    r = run("check", "--protocol", "cooperative", "--members", "2", "--partitions", "2", "--faults", "crash", "--budget", "1")
    assert r.returncode == 0, r.stderr
    assert "peak memory" in r.stdout and "MiB" in r.stdout
    assert "memory per state" in r.stdout and "fingerprint collision" in r.stdout
    row = next(line for line in r.stdout.splitlines() if "memory per state" in line)
    # a few hundred states: the growth whole (mostly the engine's compilation and first arrays), not per state
    assert "MiB for" in row and "mostly fixed costs" in row and "bytes (peak growth / states)" not in row, row


def test_both_engines_give_the_same_answer_from_the_command_line():
    args = ["check", "--protocol", "cooperative-direct-transfer", "--members", "2", "--partitions", "3",
            "--faults", "crash", "--json"]
    out = {}
    for engine in ("python", "compiled"):
        r = run(*args, "--engine", engine)
        assert r.returncode == 1, r.stderr
        doc = json.loads(r.stdout)
        assert doc["engine"] == engine
        out[engine] = doc
    for doc in out.values():
        doc.pop("engine"), doc.pop("seconds"), doc.pop("states_per_second"), doc.pop("memory")
    assert out["python"] == out["compiled"]


def test_list_shows_every_variant_with_what_it_is() -> None:
    import json

    from click.testing import CliRunner

    from groupspec.cli import cli
    from groupspec.model import BROKEN, CORRECT

    res = CliRunner().invoke(cli, ["check", "--list", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert {r["protocol"] for r in rows} == set(CORRECT) | set(BROKEN)
    assert all(r["summary"] for r in rows)  # every variant says what it is
    assert {r["kind"] for r in rows if r["protocol"] in BROKEN} == {"broken"}
    text = CliRunner().invoke(cli, ["check", "--list"]).output
    assert "cooperative-direct-transfer" in text and "KIP-429" in text


def test_progress_lines_where_no_spinner_can_be_drawn() -> None:
    """A long check in a CI log (stderr not a terminal) is not silent: a progress line every few seconds."""
    import os

    env = {**os.environ, "GROUPSPEC_PROGRESS_SECONDS": "0.2"}
    r = subprocess.run([str(Path(sys.executable).with_name("groupspec")), "check", "--protocol", "cooperative", "--members", "3",
                        "--partitions", "4", "--faults", "crash,timeout,zombie,leave"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("check: ")]
    import re

    assert lines and all(re.fullmatch(r"check: [\d,]+ states?, [\d,]+ queued, \d+ s", ln) for ln in lines), r.stderr
    assert not re.search(r"^check: ", r.stdout, re.M)  # the results stay clean


def test_every_command_help_has_examples_that_parse(tmp_path, monkeypatch) -> None:
    """Every leaf command's --help shows examples, and each example is a command line the CLI accepts (its
    options exist and their values parse): an example that drifted from the options fails here."""
    import shlex

    import click

    from groupspec.cli import cli

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    # the files and folders the examples name, so that paths the options check at parse time exist
    for d in ("out/sm/traces", "logs", "tests/replay"):
        (tmp_path / d).mkdir(parents=True)
    for f in ("my-consumers.jsonl", "group.json", "SCRIPT.jsonl", "my-grid.yaml", "out/script.jsonl",
              "out/transcript.jsonl", "tests/replay/01_two_step_join.jsonl"):
        (tmp_path / f).write_text("")
    monkeypatch.chdir(tmp_path)
    checked = 0
    for path, cmd in walk(cli, []):
        text = cmd.help or ""
        assert "Examples:" in text, f"groupspec {' '.join(path)} --help has no example"
        for line in text.split("Examples:", 1)[1].splitlines():
            line = line.strip().split("   (", 1)[0]
            if not line.startswith("groupspec ") or "|" in line or ">" in line:
                continue
            words = shlex.split(line)[1:]
            if words[: len(path)] != path:  # an example may show the command run before this one
                continue
            with cmd.make_context(" ".join(path), words[len(path):], resilient_parsing=False) as ctx:
                assert ctx.params is not None
            checked += 1
    assert checked >= 25
