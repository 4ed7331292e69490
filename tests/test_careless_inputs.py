"""A newcomer's mistakes, across every sub-command: the table ``tests/careless_inputs.toml``, walked.

Each row is a command line typed carelessly (a typo in a name, a value out of range, a wrong file, an output
folder that cannot be written, two options that do not go together). Each must be refused the one way the
project promises: one line on stderr, ``groupspec: error: ...``, naming what is wrong and where (every text of
the row's ``says``), exit status 2 (or the row's documented ``exit``), nothing on stdout, no traceback, and
nothing written: the scratch folder holds the same files afterwards, and the output the row asked for (``out``)
does not exist. ``tests/test_cli_bad_input.py`` derives its probes from the click tree (every option's type);
this table holds the mistakes people make, which no type can tell.
"""
from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli import cli, main

HERE = Path(__file__).parent
TABLE: list[dict[str, Any]] = tomllib.loads((HERE / "careless_inputs.toml").read_text())["input"]
LIMIT_S = 120  # a row refused as it should be takes well under a second; one that starts real work is stopped
#: Commands that serve until they are stopped: their rows run in a child process (its own process group), which the
#: walk kills after CHILD_LIMIT_S, because a server's loop does not see the in-process alarm (a row that was not
#: refused would hang the walk). A refusal takes the child's start-up, a second or two on a loaded machine.
SERVERS = ("serve",)
CHILD_LIMIT_S = 60


def scratch(folder: Path) -> None:
    """The files the table's rows name (see the header of careless_inputs.toml)."""
    (folder / "a-file").write_text("x\n")
    (folder / "a-dir").mkdir()
    (folder / "garbage.jsonl").write_text("{not json\n")
    (folder / "garbage.json").write_text("[1,2\n")
    (folder / "garbage.yaml").write_text("key: [unclosed\n")
    (folder / "wrong.yaml").write_text("preset: nope\n")
    (folder / "empty.jsonl").write_text("")
    (folder / "partial.jsonl").write_text('{"ts_ms": 1}\n')
    shutil.copy(HERE / "replay" / "01_two_step_join.jsonl", folder / "script.jsonl")
    (folder / "many-seeds.yaml").write_text("seeds: 99999999999\n")
    (folder / "many-points.yaml").write_text(f"seeds: 10000\nmembers: {list(range(1, 65))}\npartitions: {list(range(1, 11))}\n")
    (folder / "fault-object.jsonl").write_text('{"at": 0, "fault": {"x": 1}}\n')
    (folder / "fault-array.jsonl").write_text('{"at": 0, "fault": ["a"]}\n')
    (folder / "send-array.jsonl").write_text('{"at": 0, "from": "A", "send": ["JoinGroup"], "member_id": ""}\n')
    (folder / "consumer-badtype.jsonl").write_text(
        '{"at": 0, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": "$self", '
        '"subscribed_topic_names": ["t"], "rebalance_timeout_ms": {"x": 1}}\n')
    (folder / "array.jsonl").write_text("[1,2,3]\n")
    (folder / "no-kind.jsonl").write_text('{"foo": 1}\n')
    (folder / "binary.jsonl").write_bytes(b"\xff\xfe\x00x")
    (folder / "many-offsets.jsonl").write_text('{"config": {"offsets_partitions": 1000001}}\n')
    (folder / "many-partitions.jsonl").write_text(
        '{"config": {"group_protocol": "consumer", "topics": {"t": %d}}}\n' % 2**70)


class TooLong(Exception):
    """The row ran past LIMIT_S: its command did real work instead of refusing the input."""


def _too_long(signum: int, frame: object) -> None:
    raise TooLong


def run_child(argv: list[str], folder: Path, limit: float) -> tuple[int | None, str, str, int]:
    """``groupspec ARGV`` in a child process in ``folder``, in a process group of its own: (exit status, stdout,
    stderr, the group's id). Past ``limit`` seconds the whole group is stopped (SIGTERM, which a server obeys by
    stopping as Ctrl-C does; SIGKILL 10 s later) and the status is None."""
    proc = subprocess.Popen([sys.executable, "-c", "from groupspec.cli import main; main()", *argv], cwd=folder,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
        return proc.returncode, out, err, proc.pid
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:  # timed out, or the test itself was interrupted: never leave the group running
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
            with contextlib.suppress(ProcessLookupError):  # what else the child started in its group
                os.killpg(proc.pid, signal.SIGKILL)
    return None, "", "", proc.pid


def refusal_problems(row: dict[str, Any], folder: Path, capsys: pytest.CaptureFixture[str],
                     child_limit: float = CHILD_LIMIT_S) -> list[str]:
    """What is wrong with how ``groupspec ROW`` refuses it (empty: refused the right way)."""
    argv = shlex.split(row["argv"])
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    if argv[:1] and argv[0] in SERVERS:
        status, out, err, _ = run_child(argv, folder, child_limit)
        if status is None:
            return [f"ran past {child_limit:g} s (its process group was killed): the input was not refused before "
                    "the server started"]
        return judge(row, folder, before, status, out, err)
    code: Any = 0
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.alarm(LIMIT_S)
    try:
        if argv[:1] == ["figures"]:  # python -m groupspec.figures: the docs' figures, the explorer's graphs
            from groupspec.figures.__main__ import main as figures

            code = figures(argv[1:])
        else:
            main(argv)
    except SystemExit as e:
        code = e.code
    except TooLong:
        capsys.readouterr()
        return [f"ran past {LIMIT_S} s: the input was not refused before the work"]
    except Exception as e:  # noqa: BLE001 - a crash is what this looks for
        capsys.readouterr()
        return [f"crashed with {type(e).__name__}: {e}"]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    cap = capsys.readouterr()
    return judge(row, folder, before, code, cap.out, cap.err)


def judge(row: dict[str, Any], folder: Path, before: list[str], code: Any, out: str, err: str) -> list[str]:
    """The problems of a row's refusal, from its exit status, stdout and stderr and the scratch folder."""
    bad = []
    want = row.get("exit", 2)
    if code != want:
        bad.append(f"exit status {code}, not {want} (stderr {err[:300]!r})")
    if out:
        bad.append(f"printed on stdout: {out[:200]!r}")
    if err.count("\n") != 1 or not err.endswith("\n") or not err.startswith("groupspec: error: "):
        bad.append(f"stderr is not one line 'groupspec: error: ...': {err[:300]!r}")
    if "Traceback" in err:
        bad.append("traceback on stderr")
    for text in row["says"]:
        if text not in err:
            bad.append(f"the message does not say {text!r}: {err.strip()!r}")
    after = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    if after != before:
        bad.append(f"left behind: {sorted(set(after) - set(before))}")
    if "out" in row and (folder / row["out"]).exists():
        bad.append(f"the output {row['out']} exists")
    return bad


@pytest.mark.parametrize("row", TABLE, ids=[r["argv"] for r in TABLE])
def test_a_careless_input_is_refused_in_one_line(row: dict[str, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    scratch(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert refusal_problems(row, tmp_path, capsys) == []


def test_the_table_is_long_and_covers_every_command() -> None:
    """At least 40 rows, and at least one for every sub-command of the live click tree (read from click)."""
    import click

    assert len(TABLE) >= 40
    firsts = {shlex.split(r["argv"])[0] for r in TABLE if r["argv"] and not r["argv"].startswith("-")}
    leaves = set()
    for name, cmd in cli.commands.items():
        if isinstance(cmd, click.Group):
            leaves |= {f"{name} {sub}" for sub in cmd.commands if sub != "list"}  # realstack list takes nothing
        else:
            leaves.add(name)
    covered = {" ".join(shlex.split(r["argv"])[:2]) for r in TABLE} | firsts
    assert leaves - covered == set()
    assert "figures" in firsts  # python -m groupspec.figures too


def test_the_walk_catches_a_command_that_does_its_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The walk itself can fail: a row the command accepts (a valid `coordinator find`) is reported, and so is a
    message that does not name the option."""
    scratch(tmp_path)
    monkeypatch.chdir(tmp_path)
    found = refusal_problems({"argv": "coordinator find my-group", "says": ["my-group"]}, tmp_path, capsys)
    assert any("exit status 0" in p for p in found) and any("printed on stdout" in p for p in found)
    found = refusal_problems({"argv": "check --protocol cooperative --members 0", "says": ["--no-such"]},
                             tmp_path, capsys)
    assert found and all("does not say '--no-such'" in p for p in found)
    found = refusal_problems({"argv": "simulate new-consumer-joins --trace t.jsonl --members 1",
                              "says": ["--members"], "out": "a-file"}, tmp_path, capsys)
    assert found == ["the output a-file exists"]


def test_the_walk_stops_a_server_that_was_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A serve row without --duration whose input is accepted serves on (the in-process alarm never stopped it: the
    walk hung). In a child process it is a clear failure after the limit, and its whole process group is gone."""
    scratch(tmp_path)
    row = {"argv": "serve --port 0 --partitions t=1", "says": ["--port"]}
    found = refusal_problems(row, tmp_path, capsys, child_limit=5)
    assert found == ["ran past 5 s (its process group was killed): the input was not refused before the server "
                     "started"]
    status, out, err, group = run_child(shlex.split(row["argv"]), tmp_path, 5)
    assert status is None
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    # and a row refused in the child is judged as in-process ones are
    assert refusal_problems({"argv": "serve --port 0 --partitions t=0", "says": ["--partitions 't=0'"]}, tmp_path,
                            capsys) == []
    found = refusal_problems({"argv": "serve --port 0 --partitions t=0", "says": ["--nope"]}, tmp_path, capsys)
    assert len(found) == 1 and found[0].startswith("the message does not say '--nope'")
