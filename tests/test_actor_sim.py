"""The one actor driver (reference/sim/actor_sim.py): its rules, on a toy family of two actors."""
from __future__ import annotations

import random
from typing import Any

from groupspec.reference.actor import CallListener, Command, Event, Invoked, Received, Send, SetTimer, TimerFired
from groupspec.reference.sim import ActorSim, Address, NetworkConfig, NetworkLinks, UniformLinks
from groupspec.reference.sim.network import Network


class Echo:
    """Answers every message to its sender, after a synchronous call to its helper when asked to."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, Any]] = []

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        if isinstance(event, Received):
            self.seen.append((now_ms, event.message))
            if event.message == "ask-helper":
                return [Send("helper", "sync?"), Send(event.sender, "echo")]
            return [Send(event.sender, ("echo", event.message))]
        return []


class Sink:
    """Records what it receives, answers nothing."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, Any]] = []

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        if isinstance(event, Received):
            self.seen.append((now_ms, event.message))
        return []


class Pinger:
    """Sends a ping when started and on each timer; records answers and timers; calls its listener on an echo."""

    def __init__(self) -> None:
        self.got: list[tuple[int, Any]] = []
        self.fired: list[tuple[int, str]] = []

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        if isinstance(event, Invoked):
            if event.call == "start":
                return [Send("echo", "ping")]
            if event.call == "timers":  # two timers of one key: the second replaces the first
                return [SetTimer(now_ms + 10, "t"), SetTimer(now_ms + 20, "t"), SetTimer(now_ms + 15, "u")]
            return [Send("echo", event.call)]
        if isinstance(event, TimerFired):
            self.fired.append((now_ms, event.key))
            return []
        self.got.append((now_ms, event.message))
        return [CallListener("onPartitionsAssigned", (("t", 0),), 1)]


class Toy(ActorSim):
    def __init__(self, links: Any = None) -> None:
        self.trace = []
        self._reset_clock()
        self._start_actors(links or UniformLinks(random.Random(0), (5, 5)))
        self.echo = Echo()
        self.spawn("echo", self.echo)
        self.helper = Sink()
        self.spawn("helper", self.helper)

    def listener_line(self, name: str, cmd: CallListener) -> None:
        self.trace.append({"ts_ms": self.now, "member": name, "event": cmd.callback})


class SyncHelper:
    """Links: messages to the helper are synchronous (delivered at once), the rest take 5 ms."""

    def deliveries(self, now: int, src: str, dst: str, message: object) -> list[int] | None:
        return None if dst == "helper" else [now + 5]


def test_a_message_goes_over_the_network_and_the_answer_reaches_the_sender() -> None:
    sim = Toy()
    sim.spawn("p", Pinger())
    sim.schedule(100, "start", "p")
    sim.run_until(1000)
    assert sim.echo.seen == [(105, "ping")]
    assert sim.actors["p"].got == [(110, ("echo", "ping"))]  # type: ignore[attr-defined]
    assert sim.trace == [{"ts_ms": 110, "member": "p", "event": "onPartitionsAssigned"}]  # a listener call: a line
    assert sim.steps == 3  # the action, the request, the answer


def test_a_later_timer_of_the_same_key_replaces_the_earlier_one() -> None:
    sim = Toy()
    p = Pinger()
    sim.spawn("p", p)
    sim.schedule(0, "timers", "p")
    sim.run_until(100)
    assert p.fired == [(15, "u"), (20, "t")]  # t at 10 was replaced by t at 20
    assert sim.steps == 4  # the action and three timer events (the replaced one is taken and dropped)


def test_an_answer_to_a_process_that_restarted_is_dropped_and_its_timers_die_with_it() -> None:
    sim = Toy()
    old = Pinger()
    sim.spawn("p", old)
    sim.schedule(0, "start", "p")
    sim.schedule(1, "timers", "p")
    sim.run_until(7)  # the ping reached the echo at 5; its answer arrives at 10
    new = Pinger()
    assert sim.spawn("p", new) == Address("p", 1)
    sim.run_until(100)
    assert old.got == [] and new.got == [] and sim.dropped == 1  # addressed to incarnation 0
    assert old.fired == [] and new.fired == []


def test_a_synchronous_link_is_delivered_before_the_clock_moves() -> None:
    sim = Toy(SyncHelper())
    p = Pinger()
    sim.spawn("p", p)
    sim.schedule(0, "ask-helper", "p")
    sim.run_until(100)
    assert sim.helper.seen == [(5, "sync?")]  # at once, when the echo handled the request at 5
    assert p.got == [(10, "echo")]
    assert sim.steps == 3  # the action, the request, the answer: the synchronous call is no event of the clock


def test_the_network_parameter_loses_and_duplicates() -> None:
    lossy = Toy(NetworkLinks(Network(NetworkConfig(1, 5, loss=1.0), random.Random(0))))
    lossy.spawn("p", Pinger())
    lossy.schedule(0, "start", "p")
    lossy.run_until(100)
    assert lossy.echo.seen == []
    twice = Toy(NetworkLinks(Network(NetworkConfig(1, 5, duplicate=1.0), random.Random(0))))
    twice.spawn("p", Pinger())
    twice.schedule(0, "start", "p")
    twice.run_until(100)
    assert len(twice.echo.seen) == 2 and len(twice.actors["p"].got) == 4  # type: ignore[attr-defined]
