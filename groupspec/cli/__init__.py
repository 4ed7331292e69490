"""The ``groupspec`` command. Thin: parsing and presentation only; the work lives in the packages.

Each sub-command lives in its own module under ``groupspec/cli/`` and exposes ``register(group)``.
"""
from __future__ import annotations

import importlib
import sys

import click

from ._common import EXIT_USAGE, UserError

# Sub-command modules, in the order they appear in --help.
COMMAND_MODULES = [
    "check",
    "verify",
    "coordinator",
    "assignor",
    "simulate",
    "prove",
    "trace",
    "realstack",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="groupspec")
def cli() -> None:
    """groupspec: an executable formal model of the Kafka consumer-group rebalance protocol."""


for _name in COMMAND_MODULES:
    importlib.import_module(f"groupspec.cli.{_name}").register(cli)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every user error is one line on stderr and exit status 2."""
    try:
        rc = cli.main(args=argv, prog_name="groupspec", standalone_mode=False)
    except UserError as e:
        click.echo(f"groupspec: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.NoSuchOption as e:
        click.echo(f"groupspec: error: {e.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except click.UsageError as e:
        ctx = f" ({e.ctx.command_path})" if e.ctx is not None else ""
        click.echo(f"groupspec: error{ctx}: {e.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("groupspec: aborted", err=True)
        sys.exit(130)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        click.echo(f"groupspec: error: {e.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(rc if isinstance(rc, int) else 0)
