"""Records in the simulator: producers appending, consumers fetching and committing, a ledger.

Theory of operation
-------------------
The rebalance protocol decides who owns a partition; what that costs an application shows in its
records: processed twice after a partition moved, or never processed at all. :class:`RecordFlow`
adds that layer to a :class:`~groupspec.reference.sim.simulator.Simulator` through its ``hooks``
(NOTE(sim-hooks)), without changing the coordinator or the consumer:

* **Producers.** Every partition's log grows by ``RecordsConfig.rate_per_s`` records a second from
  time 0: the log end offset of a partition at ``t`` ms is ``floor(t * rate / 1000)``.
* **Fetching.** The consumer's ``poll`` takes one record from every owned partition (its
  ``positions`` advance); the flow clamps a position to the log end (nothing to fetch past it) and,
  when a partition is newly assigned to a member, sets its position to the group's committed offset
  as the coordinator stores it (``OffsetFetch``; 0 when nothing is committed: ``auto.offset.reset =
  earliest``).
* **Processing.** Every record a member fetched while owning the partition is processed by it at
  once; the :class:`Ledger` keeps, per partition, the offset ranges each member processed.
* **Committing**, per ``RecordsConfig.strategy`` (:data:`STRATEGIES`):

  - ``auto``: ``enable.auto.commit=true`` (every 5 s and in ``onJoinPrepare``), nothing in the listener;
  - ``on-revoke``: auto-commit off; the rebalance listener commits what it gives up in
    ``onPartitionsRevoked`` (and only there);
  - ``sync``: auto-commit off; ``commitSync`` after every poll that processed records: the application
    processes nothing more until the commit is answered;
  - ``async``: auto-commit off; ``commitAsync`` after every poll that processed records.

At the end, :meth:`Ledger.summary` counts per partition: records produced, processed, processed more
than once (each extra processing counts), and skipped (an offset below the group's final committed
offset, or below the furthest processed offset, that nobody ever processed).

Fault switch (mutation testing only): ``commit_ahead`` commits ``position + COMMIT_AHEAD`` (the
offsets of records fetched but not yet processed - at-most-once by mistake); the ledger must report
skipped records when such a member's partition moves.

The flow reads the coordinator's stored offsets (``Simulator.log``), so a failover keeps them; it
never imports ``model/``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..classic import ConsumerConfig, Send

if TYPE_CHECKING:  # pragma: no cover
    from .simulator import Simulator, SimProc

__all__ = ["STRATEGIES", "FAULTS", "RecordsConfig", "RecordFlow", "Ledger", "strategy_config"]

STRATEGIES = ("auto", "on-revoke", "sync", "async")
FAULTS = frozenset({"commit_ahead"})
COMMIT_AHEAD = 5

TP = tuple[str, int]


@dataclass(frozen=True)
class RecordsConfig:
    """The record layer's inputs."""

    strategy: str = "auto"
    rate_per_s: float = 10.0  # records appended per partition per second (a member takes 5/s: a backlog)
    faults: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown commit strategy {self.strategy!r}; choose from {', '.join(STRATEGIES)}")
        if self.rate_per_s < 0:
            raise ValueError(f"rate_per_s must be >= 0, got {self.rate_per_s}")
        bad = self.faults - FAULTS
        if bad:
            raise ValueError(f"unknown records fault(s): {', '.join(sorted(bad))}")


def strategy_config(config: ConsumerConfig, strategy: str) -> ConsumerConfig:
    """The consumer settings of a commit strategy (the rest of ``config`` unchanged)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown commit strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if strategy == "auto":
        return replace(config, enable_auto_commit=True, commit_on_revoke=False)
    if strategy == "on-revoke":
        return replace(config, enable_auto_commit=False, commit_on_revoke=True)
    return replace(config, enable_auto_commit=False, commit_on_revoke=False)


@dataclass
class Ledger:
    """Who processed which offsets of which partition."""

    ranges: dict[TP, list[tuple[int, int, str]]] = field(default_factory=dict)

    def processed(self, tp: TP, start: int, end: int, member: str) -> None:
        if end > start:
            self.ranges.setdefault(tp, []).append((start, end, member))

    def counts(self, tp: TP) -> list[tuple[int, int, int]]:
        """Maximal offset intervals ``(start, end, times processed)`` covering ``[0, furthest)``."""
        edges: dict[int, int] = {}
        for s, e, _ in self.ranges.get(tp, []):
            edges[s] = edges.get(s, 0) + 1
            edges[e] = edges.get(e, 0) - 1
        out: list[tuple[int, int, int]] = []
        level, prev = 0, 0
        for x in sorted(edges):
            if x > prev:
                out.append((prev, x, level))
            level += edges[x]
            prev = x
        return out

    def summary(self, produced: dict[TP, int], committed: dict[TP, int]) -> dict[str, int]:
        """Totals over every partition (``produced``: log end offsets; ``committed``: the group's
        final committed offsets)."""
        processed = duplicates = skipped = 0
        for tp in sorted(set(produced) | set(self.ranges)):
            furthest = 0
            for s, e, n in self.counts(tp):
                processed += (e - s) * n
                if n > 1:
                    duplicates += (e - s) * (n - 1)
                if n == 0:
                    skipped += e - s
                furthest = e
            c = committed.get(tp, 0)
            if c > furthest:
                skipped += c - furthest  # committed past anything processed: never processed
        return {
            "records_produced": sum(produced.values()),
            "records_processed": processed,
            "records_processed_twice": duplicates,
            "records_skipped": skipped,
        }


class RecordFlow:
    """The record layer on a simulator: call :meth:`attach` before the run, :meth:`summary` after."""

    def __init__(self, config: RecordsConfig | None = None) -> None:
        self.config = config or RecordsConfig()
        self.ledger = Ledger()
        self.commits = 0
        self.commits_rejected = 0
        # (process name, incarnation) -> partition -> the position up to which it has been processed
        self._pos: dict[tuple[str, int], dict[TP, int]] = {}
        self._sim: Simulator | None = None

    def attach(self, sim: Simulator) -> None:
        self._sim = sim
        sim.hooks.append(self._after_consumer)

    def log_end(self, now_ms: int) -> int:
        return int(now_ms * self.config.rate_per_s // 1000)

    def _committed(self, sim: Simulator) -> dict[TP, int]:
        return dict(sim.log.offsets.get(sim.config.group_id, {}))

    def _after_consumer(self, sim: Simulator, p: SimProc) -> list[Send]:
        # runs after every input of every member: written for speed (locals, the committed offsets and
        # the in-flight commits looked up only when needed); the rules are those of the module docstring
        c = p.consumer
        if c.protocol_type != "consumer":
            return []  # Connect workers run tasks, not partitions of records
        key = (p.name, p.incarnation)
        pos = self._pos.get(key)
        if pos is None:
            pos = self._pos[key] = {}
        events = c.events
        fresh: set[TP] = set()
        if len(events) > p.seen_events:
            for e in events[p.seen_events :]:
                if e.event == "assigned":
                    fresh.update((str(t), int(n)) for t, n in e.partitions)
                elif e.event == "commit" and e.accepted is not None:
                    if e.accepted:
                        self.commits += 1
                    elif e.error is not None:
                        self.commits_rejected += 1
        owned = set(c.owned)
        if pos:
            for tp in [tp for tp in pos if tp not in owned]:
                del pos[tp]
        if not owned:
            return []  # nothing owned: nothing fetched, processed or committed
        cfg = self.config
        end = int(sim.now * cfg.rate_per_s // 1000)  # log_end
        positions = c.positions
        stored: dict[TP, int] | None = None
        blocked: bool | None = None
        progressed = False
        ranges = self.ledger.ranges
        for tp in sorted(owned):
            done = pos.get(tp)
            if done is None or tp in fresh:
                if stored is None:
                    stored = sim.log.offsets.get(sim.config.group_id, {})
                start = min(stored.get(tp, 0), end)
                pos[tp] = start
                positions[tp] = start  # OffsetFetch: start from the group's committed offset
                continue
            if blocked is None:
                blocked = cfg.strategy == "sync" and any(f.kind == "commit" for f in c.inflight.values())
            if blocked:
                positions[tp] = done  # inside commitSync: nothing more is processed
                continue
            cur = positions.get(tp, done)
            if cur > end:
                cur = end
            positions[tp] = cur
            if cur > done:
                got = ranges.get(tp)  # Ledger.processed, inline
                if got is None:
                    got = ranges[tp] = []
                got.append((done, cur, p.name))
                pos[tp] = cur
                progressed = True
        if "commit_ahead" in cfg.faults:
            for tp in owned:
                positions[tp] = pos[tp] + COMMIT_AHEAD
        sends: list[Send] = []
        if progressed and cfg.strategy in ("sync", "async"):
            sends = c.commit_async(sim.now)
        if "commit_ahead" in cfg.faults:
            for tp in owned:
                positions[tp] = pos[tp]
        return sends

    def summary(self) -> dict[str, int]:
        assert self._sim is not None, "attach the flow to a simulator first"
        sim = self._sim
        end = self.log_end(sim.now)
        parts = [(t, n) for t, count in sim.topic_counts.items() for n in range(count)]
        out = self.ledger.summary({tp: end for tp in parts}, self._committed(sim))
        out["commits_accepted"] = self.commits
        out["commits_rejected"] = self.commits_rejected
        return out
