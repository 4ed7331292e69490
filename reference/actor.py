"""The one actor contract of the reference: an actor takes events and returns commands, sans-IO.

Theory of operation
-------------------
An actor of the reference (a coordinator, a client, a Connect worker, a history group) is a state machine
with no IO and no clock of its own. A driver (a simulator of ``reference.sim``, the script replay, the wire
server of ``groupspec.serve``, a conformance harness) hands it one :data:`Event` at a time with the virtual
time, and the actor answers with the list of :data:`Command` it wants carried out, in order:

* :class:`Send` — a message for another actor, by name (``COORDINATOR``: the member's group coordinator);
  the driver's network carries it (delay, loss, duplication are the network's, never the actor's);
* :class:`SetTimer` — wake me at ``at_ms`` with :class:`TimerFired` of ``key``; a later ``SetTimer`` of the
  same key replaces the earlier one;
* :class:`CallListener` — the application's rebalance listener was called: ``callback`` is one of
  :data:`LISTENER_CALLBACKS` (Kafka's ``ConsumerRebalanceListener`` methods), with these partitions, in the
  generation (or member epoch) the member was in when it called it (what a trace line says).

The events: :class:`Received` (a message from ``sender``), :class:`TimerFired`, and :class:`Invoked` (the
application calls the actor: ``close``, ...). A driver that steps time in fixed steps runs a timer due at
or before now at its next step. :class:`Actor` is the
one method every actor offers, ``handle(now_ms, event) -> list[Command]``; what else an actor exposes (its
state, for the conformance abstraction and the reports) is read-only.

Actors on the contract: the KIP-848 reconciling consumer (``consumer/client.py``:
``ReconcilingConsumer.handle``) and the KIP-848 coordinator (``consumer/coordinator.py``:
``ConsumerGroupCoordinator.handle``; the simulation's network path drives it so); the classic coordinator
(``classic/coordinator.py``: ``GroupCoordinator.handle(now_ms, event)``; its wire entry point
``handle(now_ms, sender, request) -> [Outbound]`` stays for ``groupspec.serve``, the script replay and the
benches) and the classic client (``classic/client.py``: ``Consumer.handle``), which the classic simulator
(``sim/simulator.py``) drives through the contract, and so the Connect worker (a ``Consumer``). The history
groups' actors (``history/``: the ZooKeeper ensemble and its consumers, the 0.9 draft's coordinator and its
consumers) are on it too, run by the one actor driver (``sim/actor_sim.py``).

Imports nothing from the project: every part of the reference may import it, as it may import ``errors``.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, Union

__all__ = ["Send", "SetTimer", "CallListener", "Received", "TimerFired", "Invoked", "Command", "Event", "Actor",
           "COORDINATOR", "LISTENER_CALLBACKS"]

COORDINATOR = "coordinator"  # the name a member gives its group coordinator
LISTENER_CALLBACKS = ("onPartitionsAssigned", "onPartitionsRevoked", "onPartitionsLost")

TP = tuple[str, int]


# The six records are frozen dataclasses whose __init__ writes the instance dict directly: a simulation makes
# one or more per event, and dataclass's frozen __init__ (object.__setattr__ per field) costs three times as much.

@dataclass(frozen=True, init=False)
class Send:
    """A message for actor ``to``."""

    to: Hashable
    message: Any

    def __init__(self, to: Hashable, message: Any) -> None:
        d = self.__dict__
        d["to"] = to
        d["message"] = message


@dataclass(frozen=True, init=False)
class SetTimer:
    """Wake me at ``at_ms`` with ``TimerFired(key)`` (replacing a pending timer of the same key)."""

    at_ms: int
    key: str

    def __init__(self, at_ms: int, key: str) -> None:
        d = self.__dict__
        d["at_ms"] = at_ms
        d["key"] = key


@dataclass(frozen=True, init=False)
class CallListener:
    """Call the rebalance listener's ``callback`` (one of :data:`LISTENER_CALLBACKS`) with ``partitions``."""

    callback: str
    partitions: tuple[TP, ...]
    generation: int = -1

    def __init__(self, callback: str, partitions: tuple[TP, ...], generation: int = -1) -> None:
        d = self.__dict__
        d["callback"] = callback
        d["partitions"] = partitions
        d["generation"] = generation


@dataclass(frozen=True, init=False)
class Received:
    """A message from actor ``sender``."""

    sender: Hashable
    message: Any

    def __init__(self, sender: Hashable, message: Any) -> None:
        d = self.__dict__
        d["sender"] = sender
        d["message"] = message


@dataclass(frozen=True, init=False)
class TimerFired:
    """A timer set with ``SetTimer(at_ms, key)`` is due."""

    key: str

    def __init__(self, key: str) -> None:
        self.__dict__["key"] = key


@dataclass(frozen=True, init=False)
class Invoked:
    """The application calls the actor (``close``: leave the group), with the call's arguments if it has any
    (the classic client's ``subscribe``: the topics)."""

    call: str
    args: tuple[Any, ...] = ()

    def __init__(self, call: str, args: tuple[Any, ...] = ()) -> None:
        d = self.__dict__
        d["call"] = call
        d["args"] = args


Command = Union[Send, SetTimer, CallListener]
Event = Union[Received, TimerFired, Invoked]


class Actor(Protocol):
    """Every actor of the reference: one event in, the commands it wants carried out, out."""

    def handle(self, now_ms: int, event: Event) -> list[Command]: ...
