"""The next-generation consumer group protocol (KIP-848, Kafka 4.0+): ``group.protocol=consumer``.

The protocol
------------
There is no join phase and no leader. Every member talks to the coordinator through one RPC,
**ConsumerGroupHeartbeat**, that carries its member epoch, its subscription and the partitions it
owns; the **coordinator computes the assignment** with a server-side assignor (``uniform`` or
``range``) and each member converges to its share *incrementally*:

1. **Group epoch.** Every change of what the assignment depends on — a member joins (heartbeat with
   epoch 0) or leaves (epoch -1), a member's subscription changes, a subscribed topic grows — bumps
   the *group epoch*. The coordinator then computes a new **target assignment** with the assignor
   (the uniform one keeps every partition it can where the previous target had it: it is sticky
   relative to the target) and stamps it with the *assignment epoch* = the group epoch.
2. **Member epoch and reconciliation** (Kafka's ``CurrentAssignmentBuilder``). A member whose epoch
   is behind the assignment epoch moves towards its target, one heartbeat at a time:

   * partitions it holds that are not in its target must be **revoked** first: the member stays at
     its epoch in state ``UNREVOKED_PARTITIONS``, and its heartbeat answer lists only what it keeps;
   * once a heartbeat reports that it no longer owns them, the member gets the **target epoch**
     (its previous epoch becomes the epoch it had, as at every reconciliation, also one that keeps
     the epoch) and every partition of its target that is **free** — held by
     no other member, neither assigned nor pending revocation (the *partition epoch* is unset) — is
     given to it. If some are not free yet it is ``UNRELEASED_PARTITIONS`` and gets them at a later
     heartbeat, after their previous owner acknowledged revoking them; otherwise it is ``STABLE``;
   * a heartbeat that changes the subscription of a member still ``UNREVOKED_PARTITIONS`` moves the
     partitions of the topics it dropped from its assignment to those pending revocation at once.

   So a partition goes to its new owner only after its previous owner acknowledged revoking it, and
   nothing else in the protocol has to wait for anybody: members that keep their partitions never
   stop processing.
3. **The client** (Kafka's ``ConsumerMembershipManager``) applies each answer: it first revokes what
   it holds but was not given (``onPartitionsRevoked``, after committing), then adds what is new
   (``onPartitionsAssigned``), and acknowledges by reporting its owned partitions in its next
   heartbeat.
4. **Fencing.** A heartbeat from a member id the coordinator does not know is answered
   ``UNKNOWN_MEMBER_ID``; one with an epoch the coordinator does not accept (ahead of the member's,
   or behind it unless it is exactly the previous epoch and reports nothing outside the current
   assignment: ``GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid``)
   ``FENCED_MEMBER_EPOCH``, and the coordinator keeps the member's record. Either way the client gives
   up every partition at once (``onPartitionsLost``, no commit) and rejoins with epoch 0, losing
   everything; epoch 0 is not validated (KAFKA-19233, in 4.3.1), so a fenced dynamic member rejoins
   its kept record, and a static one is answered ``UNRELEASED_INSTANCE_ID`` (fatal). A member that does
   not heartbeat within the **session timeout**, or does not revoke within the **rebalance timeout**,
   is removed by the coordinator (its partitions become free) and the group epoch is bumped.
5. **Offset commits** carry the member id and member epoch (``ConsumerGroup.validateOffsetCommit``):
   unknown member → ``UNKNOWN_MEMBER_ID``; the member's epoch → accepted; a newer one →
   ``STALE_MEMBER_EPOCH``; an older one (KIP-1251, in 4.3.1) → accepted only for partitions assigned
   or pending revocation whose assignment epoch is not newer than it.
6. **Static membership** (``consumer-static``): a member with a ``group.instance.id`` leaves with
   epoch -2; the coordinator then keeps it, with its assignment but nothing pending revocation (those
   partitions are free at once), for the session timeout, and a new process with the same instance id that joins in time takes the member over with its assignment
   and no new target. A live member's instance id cannot be taken (``UNRELEASED_INSTANCE_ID``).

What is abstracted (and why it is safe to):

* Without the in-flight faults a heartbeat and its answer are one step (the coordinator answers at
  once, there is no parked request), and a client's epoch is its member's. The faults
  ``lose-answer``, ``late-answer``, ``late-commit`` and ``early-restart`` separate them
  (:mod:`groupspec.model.consumer_flight`: lost and late answers, the previous-epoch tolerance,
  FENCED_MEMBER_EPOCH, late commits and STALE_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID); the compiled
  kernel encodes them too (groupspec/checker/compiled/consumer_kernel.py, with every switch below). A late *request* (a heartbeat handled after a newer one) is not modelled: the
  Java client keeps one heartbeat in flight, and one connection delivers in order.
* The target is computed in the step that bumps the group epoch (Kafka computes it at the next
  heartbeat, or batches it for ``group.consumer.assignment.interval.ms``: a delay, not a new order
  of steps, because nobody can act on a target before it exists).
* A member id is tied to a process: a crashed dynamic member's process restarts only after the
  coordinator removed its member (a new id joining while an old one lingers is what other slots
  cover). The member id a fenced client keeps and rejoins with is its slot.
* A regular-expression subscription is resolved by the broker into a set of topics; the model's
  subscriptions are sets of topics, so the two are the same thing once resolved. Heartbeats that
  change nothing are not steps (stuttering).
* The client takes newly given partitions (``onPartitionsAssigned``) in the step that receives
  the answer, when it has nothing to revoke (the coordinator never gives a partition while the
  member still has a revocation to acknowledge). Taking them later only delays ownership, and
  every property is only harder to keep with more partitions owned. Revocation is its own step:
  the gap between revoking and acknowledging is where the protocol waits.
* Partition epochs are not stored: a partition's epoch is the epoch of the member that has it
  assigned or pending revocation, and is unset when no member does.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

from . import actions as A
from .assignors import range_, sticky
from .consumer_flight import FENCED, FLIGHT_FAULTS, OK, STALE, UNKNOWN, UNRELEASED, ConsumerFlight
# the page's state records (model/consumer_state.py), named here as before: every reader imports them from this page
from .consumer_state import NOT_MEMBER as NOT_MEMBER
from .consumer_state import Answer, KIP848State, S
from .consumer_state import ConsumerClient as ConsumerClient
from .consumer_state import ConsumerGroup as ConsumerGroup
from .consumer_state import ConsumerState as ConsumerState
from .consumer_state import Member as Member
from .consumer_state import MemberState as MemberState
from .consumer_view import ConsumerView
from .core import Config, Proc, bits
from .spec import COMPILED_CONSUMER, SpecBase

SUPPORTED_FAULTS = frozenset({"join", "leave", "crash", "timeout", "zombie", "subscription", "partitions"}) | FLIGHT_FAULTS
ASSIGNORS = ("uniform", "range")

LEAVE_EPOCH = -1  # ConsumerGroupHeartbeat's memberEpoch for a leaving member
STATIC_LEAVE_EPOCH = -2  # ... for a static member leaving temporarily


# -- the steps of this protocol ------------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class ConsumerGroupHeartbeat(A.Action):
    verb = "sends ConsumerGroupHeartbeat and applies the answer's epoch and assignment"


@dataclass(frozen=True, slots=True, repr=False)
class RevokePartitions(A.Action):
    verb = "commits and revokes the partitions it was not given (onPartitionsRevoked)"


@dataclass(frozen=True, slots=True, repr=False)
class RebalanceTimeoutFence(A.Action):
    verb = "is fenced by the coordinator: it did not revoke within the rebalance timeout"


OLDEST = 4


def _remap(mask: int, perm: list[int]) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << perm[low.bit_length() - 1]
        mask ^= low
    return out


def relative_epoch(e: int, base: int, oldest: int = OLDEST) -> int:
    """An epoch relative to the group epoch (``base``); 0 and negative epochs are kept as codes.

    Epochs ``oldest`` or more behind are merged: sound while the model only compares an epoch with the
    member's, the previous and the assignment epoch. With the in-flight faults a commit's epoch is also
    compared with each partition's assignment epoch, so no epoch is merged (``oldest`` unbounded; the
    budget bounds how far behind one can be)."""
    if e <= 0:
        return 100 - e  # -1 -> 101, 0 -> 100, -2 -> 102
    d = base - e
    return d if d < oldest else oldest


class Consumer(ConsumerView[S], ConsumerFlight[S], SpecBase):
    """The KIP-848 protocol on one finite instance; subclasses set the switches below.

    Generic in its state ``S`` for the type checker (``Consumer`` alone is ``Consumer[ConsumerState]``): the
    migration page derives from this one and replaces its states (``MigrationState``); what reads a state is
    typed on ``S``, what builds one (``init_states``, ``successors``, ``heartbeat``) on ``ConsumerState``."""

    name = "consumer"
    encoding = COMPILED_CONSUMER
    encoded: ClassVar[tuple[str, ...]] = ("init_states", "successors", "heartbeat", "reconcile", "_next_assignment", "_bump", "_remove",
               "held_by_others", "compute_target", "converged", "key", "exact_key", "live_member", "commit_accepted",
               "commit_violation", "generation_violation", "members_in_group", "initial_members", "live_ownership",
               "handle", "_subscribe", "apply_answer", "commit_answer", "flight_successors", "_rows")
    z3 = True
    summary = "KIP-848: broker-side assignment, epochs, incremental reconciliation by heartbeat"
    static_members = False
    # Switches that break the protocol on purpose (see groupspec.model.broken).
    wait_for_release = True  # give a partition only once no other member holds it (partition epochs)
    fence_commits = True  # offset commits validated by member id and member epoch
    bump_on_change = True  # a changed target gets a new assignment epoch (the group epoch is bumped)
    fence_commit_epoch = True  # an OffsetCommit's epoch is validated (not only its member id)
    previous_epoch_subset = True  # the previous epoch is accepted only if the owned partitions are assigned
    lose_on_fence = True  # a client answered FENCED_MEMBER_EPOCH gives up its partitions (onPartitionsLost)
    # Kafka version switches, named after the change; the pinned release's behaviour (4.3.1) the default.
    kip_1251 = True  # an older commit epoch accepted per partition (assignment epoch <= commit epoch)
    kafka_19233 = True  # a heartbeat with epoch 0 from a member the coordinator has: no epoch check
    fenced_keeps_record = True  # FENCED_MEMBER_EPOCH keeps the member's record (GroupMetadataManager)
    broken = False
    bug = ""
    expect_violation = ""
    has_generations = True
    coordinator_assigns = True
    assignors: ClassVar[tuple[str, ...]] = ("uniform", "range", "sticky")  # "sticky" (the CLI default) means uniform

    def __init__(self, cfg: Config) -> None:
        unsupported = set(cfg.faults) - SUPPORTED_FAULTS
        if unsupported:
            raise ValueError(f"fault {sorted(unsupported)[0]!r} is not modelled for protocol {self.name}")
        name = cfg.assignor
        if name == "sticky":
            name = "uniform"  # the CLI's default: the uniform assignor is the sticky one
        if name not in ASSIGNORS:
            raise ValueError(f"protocol {self.name} uses a server-side assignor: choose from {', '.join(ASSIGNORS)}")
        self.cfg = cfg
        self.assignor_name = name
        self.symmetric = name == "uniform"
        n = cfg.members
        self._acts: dict[type[A.Action], tuple[A.Action, ...]] = {
            cls: tuple(cls(i) for i in range(n))
            for cls in (ConsumerGroupHeartbeat, RevokePartitions, A.Resume, A.SessionExpired,
                        RebalanceTimeoutFence, A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause,
                        A.ChangeSubscription)
        }
        self._add_partition = A.AddPartition()
        self._flight_init()  # lose-answer, late-answer, late-commit, early-restart (model/consumer_flight.py)
        self.symmetric = self.symmetric and not self.in_flight  # the per-partition epochs are not renamed
        self._targets: dict[Hashable, tuple[int, ...]] = {}
        self.topic_blocks = [[p for p in range(cfg.partitions) if cfg.topic_of[p] == t] for t in range(cfg.topics)]

    # ---------------------------------------------------------------------------------------------
    def init_states(self) -> list[ConsumerState]:
        """Every consumer is started with epoch 0 (but one held back when ``join`` is a fault)."""
        cfg = self.cfg
        n = cfg.members
        late = "join" in cfg.faults and n > 1
        clients = tuple(
            ConsumerClient(proc=Proc.DOWN, topics=cfg.all_topics) if (late and i == n - 1)
            else ConsumerClient(proc=Proc.UP, epoch=0, topics=cfg.all_topics)
            for i in range(n)
        )
        existing = (1 << cfg.partitions) - 1
        if "partitions" in cfg.faults and cfg.partitions > cfg.topics:
            existing &= ~(1 << (cfg.partitions - 1))
        group = ConsumerGroup(target=(0,) * n, members=(None,) * n, partitions=existing)
        return [ConsumerState(group=group, clients=clients, budget=cfg.budget)]

    # -- the coordinator ---------------------------------------------------------------------------
    def compute_target(self, g: ConsumerGroup) -> tuple[int, ...]:
        """The server-side assignor over the group's members (the uniform one sticky to the target)."""
        k = (tuple(None if m is None else (m.topics, m.static) for m in g.members), g.target, g.partitions)
        hit = self._targets.get(k)
        if hit is None:
            hit = self._targets[k] = self._compute_target(g)
        return hit

    def _compute_target(self, g: ConsumerGroup) -> tuple[int, ...]:
        cfg = self.cfg
        meta = [(i, m.topics, g.target[i], 0, m.static) for i, m in enumerate(g.members) if m is not None]
        fn = sticky if self.assignor_name == "uniform" else range_
        result = fn(cfg, meta, g.partitions)
        return tuple(result.get(i, 0) for i in range(cfg.members))

    def _bump(self, g: ConsumerGroup) -> ConsumerGroup:
        """A change the assignment depends on: a new group epoch and a new target stamped with it."""
        target = self.compute_target(g)
        if not self.bump_on_change and g.epoch > 0:
            # BROKEN: once the group exists, a changed target keeps its epoch; members at that epoch
            # never look at it.
            return g.but(target=target)
        e = g.epoch + 1
        return g.but(epoch=e, target_epoch=e, target=target)

    @staticmethod
    def held_by_others(g: ConsumerGroup, i: int) -> int:
        """Partitions whose partition epoch is set by a member other than ``i``."""
        m = 0
        for k, r in enumerate(g.members):
            if k != i and r is not None:
                m |= r.assigned | r.revoking
        return m

    def _next_assignment(self, g: ConsumerGroup, i: int, r: Member) -> Member:
        """``CurrentAssignmentBuilder.computeNextAssignment`` towards the target."""
        target = g.target[i]
        keep = r.assigned & target
        revoke = (r.assigned | r.revoking) & ~target
        # Every outcome goes through ConsumerGroupMember.Builder.updateMemberEpoch (Kafka 4.3.1), which sets the
        # previous epoch to the epoch the member had, also when the epoch stays (UNREVOKED_PARTITIONS at its own
        # epoch, UNRELEASED_PARTITIONS reconciled again at the target epoch); found by the model's Kafka walks
        if revoke:  # (a partition pending revocation keeps its assignment epoch in ``since``)
            return r.but(state=MemberState.UNREVOKED_PARTITIONS, previous_epoch=r.epoch, assigned=keep, revoking=revoke)
        want = target & ~keep
        free = want & ~self.held_by_others(g, i) if self.wait_for_release else want
        state = MemberState.UNRELEASED_PARTITIONS if want & ~free else MemberState.STABLE
        r2 = r.but(state=state, epoch=g.target_epoch, previous_epoch=r.epoch, assigned=keep | free, revoking=0)
        if self.in_flight:  # each partition's assignment epoch: kept ones keep theirs, new ones the new epoch
            since = r.since or (0,) * self.cfg.partitions
            r2 = r2.but(since=tuple((since[p] if keep >> p & 1 else g.target_epoch) if (keep | free) >> p & 1 else 0
                                    for p in range(self.cfg.partitions)))
        return r2

    def reconcile(self, g: ConsumerGroup, i: int, r: Member, owned: int | None, changed: bool = False) -> Member:
        """Advance member ``i`` given the partitions its heartbeat reports (``None``: not reported);
        ``changed``: the heartbeat changed the member's subscription (``hasSubscriptionChanged``)."""
        if r.left:
            return r
        if r.state == MemberState.UNREVOKED_PARTITIONS:
            if owned is None or owned & r.revoking:
                if changed:  # Kafka 4.3.1 CurrentAssignmentBuilder.build -> updateCurrentAssignment (a STABLE
                    # member is behind the target after the bump): dropped topics' partitions to pending revocation
                    drop = r.assigned & ~self.cfg.subscribed_partitions(r.topics, r.assigned)
                    if drop:  # (updateCurrentAssignment: the previous epoch becomes the epoch, as above)
                        return r.but(assigned=r.assigned & ~drop, revoking=r.revoking | drop, previous_epoch=r.epoch)
                return r  # still waiting for the acknowledgement
            return self._next_assignment(g, i, r.but(revoking=0))
        if r.epoch != g.target_epoch or r.state == MemberState.UNRELEASED_PARTITIONS:
            return self._next_assignment(g, i, r)
        return r

    def _remove(self, g: ConsumerGroup, i: int) -> ConsumerGroup:
        """Remove member ``i`` (leave, session or rebalance timeout): its partitions become free."""
        members = g.members[:i] + (None,) + g.members[i + 1 :]
        return self._bump(g.but(members=members))

    def heartbeat(self, s: ConsumerState, i: int) -> ConsumerState:
        """One ConsumerGroupHeartbeat from client ``i`` and the client applying its answer."""
        g, answer = self.handle(s, i)
        c = self.apply_answer(s.clients[i], answer)
        return ConsumerState(group=g, clients=self._set(s.clients, i, c), budget=s.budget)

    def handle(self, s: KIP848State, i: int) -> tuple[ConsumerGroup, Answer]:
        """The coordinator handles client ``i``'s heartbeat (its epoch, what it owns): the group after it
        and the answer, ``(OK, epoch, assignment)`` or ``(error,)`` (``GroupMetadataManager.consumerGroupHeartbeat``)."""
        g = s.group
        c = s.clients[i]
        r = g.members[i]
        if c.epoch == 0 and (r is None or r.left):
            if r is not None:
                # A static member comes back within its session timeout: it takes over its member and
                # assignment, without a new group epoch unless its subscription changed.
                r = r.but(left=False)
                g = g.but(members=self._set(g.members, i, r))
            else:
                r = Member(topics=c.topics, static=self.static_members, since=(0,) * self.cfg.partitions if self.in_flight else ())
                g = self._bump(g.but(members=self._set(g.members, i, r)))
            if r.topics != c.topics:
                r = r.but(topics=c.topics)
                g = self._bump(g.but(members=self._set(g.members, i, r)))
            r = self.reconcile(g, i, r, c.owned)
        elif c.epoch == 0:
            if self.static_members:
                # Its instance id is held by a member that has not left (a restart before the session
                # expired, or a rejoin after FENCED_MEMBER_EPOCH): fatal for the Java client.
                return g, (UNRELEASED,)
            # (r is not None here: the branch above took r None; ignores, not an assert: no new step in the rule)
            if not self.kafka_19233 and r.epoch != 0 and r.previous_epoch != 0:  # type: ignore[union-attr]
                return g, (FENCED,)  # before KAFKA-19233 epoch 0 was validated as any other epoch
            # The member rejoins with epoch 0 while the coordinator still has it (a fenced member, or its
            # join answer was lost): no epoch validation, the heartbeat is handled as any other, its
            # subscription included (Kafka 4.3.1 GroupMetadataManager.consumerGroupHeartbeat: the member's
            # record is updated from the request before hasMemberSubscriptionChanged; found by the Kafka walks)
            g, r = self._subscribe(g, i, r, c)  # type: ignore[arg-type]
        else:
            if r is None or r.left:
                return g, (UNKNOWN,)  # the client gives everything up (onPartitionsLost) and rejoins
            if c.epoch != r.epoch and not (c.epoch == r.previous_epoch and (
                    not self.previous_epoch_subset or c.owned & ~r.assigned == 0)):
                # FENCED_MEMBER_EPOCH (throwIfConsumerGroupMemberEpochIsInvalid): an epoch ahead of the
                # member's, or behind it and not the previous epoch with a subset of the assignment.
                return (g if self.fenced_keeps_record else self._remove(g, i)), (FENCED,)
            g, r = self._subscribe(g, i, r, c)
        g = g.but(members=self._set(g.members, i, r))
        return g, (OK, r.epoch, r.assigned)

    def _subscribe(self, g: ConsumerGroup, i: int, r: Member, c: ConsumerClient) -> tuple[ConsumerGroup, Member]:
        """The heartbeat of a member the coordinator has: its subscription taken from the request (a change
        bumps the group epoch), then the member reconciled."""
        changed = r.topics != c.topics
        if changed:
            r = r.but(topics=c.topics)
            g = self._bump(g.but(members=self._set(g.members, i, r)))
            r = g.members[i]  # type: ignore[assignment]  # (_bump keeps every member)
        return g, self.reconcile(g, i, r, c.owned, changed)

    def apply_answer(self, c: ConsumerClient, answer: Answer) -> ConsumerClient:
        """The client applies a heartbeat answer (``ConsumerMembershipManager``)."""
        if answer[0] == UNRELEASED:
            return ConsumerClient(topics=c.topics)  # fatal: the process stops
        if answer[0] != OK:
            if answer[0] == FENCED and not self.lose_on_fence:
                return c  # BROKEN: it keeps its partitions and its epoch
            return c.but(epoch=0, owned=0, assigned=0)  # onPartitionsLost, rejoin with epoch 0
        c2 = c.but(epoch=answer[1], assigned=answer[2])
        if not c2.owned & ~c2.assigned and c2.assigned & ~c2.owned:
            # Nothing to revoke: the client takes the new partitions (onPartitionsAssigned) on the answer.
            c2 = c2.but(owned=c2.assigned)
        return c2

    # -- steps ------------------------------------------------------------------------------------
    @staticmethod
    def _set(t: tuple[Any, ...], i: int, v: object) -> tuple[Any, ...]:
        return t[:i] + (v,) + t[i + 1 :]

    @staticmethod
    def _with(s: ConsumerState, group: ConsumerGroup | None = None, clients: tuple[ConsumerClient, ...] | None = None,
              spend: bool = False) -> ConsumerState:
        return ConsumerState(group=group if group is not None else s.group,
                             clients=clients if clients is not None else s.clients,
                             budget=s.budget - (1 if spend else 0))

    def successors(self, s: ConsumerState) -> Iterator[tuple[A.Action, ConsumerState]]:
        acts = self._acts
        cfg = self.cfg
        faults = cfg.faults
        g = s.group
        spend = s.budget > 0
        for i, c in enumerate(s.clients):
            r = g.members[i]
            if self.in_flight:
                yield from self.flight_successors(s, i, spend)
            if c.proc == Proc.UP:
                if c.epoch >= 0 and c.answer is None:
                    t = self.heartbeat(s, i)
                    if t != s:
                        yield acts[ConsumerGroupHeartbeat][i], t
                if c.owned & ~c.assigned:
                    # Revocation first: commit, onPartitionsRevoked, then acknowledge in the next heartbeat.
                    yield acts[RevokePartitions][i], self._with(s, clients=self._set(s.clients, i, c.but(owned=c.owned & c.assigned)))
            elif c.proc == Proc.PAUSED:
                yield acts[A.Resume][i], self._with(s, clients=self._set(s.clients, i, c.but(proc=Proc.UP)))
            if r is not None and c.proc != Proc.UP:
                # The session timeout: the process is gone or silent (a static member that left too).
                yield acts[A.SessionExpired][i], self._with(s, group=self._remove(g, i))
            if r is not None and c.proc == Proc.PAUSED and r.state == MemberState.UNREVOKED_PARTITIONS:
                yield acts[RebalanceTimeoutFence][i], self._with(s, group=self._remove(g, i))
            if not spend:
                continue
            if "join" in faults and c.proc == Proc.DOWN and (r is None or (self.static_members and r.left)):
                yield acts[A.Start][i], self._with(
                    s, clients=self._set(s.clients, i, ConsumerClient(proc=Proc.UP, epoch=0, topics=c.topics)), spend=True)
            if "leave" in faults and c.proc == Proc.UP and c.epoch > 0 and r is not None and not r.left:
                # Revoke everything (committing first), then heartbeat with epoch -1 (-2 if static).
                if self.static_members:
                    # Kafka 4.3.1 GroupMetadataManager.consumerGroupStaticMemberGroupLeave: kept at epoch -2, with
                    # nothing pending revocation and its assignment epochs reset to 0
                    g2 = g.but(members=self._set(g.members, i, r.but(
                        left=True, revoking=0, since=(0,) * len(r.since))))
                else:
                    g2 = self._remove(g, i)
                yield acts[A.LeaveGroup][i], self._with(
                    s, group=g2, clients=self._set(s.clients, i, ConsumerClient(topics=c.topics)), spend=True)
            if "crash" in faults and c.proc != Proc.DOWN:
                yield acts[A.Crash][i], self._with(s, clients=self._set(s.clients, i, ConsumerClient(topics=c.topics)), spend=True)
            if "timeout" in faults and c.proc == Proc.UP and r is not None and not r.left:
                # The session runs out while the process runs (its heartbeats do not arrive): whatever epoch the
                # client holds, a member the coordinator has has a session (Kafka 4.3.1 schedules the session
                # timeout at every heartbeat the coordinator handles, the epoch-0 join included), so a client
                # whose join answer is on its way, or that rejoins at epoch 0 after a fence, can expire too.
                yield acts[A.ExpireLive][i], self._with(s, group=self._remove(g, i), spend=True)
            if "zombie" in faults and c.proc == Proc.UP:
                # A running process may stall at any time, a joining one (epoch 0) included.
                yield acts[A.Pause][i], self._with(s, clients=self._set(s.clients, i, c.but(proc=Proc.PAUSED)), spend=True)
            if "subscription" in faults and c.proc == Proc.UP and cfg.topics > 1:
                last = 1 << (cfg.topics - 1)
                yield acts[A.ChangeSubscription][i], self._with(
                    s, clients=self._set(s.clients, i, c.but(topics=c.topics ^ last)), spend=True)
        if spend and "partitions" in faults:
            missing = ((1 << cfg.partitions) - 1) & ~g.partitions
            if missing:
                p = missing & -missing
                g2 = g.but(partitions=g.partitions | p)
                if any(m is not None for m in g.members):
                    g2 = self._bump(g2)  # the coordinator sees the new metadata and bumps the group epoch
                yield self._add_partition, self._with(s, group=g2, spend=True)

    def enabled(self, s: ConsumerState) -> list[A.Action]:
        return [a for a, _t in self.successors(s)]

    def step(self, s: ConsumerState, a: A.Action) -> ConsumerState:
        for b, t in self.successors(s):
            if b == a:
                return t
        raise ValueError(f"{a!r} is not enabled")

    # -- what the properties ask ------------------------------------------------------------------
    def live_member(self, s: S, i: int) -> bool:
        """A running or paused process whose member the coordinator has (not a static member that left)."""
        c = s.clients[i]
        r = s.group.members[i]
        return c.proc != Proc.DOWN and c.epoch > 0 and r is not None and not r.left

    def live_ownership(self, s: S) -> Iterator[tuple[int, int]]:
        for i, c in enumerate(s.clients):
            if c.owned and self.live_member(s, i):
                yield i, c.owned

    def commit_accepted(self, s: S, i: int, ghost: bool = False) -> bool:
        """Would the coordinator accept an OffsetCommit from process ``i`` with its member id and epoch?"""
        c = s.clients[i]
        return self.commit_answer(s, i, c.epoch, c.owned) == OK

    def commit_answer(self, s: KIP848State, i: int, epoch: int, parts: int) -> str:
        """``ConsumerGroup.validateOffsetCommit`` for an OffsetCommit of ``parts`` from member ``i`` with ``epoch``."""
        if not self.fence_commits:
            return OK
        r = s.group.members[i]
        if r is None or r.left:
            return UNKNOWN
        if not self.fence_commit_epoch:
            return OK  # BROKEN: any epoch
        if epoch == r.epoch:
            return OK
        if epoch > r.epoch or not self.kip_1251 or not r.since:
            return STALE
        # KIP-1251 (createAssignmentEpochValidator): an older epoch, partition by partition: assigned to the
        # member or pending revocation, with an assignment epoch not newer than the commit's.
        held = r.assigned | r.revoking
        if parts & ~held or any(r.since[p] > epoch for p in bits(parts)):
            return STALE
        return OK

    def commit_violation(self, s: S) -> str | None:
        live = dict(self.live_ownership(s))
        commits = []
        for i, c in enumerate(s.clients):
            if c.proc == Proc.UP and c.owned:
                commits.append((i, c.epoch, c.owned, ""))
            if c.commit is not None:
                commits.append((i, c.commit[0], c.commit[1], "late "))
        for i, epoch, parts, late in commits:
            if self.commit_answer(s, i, epoch, parts) != OK:
                continue
            c = s.clients[i]
            who = self.member_name(i)
            r = s.group.members[i]
            if r is None or r.left or (not late and not self.live_member(s, i)):
                p = bits(parts)[0]
                return f"{who} is not a member any more, yet its {late}commit for {self.partition_name(p)} is accepted"
            if epoch > r.epoch:
                return f"{who}'s {late}commit with epoch {epoch} is accepted while its member epoch is {r.epoch}"
            stray = parts & ~(r.assigned | r.revoking)
            if stray:
                p = bits(stray)[0]
                return (f"{who}'s {late}commit (epoch {epoch}) for {self.partition_name(p)} is accepted, but the "
                        f"coordinator has not given it {self.partition_name(p)}")
            for k, o in live.items():
                if k != i and o & parts:
                    p = bits(o & parts)[0]
                    return (f"{who}'s {late}commit (epoch {epoch}) for {self.partition_name(p)} is accepted while "
                            f"{self.member_name(k)} owns it too")
        return None

    def generation_violation(self, s: S, t: S) -> str | None:
        """Epochs: the group's grows by at most one per step, the assignment epoch follows it, members' never go down."""
        g, h = s.group, t.group
        if h.epoch < g.epoch or h.epoch > g.epoch + 1:
            return f"the group epoch went from {g.epoch} to {h.epoch}"
        if h.target_epoch < g.target_epoch or h.target_epoch > h.epoch:
            return f"the assignment epoch went from {g.target_epoch} to {h.target_epoch} (group epoch {h.epoch})"
        for i in range(len(t.clients)):
            a, b = g.members[i], h.members[i]
            if a is not None and b is not None and b.epoch < a.epoch:
                return f"{self.member_name(i)}'s member epoch went down from {a.epoch} to {b.epoch}"
            if b is not None and b.epoch > h.target_epoch:
                return f"{self.member_name(i)}'s member epoch {b.epoch} is ahead of the assignment epoch {h.target_epoch}"
            ca, cb = s.clients[i], t.clients[i]
            if cb.epoch > 0 and cb.epoch < ca.epoch:
                return f"{self.member_name(i)}'s epoch went down from {ca.epoch} to {cb.epoch} on the client"
            if cb.epoch > h.epoch:
                return f"{self.member_name(i)} believes it is at epoch {cb.epoch}, ahead of the group's {h.epoch}"
        return None

    def initial_members(self) -> int:
        return sum(1 for c in self.init_states()[0].clients if c.proc == Proc.UP)

    def members_in_group(self, s: S) -> int:
        return sum(1 for m in s.group.members if m is not None)

    def converged(self, s: S) -> bool:
        """Every member alive and STABLE at the assignment epoch, owning exactly its target, which is
        the assignor's complete answer (running it again changes nothing)."""
        g = s.group
        wanted = 0
        assigned = 0
        for i, c in enumerate(s.clients):
            r = g.members[i]
            if c.proc == Proc.PAUSED:
                return False
            if c.proc == Proc.DOWN:
                if r is not None:
                    return False
                continue
            if r is None or r.left or r.state != MemberState.STABLE or r.revoking:
                return False
            if r.epoch != g.target_epoch or c.epoch != r.epoch or g.target_epoch != g.epoch:
                return False
            if r.assigned != g.target[i] or c.owned != r.assigned or c.assigned != r.assigned or c.topics != r.topics:
                return False
            sub = self.cfg.subscribed_partitions(r.topics, g.partitions)
            if r.assigned & ~sub or r.assigned & assigned:
                return False
            assigned |= r.assigned
            wanted |= sub
        if assigned != wanted:
            return False
        return self.compute_target(g) == g.target

    # -- keys for the explorer --------------------------------------------------------------------
    def _rows(self, s: S) -> list[tuple[Hashable, ...]]:
        g = s.group
        base = g.epoch
        rows: list[tuple[Hashable, ...]] = []
        if self.in_flight:
            o = 1 << 30
            for i, c in enumerate(s.clients):
                r = g.members[i]
                rec: tuple[Hashable, ...] = () if r is None else (int(r.state), relative_epoch(r.epoch, base, o), relative_epoch(r.previous_epoch, base, o),
                                            r.assigned, r.revoking, r.topics, r.static, r.left,
                                            tuple(relative_epoch(e, base, o) for e in r.since))
                ans = None if c.answer is None else (c.answer[0], relative_epoch(c.answer[1], base, o), c.answer[2])
                com = None if c.commit is None else (relative_epoch(c.commit[0], base, o), c.commit[1])
                rows.append((int(c.proc), relative_epoch(c.epoch, base, o), c.owned, c.assigned, c.topics, rec, g.target[i],
                             ans, com))
            return rows
        for i, c in enumerate(s.clients):
            r = g.members[i]
            rec = () if r is None else (int(r.state), relative_epoch(r.epoch, base), relative_epoch(r.previous_epoch, base), r.assigned,
                                        r.revoking, r.topics, r.static, r.left)
            rows.append((int(c.proc), relative_epoch(c.epoch, base), c.owned, c.assigned, c.topics, rec, g.target[i]))
        return rows

    def exact_key(self, s: S) -> Hashable:
        g = s.group
        return (g.epoch - g.target_epoch, g.partitions, s.budget, tuple(self._rows(s)))

    def key(self, s: S) -> Hashable:
        """Epochs up to a shift; members and the partitions of one topic up to renaming (uniform only).

        As ``groupspec.model.symmetry`` does for the classic protocol: slots are ordered by a
        label-free shape (their facts with partition masks replaced by sizes), each partition gets
        the column of which mask of which slot holds it, partitions are renamed within their topic
        in column order, and the renamed rows are sorted. Sound (it only merges states of one
        orbit), not always canonical.
        """
        if not self.symmetric:
            return self.exact_key(s)
        g = s.group
        base = g.epoch
        n = len(s.clients)
        shapes = []
        masks = []
        for i, c in enumerate(s.clients):
            r = g.members[i]
            ms = (c.owned, c.assigned, g.target[i]) + ((r.assigned, r.revoking) if r is not None else (0, 0))
            rec = () if r is None else (int(r.state), relative_epoch(r.epoch, base), relative_epoch(r.previous_epoch, base), r.topics, r.static, r.left)
            shapes.append((int(c.proc), relative_epoch(c.epoch, base), c.topics, rec) + tuple(m.bit_count() for m in ms))
            masks.append(ms)
        order = sorted(range(n), key=shapes.__getitem__)
        cols = [0] * self.cfg.partitions
        for j, i in enumerate(order):
            for k, m in enumerate(masks[i]):
                bit = 1 << (j * 5 + k)
                while m:
                    low = m & -m
                    cols[low.bit_length() - 1] |= bit
                    m ^= low
        top = 1 << (n * 5)
        for p in range(self.cfg.partitions):
            if g.partitions >> p & 1:
                cols[p] |= top
        perm = [0] * self.cfg.partitions
        for block in self.topic_blocks:
            for new, old in zip(block, sorted(block, key=cols.__getitem__)):
                perm[old] = new
        rows = sorted((shapes[i], tuple(_remap(m, perm) for m in masks[i])) for i in range(n))
        return (g.epoch - g.target_epoch, _remap(g.partitions, perm), s.budget, tuple(rows))

    def orbit_size(self, s: S) -> int:
        """Member renamings this state stands for (a lower bound: partition renamings are not counted)."""
        from collections import Counter
        from math import factorial, prod

        if not self.symmetric:
            return 1
        counts = Counter(self._rows(s))
        return factorial(len(s.clients)) // prod(factorial(k) for k in counts.values())


class ConsumerStatic(Consumer):
    """Every member has a ``group.instance.id`` (its slot): leave with epoch -2 keeps its assignment."""

    name = "consumer-static"
    z3 = True  # proofs/consumer.py's encoding covers static members (a static member that left: a kept record)
    summary = "KIP-848 with static members: epoch -2 keeps the member and its assignment for the session timeout"
    static_members = True
