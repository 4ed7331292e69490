"""The runs the pictures are drawn from: the simulator's stories of the protocol's history.

A :class:`Story` names a built-in scenario of ``groupspec simulate`` with its options; :func:`run`
runs it (deterministically: same seed, same run) and turns its trace into per-partition ownership
intervals. The intervals are read with the trace format's rules (an eager ``assigned`` is the whole new
assignment, a cooperative one adds; ``revoked``/``lost`` remove; ``left`` releases everything).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from groupspec.reference.sim import ScenarioOptions, ScenarioReport, run_scenario


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
    hub: str = "coordinator"  # the swim lanes' first lane: who the members talk to
    gen_label: str = "gen"  # what the strips' dashed lines are called (KIP-848: the group epoch)
    # (ms, member, kind, title) drawn on a member's lane: "notified" (a ZooKeeper watch fired), "claimed" /
    # "claim-failed" (a ZooKeeper-era rebalance attempt), "stale" (it acted on an old view of the group)
    notes: list[tuple[int, str, str, str]] = field(default_factory=list)
    # (from_ms, to_ms, partition, title): two consumers claim one partition at once, each from its own view
    claims: list[tuple[int, int, tuple[str, int], str]] = field(default_factory=list)
    # the trace the simulator wrote itself (the KIP-848 stories; the pictures are drawn from ``intervals``)
    sim_trace: list[dict[str, Any]] = field(default_factory=list)


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


def run_zookeeper(story: Story, joins: list[tuple[int, str, str]], disturbance_ms: int, end_ms: int,
                  lagging: tuple[tuple[str, int], ...] = ()) -> Run:
    """A run of the ZooKeeper-era group (reference/history/zookeeper_group.py): ``joins`` are (ms, start|close|crash,
    consumer); ``lagging`` the consumers whose ZooKeeper server lags (ms). The generation lines mark each
    change of the registry the consumers were notified of; the notes and claims come from the group's
    record of notifications and rebalance attempts."""
    from groupspec.reference.history import ZkConfig, ZkGroup

    zk = ZkGroup(ZkConfig(seed=0, partitions=story.partitions, lagging=lagging))
    for t, action, name in joins:
        zk.at(t, action, name)
    zk.run_until(end_ms)
    out = from_trace(story, zk.trace, end_ms, None, [])
    out.start_ms, out.assignor, out.hub = disturbance_ms - 4000, "range, computed by every consumer", "zookeeper"
    out.generations = [(t, k) for k, (t, _members) in enumerate(zk.registry_history) if k and t >= disturbance_ms]
    out.totals = {"notifications": zk.notifications, "rebalance_attempts": zk.rebalance_attempts,
                  "failed_claims": zk.failed_claims, "gave_up": zk.gave_up}
    failed = {(t, who): (p, holder) for t, who, p, holder, _view in zk.claims}
    for t, who in zk.notified:
        out.notes.append((t, who, "notified", f"{who}: ZooKeeper's watch fired at {t / 1000:.3f}s"))
    for t, who, view, share, ok in zk.attempts:
        seen = "view " + ", ".join(view)
        if ok:
            out.notes.append((t, who, "claimed", f"{who} claims {_parts(share)} ({seen}): created"))
        else:
            p, holder = failed[(t, who)]
            out.notes.append((t, who, "claim-failed", f"{who} claims {_parts(share)} ({seen}): t-{p} is held by {holder}"))
        truth = zk.view_at(t)
        if view != truth:
            missing = sorted(set(truth) ^ set(view))
            out.notes.append((t, who, "stale", f"{who} acts on a stale view ({seen}; it misses {', '.join(missing)})"))
    out.claims = double_claims(zk.attempts, zk.gave_up_log, zk.trace, end_ms)
    return out


def double_claims(attempts: list[tuple[int, str, tuple[str, ...], tuple[int, ...], bool]], gave_up: list[tuple[int, str]],
                  trace: list[dict[str, Any]], end_ms: int) -> list[tuple[int, int, tuple[str, int], str]]:
    """When two consumers' latest decisions (the share each computed from its own view) name one partition.

    A consumer's decision stands from its rebalance attempt until its next one, until it gives up, or until
    it leaves; the owner node goes to one of them (the other's claim fails), but both have picked it."""
    events: list[tuple[int, int, str, tuple[int, ...], tuple[str, ...]]] = []
    for t, who, view, share, _ok in attempts:
        events.append((t, 1, who, share, view))
    for t, who in gave_up:
        events.append((t, 0, who, (), ()))
    for e in trace:
        if e["event"] == "left":
            events.append((int(e["ts_ms"]), 0, e["member"], (), ()))
    decision: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {}
    open_: dict[int, tuple[int, str]] = {}
    out: list[tuple[int, int, tuple[str, int], str]] = []
    for t, _order, who, share, view in sorted(events, key=lambda e: (e[0], e[1], e[2])):
        decision[who] = (share, view)
        now: dict[int, str] = {}
        parts = {p for s, _v in decision.values() for p in s}
        for p in sorted(parts):
            by = sorted(w for w, (s, _v) in decision.items() if p in s)
            if len(by) > 1:
                now[p] = " and ".join(f"{w} (view {', '.join(decision[w][1])})" for w in by)
        for p, (since, text) in list(open_.items()):
            if now.get(p) != text:
                out.append((since, t, ("t", p), f"t-{p} claimed by {text}"))
                del open_[p]
        for p, text in now.items():
            if p not in open_:
                open_[p] = (t, text)
    for p, (since, text) in open_.items():
        out.append((since, end_ms, ("t", p), f"t-{p} claimed by {text}"))
    return sorted(out)


def run_coordinator_side(story: Story, actions: list[tuple[int, str, str]], start_ms: int, end_ms: int) -> Run:
    """A run of the coordinator-side assignment group (reference/history/coordinator_side_group.py, the 0.9 draft),
    drawn from ``start_ms`` to ``end_ms``."""
    from groupspec.reference.history import CoordinatorSideGroup, CsConfig

    g = CoordinatorSideGroup(CsConfig(seed=0, partitions=story.partitions))
    for t, action, name in actions:
        g.at(t, action, name)
    g.run_until(end_ms)
    out = from_trace(story, g.trace, end_ms, None, g.transcript)
    out.start_ms, out.assignor = start_ms, "range, computed by the coordinator"
    out.generations = [(t, gen) for t, gen, _members in g.generations if t >= start_ms]
    out.totals = {"rebalances": sum(1 for t, _g, _m in g.generations if t >= start_ms)}
    return out


def _parts(share: tuple[int, ...]) -> str:
    return "{" + ", ".join(f"t-{p}" for p in share) + "}" if share else "nothing"


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
        m = cast(str, e.get("member"))  # a member's line (a topic line has none, and reads none)
        t, kind = int(e["ts_ms"]), e["event"]
        if kind == "topic":
            for n in range(int(e["partitions"])):
                tp = (e["topic"], n)
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
    intervals: dict[tuple[str, int], list[tuple[int, int, str | None]]] = {}
    for p, cs in cuts.items():
        spans = []
        for k, (t, who) in enumerate(cs):
            nxt = cs[k + 1][0] if k + 1 < len(cs) else end
            if nxt > t:
                spans.append((t, nxt, who))
        intervals[p] = spans
    return Run(story, rep, members, sorted(parts), intervals, transcript, alive, end_ms=end)


def run_next_generation(story: Story, schedule: list[tuple[int, str, int]], start_ms: int, end_ms: int) -> Run:
    """A run of the next-generation protocol's simulator (reference/sim/consumer_sim.py, KIP-848): ``schedule`` is
    (ms, start|crash, slot) as in its ``scale-out`` and ``rolling-restart`` stories. The simulator is stepped
    here, and after every 100 ms step what each member owns (a member the coordinator knows, with an epoch) is
    written as trace lines; each heartbeat answer that changed a member's epoch or what it owns is a note."""
    from groupspec.reference.sim import STEP_MS, ConsumerSimulation

    sim = ConsumerSimulation(story.members, story.partitions, seed=0)
    trace: list[dict[str, Any]] = [{"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": story.partitions}]
    notes: list[tuple[int, str, str, str]] = []
    gens: list[tuple[int, int]] = []
    held: dict[str, set[tuple[str, int]]] = {}
    seen: dict[str, tuple[int, frozenset[tuple[str, int]]]] = {}
    todo = sorted(schedule)
    epoch = 0

    def line(name: str, event: str, parts: set[tuple[str, int]] | None = None, gen: int = 0) -> None:
        ev: dict[str, Any] = {"ts_ms": sim.now, "group": "g", "member": name, "event": event}
        if parts is not None:
            ev["partitions"] = [list(tp) for tp in sorted(parts)]
        ev["generation"], ev["protocol"] = gen, "cooperative"
        trace.append(ev)

    while sim.now <= end_ms:
        while todo and todo[0][0] <= sim.now:
            _t, action, slot = todo.pop(0)
            name = f"c{slot + 1}"
            if action == "start":
                sim.start(slot)
                line(name, "joined")
            else:
                sim.crash(slot)
                line(name, "left")
                held[name] = set()
                seen.pop(name, None)
        sim.step()
        if sim.coord.group_epoch != epoch:
            epoch = sim.coord.group_epoch
            gens.append((sim.now, epoch))
        for slot, p in sorted(sim.procs.items()):
            name, c = f"c{slot + 1}", p.client
            known = c.member_id in sim.coord.members and c.epoch > 0
            now_owned = {(str(t), int(q)) for t, q in c.owned} if known else set()
            before = held.get(name, set())
            if before - now_owned:
                line(name, "revoked", before - now_owned, c.epoch)
            if now_owned - before:
                line(name, "assigned", now_owned - before, c.epoch)
            held[name] = now_owned
            state = (c.epoch, frozenset(c.owned))
            if seen.get(name) != state:
                shown = ", ".join(f"{t}-{q}" for t, q in sorted(c.owned)) or "nothing"
                notes.append((sim.now, name, "claimed", f"{name}: heartbeat answered, epoch {c.epoch}, owns {shown}"))
                seen[name] = state
        sim.now += STEP_MS
    out = from_trace(story, trace, end_ms, None, [])
    out.start_ms, out.assignor, out.notes, out.gen_label = start_ms, "uniform, computed by the coordinator", notes, "epoch"
    out.generations = [(t, g) for t, g in gens if t >= start_ms]
    out.totals = {"group_epoch": epoch, "heartbeats": sim.report.heartbeats}
    out.sim_trace = sim.trace  # the simulator's own trace, for the one trace checker (the tests judge it)
    return out
