"""Coordinator-side assignment (Kafka's 0.9 design draft, never released), simulated for the pictures.

Theory of operation
-------------------
One coordinator (a broker) keeps the group: its members, their subscriptions, the **generation**, and
who owns which partition. Consumers heartbeat to it; it alone detects changes and it alone computes
the assignment. A run:

1. A new consumer sends JoinGroup with its subscription. The coordinator starts a rebalance: from now
   on it answers every other member's heartbeat with ``ILLEGAL_GENERATION`` (the draft's word for
   "rebalance now"; Kafka 0.9 as released says ``REBALANCE_IN_PROGRESS``, see
   docs/learn/coordinator-side.md).
2. A member told so stops fetching, commits, gives up its partitions (eager: all of them) and sends
   JoinGroup. The coordinator parks every JoinGroup until every known member has joined, or the
   rebalance timeout passes (members that did not join are declared dead).
3. The coordinator computes the assignment itself (range: sorted partitions over sorted member
   names, per topic), bumps the generation, records the owners (the draft wrote them to ZooKeeper),
   and answers every parked JoinGroup with the member's partitions. The member starts fetching them.
4. A member that stops heartbeating (a crash) is declared dead after ``session_timeout_ms``; that starts
   a rebalance the same way.

Because the coordinator knows the owners, it can refuse an offset commit for a partition the committer
does not own in the current generation (``commit``): the draft's fencing, lost in the released design.

Everything runs on one virtual clock; message delays come from ``random.Random(seed)``, so a run is a
pure function of its inputs. It writes the trace format of docs/formats.md (``joined``, eager
``assigned``, ``revoked``, ``left``) and a transcript of requests and answers (``from``/``to``, ``at``,
``request``, ``error``), the same shape as the classic simulator's, so the same pictures can be drawn.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..sim import TOPIC, VirtualClock

__all__ = ["CsConfig", "CoordinatorSideGroup"]



@dataclass(frozen=True)
class CsConfig:
    seed: int = 0
    group_id: str = "g"
    partitions: int = 6
    session_timeout_ms: int = 10000
    heartbeat_interval_ms: int = 3000
    rebalance_timeout_ms: int = 10000  # how long the coordinator waits for known members to rejoin
    delay_ms: tuple[int, int] = (2, 20)  # one-way network delay, uniform


@dataclass
class _Consumer:
    name: str
    alive: bool = True
    generation: int = 0
    owned: tuple[int, ...] = ()
    joining: bool = False
    incarnation: int = 0  # bumped on crash: its heartbeat timer stops


@dataclass
class CoordinatorSideGroup(VirtualClock):
    """One group's run; schedule with :meth:`at`, then :meth:`run_until`."""

    config: CsConfig = field(default_factory=CsConfig)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.config.seed)
        self.consumers: dict[str, _Consumer] = {}
        # the coordinator's side
        self.members: dict[str, int] = {}  # member -> last time heard from
        self.generation = 0
        self.state = "Empty"  # Empty | Stable | PreparingRebalance
        self.parked: set[str] = set()
        self._incarnation: dict[str, int] = {}  # a parked JoinGroup's sender incarnation: its answer goes there
        self.owners: dict[int, str] = {}
        self._round = 0  # bumped at every rebalance start: stale rebalance timers are ignored
        self.trace: list[dict[str, Any]] = self._start_clock(self.config.group_id, self.config.partitions)
        self.transcript: list[dict[str, Any]] = []
        self.generations: list[tuple[int, int, tuple[str, ...]]] = []  # (ms, generation, members)
        self.rebalances = 0
        self.commits = {"accepted": 0, "rejected": 0}

    # ---------------------------------------------------------------- scheduling
    def at(self, time_ms: int, action: str, name: str, **args: Any) -> None:
        if action not in ("start", "crash", "commit"):
            raise ValueError(f"unknown coordinator-side action {action!r}; choose from start, crash, commit")
        self._push(time_ms, action, (name, args))

    # ---------------------------------------------------------------- helpers
    def _line(self, name: str, event: str, parts: tuple[int, ...] | None = None, generation: int = 0) -> None:
        ev: dict[str, Any] = {"ts_ms": self.now, "group": self.config.group_id, "member": name, "event": event}
        if parts is not None:
            ev["partitions"] = [[TOPIC, p] for p in parts]
        ev["generation"] = generation
        ev["protocol"] = "eager"
        self.trace.append(ev)

    def _send(self, kind: str, payload: tuple[Any, ...]) -> None:
        lo, hi = self.config.delay_ms
        self._push(self.now + self.rng.randint(lo, hi), kind, payload)

    def _log(self, api: str, who: str, to_coordinator: bool, error: str = "NONE") -> None:
        rec: dict[str, Any] = {"at": self.now, "request": api}
        if to_coordinator:
            rec["from"] = who
        else:
            rec["to"] = who
            rec["error"] = error
        self.transcript.append(rec)

    def assignment(self, members: list[str]) -> dict[str, tuple[int, ...]]:
        """Range over sorted member names: the coordinator's one strategy (a new one needs a broker upgrade)."""
        out: dict[str, tuple[int, ...]] = {}
        n, k = self.config.partitions, len(members)
        per, extra = divmod(n, k) if k else (0, 0)
        start = 0
        for i, m in enumerate(sorted(members)):
            size = per + (1 if i < extra else 0)
            out[m] = tuple(range(start, start + size))
            start += size
        return out

    # ---------------------------------------------------------------- the consumers
    def _on_start(self, arg: tuple[str, dict[str, Any]]) -> None:
        name, _args = arg
        old = self.consumers.get(name)
        if old is not None and old.alive:
            return
        c = _Consumer(name, incarnation=(old.incarnation + 1) if old else 0)
        self.consumers[name] = c
        self._line(name, "joined")
        self._join(c)

    def _join(self, c: _Consumer) -> None:
        c.joining = True
        self._log("JoinGroup", c.name, True)
        self._send("c_join", (c.name, c.incarnation))

    def _on_crash(self, arg: tuple[str, dict[str, Any]]) -> None:
        c = self.consumers.get(arg[0])
        if c is None or not c.alive:
            return
        c.alive = False
        c.incarnation += 1
        c.owned = ()
        self._line(c.name, "left")  # it processes nothing more; the coordinator notices at the session timeout

    def _on_beat(self, arg: tuple[str, int]) -> None:
        c = self.consumers.get(arg[0])
        if c is None or not c.alive or c.incarnation != arg[1] or c.joining:
            return
        self._send("c_heartbeat", (c.name, c.incarnation, c.generation))

    def _on_heartbeat_answer(self, arg: tuple[str, int, str]) -> None:
        name, inc, error = arg
        c = self.consumers.get(name)
        if c is None or not c.alive or c.incarnation != inc:
            return
        if error != "NONE":
            self._log("Heartbeat", name, False, error)
            if not c.joining:  # stop, commit, give up everything, rejoin
                if c.owned:
                    self._line(name, "revoked", c.owned, c.generation)
                    c.owned = ()
                self._join(c)
            return
        self._push(self.now + self.config.heartbeat_interval_ms, "beat", (name, inc))

    def _on_join_answer(self, arg: tuple[str, int, int, tuple[int, ...]]) -> None:
        name, inc, generation, parts = arg
        c = self.consumers.get(name)
        if c is None or not c.alive or c.incarnation != inc:
            return
        self._log("JoinGroup", name, False)
        c.joining = False
        c.generation = generation
        c.owned = parts
        self._line(name, "assigned", parts, generation)
        self._push(self.now + self.config.heartbeat_interval_ms, "beat", (name, inc))

    def _on_commit(self, arg: tuple[str, dict[str, Any]]) -> None:
        c = self.consumers.get(arg[0])
        if c is None:
            return
        self._send("c_commit", (c.name, c.generation, tuple(arg[1].get("partitions", c.owned))))

    # ---------------------------------------------------------------- the coordinator
    def _on_c_heartbeat(self, arg: tuple[str, int, int]) -> None:
        name, inc, generation = arg
        if name not in self.members:
            error = "UNKNOWN_MEMBER_ID"
        elif self.state == "PreparingRebalance" or generation != self.generation:
            error = "ILLEGAL_GENERATION"
        else:
            error = "NONE"
        if name in self.members:
            self._heard(name)
        self._send("heartbeat_answer", (name, inc, error))

    def _on_c_join(self, arg: tuple[str, int]) -> None:
        name, inc = arg
        self._heard(name)
        self.parked.add(name)
        self._incarnation[name] = inc
        if self.state != "PreparingRebalance":
            self._start_rebalance()
        self._maybe_complete()

    def _on_c_commit(self, arg: tuple[str, int, tuple[int, ...]]) -> None:
        name, generation, parts = arg
        ok = generation == self.generation and all(self.owners.get(p) == name for p in parts)
        self.commits["accepted" if ok else "rejected"] += 1

    def _heard(self, name: str) -> None:
        self.members[name] = self.now
        self._push(self.now + self.config.session_timeout_ms, "session_check", name)

    def _on_session_check(self, name: str) -> None:
        last = self.members.get(name)
        if last is None or self.now - last < self.config.session_timeout_ms or name in self.parked:
            return
        del self.members[name]  # declared dead
        for p in [p for p, o in self.owners.items() if o == name]:
            del self.owners[p]
        if self.state == "PreparingRebalance":
            self._maybe_complete()
        else:
            self._start_rebalance()
            self._maybe_complete()

    def _start_rebalance(self) -> None:
        self.state = "PreparingRebalance"
        self.rebalances += 1
        self._round += 1
        self._push(self.now + self.config.rebalance_timeout_ms, "rebalance_timeout", self._round)

    def _on_rebalance_timeout(self, round_: int) -> None:
        if round_ != self._round or self.state != "PreparingRebalance":
            return
        for name in [m for m in self.members if m not in self.parked]:
            del self.members[name]  # did not rejoin in time: declared dead
        self._maybe_complete()

    def _maybe_complete(self) -> None:
        if self.state != "PreparingRebalance" or not self.parked or set(self.members) - self.parked:
            return
        self.generation += 1
        members = sorted(self.parked)
        plan = self.assignment(members)
        self.owners = {p: m for m, ps in plan.items() for p in ps}  # the draft stores them (in ZooKeeper)
        self.generations.append((self.now, self.generation, tuple(members)))
        self.state = "Stable"
        self.parked = set()
        for m in members:
            self._send("join_answer", (m, self._incarnation[m], self.generation, plan[m]))
