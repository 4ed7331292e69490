"""Bad input, everywhere the same way: every sub-command of the live click tree, probed.

The commands are read from ``groupspec.cli.cli`` when the tests are collected, so a command added later is
probed without anyone listing it here. Each gets:

* an unknown option (and, for a group, an unknown sub-command), and a call without its required arguments;
* a malformed value for every option whose type can reject one (numbers, choices, ranges), and ``nan``,
  ``inf`` and ``-inf`` for every float option (``--converge-within nan`` was a traceback, ``--call-timeout nan``
  switched the limit off);
* for every output path (a parameter of type ``OutputPath``): a missing directory, a directory where a file
  is needed (or a file where a directory is), a path under a regular file, and — when not running as root —
  a read-only directory;
* the probes the command declares with ``bad_input_probes`` (checks made in its own code).

Every probe must give exactly one line on stderr starting ``groupspec: error: ``, exit status 2, nothing on
stdout, and leave no file behind; the derived probes must also stop before the command's own code runs (the
command's callback is replaced by one that fails the test). An option whose help says the command writes a
file must be an ``OutputPath``, so a new ``--out`` cannot bypass the early check. The probe machinery is
itself shown to catch a broken command (``test_the_probes_catch_a_command_that_checks_its_output_late``).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click
import pytest

from groupspec.cli import cli, main
from groupspec.cli._common import OutputPath

NUMERIC = (click.types.IntParamType, click.types.FloatParamType, click.types.IntRange, click.types.FloatRange,
           click.types.BoolParamType, click.types.UUIDParameterType, click.types.DateTime)


def walk(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` (groups too), as (path of names, command)."""
    out: list[tuple[tuple[str, ...], click.Command]] = [(path, group)]
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            out += walk(cmd, path + (name,))
        else:
            out.append((path + (name,), cmd))
    return out


COMMANDS = walk(cli)
IDS = [" ".join(p) or "groupspec" for p, _ in COMMANDS]


class Reached(Exception):
    """The command's own code ran although the arguments should have been refused first."""


def problems_of(argv: list[str], capsys: pytest.CaptureFixture[str], workdir: Path,
                needle: str | None = None) -> list[str]:
    """What is wrong with how ``groupspec ARGV`` refuses its input (empty: refused the right way)."""
    before = sorted(p.name for p in workdir.rglob("*"))
    code: Any = 0
    try:
        main(argv)
    except SystemExit as e:
        code = e.code
    except Reached:
        capsys.readouterr()
        return [f"{argv}: the command's own code ran before the bad input was refused"]
    except Exception as e:  # noqa: BLE001 - a crash is what this looks for
        capsys.readouterr()
        return [f"{argv}: crashed with {type(e).__name__}: {e}"]
    cap = capsys.readouterr()
    out, err = cap.out, cap.err
    bad = []
    if code != 2:
        bad.append(f"{argv}: exit status {code}, not 2 (stderr {err!r})")
    if out:
        bad.append(f"{argv}: printed on stdout: {out[:200]!r}")
    if err.count("\n") != 1 or not err.endswith("\n") or not err.startswith("groupspec: error: "):
        bad.append(f"{argv}: stderr is not one line 'groupspec: error: ...': {err[:300]!r}")
    if "Traceback" in err:
        bad.append(f"{argv}: traceback on stderr")
    if needle is not None and needle not in err:
        bad.append(f"{argv}: the message does not name {needle!r}: {err.strip()!r}")
    after = sorted(p.name for p in workdir.rglob("*"))
    if after != before:
        bad.append(f"{argv}: left files behind: {sorted(set(after) - set(before))}")
    return bad


def _block(cmd: click.Command, monkeypatch: pytest.MonkeyPatch) -> None:
    def reached(*args: Any, **kwargs: Any) -> None:
        raise Reached

    monkeypatch.setattr(cmd, "callback", reached)


def _bad_output_paths(kind: str, tmp: Path) -> list[Path]:
    (tmp / "a-file").write_text("x")
    (tmp / "a-dir").mkdir(exist_ok=True)
    paths = [tmp / "missing-dir" / "out.jsonl", tmp / "a-file" / "out.jsonl"]
    paths.append(tmp / "a-dir" if kind == "file" else tmp / "a-file")
    if os.geteuid() != 0:  # root may write anywhere: a read-only directory stops only others
        ro = tmp / "read-only"
        ro.mkdir(exist_ok=True)
        ro.chmod(0o500)
        paths.append(ro / "out.jsonl")
    return paths


def derived_probes(path: tuple[str, ...], cmd: click.Command, tmp: Path) -> list[tuple[list[str], str | None]]:
    """The probes read off the command's parameters: (argv, text the message must contain)."""
    argv = list(path)
    probes: list[tuple[list[str], str | None]] = [(argv + ["--no-such-option-zz"], "--no-such-option-zz")]
    if isinstance(cmd, click.Group):
        probes.append((argv + ["no-such-command-zz"], "no-such-command-zz"))
    required = [p for p in cmd.params if p.required]
    if required:
        probes.append((argv, None))
    for p in cmd.params:
        if not isinstance(p, click.Option) or p.is_flag or p.count:
            continue
        name = max(p.opts, key=len)
        if isinstance(p.type, OutputPath):
            for bad in _bad_output_paths(p.type.kind, tmp):
                probes.append((argv + [name, str(bad)], name))
        elif isinstance(p.type, (*NUMERIC, click.Choice)):
            probes.append((argv + [name] + ["@bogus@"] * max(1, p.nargs), name))
            if isinstance(p.type, click.types.FloatParamType):  # click's float and FloatRange take these
                for word in ("nan", "inf", "-inf"):  # (nan passes every range check): refused all the same
                    probes.append((argv + [name] + [word] * max(1, p.nargs), name))
    return probes


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_derived_probes_are_refused_before_any_work(path: tuple[str, ...], cmd: click.Command, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    probes = derived_probes(path, cmd, work)
    assert probes, f"{IDS[COMMANDS.index((path, cmd))]}: no probe applies"
    _block(cmd, monkeypatch)
    problems = [bad for argv, needle in probes for bad in problems_of(argv, capsys, tmp_path, needle)]
    assert problems == []


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_declared_probes_are_refused(path: tuple[str, ...], cmd: click.Command, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    declared = getattr(cmd, "bad_input_probes", [])
    problems = [bad for argv in declared for bad in problems_of(list(path) + argv, capsys, tmp_path)]
    assert problems == []


WRITES = re.compile(r"\bwrites?\b|\bwritten\b|\boutput (file|dir)", re.I)


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=IDS)
def test_every_output_path_is_checked_before_work(path: tuple[str, ...], cmd: click.Command) -> None:
    """An option or argument that names a file or directory the command writes must be an ``OutputPath``."""
    wrong = []
    for p in cmd.params:
        if isinstance(p, click.Option) and p.is_flag:
            continue
        text = getattr(p, "help", None) or ""
        writable_file = isinstance(p.type, click.File) and "w" in getattr(p.type, "mode", "")
        names_output = any(o.lstrip("-") in ("out", "output", "out-dir", "output-dir") for o in p.opts)
        if (writable_file or names_output or (WRITES.search(text) and isinstance(p.type, click.Path))) \
                and not isinstance(p.type, OutputPath):
            wrong.append(p.name)
    assert wrong == [], f"{' '.join(path)}: output parameters not declared with OutputPath: {wrong}"


GROUPS = [(p, c) for p, c in COMMANDS if isinstance(c, click.Group)]


@pytest.mark.parametrize("path, group", GROUPS, ids=[" ".join(p) or "groupspec" for p, _ in GROUPS])
def test_a_group_without_its_command_prints_its_whole_help(path: tuple[str, ...], group: click.Group,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``groupspec trace`` (every group of the live tree, ``groupspec`` itself too): the group's help as ``--help``
    prints it, line for line, on stderr, exit status 2 (a usage error: no command ran), nothing on stdout. It was
    the help squashed into one ``groupspec: error: ...`` line."""
    with pytest.raises(SystemExit) as bare:
        main(list(path))
    out, err = capsys.readouterr()
    with pytest.raises(SystemExit) as asked:
        main([*path, "--help"])
    help_text = capsys.readouterr().out
    assert (bare.value.code, asked.value.code) == (2, 0)
    assert out == "" and err == help_text
    assert err.startswith(f"Usage: {' '.join(('groupspec', *path))} ") and "\nCommands:\n" in err
    assert all(f"\n  {name} " in err for name in group.commands)


def test_every_command_is_probed() -> None:
    """No command is skipped: the walk covers the whole live tree (names read from click, not listed here)."""
    names = {" ".join(p) for p, c in COMMANDS if not isinstance(c, click.Group)}
    assert {"check", "verify", "simulate", "prove", "coordinator replay", "assignor check"} <= names
    for p, c in COMMANDS:
        if isinstance(c, click.Group):
            assert set(c.commands) <= {q[len(p)] for q, _ in COMMANDS if len(q) > len(p) and q[:len(p)] == p}


# ---------------------------------------------------------------------------------------- the probes' own test


def _broken_command() -> click.Command:
    """A command that does its work first and opens its output afterwards, printing a traceback-y error."""

    @click.command("broken-demo")
    @click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the result to FILE.")
    @click.option("--count", type=int, default=1)
    def broken(out: str | None, count: int) -> None:
        click.echo("working ...")
        if out:
            with open(out, "w") as f:
                f.write("result\n")

    return broken


def test_the_probes_catch_a_command_that_checks_its_output_late(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    cmd = _broken_command()
    monkeypatch.setitem(cli.commands, "broken-demo", cmd)
    monkeypatch.chdir(tmp_path)
    # the guard on output parameters names it
    with pytest.raises(AssertionError, match="not declared with OutputPath"):
        test_every_output_path_is_checked_before_work(("broken-demo",), cmd)
    # and a bad path reaches its code (blocked), or, unblocked, writes/crashes instead of one line and exit 2
    bad_path = tmp_path / "missing-dir" / "x.out"
    assert problems_of(["broken-demo", "--out", str(bad_path)], capsys, tmp_path, "--out")
    out_file = tmp_path / "x.out"
    found = problems_of(["broken-demo", "--out", str(out_file), "--no-such-option-zz"], capsys, tmp_path)
    assert found == []  # an unknown option is refused by click before the work: this probe alone is not enough
    monkeypatch.setattr(cmd.params[0], "type", OutputPath())  # fixed: the same probe now passes
    assert problems_of(["broken-demo", "--out", str(bad_path)], capsys, tmp_path, "--out") == []


def test_the_probes_see_a_file_left_behind_and_output_on_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    @click.command("messy-demo")
    @click.option("--out", type=OutputPath())
    def messy(out: Path) -> None:
        out.write_text("half")
        click.echo("details on stdout")
        raise click.UsageError("first line\n\nsecond paragraph")

    monkeypatch.setitem(cli.commands, "messy-demo", messy)
    found = problems_of(["messy-demo", "--out", str(tmp_path / "o.txt")], capsys, tmp_path)
    assert any("left files behind" in p for p in found)
    assert any("printed on stdout" in p for p in found)
