"""The one virtual clock of the event-driven simulators: a heap of timed events and the time they reach.

Theory of operation
-------------------
A simulation is a pure function of its inputs: time is a number that only moves when an event is taken
from the heap, and events due at the same time are taken in the order they were scheduled, never by
their payloads. :class:`VirtualClock` is that loop, as a base class of the simulation that owns it:

* ``_push(at, kind, a, b)`` schedules an event (its kind and up to two arguments);
* ``_pop()`` takes the next one: the clock moves to its time (never backwards);
* ``run_until(end_ms)`` hands every event due by ``end_ms`` to the simulation's ``_on_<kind>(a)`` method,
  counting ``steps``, and leaves the clock at ``end_ms`` (a simulation with its own dispatch, the classic
  simulator, overrides it and uses ``_pop``);
* ``run_in_steps(end_ms, events, step_ms)`` is the same clock for a simulation whose actors act in fixed
  steps (its ``step()`` method): the clock ticks every ``step_ms`` from now to ``end_ms``, and at each tick
  the scenario's events due then (scheduled on the heap) run in their order before the step.

The queue is a list of ``(at, seq, kind, a, b)`` tuples, readable by drivers that look ahead (the
conformance harness). Every simulator of the reference runs on it: the classic and Connect simulator
(:mod:`reference.sim.simulator`), the ZooKeeper-era group and the 0.9 draft's coordinator-side group
(:mod:`reference.history`) with ``run_until``, the KIP-848 and migration simulations (``consumer_sim.py``,
``migration_sim.py``, 100 ms steps) with ``run_in_steps``. It imports nothing from the project.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["VirtualClock", "TOPIC"]

TOPIC = "t"  # the one topic of the history runs


class VirtualClock:
    """Base class of a simulation: :meth:`_reset_clock` (or :meth:`_start_clock`) in its constructor, schedule
    with :meth:`_push`, run with :meth:`run_until` (or :meth:`_pop` in a loop of its own)."""

    now: int
    steps: int
    _queue: list[tuple[int, int, str, Any, Any]]
    _seq: int

    def _reset_clock(self) -> None:
        """Time 0, no event scheduled, no step taken."""
        self.now = 0
        self.steps = 0
        self._queue = []
        self._seq = 0

    def _start_clock(self, group_id: str, partitions: int) -> list[dict[str, Any]]:
        """Reset the clock and return a history run's first trace line (its one topic and partition count)."""
        self._reset_clock()
        return [{"ts_ms": 0, "group": group_id, "event": "topic", "topic": TOPIC, "partitions": partitions}]

    def _push(self, at: int, kind: str, a: Any = None, b: Any = None) -> None:
        """Schedule event ``kind`` with arguments ``a``, ``b`` at time ``at``."""
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, kind, a, b))

    def _pop(self) -> tuple[int, str, Any, Any]:
        """Take the next event: the clock moves to its time (never backwards); returns (at, kind, a, b)."""
        at, _, kind, a, b = heapq.heappop(self._queue)
        if at > self.now:
            self.now = at
        return at, kind, a, b

    def pending(self) -> bool:
        """Is any event scheduled? (A simulation may shadow this name with its own state.)"""
        return bool(self._queue)

    def next_time(self) -> int | None:
        """The time of the next event, if any."""
        return self._queue[0][0] if self._queue else None

    def run_until(self, end_ms: int) -> Any:
        """Handle every event due by ``end_ms`` in order (``self._on_<kind>(a)``), then move the clock to
        ``end_ms``."""
        while self._queue and self._queue[0][0] <= end_ms:
            _, kind, a, _ = self._pop()
            self.steps += 1
            getattr(self, f"_on_{kind}")(a)
        self.now = max(self.now, end_ms)
        return None

    def run_in_steps(self, end_ms: int, events: Mapping[int, Iterable[Callable[[], object]]], step_ms: int) -> None:
        """Run a fixed-step simulation to ``end_ms``: at now, now + ``step_ms``, ... up to ``end_ms`` the
        scenario's ``events`` due at that time (in their order; events at other times never run), then the
        simulation's ``step()``. The clock ends one step past the last step."""
        start = self.now
        for t in sorted(events):
            if start <= t <= end_ms and (t - start) % step_ms == 0:
                for fn in events[t]:
                    self._push(t, "call", fn)
        t = start
        while t <= end_ms:  # the steps are the clock's own ticks: no heap entry each (the hot loop)
            while self._queue and self._queue[0][0] <= t:
                self._pop()[2]()
            self.now = t
            self.step()  # type: ignore[attr-defined]
            t += step_ms
        self.now = t
