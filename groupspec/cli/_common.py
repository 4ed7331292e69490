"""Shared helpers for the command line: one-line errors, exit codes, JSON output, output paths.

Every file or directory a command writes is declared with :class:`OutputPath` (``type=OutputPath()`` or
``OutputPath(kind="dir")``), so that a path that cannot be written is refused while the arguments are parsed,
before any work starts; and written through :func:`atomic_output`, so that a run that fails half-way leaves
no half-written file behind.
"""
from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2


class UserError(Exception):
    """Bad input from the user: printed as one line, exit status 2, no traceback."""


def fail(message: str) -> NoReturn:
    raise UserError(message)


class NoCommand(click.UsageError):
    """A group named without its sub-command (``groupspec``, ``groupspec trace``); the message is the group's help."""


class CommandGroup(click.Group):
    """Every group of the command line (``cls=CommandGroup``). Named without a sub-command, it raises
    :class:`NoCommand`: ``main`` prints the group's help whole (as ``--help`` does, line for line) on stderr and
    exits 2, as for any usage error; nothing on stdout, so a script cannot take it for output. The same on every
    click version: click 8.1 printed the help on stdout with exit status 0, click 8.2 and later raise a usage
    error whose message is the help, which the one-line rule squashed into one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:
            raise NoCommand(ctx.get_help(), ctx=ctx)
        return super().parse_args(ctx, args)


#: the UTF-8 byte order mark (U+FEFF) that some editors and Windows tools write first: skipped wherever the command
#: line reads text (``utf-8-sig``), so that it is not taken for part of line 1
BOM = "\ufeff"


def read_text(path: str, name: str | None = None, dash: bool = True) -> str:
    """The text of the file ``path`` (``-``: standard input, when ``dash``) without a leading byte order mark; a
    ``UserError`` naming it (``name``, default ``path``: e.g. ``--fault-script FILE``) when it cannot be read or is
    not UTF-8 text."""
    name = path if name is None else name
    try:
        if path == "-" and dash:
            text = sys.stdin.read()
            return text[len(BOM):] if text.startswith(BOM) else text
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise UserError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{name}: is a directory") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{name}: cannot read ({e.strerror})") from None
    return utf8_text(data, name).replace("\r\n", "\n").replace("\r", "\n")  # (newlines as text mode reads them)


def utf8_text(data: bytes, name: str) -> str:
    """``data`` decoded as UTF-8 without a leading byte order mark; a ``UserError`` naming ``name`` (and the byte)
    when it is not UTF-8 text."""
    skip = len(BOM.encode()) if data.startswith(BOM.encode()) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start + skip})") from None


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")


def make_console(to_stderr: bool = False) -> Console:
    """A rich console; when output is not a terminal, wide enough that tables do not wrap."""
    from rich.console import Console

    console = Console(stderr=to_stderr)
    if not console.is_terminal:
        console = Console(stderr=to_stderr, width=max(console.width, 200))
    return console


class PlainProgress:
    """Progress where no spinner can be drawn (a CI log, a file, a pipe): at most a line on stderr every
    ``GROUPSPEC_PROGRESS_SECONDS`` (default 15) while long work runs, so a long run is never silent. On a
    terminal it prints nothing (the spinner is there)."""

    def __init__(self, console: Console) -> None:
        self.enabled = not console.is_terminal
        try:
            self.every = float(os.environ.get("GROUPSPEC_PROGRESS_SECONDS", "15"))
        except ValueError:
            self.every = 15.0
        self.started = self.last = time.monotonic()

    def line(self, text: Callable[[float], str]) -> None:
        """Print ``text(seconds since the start)`` if the interval has passed since the last line."""
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            click.echo(text(now - self.started), err=True)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``plural(1, "state") == "1 state"``, ``plural(2, "property", "properties") == "2 properties"``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


# ------------------------------------------------------------------------------------------ output paths


def _writable_dir(d: Path) -> bool:
    return os.access(d, os.W_OK | os.X_OK)


def check_output_path(path: str | os.PathLike[str], kind: str = "file") -> Path:
    """Refuse an output path that cannot be written, before any work; return it as a :class:`Path`.

    ``kind="file"``: the path must not be a directory, its directory must exist and be writable, and an
    existing file must be writable (it will be replaced). ``kind="dir"``: the path must be a writable
    directory, or not exist yet with a writable directory above it (it is created when written; its
    parents are not). Raises :class:`UserError` with one line saying what is wrong.
    """
    if kind not in ("file", "dir"):
        raise ValueError(f"kind must be 'file' or 'dir', not {kind!r}")
    text = os.fspath(path)
    if not text or text.strip() != text:
        raise UserError(f"{text!r}: not a usable path")
    if text == "-":  # elsewhere (trace check -) "-" is standard input/output: here it would be a file named "-"
        raise UserError("-: this option writes a file, not standard output: name the file (./- for one called '-')")
    p = Path(text)
    parent = p.parent
    if p.exists():
        if kind == "file" and p.is_dir():
            raise UserError(f"{text}: is a directory (a file name is needed)")
        if kind == "dir" and not p.is_dir():
            raise UserError(f"{text}: exists and is not a directory")
        if kind == "dir" and not _writable_dir(p):
            raise UserError(f"{text}: directory is not writable")
        if kind == "file" and not os.access(p, os.W_OK):
            raise UserError(f"{text}: file exists and is not writable")
        if kind == "file" and not _writable_dir(parent):
            raise UserError(f"{text}: directory {parent} is not writable")
        return p
    if not parent.exists():
        raise UserError(f"{text}: directory {parent} does not exist")
    if not parent.is_dir():
        raise UserError(f"{text}: {parent} is not a directory")
    if not _writable_dir(parent):
        raise UserError(f"{text}: directory {parent} is not writable")
    return p


class OutputPath(click.ParamType[Path, "str | os.PathLike[str]"]):
    """A click parameter type for a file (or, with ``kind="dir"``, a directory) the command will write.

    Checked by :func:`check_output_path` while the arguments are parsed, so a bad path stops the command
    before it does any work. The value is a :class:`~pathlib.Path`; ``None`` stays ``None``.
    """

    def __init__(self, kind: str = "file") -> None:
        if kind not in ("file", "dir"):
            raise ValueError(f"kind must be 'file' or 'dir', not {kind!r}")
        self.kind = kind
        self.name = "directory" if kind == "dir" else "file"

    def get_metavar(self, param: click.Parameter, *args: Any, **kwargs: Any) -> str:
        return "DIR" if self.kind == "dir" else "FILE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            value = os.fspath(value)
        try:
            return check_output_path(value, self.kind)
        except UserError as e:
            self.fail(str(e), param, ctx)


class FiniteFloat(click.FloatRange):
    """A float option that refuses ``nan`` and the infinities while the arguments are parsed, with an optional
    range (``min``, ``max`` as :class:`click.FloatRange`). Click's ``float`` and ``FloatRange`` take them (``nan``
    passes every range check), and they then surface as a traceback deep in the work (``int(nan)``, a timer of
    ``inf`` seconds) or silently switch a limit off. Every float option of the command line uses this type."""

    name = "float"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number", param, ctx)
        return rv


class ConvergeWithin(FiniteFloat):
    """``--converge-within`` (``trace check`` and ``audit``, which judge with the same checker): seconds, more than
    0 and at most the longest time a trace holds (its ``ts_ms`` are at most ``groupspec.trace.MAX_TS``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        rv = super().convert(value, param, ctx)
        from groupspec.trace import MAX_TS

        if rv <= 0:
            self.fail(f"{rv:g} is not positive", param, ctx)
        if rv > MAX_TS // 1000:
            self.fail(f"{rv:g} is more than {MAX_TS // 1000} s, the longest time a trace holds", param, ctx)
        return rv


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path`` (same name ending, so ``.gz`` stays ``.gz``); rename it onto
    ``path`` when the block succeeds, remove it when the block fails (an OSError becomes a one-line
    :class:`UserError` naming the file). Readers never see half a file."""
    final = Path(path)
    tmp = final.with_name(f".{os.getpid()}-partial-{final.name}")
    try:
        yield tmp
        os.replace(tmp, final)
    except BaseException as e:
        with contextlib.suppress(OSError):
            if tmp.is_dir():
                import shutil

                shutil.rmtree(tmp)
            else:
                tmp.unlink()
        if isinstance(e, OSError):  # e.g. the disk filled up: one line naming the file, nothing half-written
            raise UserError(f"{final}: cannot write ({e.strerror or e})") from None
        raise


# ------------------------------------------------------------------------------------------ Ctrl-C


def ignore_sigint() -> None:
    """For worker processes: leave Ctrl-C to the main process, which ends them (no traceback from each)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """Ctrl-C ends the job at once: the worker processes are terminated before the pools wait for them.

    A worker may sit in a long Z3 or numba call that would not see the signal for minutes; the pools'
    clean shut-down would wait for it. So the main process terminates its children first, then raises
    KeyboardInterrupt (the command prints ``groupspec: interrupted`` and exits 130).
    """
    main_pid = os.getpid()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != main_pid:  # a forked worker inherited this handler: the main process ends it
            return
        for child in multiprocessing.active_children():
            child.terminate()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# ------------------------------------------------------------------------------------------ bad-input probes


def bad_input_probes(*argvs: list[str]) -> Callable[[click.Command], click.Command]:
    """Declare, on a click command, arguments that must be refused as bad input (one line, exit status 2).

    ``tests/test_cli_bad_input.py`` walks every command of the live click tree and, besides the probes it
    derives itself (an unknown option, a malformed value for every typed option, every output path that
    cannot be written), runs these: the checks a command makes in its own code (ranges, names, files)::

        @bad_input_probes(["--members", "0"], ["--protocol", "nope"])
        @click.command()
        def check(...): ...
    """

    def mark(cmd: click.Command) -> click.Command:
        cmd.bad_input_probes = [list(a) for a in argvs]  # type: ignore[attr-defined]
        return cmd

    return mark
