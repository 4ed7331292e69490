"""`groupspec check`: explore a protocol variant's bounded state space."""
from __future__ import annotations

import click


def register(group: click.Group) -> None:
    group.add_command(check)


@click.command()
def check() -> None:
    """Explore the bounded state space of one protocol variant."""
    click.echo("check")
