"""The KIP-848 model's own paths replayed on the reference *reconciling consumer*: the consumer half of the client checks.

As :mod:`.client_walks` does for the classic client: the Kafka walks of the consumer protocol
(:mod:`.kafka_consumer_walks`) send the model's heartbeats to Kafka's coordinator and compare the group; what a
*member* does with an answer (the epoch it takes, what it revokes first and what it adds only then, that it gives
everything up on ``FENCED_MEMBER_EPOCH`` or ``UNKNOWN_MEMBER_ID`` and rejoins with epoch 0, that
``UNRELEASED_INSTANCE_ID`` stops it, which requests it has in flight) the coordinator never sees. Here the model
leads, and each member slot of the model (``model/consumer.py``, ``model/consumer_flight.py``) is mirrored by a
reference reconciling consumer (``groupspec.reference.consumer.ReconcilingConsumer``: Kafka's
``ConsumerMembershipManager`` in miniature, written without the model). Every answer the model's member receives is
handed to the reference member as the response to its heartbeat; every request the model's member sends must be one
the reference member sends (its epoch, and the partitions it reports when it reports them); and after every step each
running member of the model must be where its reference member is:

* its member epoch, the partitions it owns, the assignment it reconciles towards, its subscription;
* running, paused (its process stalled: it sends nothing) or stopped (fatal: ``UNRELEASED_INSTANCE_ID``, as Kafka's
  ``ConsumerHeartbeatRequestManager`` treats it);
* its requests in flight: a heartbeat whose answer is on its way (Kafka's client keeps one heartbeat in flight), the
  OffsetCommits sent and not yet delivered, oldest first (one connection delivers in order: the model's late commit
  must be the oldest one the reference member sent).

How a model step becomes the reference member's input: ``ConsumerGroupHeartbeat`` its heartbeat request and, as the
response, the model's answer (``Consumer.handle`` on the state before the step), then ``assign`` (the new partitions
are taken on the answer when nothing is left to revoke); ``RevokePartitions`` its ``revoke`` (commit, then
``onPartitionsRevoked``: revocation is its own step in the model); ``LoseHeartbeatAnswer`` /
``DelayHeartbeatAnswer`` the same request with the answer dropped or held, ``ReceiveHeartbeatAnswer`` the held answer;
``SendOffsetCommit`` its commit timer, ``DeliverOffsetCommit`` the oldest commit it sent; ``Start`` and
``EarlyRestart`` a new process, ``Crash`` its end (its requests in flight dropped with the connection),
``LeaveGroup`` its ``close`` (the leave heartbeat: epoch -1, -2 if static), ``Pause`` / ``Resume`` its process
stalled and back, ``ChangeSubscription`` ``subscribe``. The coordinator's own steps (session and rebalance timeouts,
a new partition) change no member.

The answer to a delivered OffsetCommit is compared too: the model's ``commit_answer`` against the reference
coordinator's rule (``ConsumerGroupCoordinator.offset_commit``: ``ConsumerGroup.validateOffsetCommit``, KIP-1251)
applied to the model's member record as it is at delivery (its epoch, assigned and pending-revocation partitions and
their assignment epochs); a new group epoch needs what the reference coordinator bumps it for (a member joined or was
removed, a subscription changed, a partition was added); and where the instance asks for the range assignor, every new target against Kafka's
RangeAssignor (the reference's server-side one, deterministic; the uniform one may choose among balanced targets).

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``groupspec.reference`` (the
reconciling consumer, the coordinator's commit rule).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from groupspec.reference.actor import Send, TimerFired
from groupspec.reference.consumer import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerGroupCoordinator,
                                          ConsumerOffsetCommit, HeartbeatResponse, ReconcilingConsumer)
from groupspec.reference.errors import Error

# The walks: (variant, assignor, members, partitions, topics, faults, budget, walks, steps); walks 0: the instance
# explored (every step of every state, ``explore``)
CONSUMER_CLIENT_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("consumer", "uniform", 3, 3, 1, "join,leave,crash,timeout,zombie,lose-answer,late-answer,late-commit", 6, 150, 40),
    ("consumer", "range", 2, 3, 2, "join,leave,crash,subscription,partitions,lose-answer,late-answer,late-commit", 6, 150, 40),
    ("consumer-static", "uniform", 3, 3, 1,
     "join,leave,crash,timeout,zombie,lose-answer,late-answer,late-commit,early-restart", 6, 150, 40),
    # every state of a small instance: the in-flight faults with pauses, two commits, a fence and its rejoin
    ("consumer", "uniform", 2, 2, 1, "zombie,lose-answer,late-answer,late-commit,timeout", 2, 0, 0),
    # lost answers alone: a client two answers behind its member, answered FENCED_MEMBER_EPOCH (its record kept), and
    # its rejoin with epoch 0
    ("consumer", "uniform", 3, 2, 1, "join,lose-answer", 3, 0, 0),
)
SEED = 20261128
FAIR_BIAS = 0.6

_ERRORS = {"FENCED_MEMBER_EPOCH": Error.FENCED_MEMBER_EPOCH, "UNKNOWN_MEMBER_ID": Error.UNKNOWN_MEMBER_ID,
           "UNRELEASED_INSTANCE_ID": Error.UNRELEASED_INSTANCE_ID, "STALE_MEMBER_EPOCH": Error.STALE_MEMBER_EPOCH,
           "OK": Error.NONE}


class Divergence(AssertionError):
    """The model's member and the reference member disagree; the message names the walk, the step, what differs."""


@dataclass
class _Slot:
    """One member slot's reference process: its consumer, whether it is stalled, its requests in flight."""

    ref: ReconcilingConsumer
    paused: bool = False
    answer: HeartbeatResponse | None = None  # a heartbeat answer on its way (late-answer)
    commits: list[tuple[int, frozenset[tuple[str, int]]]] = field(default_factory=list)  # OffsetCommits in flight


@dataclass
class _Record:
    """The model's member record as the reference coordinator's commit rule reads one (its ``Member``'s fields)."""

    member_id: str
    epoch: int
    assigned: set[tuple[str, int]]
    revoking: set[tuple[str, int]]
    since: dict[tuple[str, int], int]
    left: bool = False
    instance_id: str | None = None


class _Mirror:
    """One walk: the model's members and their reference consumers."""

    def __init__(self, proto: Any) -> None:
        cfg = proto.cfg
        self.proto = proto
        self.static = bool(proto.static_members)
        self.names = [f"t{k}" for k in range(cfg.topics)]
        self.tp: list[tuple[str, int]] = []
        for b in range(cfg.partitions):
            t = cfg.topic_of[b]
            self.tp.append((self.names[t], sum(1 for x in range(b) if cfg.topic_of[x] == t)))
        self.bit = {tp: b for b, tp in enumerate(self.tp)}
        self.slots: list[_Slot | None] = [None] * cfg.members
        self.starts = 0
        self.stats: dict[str, int] | None = None  # what the walks met (the tests read it): answers, commits, steps
        # the range assignor asked for (the instance's, not the model's reading of it): each new target is Kafka's
        # RangeAssignor's (the reference's server-side one, deterministic); the uniform one may pick any balanced
        # target, so it is not compared (the Kafka walks' assignor-choice)
        self.range = cfg.assignor == "range"

    def fork(self) -> "_Mirror":
        import copy

        new = object.__new__(_Mirror)
        new.__dict__.update(self.__dict__)
        new.slots = copy.deepcopy(self.slots)
        return new

    # ---------------------------------------------------------------------------- values
    def mask(self, parts: Any) -> int:
        return sum(1 << self.bit[tp] for tp in parts)

    def parts(self, mask: int) -> set[tuple[str, int]]:
        return {self.tp[b] for b in range(len(self.tp)) if mask >> b & 1}

    def topic_mask(self, topics: Any) -> int:
        return sum(1 << self.names.index(t) for t in topics)

    def topics(self, mask: int) -> list[str]:
        return [n for k, n in enumerate(self.names) if mask >> k & 1]

    def start(self, i: int, topics: int) -> None:
        self.starts += 1
        self.slots[i] = _Slot(ReconcilingConsumer(f"m{i}-{self.starts}", self.topics(topics),
                                                  instance_id=f"i{i}" if self.static else None))

    def count(self, what: str) -> None:
        if self.stats is not None:
            self.stats[what] = self.stats.get(what, 0) + 1

    def response(self, ans: tuple[Any, ...]) -> HeartbeatResponse:
        """The model's answer ``(OK, epoch, assignment)`` or ``(error,)`` as a ConsumerGroupHeartbeat response."""
        self.count(f"answer {ans[0]}")
        if ans[0] != "OK":
            return HeartbeatResponse(_ERRORS[ans[0]])
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(self.parts(ans[2])):
            by_topic.setdefault(t, []).append(p)
        return HeartbeatResponse(Error.NONE, member_epoch=ans[1], assignment=by_topic)

    # ---------------------------------------------------------------------------- driving
    def _running(self, i: int, what: str) -> _Slot:
        sl = self.slots[i]
        if sl is None:
            raise Divergence(f"the model's member {i} {what}; it has no running process")
        if sl.paused:
            raise Divergence(f"the model's member {i} {what}; its process is paused (stalled: it sends nothing)")
        return sl

    def _send_heartbeat(self, s: Any, i: int) -> _Slot:
        sl = self._running(i, "sends a ConsumerGroupHeartbeat")
        if sl.answer is not None:
            raise Divergence(f"the model's member {i} sends a ConsumerGroupHeartbeat; its reference member still waits "
                             f"for the answer to the one in flight (one heartbeat in flight)")
        req = sl.ref.heartbeat_request()
        c = s.clients[i]
        if req.member_epoch != c.epoch:
            raise Divergence(f"the model's member {i} heartbeats with epoch {c.epoch}; its reference member's request "
                             f"carries {req.member_epoch}")
        if req.topic_partitions is not None:
            owned = self.mask((t, p) for t, ps in req.topic_partitions.items() for p in ps)
            if owned != c.owned:
                raise Divergence(f"the model's member {i} reports owning {_bits(c.owned)}; its reference member "
                                 f"reports {_bits(owned)}")
        return sl

    def _apply(self, sl: _Slot, resp: HeartbeatResponse) -> None:
        sl.ref.on_heartbeat_response(resp)
        sl.ref.assign()  # the new partitions, taken on the answer only when nothing is left to revoke

    def step(self, s: Any, a: Any, t: Any) -> None:
        kind = type(a).__name__
        i = a.member
        self.count(kind)
        if kind in ("Start", "EarlyRestart"):
            if self.slots[i] is not None:
                raise Divergence(f"the model starts member {i}'s process; its previous one still runs")
            self.start(i, t.clients[i].topics)
        elif kind == "Crash":
            self.slots[i] = None  # its heartbeat and commits in flight are dropped with its connection
        elif kind == "LeaveGroup":
            sl = self._running(i, "leaves the group")
            req = sl.ref.leave_request()
            want = LEAVE_GROUP_STATIC_MEMBER_EPOCH if self.static else LEAVE_GROUP_MEMBER_EPOCH
            if req.member_epoch != want:
                raise Divergence(f"member {i} leaves; its reference member's leave heartbeat carries epoch "
                                 f"{req.member_epoch}, not {want}")
            self.slots[i] = None
        elif kind == "Pause":
            self._running(i, "pauses").paused = True
        elif kind == "Resume":
            sl = self.slots[i]
            if sl is None or not sl.paused:
                raise Divergence(f"the model's member {i} resumes; its process was not paused")
            sl.paused = False
        elif kind == "ChangeSubscription":
            self._running(i, "changes its subscription").ref.subscribe(self.topics(t.clients[i].topics))
        elif kind in ("ConsumerGroupHeartbeat", "LoseHeartbeatAnswer", "DelayHeartbeatAnswer"):
            sl = self._send_heartbeat(s, i)
            resp = self.response(self.proto.handle(s, i)[1])
            if kind == "ConsumerGroupHeartbeat":
                self._apply(sl, resp)
            elif kind == "DelayHeartbeatAnswer":
                sl.answer = resp
        elif kind == "ReceiveHeartbeatAnswer":
            sl = self._running(i, "receives a late heartbeat answer")
            if sl.answer is None:
                raise Divergence(f"the model's member {i} receives a heartbeat answer; its reference member has no "
                                 f"heartbeat in flight")
            resp, sl.answer = sl.answer, None
            self._apply(sl, resp)
        elif kind == "RevokePartitions":
            sl = self._running(i, "revokes partitions")
            if not sl.ref.revoke():
                raise Divergence(f"the model's member {i} revokes partitions; its reference member has nothing to "
                                 f"revoke (owns {sorted(sl.ref.owned)}, assigned {sorted(sl.ref.assigned)})")
        elif kind == "SendOffsetCommit":
            sl = self._running(i, "sends an OffsetCommit")
            sends = sl.ref.handle(0, TimerFired("commit"))
            commits = [x.message for x in sends if isinstance(x, Send) and isinstance(x.message, ConsumerOffsetCommit)]
            if not commits:
                raise Divergence(f"the model's member {i} sends an OffsetCommit; its reference member sends none")
            sl.commits.append((commits[0].member_epoch, frozenset(commits[0].offsets)))
        elif kind == "DeliverOffsetCommit":
            sl = self.slots[i]
            if sl is None or not sl.commits:
                raise Divergence(f"the model delivers member {i}'s OffsetCommit; its reference member has none in flight")
            epoch, parts = sl.commits.pop(0)
            model = s.clients[i].commit
            if (epoch, self.mask(parts)) != (model[0], model[1]):
                raise Divergence(f"the model delivers member {i}'s OffsetCommit (epoch {model[0]}, {_bits(model[1])}); "
                                 f"the oldest its reference member sent is (epoch {epoch}, {_bits(self.mask(parts))})")
            self.check_commit(s, i, epoch, model[1])
        if t.group.epoch != s.group.epoch:
            self.check_bump(s.group, t.group, kind)
        if self.range and (t.group.target != s.group.target or t.group.epoch != s.group.epoch):
            self.check_target(t.group)
        for k, m in enumerate(t.clients):
            why = self.compare(k, m)
            if why is not None:
                raise Divergence(f"member {k}: {why}")

    def check_commit(self, s: Any, i: int, epoch: int, parts: int) -> None:
        """The model's answer to member ``i``'s OffsetCommit against the reference coordinator's rule, on the model's
        member record."""
        g = s.group
        want = self.proto.commit_answer(s, i, epoch, parts)
        coord = ConsumerGroupCoordinator("g", {n: 0 for n in self.names})
        coord.group_epoch = coord.assignment_epoch = g.epoch
        records: dict[str, Any] = {}  # (read as the coordinator's own member records: the same fields)
        for k, r in enumerate(g.members):
            if r is None:
                continue
            since = {self.tp[p]: e for p, e in enumerate(r.since)} if r.since else {}
            records[f"m{k}"] = _Record(f"m{k}", r.epoch, self.parts(r.assigned), self.parts(r.revoking), since,
                                       left=r.left, instance_id=f"i{k}" if r.static else None)
        coord.members.update(records)
        got = coord.offset_commit(f"m{i}", epoch, {tp: 0 for tp in sorted(self.parts(parts))})
        r = g.members[i]
        if r is not None and r.left:  # a static member that left: Kafka's STALE_MEMBER_EPOCH, the model's UNKNOWN
            same = (got == Error.NONE) == (want == "OK")
        else:
            same = got == _ERRORS[want]
        self.count(f"commit {want}" + (" older epoch" if r is not None and epoch != r.epoch else ""))
        if not same:
            raise Divergence(f"member {i}'s OffsetCommit (epoch {epoch}, {_bits(parts)}): the model answers {want}; the "
                             f"reference coordinator's rule on the same member record {got.name}")

    @staticmethod
    def check_bump(g: Any, h: Any, kind: str) -> None:
        """A new group epoch needs what the reference coordinator bumps it for (``ConsumerGroupCoordinator._bump``'s
        callers, Kafka's): a member joined or was removed, a subscription changed, a subscribed topic grew."""
        def basis(x: Any) -> tuple[Any, ...]:
            return x.partitions, tuple(None if r is None else r.topics for r in x.members)

        if basis(g) == basis(h):
            raise Divergence(f"the model bumps the group epoch ({g.epoch} -> {h.epoch}) at {kind}; nothing the reference "
                             f"coordinator bumps it for changed (no member joined or was removed, no subscription "
                             f"changed, no partition was added)")

    def check_target(self, g: Any) -> None:
        """A new target of a group asked to assign by range against the reference's server-side range assignor."""
        from groupspec.reference.assignors.server import get_server

        counts = {n: 0 for n in self.names}
        for b in range(len(self.tp)):
            if g.partitions >> b & 1:
                counts[self.tp[b][0]] += 1
        subs = {f"m{k}": self.topics(r.topics) for k, r in enumerate(g.members) if r is not None}
        want = get_server("range").assign(counts, subs, None)
        for k, r in enumerate(g.members):
            got = self.mask((t, p) for t, ps in want.get(f"m{k}", {}).items() for p in ps) if r is not None else 0
            if got != g.target[k]:
                raise Divergence(f"the model's target for member {k} is {_bits(g.target[k])}; Kafka's range assignor "
                                 f"(the reference's) gives it {_bits(got)} (subscriptions {subs}, partitions {counts})")
        self.count("target range")

    def compare(self, k: int, m: Any) -> str | None:
        from groupspec.model import Proc

        sl = self.slots[k]
        if sl is not None and sl.ref.fatal is not None:
            if m.proc != Proc.DOWN:
                return f"its reference member stopped ({sl.ref.fatal.name}, fatal); the model's member runs on"
            self.slots[k] = None
            return None
        if m.proc == Proc.DOWN:
            if sl is not None:
                return "the model's process is down; its reference member runs on"
            return None
        if sl is None:
            return "the model's member runs; it has no reference process"
        ref = sl.ref
        if sl.paused != (m.proc == Proc.PAUSED):
            return f"the model's member is {m.proc.name}; its reference process is {'paused' if sl.paused else 'running'}"
        if m.epoch != ref.epoch:
            return f"the model's member is at epoch {m.epoch}; its reference member at {ref.epoch}"
        if m.owned != self.mask(ref.owned):
            return f"the model's member owns {_bits(m.owned)}; its reference member {_bits(self.mask(ref.owned))}"
        if m.assigned != self.mask(ref.assigned):
            return (f"the model's member reconciles towards {_bits(m.assigned)}; its reference member towards "
                    f"{_bits(self.mask(ref.assigned))}")
        if m.topics != self.topic_mask(ref.topics):
            return f"the model's member subscribes to {self.topics(m.topics)}; its reference member to {ref.topics}"
        if (m.answer is not None) != (sl.answer is not None):
            return (f"the model's member {'has' if m.answer is not None else 'has no'} heartbeat answer on its way; its "
                    f"reference member {'has' if sl.answer is not None else 'has none'}")
        if (1 if m.commit is not None else 0) != len(sl.commits):
            return (f"the model's member has {1 if m.commit is not None else 0} OffsetCommit in flight; its reference "
                    f"member {len(sl.commits)}")
        return None


def _bits(mask: int) -> str:
    return "{" + ",".join(str(b) for b in range(mask.bit_length()) if mask >> b & 1) + "}"


def _setup(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str,
           budget: int) -> tuple[Any, Any, _Mirror]:
    from groupspec.model import Config, Proc, make

    cfg = Config(members=members, partitions=partitions, topics=topics, budget=budget, assignor=assignor,
                 faults=frozenset(f for f in faults.split(",") if f))
    proto = make(variant, cfg)
    s0 = proto.init_states()[0]
    mirror = _Mirror(proto)
    for k, c in enumerate(s0.clients):
        if c.proc == Proc.UP:
            mirror.start(k, c.topics)
    return proto, s0, mirror


def run_walks(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str, budget: int,
              walks: int, steps: int, seed: int = SEED, only: frozenset[int] | None = None,
              stats: dict[str, int] | None = None) -> str | None:
    """``walks`` seeded random walks of the model (whatever ``groupspec.model`` is loaded now), each member mirrored by
    a reference reconciling consumer; raises :class:`Divergence` at the first difference. ``only``: these walks;
    ``stats``: filled with what they met."""
    from .reach import current

    rec = current()
    for w in range(walks):
        if only is not None and w not in only:
            continue
        if rec is not None:
            rec.segment(w)
        rng = random.Random(seed * 1000 + w)
        proto, s, mirror = _setup(variant, assignor, members, partitions, topics, faults, budget)
        mirror.stats = stats
        path: list[str] = []
        for _n in range(steps):
            succ = list(proto.successors(s))
            if not succ:
                break
            fair = [x for x in succ if x[0].fair]
            if fair and len(fair) < len(succ) and rng.random() < FAIR_BIAS:
                succ = fair
            a, t = succ[rng.randrange(len(succ))]
            path.append(repr(a))
            try:
                mirror.step(s, a, t)
            except Divergence as e:
                raise Divergence(f"client:{variant} walk {w} (seed {seed}) step {len(path)} {path[-1]}: {e}; "
                                 f"path {' '.join(path)}") from None
            s = t
    return None


def explore(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str, budget: int,
            limit: int = 50_000, stats: dict[str, int] | None = None) -> str | None:
    """Every step of every state of the model's instance (breadth first, each state once), taken with the reference
    members as some path to that state left them; raises :class:`Divergence` at the first difference."""
    from collections import deque

    proto, s0, m0 = _setup(variant, assignor, members, partitions, topics, faults, budget)
    m0.stats = stats
    seen: dict[Any, None] = {proto.exact_key(s0): None}
    parent: dict[Any, tuple[Any, str]] = {}
    queue = deque([(s0, m0)])
    while queue and len(seen) < limit:
        s, mirror = queue.popleft()
        for a, t in proto.successors(s):
            key = proto.exact_key(t)
            m = mirror.fork()
            try:
                m.step(s, a, t)
            except Divergence as e:
                path, at = [repr(a)], proto.exact_key(s)
                while at in parent:
                    at, name = parent[at]
                    path.append(name)
                raise Divergence(f"client:{variant} (explored, {len(seen)} states) {repr(a)}: {e}; path "
                                 f"{' '.join(reversed(path))}") from None
            if key not in seen:
                seen[key] = None
                parent[key] = (proto.exact_key(s), repr(a))
                queue.append((t, m))
    return None


def check(job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run: the walks of one job (or those in ``only``), or its instance explored; a divergence as its
    failure, else None."""
    try:
        variant, assignor, members, partitions, topics, faults, budget, walks, steps = job
        if walks == 0:
            return explore(variant, assignor, members, partitions, topics, faults, budget)
        return run_walks(variant, assignor, members, partitions, topics, faults, budget, walks, steps, only=only)
    except Divergence as e:
        return str(e)
