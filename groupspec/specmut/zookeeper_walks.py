"""The ZooKeeper-era model's paths replayed on the reference's ZooKeeper-era group: the reverse direction for history.

``model/zookeeper.py`` (Kafka 0.8's high-level consumer: no coordinator, each consumer rebalances alone from its own
read of the consumer directory) was compared with nothing independent but the reference's scenarios. The reference
has its own implementation, written without the model: ``reference/history/zookeeper_group.py``, the ensemble
(``ZooKeeper``: the registry and its history, the owner nodes, the sessions) and one ``ZkConsumer`` per process,
actors on the one contract (``reference/actor.py``). Here the model leads: each of its steps is handed to those
actors as the event it stands for, their commands are carried out as ``reference/sim/actor_sim.py`` carries them
(a ZooKeeper call is a synchronous link; a watch notification waits until the model's consumer acts on it; a timer
waits until the model's step that fires it), and after every step the model's state must be the actors':

* the registry (``/consumers/<g>/ids``) and every owner node (``/owners/<topic>/<p>``) the ensemble's;
* every running consumer's owned partitions its actor's, and, once it has read the directory, its view the list its
  actor last read; whether it waits to retry a claim (``pending``: its actor has a retry timer of its current epoch),
  with how many retries left, and whether it gave up (its actor's retries ran out since its last notification);
* a registered consumer is one the ensemble has registered, whether its process runs or not.

How a model step becomes the actors' input: ``Register`` the consumer's ``start`` (a new process, a new actor, when
its old session expired under it: Kafka's ``handleNewSession`` drops everything and registers again);
``Rebalance`` the watch notification the ensemble sent it (it must have one pending: a consumer rebalances only when
its watch fired), ``RebalanceStale`` the same with its read served one write behind (the ensemble's ``lag`` for it, for
that read: a lagging server); ``RetryClaims`` its retry timer (it must have one of its current epoch); ``Start`` a new
actor; ``LeaveGroup`` its ``close``; ``Crash`` its ``crash`` (the ensemble starts the session's expiry timer);
``ZkSessionExpired`` that timer; ``ExpireLive`` (a session lost while the process runs: a network blip) the session's
loss as the ensemble sees it, and its timer at once; ``Pause``/``Resume`` hold and release the actor's events.

Two things the reference does not model, and the mirror stands in for: a watch left on a lagging server fires
again when that server applies the change (after a stale read the consumer is owed a notification: the model's
"needless extra rebalance"), and a running consumer whose session expired under it re-registers as a new actor (the
reference's consumer has no ``handleNewSession``).

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``groupspec.reference`` (the
history group's actors and the actor contract).
"""
from __future__ import annotations

import copy
import random
from collections import deque
from typing import Any

from groupspec.reference.actor import Command, Invoked, Received, Send, SetTimer, TimerFired
from groupspec.reference.history import ZkConfig, ZkConsumer, ZkRecord, ZooKeeper
from groupspec.reference.sim import Address

# (variant, assignor, members, partitions, topics, faults, budget, walks, steps); walks 0: the instance explored
ZK_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("zookeeper", "range", 2, 2, 1, "join,leave,crash,timeout,zombie", 2, 0, 0),
    ("zookeeper", "range", 3, 2, 1, "join,leave,crash,timeout,zombie", 1, 0, 0),
    ("zookeeper", "range", 3, 2, 1, "join,leave,crash,timeout,zombie", 3, 300, 40),
    ("zookeeper", "range", 3, 3, 1, "join,leave,crash,timeout,zombie", 5, 400, 40),
)
SEED = 20261129
FAIR_BIAS = 0.7
ENSEMBLE = "zookeeper"  # the ensemble's name among the actors (the reference's)
STEP_MS = 10  # the mirror's clock moves this far per model step (each registry write at its own time)


class Divergence(AssertionError):
    """The model and the reference's ZooKeeper-era group disagree; the message names the step and what differs."""


def _name(i: int) -> str:
    return f"c{i}"  # sorted names sort as the model's slots (up to ten consumers)


def _mask(parts: Any) -> int:
    return sum(1 << p for p in parts)


def _bits(mask: int) -> str:
    return "{" + ",".join(str(b) for b in range(mask.bit_length()) if mask >> b & 1) + "}"


class _Mirror:
    """One path: the ensemble and the consumers' actors, driven by the model's steps."""

    def __init__(self, members: int, partitions: int, max_retries: int) -> None:
        self.config = ZkConfig(partitions=partitions, max_retries=max_retries, read_lag_ms=(0, 0))
        self.record = ZkRecord()
        self.zk = ZooKeeper(self.config, random.Random(0))  # read lags are (0, 0): the stream is never drawn
        self.n = members
        self.now = STEP_MS
        self.actors: list[ZkConsumer | None] = [None] * members
        self.inc = [-1] * members
        self.started = [False] * members  # its actor was started (registered once)
        self.paused = [False] * members
        self.watch: list[Any] = [None] * members  # a pending watch notification (the ensemble's message)
        self.timer: list[str | None] = [None] * members  # its pending retry timer's key
        self.gave_up = [False] * members  # its retries ran out since its last notification
        self.read = [False] * members  # its actor has read the directory (a view to compare)
        # after a stale read: the registry writes its lagging server had applied (its watch there fires only once
        # that server applies the write it missed, so a later read sees at least that write)
        self.floor: list[int] = [0] * members
        self.expiry: dict[str, str] = {}  # the ensemble's pending session-expiry timers, by consumer name
        self.fired: list[int] = []  # the consumers the ensemble sent a watch notification in this step

    def fork(self) -> "_Mirror":
        return copy.deepcopy(self)

    # ---------------------------------------------------------------------------- carrying out commands
    def spawn(self, i: int) -> None:
        self.actors[i] = ZkConsumer(_name(i), self.config, self.record)
        self.inc[i] += 1
        self.started[i] = self.paused[i] = self.gave_up[i] = self.read[i] = False
        self.floor[i] = 0
        self.watch[i] = self.timer[i] = None

    def deliver(self, i: int, event: Any) -> None:
        """Hand ``event`` to consumer ``i``'s actor and carry out the commands, synchronous calls first to last."""
        self.need(i)
        before = len(self.record.gave_up_log)
        queue: deque[tuple[Any, Any]] = deque([(i, event)])
        while queue:
            dst, ev = queue.popleft()
            src: str | Address
            cmds: list[Command]
            if dst == ENSEMBLE:
                cmds, src = self.zk.handle(self.now, ev), ENSEMBLE
            else:
                a = self.actors[dst]
                if a is None:
                    continue
                cmds, src = a.handle(self.now, ev), Address(_name(dst), self.inc[dst])
            for c in cmds:
                if isinstance(c, SetTimer):
                    if src == ENSEMBLE:
                        self.expiry[c.key.split(":", 2)[2]] = c.key
                    else:
                        self.timer[dst] = c.key
                    continue
                if not isinstance(c, Send):  # a listener call: the owned partitions are compared instead
                    continue
                to = c.to
                if to == ENSEMBLE:
                    queue.append((ENSEMBLE, Received(src, c.message)))
                elif isinstance(to, Address):  # the ensemble's answer to a call: synchronous
                    k = int(to.name[1:])
                    if self.actors[k] is not None and self.inc[k] == to.incarnation:
                        queue.append((k, Received(Address(ENSEMBLE, 0), c.message)))
                else:  # a watch notification: waits until the model's consumer acts on it
                    k = int(str(to)[1:])
                    self.fired.append(k)
                    if self.actors[k] is not None:
                        self.watch[k] = c.message
        if len(self.record.gave_up_log) > before:
            self.gave_up[i] = True

    def ensemble(self, event: Any) -> None:
        """Hand ``event`` to the ensemble (a session's timer, a connection lost) and carry out its commands."""
        for c in self.zk.handle(self.now, event):
            if isinstance(c, SetTimer):
                self.expiry[c.key.split(":", 2)[2]] = c.key
            elif isinstance(c, Send) and not isinstance(c.to, Address):
                k = int(str(c.to)[1:])
                self.fired.append(k)
                if self.actors[k] is not None:
                    self.watch[k] = c.message

    def lose_session(self, i: int) -> None:
        """Consumer ``i``'s session is lost while its actor lives on, unaware: the ensemble sees the connection gone
        (the message the consumer's client sends when its process dies, from a copy of it) and expires it at once."""
        actor = self.need(i)
        for c in copy.copy(actor).handle(self.now, Invoked("crash")):
            if isinstance(c, Send) and c.to == ENSEMBLE:
                self.ensemble(Received(Address(_name(i), self.inc[i]), c.message))
        self.fire_expiry(i)

    def fire_expiry(self, i: int) -> None:
        key = self.expiry.pop(_name(i), None)
        if key is None:
            raise Divergence(f"the model's consumer {i}'s session expires; the ensemble has no expiry pending for it")
        self.ensemble(TimerFired(key))

    # ---------------------------------------------------------------------------- the model's steps
    def need(self, i: int) -> ZkConsumer:
        a = self.actors[i]
        if a is None:
            raise Divergence(f"the model's consumer {i} acts; it has no running actor")
        return a

    def step(self, s: Any, a: Any, t: Any, herd: tuple[int, int] | None = None) -> None:
        """The model's step ``s -a-> t`` on the actors; ``herd``: the model's watches fired by it
        (``Spec.notifications``: the group's size, and one per consumer registered before and after)."""
        self.now += STEP_MS
        kind, i = type(a).__name__, a.member
        self.fired = []
        changes = self.zk.changes
        if kind == "Register":
            if self.actors[i] is None or self.started[i]:
                self.spawn(i)  # a new session after the old one expired under it (handleNewSession)
            self.started[i] = True
            self.deliver(i, Invoked("start"))
        elif kind in ("Rebalance", "RebalanceStale"):
            self.need(i)
            w = self.watch[i]
            if w is None:
                raise Divergence(f"the model's consumer {i} rebalances; no watch notification is pending for it")
            self.watch[i] = None
            stale = kind == "RebalanceStale"
            writes = len(self.zk.registry_history)
            if stale:  # its read served by a server one write behind
                if writes - 1 <= self.floor[i]:
                    raise Divergence(f"the model's consumer {i} reads the directory from a lagging server again; that "
                                     f"server has not applied the write it missed, so its watch there has not fired")
                self.zk.lag[_name(i)] = self.now - self.zk.registry_history[-1][0] + 1
            self.gave_up[i] = False
            try:
                self.deliver(i, Received(Address(ENSEMBLE, 0), w))
            finally:
                self.zk.lag.pop(_name(i), None)
            self.read[i] = True
            if stale:  # the watch it set on the lagging server fires once that server applies the change
                self.watch[i] = w
            self.floor[i] = writes - 1 if stale else 0
        elif kind == "RetryClaims":
            actor = self.need(i)
            key = self.timer[i]
            if key is None or key != f"rebalance:{actor.epoch}":
                raise Divergence(f"the model's consumer {i} retries its claims; its actor has no retry pending")
            self.timer[i] = None
            self.deliver(i, TimerFired(key))
        elif kind == "Start":
            if self.actors[i] is not None:  # the application starts a process that is down (ZkGroup.act)
                raise Divergence(f"the model starts consumer {i}; its process runs already")
            self.spawn(i)
        elif kind == "LeaveGroup":
            self.deliver(i, Invoked("close"))
            self.actors[i] = None
        elif kind == "Crash":
            if self.actors[i] is None:
                raise Divergence(f"the model crashes consumer {i}; its process is not running")
            self.deliver(i, Invoked("crash"))
            self.actors[i] = None
        elif kind in ("ZkSessionExpired", "ExpireLive") and _name(i) not in self.zk.registered:
            raise Divergence(f"the model's consumer {i}'s session expires; the ensemble holds no session for it")
        elif kind == "ZkSessionExpired":
            if self.actors[i] is not None:  # paused: its connection gone as the ensemble sees it
                self.lose_session(i)
            else:
                self.fire_expiry(i)
        elif kind == "ExpireLive":
            self.lose_session(i)
        elif kind == "Pause":
            self.paused[i] = True
        elif kind == "Resume":
            self.paused[i] = False
        else:
            raise Divergence(f"the mirror has no reference event for the model's step {kind}")
        why = self.compare(t)
        if why is not None:
            raise Divergence(why)
        # the ensemble notifies every consumer registered after the change; a new registration's own watch is the
        # one it sets with its first read (not one the change fired): the model counts the others
        fired = sorted(k for k in self.fired if not (kind == "Register" and k == i))
        before, after = s.registry, t.registry
        want = None if self.zk.changes == changes else (max(bin(before).count("1"), bin(after).count("1")), len(fired))
        if herd != want:
            raise Divergence(f"the model's step fires {herd} watch notifications (group size, watches); the ensemble "
                             f"{want} (to {', '.join(_name(k) for k in fired) or 'nobody'})")

    # ---------------------------------------------------------------------------- the comparison
    def owed(self, t: Any, enabled: set[tuple[str, int]], faults: frozenset[str]) -> str | None:
        """What the actors will do on their own must be a step the model offers in ``t``: a crashed consumer's session
        expiry the ensemble has pending, a running consumer's retry after its backoff (or, a notification since,
        its rebalance); and, while the budget lasts, what the application and the network may do to the group with
        the faults of the instance: crash a running process (``crash``), close one that is not paused (``leave``),
        start one that is down and whose session is gone (``join``), lose a running consumer's session (``timeout``),
        pause one (``zombie``)."""
        can = {"Crash": "crash", "LeaveGroup": "leave", "Start": "join", "ExpireLive": "timeout", "Pause": "zombie"}
        for i in range(self.n):
            name = _name(i)
            if t.budget > 0:
                up, registered = self.actors[i] is not None, name in self.zk.registered
                may = {"Crash": up, "LeaveGroup": up and not self.paused[i], "Start": not up and not registered,
                       "ExpireLive": up and not self.paused[i] and registered, "Pause": up and not self.paused[i]}
                for step, fault in can.items():
                    if fault in faults and may[step] and (step, i) not in enabled:
                        return f"the reference's consumer {i} may undergo {step} ({fault}); the model offers no such step"
            if self.actors[i] is None and name in self.expiry and name in self.zk.lost and name in self.zk.registered:
                if ("ZkSessionExpired", i) not in enabled:
                    return f"the ensemble will expire crashed consumer {i}'s session; the model offers no such step"
            actor = self.actors[i]
            if actor is not None and not self.paused[i] and name in self.zk.registered \
                    and self.timer[i] == f"rebalance:{actor.epoch}" \
                    and not enabled & {("RetryClaims", i), ("Rebalance", i)}:
                return f"consumer {i}'s actor will retry its claims after the backoff; the model offers no such step"
        return None

    def compare(self, t: Any) -> str | None:
        from groupspec.model import Proc

        zk = self.zk
        reg = _mask(int(n[1:]) for n in zk.registry())
        if t.registry != reg:
            return f"the model's registry is {_bits(t.registry)}; the ensemble's {_bits(reg)}"
        owners = tuple(int(zk.owners[p][1:]) if p in zk.owners else -1 for p in range(len(t.owners)))
        if t.owners != owners:
            return f"the model's owner nodes are {t.owners}; the ensemble's {owners}"
        for i, c in enumerate(t.consumers):
            actor = self.actors[i]
            if (c.proc == Proc.DOWN) != (actor is None):
                return f"consumer {i}'s process is {c.proc.name} in the model; its actor {'runs' if actor else 'is gone'}"
            if c.registered != (_name(i) in zk.registered):
                return f"consumer {i} is {'' if c.registered else 'not '}registered in the model; not so in the ensemble"
            if actor is None:
                continue
            if c.owned != _mask(actor.owned):
                return f"consumer {i} owns {_bits(c.owned)} in the model; its actor {_bits(_mask(actor.owned))}"
            if not c.registered:
                continue  # its session is gone: the model waits for its new one (Register), nothing more to compare
            view = 0
            if self.read[i]:
                mine = [v for _ms, who, v, _sh, _ok in self.record.attempts if who == _name(i)]
                view = _mask(int(n[1:]) for n in mine[-1]) if mine else 0
            if c.view != view:
                return f"consumer {i}'s view is {_bits(c.view)} in the model; its actor last read {_bits(view)}"
            pending = self.timer[i] is not None and self.timer[i] == f"rebalance:{actor.epoch}"
            if c.pending != pending:
                return (f"consumer {i} {'waits' if c.pending else 'does not wait'} to retry its claims in the model; "
                        f"its actor {'does' if pending else 'does not'}")
            if pending and c.retries != self.config.max_retries - actor.retries + 1:
                return (f"consumer {i} has {c.retries} retries left in the model; its actor "
                        f"{self.config.max_retries - actor.retries + 1}")
            if c.failed != self.gave_up[i]:
                return f"consumer {i} {'gave' if c.failed else 'did not give'} up in the model; its actor did not so"
        return None


def _setup(members: int, partitions: int, faults: str, budget: int) -> tuple[Any, Any]:
    from groupspec.model import Config, Proc, make

    cfg = Config(members=members, partitions=partitions, topics=1, budget=budget, assignor="range",
                 faults=frozenset(f for f in faults.split(",") if f))
    proto = make("zookeeper", cfg)
    s0 = proto.init_states()[0]
    m0 = _Mirror(members, partitions, int(getattr(proto, "max_retries")))
    for k, c in enumerate(s0.consumers):
        if c.proc != Proc.DOWN:
            m0.spawn(k)
    return proto, (s0, m0)


def run_walks(members: int, partitions: int, faults: str, budget: int, walks: int, steps: int, seed: int = SEED,
              only: frozenset[int] | None = None) -> str | None:
    """``walks`` seeded random walks of the model (whatever ``groupspec.model`` is loaded now) mirrored on the
    reference's actors; the first difference as one paragraph, or None. ``only``: just these walks."""
    from .reach import current

    rec = current()
    for w in range(walks):
        if only is not None and w not in only:
            continue
        if rec is not None:
            rec.segment(w)
        rng = random.Random(seed * 1000 + w)
        proto, (s, mirror) = _setup(members, partitions, faults, budget)
        path: list[str] = []
        for _n in range(steps):
            succ = list(proto.successors(s))
            why = mirror.owed(s, {(type(a).__name__, a.member) for a, _t in succ}, proto.cfg.faults)
            if why is not None:
                raise Divergence(f"zookeeper walk {w} (seed {seed}) after step {len(path)}: {why}; path {' '.join(path)}")
            if not succ:
                break
            fair = [x for x in succ if x[0].fair]
            if fair and len(fair) < len(succ) and rng.random() < FAIR_BIAS:
                succ = fair
            a, t = succ[rng.randrange(len(succ))]
            path.append(repr(a))
            try:
                mirror.step(s, a, t, proto.notifications(s, t))
            except Divergence as e:
                raise Divergence(f"zookeeper walk {w} (seed {seed}) step {len(path)} {path[-1]}: {e}; "
                                 f"path {' '.join(path)}") from None
            s = t
    return None


def explore(members: int, partitions: int, faults: str, budget: int, limit: int = 20_000) -> str | None:
    """Every step of every state of the model's instance (breadth first, each state once, up to ``limit`` states),
    taken with the actors as some path to that state left them: the first difference, or None."""
    proto, (s0, m0) = _setup(members, partitions, faults, budget)
    seen = {proto.key(s0)}
    parent: dict[Any, tuple[Any, str]] = {}
    queue = deque([(s0, m0)])
    while queue and len(seen) < limit:
        s, mirror = queue.popleft()
        succ = list(proto.successors(s))
        why = mirror.owed(s, {(type(a).__name__, a.member) for a, _t in succ}, proto.cfg.faults)
        if why is not None:
            path, at = [], proto.key(s)
            while at in parent:
                at, name = parent[at]
                path.append(name)
            raise Divergence(f"zookeeper (explored, {len(seen)} states): {why}; path {' '.join(reversed(path))}")
        for a, t in succ:
            key = proto.key(t)
            m = mirror.fork()
            try:
                m.step(s, a, t, proto.notifications(s, t))
            except Divergence as e:
                path, at = [repr(a)], proto.key(s)
                while at in parent:
                    at, name = parent[at]
                    path.append(name)
                raise Divergence(f"zookeeper (explored, {len(seen)} states) {repr(a)}: {e}; path "
                                 f"{' '.join(reversed(path))}") from None
            if key not in seen:
                seen.add(key)
                parent[key] = (proto.key(s), repr(a))
                queue.append((t, m))
    return None


def check(job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run: one job's walks (or those in ``only``), or its instance explored; a divergence, else None."""
    try:
        _variant, _assignor, members, partitions, _topics, faults, budget, walks, steps = job
        if walks == 0:
            return explore(members, partitions, faults, budget)
        return run_walks(members, partitions, faults, budget, walks, steps, only=only)
    except Divergence as e:
        return str(e)
