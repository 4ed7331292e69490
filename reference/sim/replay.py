"""Coordinator script replay: one driver, one plug-in per protocol family.

Theory of operation
-------------------
``groupspec coordinator replay SCRIPT`` runs a script in the coordinator-script format (``docs/formats.md``)
against the sans-IO reference coordinator of the script's protocol family and returns the transcript: the
script is read completely first (a malformed line anywhere is reported with its line number before
anything runs), then each step is fed to the coordinator, every answer becomes one transcript line and
every step ends with one line showing the group as the coordinator holds it.

The driver knows no family. Each family is a plug-in module with two functions:

* ``claims(text) -> bool`` - is this script the family's? The driver asks the families in the order of
  :data:`FAMILIES`; the first that claims a script runs it. The classic family claims every script, so it
  is asked last.
* ``run(text, faults) -> list[str]`` - parse and run the whole script; ``faults`` are the fault switches
  (deliberate bugs, for mutation tests) named on the command line; the family applies those of its own
  coordinator (the classic family refuses one it does not know, ``ValueError``).

Plug-ins: ``replay_classic.py`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
FindCoordinator, the coordinator faults, against :class:`~groupspec.reference.classic.GroupCoordinator`)
and ``replay_consumer.py`` (ConsumerGroupHeartbeat and OffsetCommit against
:class:`~groupspec.reference.consumer.ConsumerGroupCoordinator`). A new protocol family adds one module and
one row of :data:`FAMILIES`. A script that mixes two families' requests belongs to the first family that
claims it, whose reader refuses the other family's steps (``ScriptError``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import ScriptError
from . import replay_classic, replay_consumer

__all__ = ["ReplayFamily", "FAMILIES", "family_of", "run_script", "ScriptError"]


@dataclass(frozen=True)
class ReplayFamily:
    """One protocol family's plug-in: its name, which scripts are its, and how it runs one."""

    name: str
    claims: Callable[[str], bool]
    run: Callable[[str, Iterable[str]], list[str]]


#: The families, in the order they are asked whether a script is theirs (the classic family last: it claims
#: every script).
FAMILIES: tuple[ReplayFamily, ...] = (
    ReplayFamily("consumer", replay_consumer.claims, replay_consumer.run),
    ReplayFamily("classic", replay_classic.claims, replay_classic.run),
)


def family_of(text: str) -> ReplayFamily:
    """The family whose plug-in runs this script."""
    return next(f for f in FAMILIES if f.claims(text))


def run_script(text: str, faults: Iterable[str] = frozenset()) -> list[str]:
    """Parse and run a whole script with its family's plug-in; returns the transcript lines. Raises
    ``ScriptError`` naming the line of a malformed step."""
    return family_of(text).run(text, faults)
