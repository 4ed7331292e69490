"""One virtual clock for the teaching simulations of the pre-0.9 designs (ZooKeeper era, coordinator-side).

It owns the event loop that :mod:`reference.history.zookeeper_group` and :mod:`reference.history.coordinator_side_group`
share: a heap of timed events popped in (time, insertion) order, each handed to the simulation's own
``_on_<kind>`` method, and the trace's opening ``topic`` line. It imports nothing from the project.
The classic and consumer simulators (:mod:`reference.sim.simulator`) keep their own loop: theirs carries
network partitions, message loss and traces per member, which these two small runs do not need.
"""
from __future__ import annotations

import heapq
from typing import Any

__all__ = ["VirtualClock", "TOPIC"]

TOPIC = "t"  # the one topic of these runs


class VirtualClock:
    """Mix-in: call :meth:`_start_clock` in ``__post_init__``; schedule with ``_push``; run with :meth:`run_until`.

    A run is a pure function of its inputs: ties in time are broken by insertion order, never by the
    events' payloads.
    """

    now: int
    steps: int

    def _start_clock(self, group_id: str, partitions: int) -> list[dict[str, Any]]:
        """Reset the clock and return the trace's first line (the topic and its partition count)."""
        self.now = 0
        self.steps = 0
        self._q: list[tuple[int, int, str, Any]] = []
        self._seq = 0
        return [{"ts_ms": 0, "group": group_id, "event": "topic", "topic": TOPIC, "partitions": partitions}]

    def _push(self, t: int, kind: str, arg: Any) -> None:
        self._seq += 1
        heapq.heappush(self._q, (t, self._seq, kind, arg))

    def run_until(self, end_ms: int) -> None:
        """Handle every event due by ``end_ms`` in order, then move the clock to ``end_ms``."""
        while self._q and self._q[0][0] <= end_ms:
            t, _, kind, arg = heapq.heappop(self._q)
            self.now = max(self.now, t)
            self.steps += 1
            getattr(self, f"_on_{kind}")(arg)
        self.now = max(self.now, end_ms)
