"""``groupspec ... | head -1``: a stdout whose reader is gone ends any command quietly, with exit status 141
(128 + SIGPIPE, what a shell reports for a process SIGPIPE killed): no traceback, no message, and not 1 (which
means "violated" in this CLI). Each command runs with stdout a pipe whose reading end is closed before it
starts, so its first write (or its last flush) fails: click's echo, rich's console (which handles a broken
pipe itself) and a JSON document left in the buffer until the end.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.cli import _stdout_has_no_reader

GROUPSPEC = str(Path(sys.executable).parent / "groupspec")
#: stdout buffered, as a user's is (PYTHONUNBUFFERED would make every write fail at once, never the last flush)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


@pytest.mark.parametrize("argv", [
    ["simulate", "new-consumer-joins", "--protocol", "cooperative"],  # click.echo, then a rich table
    ["verify", "--spec-mutants", "--list"],  # click.echo, line by line
    ["assignor", "check", "range", "--examples", "20"],  # a rich table: rich's own SystemExit(1)
    ["simulate", "--list", "--json"],  # one write that stays in the buffer: the flush at the end fails
], ids=lambda a: " ".join(a[:3]))
def test_a_closed_stdout_is_exit_141_without_a_word(argv: list[str], tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes anything
    try:
        done = subprocess.run([GROUPSPEC, *argv], stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                              env=ENV, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr[-2000:]
    for word in ("Traceback", "BrokenPipe", "Exception ignored", "groupspec: error"):
        assert word not in done.stderr


def test_only_a_stdout_without_its_reader_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken pipe the command opened itself (to a child) stays an error: only stdout's counts."""
    read, write = os.pipe()
    out = os.fdopen(write, "w")
    try:
        monkeypatch.setattr(sys, "stdout", out)
        assert not _stdout_has_no_reader()  # its reader is there
        os.close(read)
        assert _stdout_has_no_reader()
        monkeypatch.setattr(sys, "stdout", io.StringIO())
        assert not _stdout_has_no_reader()  # no file descriptor: not a pipe at all
    finally:
        monkeypatch.undo()
        out.close()
