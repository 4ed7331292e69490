"""Shared helpers for the command line: one-line errors, exit codes, JSON output."""
from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2


class UserError(Exception):
    """Bad input from the user: printed as one line, exit status 2, no traceback."""


def fail(message: str) -> NoReturn:
    raise UserError(message)


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False) + "\n")


def make_console(to_stderr: bool = False):
    """A rich console; when output is not a terminal, wide enough that tables do not wrap."""
    from rich.console import Console

    console = Console(stderr=to_stderr)
    if not console.is_terminal:
        console = Console(stderr=to_stderr, width=max(console.width, 200))
    return console
