"""The runs the pictures are drawn from: the simulator's stories of the protocol's history.

A :class:`Story` names a built-in scenario of ``groupspec simulate`` with its options; :func:`run`
runs it (deterministically: same seed, same run) and turns its trace into per-partition ownership
intervals. The intervals are read with the trace format's rules (an eager ``assigned`` is the whole new
assignment, a cooperative one adds; ``revoked``/``lost`` remove; ``left`` releases everything).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groupspec.reference.scenarios import ScenarioOptions, ScenarioReport, run_scenario


@dataclass(frozen=True)
class Story:
    slug: str  # file name stem of its figures
    scenario: str
    protocol: str
    title: str
    members: int = 3
    partitions: int = 6
    assignor: str | None = None

    def replay(self) -> str:
        extra = f" --assignor {self.assignor}" if self.assignor else ""
        return (f"groupspec simulate {self.scenario} --protocol {self.protocol}{extra} --members {self.members} "
                f"--partitions {self.partitions} --seed 0")


@dataclass
class Run:
    story: Story
    report: ScenarioReport | None  # None for a run of the ZooKeeper-era group (no coordinator)
    members: list[str]
    partitions: list[tuple[str, int]]
    # (partition) -> [(from_ms, to_ms, owner or None)]; None = nobody owns it while some member is alive
    intervals: dict[tuple[str, int], list[tuple[int, int, str | None]]] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    alive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    start_ms: int = 0  # the window the pictures show: from a little before the disturbance to the end
    end_ms: int = 0
    assignor: str = ""
    generations: list[tuple[int, int]] = field(default_factory=list)  # (ms, generation) as each one formed
    totals: dict[str, Any] = field(default_factory=dict)


def run(story: Story) -> Run:
    rep = run_scenario(story.scenario, ScenarioOptions(protocol=story.protocol, assignor=story.assignor,
                                                      members=story.members, partitions=story.partitions, seed=0))
    gens, seen = [], set()
    for g in rep.sim.group_log:
        if g["state"] == "CompletingRebalance" and g["generation"] not in seen:
            seen.add(g["generation"])
            gens.append((g["at"], g["generation"]))
    out = from_trace(story, rep.sim.trace, rep.ownership.end_ms, rep, rep.sim.transcript())
    out.start_ms, out.assignor, out.generations, out.totals = rep.ownership.start_ms - 4000, rep.assignor, gens, rep.totals
    return out


def run_zookeeper(story: Story, joins: list[tuple[int, str, str]], disturbance_ms: int, end_ms: int) -> Run:
    """A run of the ZooKeeper-era group (reference/zookeeper_group.py): ``joins`` are (ms, start|close|crash,
    consumer); the generation lines mark each change of the registry the consumers were notified of."""
    from groupspec.reference.zookeeper_group import ZkConfig, ZkGroup

    zk = ZkGroup(ZkConfig(seed=0, partitions=story.partitions))
    for t, action, name in joins:
        zk.at(t, action, name)
    zk.run_until(end_ms)
    out = from_trace(story, zk.trace, end_ms, None, [])
    out.start_ms, out.assignor = disturbance_ms - 4000, "range, computed by every consumer"
    out.generations = [(t, k) for k, (t, _members) in enumerate(zk.registry_history) if k and t >= disturbance_ms]
    out.totals = {"notifications": zk.notifications, "rebalance_attempts": zk.rebalance_attempts,
                  "failed_claims": zk.failed_claims, "gave_up": zk.gave_up}
    return out


def from_trace(story: Story, events: list[dict[str, Any]], end: int, rep: Any, transcript: list[dict[str, Any]]) -> Run:
    """Ownership intervals per partition, read from a trace (see the module docstring)."""
    members = sorted({e["member"] for e in events if "member" in e}, key=lambda m: (len(m), m))
    parts: set[tuple[str, int]] = set()
    for e in events:
        if e["event"] == "topic":
            parts |= {(e["topic"], p) for p in range(int(e["partitions"]))}
    owner: dict[tuple[str, int], set[str]] = {p: set() for p in parts}
    owned: dict[str, set[tuple[str, int]]] = {m: set() for m in members}
    alive_since: dict[str, int] = {}
    alive: dict[str, list[tuple[int, int]]] = {m: [] for m in members}
    cuts: dict[tuple[str, int], list[tuple[int, str | None]]] = {p: [] for p in parts}

    def mark(t: int) -> None:
        for p in sorted(parts):
            who = sorted(owner[p])
            state = who[0] if len(who) == 1 else ("two owners: " + ", ".join(who) if who else None)
            if not alive_since and state is None:
                state = "nobody running"
            if not cuts[p] or cuts[p][-1][1] != state:
                cuts.setdefault(p, []).append((t, state))

    for e in sorted(events, key=lambda e: e["ts_ms"]):
        t, kind, m = int(e["ts_ms"]), e["event"], e.get("member")
        if kind == "topic":
            for p in range(int(e["partitions"])):
                tp = (e["topic"], p)
                parts.add(tp)
                owner.setdefault(tp, set())
                cuts.setdefault(tp, [])
        ps = [(str(q[0]), int(q[1])) for q in e.get("partitions", [])] if kind in ("assigned", "revoked", "lost") else []
        if kind == "joined":
            if m not in alive_since:
                alive_since[m] = t
        elif kind == "assigned":
            if e.get("protocol", "eager") == "eager":
                for p in owned[m]:
                    owner[p].discard(m)
                owned[m] = set()
            for p in ps:
                owned[m].add(p)
                owner.setdefault(p, set()).add(m)
        elif kind in ("revoked", "lost"):
            for p in ps:
                owned[m].discard(p)
                owner.get(p, set()).discard(m)
        elif kind == "left":
            for p in owned[m]:
                owner[p].discard(m)
            owned[m] = set()
            if m in alive_since:
                alive[m].append((alive_since.pop(m), t))
        mark(t)
    for m, since in alive_since.items():
        alive[m].append((since, end))
    intervals = {}
    for p, cs in cuts.items():
        spans = []
        for k, (t, who) in enumerate(cs):
            nxt = cs[k + 1][0] if k + 1 < len(cs) else end
            if nxt > t:
                spans.append((t, nxt, who))
        intervals[p] = spans
    return Run(story, rep, members, sorted(parts), intervals, transcript, alive, end_ms=end)
