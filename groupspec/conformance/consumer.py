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

Mutants: every fault switch of the reference coordinator and consumer (``MUTANTS``) must make this
check fail; ``groupspec verify`` lists them in its mutation table.
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from groupspec.model import actions as A
from groupspec.model.consumer import (
    Consumer, ConsumerClient, ConsumerGroup, ConsumerGroupHeartbeat, ConsumerState,
    ConsumerStatic, Member, MemberState as MS, RebalanceTimeoutFence, RevokePartitions,
)
from groupspec.model.core import Config, Proc
from groupspec.model.properties import commit_fencing, exclusive_ownership
from groupspec.reference.consumer import ConsumerGroupCoordinator, MemberState as RMS, ReconcilingConsumer

COORDINATOR_MUTANTS = ("no_wait_release", "no_epoch_bump", "unfenced_commits", "early_epoch",
                       "keep_removed_holding", "no_rebalance_timeout", "accept_unknown_member")
CLIENT_MUTANTS = ("keep_on_fence", "no_ack_revocation")
MUTANTS = COORDINATOR_MUTANTS + CLIENT_MUTANTS
TOPIC_NAMES = ("t", "u", "v", "w")
_STATE = {RMS.STABLE: MS.STABLE, RMS.UNREVOKED_PARTITIONS: MS.UNREVOKED_PARTITIONS,
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

    def mask(self, tps) -> int:
        m = 0
        for tp in tps:
            m |= 1 << self.bit_of[tp]
        return m

    def tps(self, mask: int) -> list[tuple[str, int]]:
        return [self.tp_of[p] for p in range(self.cfg.partitions) if mask >> p & 1]

    def topic_mask(self, names) -> int:
        return sum(1 << TOPIC_NAMES.index(n) for n in set(names))

    def topic_names(self, mask: int) -> list[str]:
        return [TOPIC_NAMES[t] for t in range(self.cfg.topics) if mask >> t & 1]

    def counts(self, existing: int) -> dict[str, int]:
        out = {TOPIC_NAMES[t]: 0 for t in range(self.cfg.topics)}
        for p in range(self.cfg.partitions):
            if existing >> p & 1:
                out[self.tp_of[p][0]] += 1
        return out


def model_for(setup: Setup):
    """The model instance whose target is computed by the reference's server-side assignor."""
    from groupspec.reference.assignors.server import get_server

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


def _by_topic(tps) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out


class ConsumerConformance(RuleBasedStateMachine):
    """The reference driven at random, checked step by step against the model (see the module doc)."""

    setup_: Setup = Setup()
    coordinator_faults: frozenset[str] = frozenset()
    client_faults: frozenset[str] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        su = self.setup_
        self.model, self.layout = model_for(su)
        cfg = self.model.cfg
        self.state: ConsumerState = self.model.init_states()[0]
        self.coord = ConsumerGroupCoordinator("g", self.layout.counts(self.state.group.partitions),
                                              assignor=su.assignor, faults=self.coordinator_faults)
        # Slot -> the running process (or None) and its status; member ids map back to slots.
        self.proc = [c.proc for c in self.state.clients]
        self.restarts = [0] * cfg.members
        self.clients: list[ReconcilingConsumer | None] = [None] * cfg.members
        self.slot_of: dict[str, int] = {}
        self.budget = cfg.budget
        for i, c in enumerate(self.state.clients):
            if c.proc == Proc.UP:
                self._new_process(i, self.layout.topic_names(c.topics))
        self.topics_of = [self.layout.topic_names(c.topics) for c in self.state.clients]
        self.existing = self.state.group.partitions
        self.commits: list[tuple[int, set] | None] = [None] * cfg.members  # an OffsetCommit on its way (late-commit)
        self.check_now(None)

    # -- helpers ----------------------------------------------------------------------------------
    def _new_process(self, i: int, topics: list[str]) -> None:
        self.restarts[i] += 1
        static = self.setup_.static
        mid = f"c{i + 1}" if self.restarts[i] == 1 else f"c{i + 1}.{self.restarts[i]}"
        self.clients[i] = ReconcilingConsumer(mid, topics, instance_id=f"c{i + 1}" if static else None,
                                              faults=self.client_faults)
        self.slot_of[mid] = i
        self.proc[i] = Proc.UP

    def abstract(self) -> ConsumerState:
        lay = self.layout
        n = self.model.cfg.members
        members: list[Member | None] = [None] * n
        target = [0] * n
        for mid, m in self.coord.members.items():
            i = self.slot_of[mid]
            since = ()
            if self.model.in_flight:  # each partition's assignment epoch (KIP-1251), as the model keeps it
                held = m.assigned | m.revoking
                since = tuple(m.since.get(tp, 0) if tp in held else 0 for tp in lay.tp_of)
            members[i] = Member(state=_STATE[m.state], epoch=m.epoch, previous_epoch=m.previous_epoch,
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

    def check_now(self, action) -> None:
        """Refinement of the last rule's step, then safety and commit acceptance (see the module doc)."""
        after = self.abstract()
        if action is not None:
            enabled = dict(self.model.successors(self.state))
            expected = enabled.get(action, self.state)
            if after != expected:
                raise AssertionError(
                    f"the reference's {action!r} does not refine the model's step:\n  reference: {after}\n  model:     {expected}")
        self.state = after
        for prop in (exclusive_ownership, commit_fencing):
            why = prop(self.model, after)
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

    def _member_id(self, i: int) -> str | None:
        for mid, m in self.coord.members.items():
            if self.slot_of[mid] == i:
                return mid
        return None

    def _can(self, action) -> bool:
        return any(a == action for a, _t in self.model.successors(self.state))

    def _spend(self) -> None:
        self.budget -= 1

    slots = st.integers(min_value=0, max_value=5)

    # -- protocol steps ---------------------------------------------------------------------------
    @rule(i=slots)
    def heartbeat(self, i: int) -> None:
        i %= self.model.cfg.members
        c = self.clients[i]
        if c is None or self.proc[i] != Proc.UP:
            return
        c.on_heartbeat_response(self.coord.heartbeat(c.heartbeat_request()))
        c.assign()  # onPartitionsAssigned as the answer arrives (the model's step does the same)
        self.check_now(ConsumerGroupHeartbeat(i))

    def _any_revoking(self) -> bool:
        return any(c is not None and self.proc[i] == Proc.UP and c.revoking() for i, c in enumerate(self.clients))

    def _any_paused(self) -> bool:
        return Proc.PAUSED in self.proc

    def _any_silent_member(self) -> bool:
        return any(self.proc[self.slot_of[mid]] != Proc.UP for mid in self.coord.members)

    @precondition(_any_revoking)
    @rule(i=slots)
    def revoke(self, i: int) -> None:
        i %= self.model.cfg.members
        c = self.clients[i]
        if c is None or self.proc[i] != Proc.UP or not c.revoke():
            return
        self.check_now(RevokePartitions(i))

    @precondition(_any_paused)
    @rule(i=slots)
    def resume(self, i: int) -> None:
        i %= self.model.cfg.members
        if self.proc[i] != Proc.PAUSED:
            return
        self.proc[i] = Proc.UP
        self.check_now(A.Resume(i))

    @precondition(_any_silent_member)
    @rule(i=slots)
    def session_timeout(self, i: int) -> None:
        i %= self.model.cfg.members
        mid = self._member_id(i)
        if mid is None or self.proc[i] == Proc.UP:
            return
        self.coord.expire_session(mid)
        self.check_now(A.SessionExpired(i))

    @precondition(_any_paused)
    @rule(i=slots)
    def rebalance_timeout(self, i: int) -> None:
        i %= self.model.cfg.members
        mid = self._member_id(i)
        if mid is None or self.proc[i] != Proc.PAUSED or self.coord.members[mid].state != RMS.UNREVOKED_PARTITIONS:
            return
        self.coord.expire_rebalance(mid)
        self.check_now(RebalanceTimeoutFence(i))

    # -- perturbations ----------------------------------------------------------------------------
    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def start(self, i: int) -> None:
        i %= self.model.cfg.members
        if not self._can(A.Start(i)):
            return
        self._new_process(i, self.topics_of[i])
        self._spend()
        self.check_now(A.Start(i))

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def leave(self, i: int) -> None:
        i %= self.model.cfg.members
        c = self.clients[i]
        if c is None or not self._can(A.LeaveGroup(i)):
            return
        self.coord.heartbeat(c.leave_request())
        self.clients[i] = None
        self.commits[i] = None
        self.proc[i] = Proc.DOWN
        self._spend()
        self.check_now(A.LeaveGroup(i))

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def crash(self, i: int) -> None:
        i %= self.model.cfg.members
        if not self._can(A.Crash(i)):
            return
        self.clients[i] = None
        self.commits[i] = None
        self.proc[i] = Proc.DOWN
        self._spend()
        self.check_now(A.Crash(i))

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def expire_live(self, i: int) -> None:
        i %= self.model.cfg.members
        mid = self._member_id(i)
        if mid is None or not self._can(A.ExpireLive(i)):
            return
        self.coord.expire_session(mid)
        self._spend()
        self.check_now(A.ExpireLive(i))

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def pause(self, i: int) -> None:
        i %= self.model.cfg.members
        if not self._can(A.Pause(i)):
            return
        self.proc[i] = Proc.PAUSED
        self._spend()
        self.check_now(A.Pause(i))

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def change_subscription(self, i: int) -> None:
        i %= self.model.cfg.members
        c = self.clients[i]
        if c is None or not self._can(A.ChangeSubscription(i)):
            return
        last = TOPIC_NAMES[self.model.cfg.topics - 1]
        topics = sorted(set(c.topics) ^ {last})
        c.subscribe(topics)
        self.topics_of[i] = topics
        self._spend()
        self.check_now(A.ChangeSubscription(i))

    @precondition(lambda self: self.budget > 0 and "partitions" in self.setup_.faults)
    @rule()
    def add_partition(self) -> None:
        if not self._can(A.AddPartition()):
            return
        missing = ((1 << self.model.cfg.partitions) - 1) & ~self.existing
        p = (missing & -missing).bit_length() - 1
        self.existing |= 1 << p
        t, _ = self.layout.tp_of[p]
        self.coord.add_partitions(t, self.layout.counts(self.existing)[t])
        self._spend()
        self.check_now(A.AddPartition())

    @invariant()
    def topics_kept(self) -> None:
        for i, c in enumerate(self.clients):
            if c is not None:
                assert c.topics == sorted(self.topics_of[i])


class ConsumerConformanceLateCommits(ConsumerConformance):
    """The machine with OffsetCommits delivered late (the fault ``late-commit``): its own class, so the other
    setups' machines have the same rules, and draw the same derandomized runs, as before."""

    slots = ConsumerConformance.slots

    @precondition(lambda self: self.budget > 0)
    @rule(i=slots)
    def send_commit(self, i: int) -> None:
        from groupspec.model.consumer_flight import SendOffsetCommit

        i %= self.model.cfg.members
        c = self.clients[i]
        if c is None or not self._can(SendOffsetCommit(i)):
            return
        self.commits[i] = (c.epoch, set(c.owned))
        self._spend()
        self.check_now(SendOffsetCommit(i))

    def _any_commit(self) -> bool:
        return any(x is not None for x in self.commits)

    @precondition(_any_commit)
    @rule(i=slots)
    def deliver_commit(self, i: int) -> None:
        """A late OffsetCommit reaches the coordinator: its answer must be the model's (``commit_answer``)."""
        from groupspec.model.consumer_flight import DeliverOffsetCommit, OK

        i %= self.model.cfg.members
        sent, c = self.commits[i], self.clients[i]
        if sent is None or c is None:
            return
        epoch, tps = sent
        want = self.model.commit_answer(self.state, i, epoch, self.layout.mask(tps)) == OK
        got = self.coord.offset_commit(c.member_id, epoch, {tp: 0 for tp in tps}).name == "NONE"
        if got != want:
            raise AssertionError(f"late commit from {c.member_id} at epoch {epoch} for {sorted(tps)}: reference "
                                 f"accepts={got}, model {want}")
        self.commits[i] = None
        self.check_now(DeliverOffsetCommit(i))


def make_machine(setup: Setup = Setup(), coordinator_faults=frozenset(), client_faults=frozenset()) -> type:
    """A machine class for one setup and one set of fault switches (mutants)."""
    base = ConsumerConformanceLateCommits if "late-commit" in setup.faults else ConsumerConformance
    return type("ConsumerConformanceRun", (base,), {
        "setup_": setup, "coordinator_faults": frozenset(coordinator_faults), "client_faults": frozenset(client_faults),
    })


SETUPS = {
    "one-topic": Setup(),
    "two-topics": Setup(members=2, partitions=4, topics=2, faults=frozenset({"subscription", "partitions", "crash", "zombie"}), budget=3),
    "static": Setup(members=2, partitions=3, static=True, faults=frozenset({"join", "leave", "crash", "zombie"}), budget=3),
    "range": Setup(members=3, partitions=4, assignor="range"),
    # OffsetCommits delivered late (model/consumer_flight.py): the reference's answer (KIP-1251) is the model's
    "late-commit": Setup(members=2, partitions=2, faults=frozenset({"join", "late-commit"}), budget=3),
}


def run(setup: Setup, mutant: str | None = None, examples: int = 200, steps: int = 40, seed: int = 0,
        shrink: bool = True) -> str | None:
    """Run the machine; ``None`` if every run conforms, else the failure's first line (``shrink=False``: the
    first failure found, not shrunk)."""
    coord = frozenset({mutant}) if mutant in COORDINATOR_MUTANTS else frozenset()
    client = frozenset({mutant}) if mutant in CLIENT_MUTANTS else frozenset()
    machine = make_machine(setup, coord, client)
    from hypothesis import HealthCheck, Phase

    # A mutant only needs to be caught: no shrinking (its first failure is reported as found).
    phases = [Phase.explicit, Phase.generate] if mutant or not shrink else list(Phase)
    cfg = settings(max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
                   database=None, print_blob=False, suppress_health_check=list(HealthCheck), phases=phases)
    try:
        run_state_machine_as_test(machine, settings=cfg)
    except AssertionError as e:
        return str(e).splitlines()[0]
    except BaseExceptionGroup as eg:  # several distinct failures: report the first
        first = eg.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        return str(first).splitlines()[0]
    return None


# -- the mutation table ---------------------------------------------------------------------------
MUTANT_BUGS = {
    "no_wait_release": ("coordinator", "a partition is given before its previous owner acknowledged revoking it"),
    "no_epoch_bump": ("coordinator", "a new target keeps the old assignment epoch"),
    "unfenced_commits": ("coordinator", "OffsetCommit skips the member id and member epoch checks"),
    "early_epoch": ("coordinator", "a revoking member gets the new epoch before it acknowledged"),
    "keep_removed_holding": ("coordinator", "a removed member's partitions keep their partition epoch"),
    "no_rebalance_timeout": ("coordinator", "a member that does not revoke in time is not fenced"),
    "accept_unknown_member": ("coordinator", "a heartbeat from an unknown member id with epoch > 0 is accepted"),
    "keep_on_fence": ("consumer", "a fenced member keeps its partitions (no onPartitionsLost)"),
    "no_ack_revocation": ("consumer", "the member never reports its owned partitions after revoking"),
}
MUTATION_EXAMPLES = 400
MUTATION_STEPS = 40


def run_mutant(mutant: str, examples: int = MUTATION_EXAMPLES, steps: int = MUTATION_STEPS) -> dict:
    """One row of ``groupspec verify``'s mutation table: the randomized check with ``mutant`` on."""
    import time

    owner, bug = MUTANT_BUGS[mutant]
    t0 = time.perf_counter()
    why = run(SETUPS["one-topic"], mutant, examples=examples, steps=steps)
    return {"mutant": mutant, "switch owner": owner, "variant": "consumer", "bug": bug,
            "check": "conformance (consumer)" if why else "", "caught": why is not None, "detail": why or "",
            "examples": examples, "seed": "derandomized", "seconds": time.perf_counter() - t0}
