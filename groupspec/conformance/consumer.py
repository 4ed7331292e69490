"""Conformance of the reference KIP-848 implementation to the model: a Hypothesis stateful refinement check.

Theory of operation
-------------------
The machine drives the *reference* (``reference.consumer.coordinator.ConsumerGroupCoordinator`` and one
``reference.consumer.client.ReconcilingConsumer`` per running process) through random runs: heartbeats,
revocations, assignments, pauses, crashes, restarts, leaves, session and rebalance timeouts, live
expiries, subscription changes and topic growth. Each rule *names the model step it implements*
(``ConsumerGroupHeartbeat`` with the answer applied, ``RevokePartitions``, ...). After every rule the reference is mapped
to a model state by the abstraction function :func:`abstract` (member ids to slots, partitions to
bits, the coordinator's members and target, each client's epoch, owned and given partitions) and
the check demands:

1. **Refinement**: the abstract state is exactly what the model's step gives from the previous
   abstract state — or, where the model's step is not enabled (a heartbeat that changes nothing),
   the previous state unchanged (a stutter);
2. **Safety on the implementation**: the model's properties (exclusive ownership, commit fencing)
   hold in the abstract state, and the coordinator accepts an offset commit from a process exactly
   when the model says it would.

The server-side assignor is a parameter of the specification: the model instance used here
computes its target with the reference's assignor (translated to bit masks), so the check is about
the protocol; the assignor is checked on its own (``tests/test_consumer_protocol_reference.py``).

The machine is the frame's (:mod:`.frame`): this module is the family's plug-in, its driver
(:class:`Driver`: the reference, the last abstract state, the step the last rule implemented), its
abstraction function (:meth:`Driver.abstract`), its judge (:meth:`Driver.judge`) and its rules. Running
processes are a :class:`~hypothesis.stateful.Bundle`: the initial ones and each ``start`` add one,
``crash`` and ``leave`` consume one; the other rules act on a process drawn from it or on the
``k``-th member the rule's guard allows. Each rule's precondition is the model's guard as far as it
can be read without the member (the perturbation budget, the model instance's faults, some member the
model enables the step for); inside the rule the drawn member's own guard decides, and where it does
not hold the rule changes nothing (the judge then demands the reference did not move either).

Mutants: every fault switch of the reference coordinator and consumer (:data:`.mutants.MUTANTS`, family
``consumer``) must make this check fail; ``groupspec verify`` lists them in its mutation table.
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Any, Iterable, TypeAlias

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, consumes, initialize, invariant, multiple, precondition, rule

from groupspec.model import Config, Proc, actions as A
from groupspec.model import consumer as model_consumer, consumer_flight as model_flight, properties as model_properties
from groupspec.reference.consumer import ConsumerGroupCoordinator, MemberState as RMS, ReconcilingConsumer

from .frame import ConformanceMachine, Family, derandomized, machine, run as run_frame

# the model's KIP-848 page and its properties, through the model's front door
Consumer, ConsumerStatic, ConsumerClient = model_consumer.Consumer, model_consumer.ConsumerStatic, model_consumer.ConsumerClient
ConsumerGroup: TypeAlias = model_consumer.ConsumerGroup
ConsumerState: TypeAlias = model_consumer.ConsumerState
Member: TypeAlias = model_consumer.Member
ConsumerGroupHeartbeat, RevokePartitions = model_consumer.ConsumerGroupHeartbeat, model_consumer.RevokePartitions
RebalanceTimeoutFence, MS = model_consumer.RebalanceTimeoutFence, model_consumer.MemberState
commit_fencing, exclusive_ownership = model_properties.commit_fencing, model_properties.exclusive_ownership

TOPIC_NAMES = ("t", "u", "v", "w")
MEMBER_STATE = {RMS.STABLE: MS.STABLE, RMS.UNREVOKED_PARTITIONS: MS.UNREVOKED_PARTITIONS,
          RMS.UNRELEASED_PARTITIONS: MS.UNRELEASED_PARTITIONS}


@dataclass(frozen=True)
class Setup:
    members: int = 3
    partitions: int = 4
    topics: int = 1
    faults: frozenset[str] = frozenset({"join", "leave", "crash", "timeout", "zombie"})
    budget: int = 3
    static: bool = False
    assignor: str = "uniform"


class Layout:
    """Partition numbering: the model's bits <-> the reference's (topic, partition)."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.tp_of: list[tuple[str, int]] = []
        for p, t in enumerate(cfg.topic_of):
            first = cfg.topic_of.index(t)
            self.tp_of.append((TOPIC_NAMES[t], p - first))
        self.bit_of = {tp: p for p, tp in enumerate(self.tp_of)}

    def mask(self, tps: Iterable[tuple[str, int]]) -> int:
        m = 0
        for tp in tps:
            m |= 1 << self.bit_of[tp]
        return m

    def tps(self, mask: int) -> list[tuple[str, int]]:
        return [self.tp_of[p] for p in range(self.cfg.partitions) if mask >> p & 1]

    def topic_mask(self, names: Iterable[str]) -> int:
        return sum(1 << TOPIC_NAMES.index(n) for n in set(names))

    def topic_names(self, mask: int) -> list[str]:
        return [TOPIC_NAMES[t] for t in range(self.cfg.topics) if mask >> t & 1]

    def counts(self, existing: int) -> dict[str, int]:
        out = {TOPIC_NAMES[t]: 0 for t in range(self.cfg.topics)}
        for p in range(self.cfg.partitions):
            if existing >> p & 1:
                out[self.tp_of[p][0]] += 1
        return out


def model_for(setup: Setup, base: type | None = None) -> tuple[Any, Layout]:
    """The model instance (``base``: a page of the consumer family, by default the setup's) whose target is
    computed by the reference's server-side assignor, and its partition numbering."""
    from groupspec.reference.assignors.server import get_server

    if base is None:
        base = ConsumerStatic if setup.static else Consumer
    cfg = Config(members=setup.members, partitions=setup.partitions, topics=setup.topics,
                 faults=setup.faults, budget=setup.budget, assignor=setup.assignor)
    layout = Layout(cfg)
    assignor = get_server(setup.assignor)

    class WithReferenceAssignor(base):  # type: ignore[misc, valid-type]
        def compute_target(self, g: ConsumerGroup) -> tuple[int, ...]:
            subs = {f"c{i + 1}": layout.topic_names(m.topics) for i, m in enumerate(g.members) if m is not None}
            current = {f"c{i + 1}": _by_topic(layout.tps(g.target[i])) for i, m in enumerate(g.members) if m is not None}
            result = assignor.assign(layout.counts(g.partitions), subs, current)
            return tuple(layout.mask((t, p) for t, ps in result.get(f"c{i + 1}", {}).items() for p in ps)
                         for i in range(cfg.members))

    return WithReferenceAssignor(cfg), layout


def _by_topic(tps: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out


class Driver:
    """The reference KIP-848 coordinator and one reconciling consumer per running process, with the last
    abstract state and the model step the last rule implemented (``None``: nothing happened)."""

    def __init__(self, setup: Setup, coordinator_faults: Iterable[str] = (), client_faults: Iterable[str] = ()) -> None:
        self.setup = setup
        self.model, self.layout = model_for(setup)
        cfg = self.model.cfg
        self.client_faults = frozenset(client_faults)
        self.state: ConsumerState = self.model.init_states()[0]
        self.coord = ConsumerGroupCoordinator("g", self.layout.counts(self.state.group.partitions),
                                              assignor=setup.assignor, faults=frozenset(coordinator_faults))
        # Slot -> the running process (or None) and its status; member ids map back to slots.
        self.proc = [c.proc for c in self.state.clients]
        self.restarts = [0] * cfg.members
        self.clients: list[ReconcilingConsumer | None] = [None] * cfg.members
        self.slot_of: dict[str, int] = {}
        self.budget = cfg.budget
        for i, c in enumerate(self.state.clients):
            if c.proc == Proc.UP:
                self.new_process(i, self.layout.topic_names(c.topics))
        self.topics_of = [self.layout.topic_names(c.topics) for c in self.state.clients]
        self.existing = self.state.group.partitions
        self.commits: list[tuple[int, set[Any]] | None] = [None] * cfg.members  # an OffsetCommit on its way
        self.action: Any = None
        self._enabled: tuple[ConsumerState, list[Any]] | None = None
        self.state = self.abstract()  # the reference as it starts is the model's initial state's stand-in
        self.judge(self.state)

    # -- the reference's side ---------------------------------------------------------------------
    def new_process(self, i: int, topics: list[str]) -> None:
        self.restarts[i] += 1
        static = self.setup.static
        mid = f"c{i + 1}" if self.restarts[i] == 1 else f"c{i + 1}.{self.restarts[i]}"
        self.clients[i] = ReconcilingConsumer(mid, topics, instance_id=f"c{i + 1}" if static else None,
                                              faults=self.client_faults)
        self.slot_of[mid] = i
        self.proc[i] = Proc.UP

    def stop(self, i: int) -> None:
        self.clients[i] = None
        self.commits[i] = None
        self.proc[i] = Proc.DOWN

    def member_id(self, i: int) -> str | None:
        for mid in self.coord.members:
            if self.slot_of[mid] == i:
                return str(mid)
        return None

    def took(self, action: Any, spend: bool = False) -> None:
        """The rule implemented the model step ``action`` (a perturbation spends the budget)."""
        if spend:
            self.budget -= 1
        self.action = action

    # -- the model's side -------------------------------------------------------------------------
    def enabled(self) -> list[Any]:
        """The model's actions enabled in the last abstract state (cached per state)."""
        if self._enabled is None or self._enabled[0] is not self.state:
            self._enabled = (self.state, [a for a, _t in self.model.successors(self.state)])
        return self._enabled[1]

    def can(self, action: Any) -> bool:
        return action in self.enabled()

    def enables(self, kind: type) -> bool:
        """The model enables a step of this kind for some member (a rule's precondition)."""
        return any(type(a) is kind for a in self.enabled())

    def allowed(self, kind: type, also: Iterable[int] = ()) -> list[int]:
        """The members the model enables a step of this kind for, and ``also`` those the reference's own
        guard allows (where the two differ, the judge tells which is wrong)."""
        steps = [(type(a), int(a.member)) for a in self.enabled()]
        return sorted({i for k, i in steps if k is kind} | set(also))

    def revoking(self) -> list[int]:
        return [i for i, c in enumerate(self.clients) if c is not None and self.proc[i] == Proc.UP and c.revoking()]

    def paused(self) -> list[int]:
        return [i for i, p in enumerate(self.proc) if p == Proc.PAUSED]

    def silent(self) -> list[int]:
        """Members whose process does not heartbeat (down or paused)."""
        return [self.slot_of[mid] for mid in self.coord.members if self.proc[self.slot_of[mid]] != Proc.UP]

    def overdue(self) -> list[int]:
        """Paused members the coordinator waits for to revoke."""
        return [self.slot_of[mid] for mid, m in self.coord.members.items()
                if self.proc[self.slot_of[mid]] == Proc.PAUSED and m.state == RMS.UNREVOKED_PARTITIONS]

    # -- the abstraction function and the judge ---------------------------------------------------
    def abstract(self) -> ConsumerState:
        lay = self.layout
        n = self.model.cfg.members
        members: list[Member | None] = [None] * n
        target = [0] * n
        for mid, m in self.coord.members.items():
            i = self.slot_of[mid]
            since: tuple[int, ...] = ()
            if self.model.in_flight:  # each partition's assignment epoch (KIP-1251), as the model keeps it
                held = m.assigned | m.revoking
                since = tuple(m.since.get(tp, 0) if tp in held else 0 for tp in lay.tp_of)
            members[i] = Member(state=MEMBER_STATE[m.state], epoch=m.epoch, previous_epoch=m.previous_epoch,
                                assigned=lay.mask(m.assigned), revoking=lay.mask(m.revoking),
                                topics=lay.topic_mask(m.topics), static=m.instance_id is not None, left=m.left,
                                since=since)
        for mid, tps in self.coord.target.items():
            if mid in self.coord.members:
                target[self.slot_of[mid]] = lay.mask(tps)
        clients = []
        for i in range(n):
            c = self.clients[i]
            topics = lay.topic_mask(self.topics_of[i])
            if c is None or self.proc[i] == Proc.DOWN:
                clients.append(ConsumerClient(topics=topics))
            else:
                sent = self.commits[i]
                clients.append(ConsumerClient(proc=self.proc[i], epoch=c.epoch, owned=lay.mask(c.owned),
                                              assigned=lay.mask(c.assigned), topics=lay.topic_mask(c.topics),
                                              commit=None if sent is None else (sent[0], lay.mask(sent[1]))))
        group = ConsumerGroup(epoch=self.coord.group_epoch, target_epoch=self.coord.assignment_epoch,
                              target=tuple(target), members=tuple(members), partitions=self.existing)
        return ConsumerState(group=group, clients=tuple(clients), budget=self.budget)

    def judge(self, after: ConsumerState) -> None:
        """Refinement of the last rule's step (none: the reference must not have moved), then safety and
        commit acceptance (see the module doc)."""
        action, self.action = self.action, None
        if action is None:
            expected = self.state
        else:
            expected = dict(self.model.successors(self.state)).get(action, self.state)
        if after != expected:
            what = f"the reference's {action!r}" if action is not None else "a rule the model has no step for"
            raise AssertionError(f"{what} does not refine the model's step:\n  reference: {after}\n  model:     {expected}")
        self.state = after
        for prop in (exclusive_ownership, commit_fencing):
            why = prop(self.model, after)  # type: ignore[arg-type]  # (the properties read any page's clients; typed on the classic State)
            if why is not None:
                raise AssertionError(f"{prop.__name__} violated by the reference: {why}")
        for i, c in enumerate(self.clients):
            if c is not None and self.proc[i] == Proc.UP and c.owned:
                got = self.coord.commit_accepted(c.member_id, c.epoch, c.owned)
                want = self.model.commit_accepted(after, i)
                if got != want:
                    raise AssertionError(f"commit from {c.member_id} at epoch {c.epoch}: reference accepts={got}, model {want}")
            sent = self.commits[i]
            if c is not None and sent is not None:  # the commit in flight, were it delivered now
                got = self.coord.commit_accepted(c.member_id, sent[0], sent[1])
                want = self.model.commit_answer(after, i, sent[0], self.layout.mask(sent[1])) == "OK"
                if got != want:
                    raise AssertionError(f"late commit from {c.member_id} at epoch {sent[0]} for {sorted(sent[1])}: "
                                         f"reference accepts={got}, model {want}")


# --------------------------------------------------------------------------------------------------
# The rules (the machine as ``self``; ``self.h`` its driver)
# --------------------------------------------------------------------------------------------------
processes = Bundle("processes")  # the slots of the running processes (up or paused)
picks = st.integers(min_value=0, max_value=5)  # the k-th of the members a rule's guard allows


def _pick(allowed: list[int], k: int) -> int:
    return allowed[k % len(allowed)]


def _budget(self: Any) -> bool:
    return bool(self.h.budget > 0)


@initialize(target=processes)
def boot(self: Any) -> Any:
    self.drivers = [Driver(self.setup_, self.coordinator_faults, self.client_faults)]
    return multiple(*[i for i, p in enumerate(self.h.proc) if p == Proc.UP])


@precondition(lambda self: all(p == Proc.DOWN for p in self.h.proc))
@rule()
def idle(self: Any) -> None:
    """No process runs (the budget may be spent): time passes, nothing happens."""


# -- protocol steps ---------------------------------------------------------------------------------
@rule(i=processes)
def heartbeat(self: Any, i: int) -> None:
    """ConsumerGroupHeartbeat, its answer applied and onPartitionsAssigned run as it arrives (a paused
    process sends nothing)."""
    d, c = self.h, self.h.clients[i]
    if c is None or d.proc[i] != Proc.UP:
        return
    c.on_heartbeat_response(d.coord.heartbeat(c.heartbeat_request()))
    c.assign()  # onPartitionsAssigned as the answer arrives (the model's step does the same)
    d.took(ConsumerGroupHeartbeat(i))


@precondition(lambda self: bool(self.h.allowed(RevokePartitions, self.h.revoking())))
@rule(k=picks)
def revoke(self: Any, k: int) -> None:
    d = self.h
    i = _pick(d.allowed(RevokePartitions, d.revoking()), k)
    c = d.clients[i]
    if c is not None and d.proc[i] == Proc.UP and c.revoke():
        d.took(RevokePartitions(i))


@precondition(lambda self: bool(self.h.allowed(A.Resume, self.h.paused())))
@rule(k=picks)
def resume(self: Any, k: int) -> None:
    d = self.h
    i = _pick(d.allowed(A.Resume, d.paused()), k)
    if d.proc[i] == Proc.PAUSED:
        d.proc[i] = Proc.UP
        d.took(A.Resume(i))


@precondition(lambda self: bool(self.h.allowed(A.SessionExpired, self.h.silent())))
@rule(k=picks)
def session_timeout(self: Any, k: int) -> None:
    d = self.h
    i = _pick(d.allowed(A.SessionExpired, d.silent()), k)
    mid = d.member_id(i)
    if mid is not None and d.proc[i] != Proc.UP:
        d.coord.expire_session(mid)
        d.took(A.SessionExpired(i))


@precondition(lambda self: bool(self.h.allowed(RebalanceTimeoutFence, self.h.overdue())))
@rule(k=picks)
def rebalance_timeout(self: Any, k: int) -> None:
    d = self.h
    i = _pick(d.allowed(RebalanceTimeoutFence, d.overdue()), k)
    mid = d.member_id(i)
    if mid is not None and d.proc[i] == Proc.PAUSED and d.coord.members[mid].state == RMS.UNREVOKED_PARTITIONS:
        d.coord.expire_rebalance(mid)
        d.took(RebalanceTimeoutFence(i))


# -- perturbations (each spends the budget) ---------------------------------------------------------
@precondition(lambda self: _budget(self) and self.h.enables(A.Start))
@rule(target=processes, k=picks)
def start(self: Any, k: int) -> Any:
    d = self.h
    i = _pick(d.allowed(A.Start), k)
    d.new_process(i, d.topics_of[i])
    d.took(A.Start(i), spend=True)
    return i


@precondition(lambda self: _budget(self) and self.h.enables(A.LeaveGroup))
@rule(target=processes, i=consumes(processes))
def leave(self: Any, i: int) -> Any:
    d, c = self.h, self.h.clients[i]
    if c is None or not d.can(A.LeaveGroup(i)):
        return i  # still running
    d.coord.heartbeat(c.leave_request())
    d.stop(i)
    d.took(A.LeaveGroup(i), spend=True)
    return multiple()


@precondition(lambda self: _budget(self) and self.h.enables(A.Crash))
@rule(target=processes, i=consumes(processes))
def crash(self: Any, i: int) -> Any:
    d = self.h
    if not d.can(A.Crash(i)):
        return i  # still running
    d.stop(i)
    d.took(A.Crash(i), spend=True)
    return multiple()


@precondition(lambda self: _budget(self) and self.h.enables(A.ExpireLive))
@rule(i=processes)
def expire_live(self: Any, i: int) -> None:
    d = self.h
    mid = d.member_id(i)
    if mid is not None and d.can(A.ExpireLive(i)):
        d.coord.expire_session(mid)
        d.took(A.ExpireLive(i), spend=True)


@precondition(lambda self: _budget(self) and self.h.enables(A.Pause))
@rule(i=processes)
def pause(self: Any, i: int) -> None:
    d = self.h
    if d.can(A.Pause(i)):
        d.proc[i] = Proc.PAUSED
        d.took(A.Pause(i), spend=True)


def _revoking_pausable(d: Driver) -> list[int]:
    """The members the model lets pause while the coordinator waits for them to revoke (UNREVOKED_PARTITIONS)."""
    members = d.state.group.members
    return [i for i in d.allowed(A.Pause) if members[i] is not None and members[i].state == MS.UNREVOKED_PARTITIONS]  # type: ignore[union-attr]  # (tested: not None)


@precondition(lambda self: _budget(self) and bool(_revoking_pausable(self.h)))
@rule(k=picks)
def pause_revoking(self: Any, k: int) -> None:
    """A member that must revoke pauses before it acknowledges (a GC pause mid-reconciliation): the rebalance
    timeout's own case, which ``pause`` reaches only by luck (the model's Pause, on the k-th such member)."""
    d = self.h
    i = _pick(_revoking_pausable(d), k)
    d.proc[i] = Proc.PAUSED
    d.took(A.Pause(i), spend=True)


@precondition(lambda self: _budget(self) and self.h.enables(A.ChangeSubscription))
@rule(i=processes)
def change_subscription(self: Any, i: int) -> None:
    d, c = self.h, self.h.clients[i]
    if c is None or not d.can(A.ChangeSubscription(i)):
        return
    last = TOPIC_NAMES[d.model.cfg.topics - 1]
    topics = sorted(set(c.topics) ^ {last})
    c.subscribe(topics)
    d.topics_of[i] = topics
    d.took(A.ChangeSubscription(i), spend=True)


@precondition(lambda self: _budget(self) and self.h.enables(A.AddPartition))
@rule()
def add_partition(self: Any) -> None:
    d = self.h
    missing = ((1 << d.model.cfg.partitions) - 1) & ~d.existing
    p = (missing & -missing).bit_length() - 1
    d.existing |= 1 << p
    t, _ = d.layout.tp_of[p]
    d.coord.add_partitions(t, d.layout.counts(d.existing)[t])
    d.took(A.AddPartition(), spend=True)


@invariant()
def topics_kept(self: Any) -> None:
    for d in self.drivers:
        for i, c in enumerate(d.clients):
            if c is not None:
                assert c.topics == sorted(d.topics_of[i])


# -- OffsetCommits delivered late (the fault ``late-commit``; only setups with that fault have these rules)
def _send_commit_kind() -> type:
    kind: type = model_flight.SendOffsetCommit
    return kind


@precondition(lambda self: _budget(self) and self.h.enables(_send_commit_kind()))
@rule(i=processes)
def send_commit(self: Any, i: int) -> None:
    d, c = self.h, self.h.clients[i]
    act = _send_commit_kind()(i)
    if c is not None and d.can(act):
        d.commits[i] = (c.epoch, set(c.owned))
        d.took(act, spend=True)


@precondition(lambda self: any(x is not None for x in self.h.commits))
@rule(k=picks)
def deliver_commit(self: Any, k: int) -> None:
    """A late OffsetCommit reaches the coordinator: its answer must be the model's (``commit_answer``)."""
    OK, DeliverOffsetCommit = model_flight.OK, model_flight.DeliverOffsetCommit
    d = self.h
    i = _pick([j for j, x in enumerate(d.commits) if x is not None], k)
    sent, c = d.commits[i], d.clients[i]
    if sent is None or c is None:
        return
    epoch, tps = sent
    want = d.model.commit_answer(d.state, i, epoch, d.layout.mask(tps)) == OK
    got = d.coord.offset_commit(c.member_id, epoch, {tp: 0 for tp in tps}).name == "NONE"
    if got != want:
        raise AssertionError(f"late commit from {c.member_id} at epoch {epoch} for {sorted(tps)}: reference "
                             f"accepts={got}, model {want}")
    d.commits[i] = None
    d.took(DeliverOffsetCommit(i))


# --------------------------------------------------------------------------------------------------
# The plug-in
# --------------------------------------------------------------------------------------------------
RULES = (boot, idle, heartbeat, revoke, resume, session_timeout, rebalance_timeout, start, leave, crash, expire_live,
         pause, pause_revoking, change_subscription, add_partition, topics_kept)
ATTRS: dict[str, Any] = {"setup_": Setup(), "coordinator_faults": frozenset(), "client_faults": frozenset()}
# Derandomized runs (the mutation table, specmut's killers, tests/test_kip848_in_flight.py) use Hypothesis
# seed 0, as the migration's do (the seed Hypothesis derives from the class name missed the in-flight commit
# mutant of issue 29 within 100 examples, caught after 300; seeds 0 to 4 each catch it within 100).
CONSUMER = Family("consumer", abstraction=Driver.abstract, judge=Driver.judge, rules=RULES, attrs=ATTRS, seed="0")
LATE_COMMITS = Family("consumer", Driver.abstract, Driver.judge, RULES + (send_commit, deliver_commit), ATTRS, "0")


def make_machine(setup: Setup = Setup(), coordinator_faults: Iterable[str] = frozenset(),
                 client_faults: Iterable[str] = frozenset()) -> type[ConformanceMachine]:
    """The consumer family's machine for one setup and one set of fault switches (mutants)."""
    family = LATE_COMMITS if "late-commit" in setup.faults else CONSUMER
    return machine(family, "ConsumerConformanceRun", setup_=setup, coordinator_faults=frozenset(coordinator_faults),
                   client_faults=frozenset(client_faults))


SETUPS = {
    "one-topic": Setup(),
    "two-topics": Setup(members=2, partitions=4, topics=2, faults=frozenset({"subscription", "partitions", "crash", "zombie"}), budget=3),
    "static": Setup(members=2, partitions=3, static=True, faults=frozenset({"join", "leave", "crash", "zombie"}), budget=3),
    "range": Setup(members=3, partitions=4, assignor="range"),
    # OffsetCommits delivered late (model/consumer_flight.py): the reference's answer (KIP-1251) is the model's
    "late-commit": Setup(members=2, partitions=2, faults=frozenset({"join", "late-commit"}), budget=3),
}


def run(setup: Setup, mutant: str | None = None, examples: int = 200, steps: int = 40, seed: int | None = None,
        shrink: bool = True) -> str | None:
    """Run the machine; ``None`` if every run conforms, else the failure's first line (``shrink=False``: the
    first failure found, not shrunk; a mutant only needs to be caught: never shrunk). ``seed``: the
    Hypothesis seed (default: derandomized, the same runs every time: the family's seed, 0)."""
    from groupspec.reference.consumer import CLIENT_FAULTS, COORDINATOR_FAULTS

    faults = {mutant} if mutant else set()
    m = make_machine(setup, faults & COORDINATOR_FAULTS, faults & CLIENT_FAULTS)
    cfg = derandomized(examples, steps, shrink=shrink and not mutant)
    if seed is not None:
        from hypothesis import settings

        cfg = settings(cfg, derandomize=False)
    return run_frame(m, cfg, seed=seed)
