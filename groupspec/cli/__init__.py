"""The ``groupspec`` command. Thin: parsing and presentation only; the work lives in the packages.

Each sub-command lives in its own module under ``groupspec/cli/`` and exposes ``register(group)``.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, NoReturn


def _stopped_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM while the command's modules load (click, numpy, every sub-command: the first half second
    or so of any command, before :func:`main` installs its handling): the one line and the exit status of later
    (``groupspec: interrupted``, 130; ``groupspec: terminated``, 143) at once. Nothing has been written or started
    yet, so nothing needs cleaning up, and the process ends here, without unwinding: a KeyboardInterrupt raised
    in the middle of an import comes out as another error or none (a ``RuntimeError`` from a class's
    ``__set_name__``, numpy's ``ImportError: numpy._core.umath failed to import``, "Exception ignored in" an
    import lock's callback, all seen at random moments), so raising one is not a way to stop cleanly here."""
    os.write(2, b"groupspec: terminated\n" if signum == signal.SIGTERM else b"groupspec: interrupted\n")
    os._exit(143 if signum == signal.SIGTERM else 130)


def _as_the_command() -> bool:
    """Whether this process is the ``groupspec`` command (its console script is ``__main__``), not a program
    that imports ``groupspec.cli`` (the tests): only the command's own signal handling is changed."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return os.path.basename(main_file).removesuffix(".exe").removesuffix("-script.py") == "groupspec"


if _as_the_command():  # until main() installs its own handling
    for _sig, _default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
        if signal.getsignal(_sig) is _default:  # (an ignored Ctrl-C, a background job's, stays ignored)
            try:
                signal.signal(_sig, _stopped_while_loading)
            except ValueError:  # not the main thread
                break

import contextlib  # noqa: E402 - after the handlers above, which cover every import from here on
import importlib  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402


@contextlib.contextmanager
def _loading() -> Iterator[None]:
    """A KeyboardInterrupt while the modules load, when ``groupspec.cli`` is imported by another program (the
    command itself stops at once, :func:`_stopped_while_loading`): the one line ``groupspec: interrupted``, exit
    status 130, no traceback."""
    try:
        yield
    except KeyboardInterrupt:
        sys.stderr.write("groupspec: interrupted\n")
        sys.stderr.flush()
        sys.exit(130)


with _loading():
    import click

    from ._common import EXIT_USAGE, CommandGroup, NoCommand, UserError

# Sub-command modules, in the order they appear in --help.
COMMAND_MODULES = [
    "check",
    "verify",
    "coordinator",
    "assignor",
    "simulate",
    "prove",
    "sweep",
    "audit",
    "serve",
    "trace",
    "realstack",
]


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="groupspec")
def cli() -> None:
    """groupspec: an executable formal model of the Kafka consumer-group rebalance protocol."""


with _loading():
    for _name in COMMAND_MODULES:
        importlib.import_module(f"groupspec.cli.{_name}").register(cli)


def _usage_error(message: str) -> None:
    """The one way a user error is shown: one line on stderr, ``groupspec: error: ...``, exit status 2."""
    line = " ".join(message.split())
    click.echo(f"groupspec: error: {line}", err=True)
    sys.exit(EXIT_USAGE)


def _where(e: click.UsageError) -> str:
    """``simulate: `` for an error of ``groupspec simulate`` (nothing for the top-level command)."""
    if e.ctx is None:
        return ""
    path = e.ctx.command_path.split(" ", 1)
    return f"{path[1]}: " if len(path) == 2 else ""


_TERMINATED: list[int] = []
_MAIN_PID: list[int] = []
_INTERRUPTED: list[int] = []  # Ctrl-C or SIGTERM seen by the main process (a library may swallow the exception)


def _on_sigint(signum: int, frame: object) -> None:
    """Ctrl-C: Python's own KeyboardInterrupt, and a note of it. A KeyboardInterrupt raised inside a C callback
    (numba's compiler calls back into Python from LLVM) is swallowed there and comes back as another error
    (``RuntimeError: no compiled object yet``): the note makes that error an interruption too."""
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def _interrupt_soon(pid: int) -> None:
    """SIGINT to ``pid`` in 10 ms: a swallowed interruption comes again once the callback that swallowed it has
    returned (if it lands in such a callback again, it is swallowed and sent again: it ends up in plain code)."""
    time.sleep(0.01)
    os.kill(pid, signal.SIGINT)


def _unraisable(hook: Any) -> Any:
    """``sys.unraisablehook`` that notes a swallowed KeyboardInterrupt instead of printing its traceback
    ("Exception ignored on calling ctypes callback function ...", "Exception ignored in: gc_callback") and
    raises the signal again, so that the interruption surfaces in the next Python code that runs outside such a
    callback and the command stops now, not after its work; anything else goes to ``hook``."""
    def on_unraisable(unraisable: object) -> None:
        if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
            _INTERRUPTED.append(signal.SIGINT)
            if _MAIN_PID and os.getpid() == _MAIN_PID[0]:  # a moment later, from another thread: once this
                threading.Thread(target=_interrupt_soon, args=(os.getpid(),), daemon=True).start()  # hook returned
            return
        hook(unraisable)

    return on_unraisable


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, ``timeout``, a cancelled CI job) stops a command the way Ctrl-C does: the same
    clean-up (worker processes ended, spilled files and staged outputs removed), then exit status 143."""
    if _MAIN_PID and os.getpid() != _MAIN_PID[0]:  # a forked worker inherited this: die as SIGTERM's default
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    _TERMINATED.append(signum)
    _INTERRUPTED.append(signum)
    on_sigint = signal.getsignal(signal.SIGINT)
    if callable(on_sigint):  # the handler in force for Ctrl-C decides: it may end worker processes first, or
        on_sigint(signal.SIGINT, frame)  # type: ignore[arg-type]  # hold the interrupt until a Spark call returns
        return
    raise KeyboardInterrupt  # Ctrl-C ignored here (a background job of a script): stop all the same


def main(argv: list[str] | None = None) -> None:
    """Entry point: every user error is one line on stderr (``groupspec: error: ...``) and exit status 2;
    Ctrl-C is ``groupspec: interrupted`` and 130, SIGTERM ``groupspec: terminated`` and 143."""
    # (the command's handlers while it loaded, _stopped_while_loading, stand for the defaults they replaced, and
    # are replaced in turn, with no moment between the two without one)
    installed = signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, _stopped_while_loading)
    own_sigint = signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _stopped_while_loading)  # not ignored
    hook = sys.unraisablehook
    if installed:
        _MAIN_PID[:] = [os.getpid()]
        signal.signal(signal.SIGTERM, _on_sigterm)
        if own_sigint:
            signal.signal(signal.SIGINT, _on_sigint)
        sys.unraisablehook = _unraisable(hook)
    elif signal.getsignal(signal.SIGINT) is _stopped_while_loading:  # (SIGTERM ignored: Python's own Ctrl-C)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _run(argv)
    finally:
        if installed:  # main() called in-process (tests): leave SIGTERM, SIGINT and the hook as they were
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if own_sigint:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.unraisablehook = hook
            _TERMINATED.clear()
            _INTERRUPTED.clear()


def _stopped() -> None:
    click.echo("groupspec: terminated" if _TERMINATED else "groupspec: interrupted", err=True)
    sys.exit(143 if _TERMINATED else 130)


#: 128 + SIGPIPE: the status a shell reports for a process that SIGPIPE killed (``groupspec ... | head -1``)
EXIT_SIGPIPE = 141


def _stdout_has_no_reader() -> bool:
    """Whether stdout is a pipe (or socket) whose reading end is closed: a BrokenPipeError is then stdout's,
    not one of a pipe the command itself opened (to a child process), which stays an error."""
    import select

    if not hasattr(select, "poll"):  # (Windows: no poll, and no SIGPIPE either)
        return True
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout replaced by a buffer (tests in-process)
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _stdout_closed() -> NoReturn:
    """Whoever read stdout is gone (``groupspec ... | head -1``): stop without a word, exit status 141, as a
    process that SIGPIPE killed. Python's recipe (the signal module's "Note on SIGPIPE"): stdout is pointed
    at /dev/null first, so that the flush at exit does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass
    sys.exit(EXIT_SIGPIPE)


def _run(argv: list[str] | None) -> None:
    """:func:`_invoke`, and a stdout whose reader went away (a write that failed, or the last flush) mapped to
    :func:`_stdout_closed`, once for every command. rich handles a broken pipe itself (``Console.on_broken_pipe``:
    stdout to /dev/null, then ``SystemExit(1)``, which here would mean "violated"): that exit is known by the
    BrokenPipeError it was raised while handling."""
    try:
        _invoke(argv)
    except BrokenPipeError:
        if _stdout_has_no_reader():
            _stdout_closed()
        raise
    except SystemExit as e:
        if e.code == 1 and isinstance(e.__context__, BrokenPipeError):
            _stdout_closed()
        try:
            sys.stdout.flush()  # the reader may have gone after the last write: say so here, not at exit
        except BrokenPipeError:
            _stdout_closed()
        raise


def _invoke(argv: list[str] | None) -> None:
    try:
        # cli.main() without its handling of KeyboardInterrupt (an empty line on stderr before ours)
        with cli.make_context("groupspec", list(sys.argv[1:] if argv is None else argv)) as ctx:
            rc = cli.invoke(ctx)
    except UserError as e:
        _usage_error(str(e))
    except NoCommand as e:  # `groupspec trace`: the group's help, whole, where usage errors go (stderr, exit 2)
        click.echo(e.message, err=True)
        sys.exit(EXIT_USAGE)
    except click.UsageError as e:
        _usage_error(_where(e) + e.format_message())
    except (click.exceptions.Abort, KeyboardInterrupt):
        _stopped()
    except click.exceptions.Exit as e:
        if _INTERRUPTED:
            _stopped()
        sys.exit(e.exit_code)
    except SystemExit:
        if _INTERRUPTED:  # a command's own sys.exit() after the interruption was swallowed (a gc callback)
            _stopped()
        raise
    except click.ClickException as e:
        _usage_error(e.format_message())
    except Exception:
        if _INTERRUPTED:  # the interruption surfaced as another error (a library swallowed it): no traceback
            _stopped()
        raise
    if _INTERRUPTED:  # swallowed on the way, and the work went on: the user asked to stop, say so
        _stopped()
    sys.exit(rc if isinstance(rc, int) else 0)
