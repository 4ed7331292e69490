"""The one driver of actors on the one contract: the clock, the network as a parameter, timers, listener calls.

Theory of operation
-------------------
:class:`ActorSim` runs actors of ``reference/actor.py`` (``handle(now_ms, event) -> [Command]``) on the one
event clock (``virtual_clock.py``). A family plugs in by subclassing it: it spawns its actors by name, schedules
the application's calls (``act``), and says how a listener call becomes a trace line (``listener_line``); the
driver does the rest, the same way for every family:

* :class:`~groupspec.reference.actor.Send` — the network (:class:`Links`, a parameter of the run) says when
  each copy arrives (none if it is lost, two if duplicated); each copy is an event on the heap, handed to the
  receiver as ``Received(sender, message)`` where ``sender`` is the source's :class:`Address` (its name and
  incarnation). A link the network calls *synchronous* (``None``: a call the caller blocks on, such as a
  ZooKeeper client's read) is delivered at once, after the current event's commands, before the clock moves
  on. A message addressed to an :class:`Address` reaches that incarnation only (an answer to a process that
  has since restarted is dropped, as on a closed connection); one addressed to a name reaches whoever runs
  under it;
* :class:`~groupspec.reference.actor.SetTimer` — an event on the heap; a later timer of the same key replaces
  it; a process's timers die with it;
* :class:`~groupspec.reference.actor.CallListener` — a trace line (the family's ``listener_line``).

Every event taken from the heap counts one ``step``, whether or not it still reaches an actor (a stale timer,
a message for a dead process). Two networks come with it: :class:`UniformLinks` (a uniform delay drawn with
``random.randint``, the history groups' own network) and :class:`NetworkLinks` (``network.py``'s seeded network:
delay, loss, duplication, reordering). The simulation judges nothing: its trace goes to ``groupspec.trace``.

The history groups (``reference/history``) run on it; it imports only the actor contract and the sim room.
"""
from __future__ import annotations

import random
from collections import deque
from collections.abc import Hashable
from typing import Any, NamedTuple, Protocol

from ..actor import Actor, CallListener, Command, Event, Invoked, Received, Send, SetTimer, TimerFired
from .network import Network
from .virtual_clock import VirtualClock

__all__ = ["Address", "Links", "UniformLinks", "NetworkLinks", "ActorSim"]


class Address(NamedTuple):
    """One incarnation of a named process: where an answer goes (a restarted process does not get it)."""

    name: str
    incarnation: int


class Links(Protocol):
    """The network of a run: when the copies of a message from ``src`` to ``dst`` arrive (``[]``: lost), or
    ``None`` for a synchronous link (delivered at once)."""

    def deliveries(self, now: int, src: str, dst: str, message: object) -> list[int] | None: ...


class UniformLinks:
    """Every message arrives once, after a delay drawn uniformly from ``delay_ms`` with ``rng.randint``."""

    def __init__(self, rng: random.Random, delay_ms: tuple[int, int]) -> None:
        self.rng = rng
        self.lo, self.hi = delay_ms

    def deliveries(self, now: int, src: str, dst: str, message: object) -> list[int] | None:
        return [now + self.rng.randint(self.lo, self.hi)]


class NetworkLinks:
    """``network.py``'s network (delay, loss, duplication, reordering; FIFO per channel) as the run's links."""

    def __init__(self, network: Network) -> None:
        self.network = network

    def deliveries(self, now: int, src: str, dst: str, message: object) -> list[int] | None:
        return [e.deliver_at for e in self.network.send(now, src, dst, 0, 0, None, False)]


class ActorSim(VirtualClock):
    """A run of named actors; a family's subclass calls :meth:`_start_actors` in its constructor, spawns its
    actors, and schedules calls with :meth:`schedule`."""

    links: Links
    actors: dict[str, Actor]
    trace: list[dict[str, Any]]

    def _start_actors(self, links: Links) -> None:
        self.links = links
        self.actors = {}
        self.incarnation: dict[str, int] = {}
        self.down: set[str] = set()  # names whose current process is dead (crashed or closed)
        self.dropped = 0  # copies that reached no live process (or the wrong incarnation)
        self._timers: dict[tuple[str, str], int] = {}  # (name, key) -> the token of its pending timer
        self._now: deque[tuple[str | Address, Address, object]] = deque()  # synchronous deliveries, in order

    # ---------------------------------------------------------------- the family's hooks
    def listener_line(self, name: str, cmd: CallListener) -> None:
        """A listener call of ``name``'s actor, as a trace line (the family's format)."""
        raise NotImplementedError

    def observe(self, kind: str, src: Address, dst: str | Address, message: object) -> None:
        """A message is ``sent`` or ``delivered`` (to a live process): the family's transcript, if it keeps one."""

    def act(self, name: str, call: str, args: dict[str, Any]) -> None:
        """A scheduled application call; by default handed to ``name``'s actor as ``Invoked``."""
        if name in self.actors and name not in self.down:
            self.handle(name, Invoked(call, tuple(args.items())))
            self.drain()

    # ---------------------------------------------------------------- processes
    def spawn(self, name: str, actor: Actor) -> Address:
        """Run ``actor`` as the next incarnation of ``name`` (the previous one, if any, is gone)."""
        inc = self.incarnation.get(name, -1) + 1
        self.incarnation[name] = inc
        self.actors[name] = actor
        self.down.discard(name)
        return Address(name, inc)

    def kill(self, name: str) -> None:
        """``name``'s process stops: it handles nothing more, its timers are dropped."""
        self.down.add(name)
        for k in [k for k in self._timers if k[0] == name]:
            del self._timers[k]

    def is_up(self, name: str) -> bool:
        return name in self.actors and name not in self.down

    def schedule(self, time_ms: int, call: str, name: str, args: dict[str, Any] | None = None) -> None:
        """At ``time_ms``, the application calls ``name`` (``act``)."""
        self._push(time_ms, "action", (name, call, args or {}))

    # ---------------------------------------------------------------- the commands
    def handle(self, name: str, event: Event) -> None:
        """Hand ``event`` to ``name``'s actor now and carry out its commands in order (synchronous deliveries
        wait for :meth:`drain`)."""
        self.carry(name, self.actors[name].handle(self.now, event))

    def carry(self, name: str, commands: list[Command]) -> None:
        src = Address(name, self.incarnation[name])
        for cmd in commands:
            if isinstance(cmd, Send):
                to = cmd.to if isinstance(cmd.to, Address) else str(cmd.to)
                self.observe("sent", src, to, cmd.message)
                dst = to.name if isinstance(to, Address) else to
                at = self.links.deliveries(self.now, name, dst, cmd.message)
                if at is None:
                    self._now.append((to, src, cmd.message))
                else:
                    for t in at:
                        self._push(t, "deliver", (to, src, cmd.message))
            elif isinstance(cmd, SetTimer):
                self._seq += 1  # the timer's token: the heap's own counter, unique
                self._timers[(name, cmd.key)] = self._seq
                self._push(cmd.at_ms, "timer", (name, self.incarnation[name], cmd.key, self._seq))
            else:
                self.listener_line(name, cmd)

    def drain(self) -> None:
        """Deliver the synchronous messages, in order, until none is left."""
        while self._now:
            to, src, message = self._now.popleft()
            self._receive(to, src, message)

    def _receive(self, to: str | Address, src: Address, message: object) -> None:
        name = to.name if isinstance(to, Address) else to
        if not self.is_up(name) or (isinstance(to, Address) and to.incarnation != self.incarnation[name]):
            self.dropped += 1
            return
        self.observe("delivered", src, to, message)
        self.handle(name, Received(src, message))

    # ---------------------------------------------------------------- the clock's events
    def _on_deliver(self, a: tuple[str | Address, Address, object]) -> None:
        self._receive(*a)
        self.drain()

    def _on_timer(self, a: tuple[str, int, str, int]) -> None:
        name, inc, key, token = a
        if self.is_up(name) and self.incarnation[name] == inc and self._timers.get((name, key)) == token:
            del self._timers[(name, key)]
            self.handle(name, TimerFired(key))
            self.drain()

    def _on_action(self, a: tuple[str, str, dict[str, Any]]) -> None:
        self.act(*a)
