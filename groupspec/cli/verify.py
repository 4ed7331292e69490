"""`groupspec verify`: explore a protocol variant's bounded state space."""
from __future__ import annotations

import click


def register(group: click.Group) -> None:
    group.add_command(verify)


@click.command()
def verify() -> None:
    """Explore the bounded state space of one protocol variant."""
    click.echo("verify")
