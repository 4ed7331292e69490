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

import shlex
import shutil
import signal
import tomllib
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli import cli, main

HERE = Path(__file__).parent
TABLE: list[dict[str, Any]] = tomllib.loads((HERE / "careless_inputs.toml").read_text())["input"]
LIMIT_S = 120  # a row refused as it should be takes well under a second; one that starts real work is stopped


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


def refusal_problems(row: dict[str, Any], folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What is wrong with how ``groupspec ROW`` refuses it (empty: refused the right way)."""
    argv = shlex.split(row["argv"])
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
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
    out, err = cap.out, cap.err
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
