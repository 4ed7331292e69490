"""Conformance of the reference migration (``reference.migration``) to the model (``model.migration``).

Theory of operation
-------------------
The frame's machine (:mod:`.frame`) walks the model ``classic-to-consumer`` (whose server-side target is computed by the
reference's uniform assignor, so the check is about the protocol) drive the reference: while the model's
group is classic, only the model moves (the classic protocol has its own conformance suite); at the
step where a consumer-protocol heartbeat converts it, the reference is given the classic group as the
reference classic coordinator shows one (a ``GroupView``: generation, members' subscriptions with their
owned partitions, stored assignments as ConsumerProtocol bytes, empty bytes for a member that never got
one) and converts it with ``MixedConsumerGroup.upgrade``; from then on every model step is sent to the
reference as the request it stands for, with the client's own fields (member id = slot, a new one each
time its process starts again: its old member, if any, lingers under the old id, as in Kafka; epoch or
generation, owned partitions):

* ``JoinGroup`` / ``SyncGroup`` / ``ClassicHeartbeat`` of a classic client, ``ConsumerGroupHeartbeat``
  of a consumer-protocol one, ``Upgrade`` / ``Downgrade`` / ``LeaveGroup`` (leave requests), and the
  coordinator's removals (session timeout, live expiry);

The rules are the model's own steps, one rule per kind of step (``JoinGroup``, ``Upgrade``, ``Crash``,
...), each with the model's guard as its precondition (the model enables a step of that kind for some
member) and the ``k``-th member it is enabled for as its argument; the driver (:class:`Driver`) takes the
step in the model and sends the request it stands for to the reference. The check demands, after each
step: the reference's answer is the one the model's client applied
(error or not, generation / epoch, the partitions given), and the reference coordinator's state maps to
the model's (group epoch, assignment epoch, target, each member's state, epoch, assigned and pending
partitions: the abstraction function :func:`abstraction`, judged after every rule by :func:`judge`). A
refused conversion must be refused by both; a downgrade must give the same generation and stored
assignments. The fault switches of ``reference.migration`` (family ``migration`` of
:data:`.mutants.MUTANTS`) must make it fail.
"""
from __future__ import annotations

from typing import Any, Iterable

from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from groupspec.model import GroupStatus, Proc, actions as A, bits
from groupspec.model import consumer as model_consumer, migration as model_migration
from groupspec.reference.classic import Assignment, Subscription, decode_assignment, encode_assignment, encode_subscription
from groupspec.reference.classic import GroupStatus as RGroupStatus, GroupView, MemberView
from groupspec.reference.classic import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest
from groupspec.reference.consumer import HeartbeatRequest as CGHeartbeat
from groupspec.reference.errors import Error
from groupspec.reference.migration import MigrationRefused, MixedConsumerGroup

from .consumer import MEMBER_STATE, Setup, model_for as consumer_model_for
from .frame import ConformanceMachine, Family, derandomized, machine, run as run_frame

# the model's KIP-848 and migration pages, through the model's front door
ConsumerGroupHeartbeat, RevokePartitions = model_consumer.ConsumerGroupHeartbeat, model_consumer.RevokePartitions
ClassicHeartbeat, ClassicToConsumer = model_migration.ClassicHeartbeat, model_migration.ClassicToConsumer
Downgrade, JoinGroup, Kind, Phase = model_migration.Downgrade, model_migration.JoinGroup, model_migration.Kind, model_migration.Phase
SyncGroup, Upgrade = model_migration.SyncGroup, model_migration.Upgrade

__all__ = ["MIGRATION", "Driver", "make_machine", "run"]


class Mismatch(AssertionError):
    pass


def model_for(members: int, partitions: int, faults: frozenset[str], budget: int) -> Any:
    """``classic-to-consumer`` with its target computed by the reference's uniform assignor (one topic)."""
    setup = Setup(members=members, partitions=partitions, faults=faults, budget=budget, assignor="uniform")
    return consumer_model_for(setup, ClassicToConsumer)[0]


def _tps(mask: int) -> tuple[tuple[str, int], ...]:
    return tuple(("t", p) for p in bits(mask))


def _mask(tps: Iterable[tuple[str, int]]) -> int:
    return sum(1 << p for _t, p in tps)


def _protocols(owned: int) -> tuple[tuple[str, bytes], ...]:
    return (("cooperative-sticky", encode_subscription(Subscription(topics=("t",), owned_partitions=_tps(owned)))),)


def member_ids(members: int) -> list[str]:
    """Each slot's member id before any restart (``c1``, ``c2``, ...)."""
    return [f"c{i + 1}" for i in range(members)]


def view_of(s: Any, ids: list[str] | None = None) -> GroupView:
    """The model's classic group as the reference classic coordinator would show it (``ids``: each slot's
    member id now, :class:`Driver`)."""
    cg = s.classic
    ids = ids if ids is not None else member_ids(len(s.clients))
    members = tuple(
        MemberView(member_id=ids[i], group_instance_id=None, client_id=ids[i], protocol_type="consumer",
                   protocols=_protocols(cg.reported[i]),
                   assignment=b"" if cg.unsynced >> i & 1 else encode_assignment(Assignment(_tps(cg.assignment[i]))),
                   session_timeout_ms=45_000, rebalance_timeout_ms=300_000, awaiting_join=False, awaiting_sync=False,
                   is_new=False)
        for i in bits(cg.members))
    status = {GroupStatus.EMPTY: RGroupStatus.EMPTY, GroupStatus.STABLE: RGroupStatus.STABLE,
              GroupStatus.PREPARING_REBALANCE: RGroupStatus.PREPARING_REBALANCE,
              GroupStatus.COMPLETING_REBALANCE: RGroupStatus.COMPLETING_REBALANCE}[cg.status]
    return GroupView(group_id="g", status=status, generation=cg.generation, protocol_type="consumer",
                     protocol_name="cooperative-sticky", leader=ids[cg.leader] if cg.members else None,
                     members=members, pending=(), pending_sync=(), static=(), offsets=(), num_awaiting_join=0,
                     new_member_added=False)


def abstraction(d: "Driver") -> tuple[Any, ...] | None:
    """The reference coordinator's consumer group as the model's: group and assignment epoch, and per
    member (state, epoch, assigned, revoking, classic, target); ``None`` while there is none (the group is
    classic)."""
    if d.mixed is None:
        return None
    r = d.mixed.group
    members = tuple((mid, MEMBER_STATE[rm.state], rm.epoch, _mask(rm.assigned), _mask(rm.revoking), mid in d.mixed.classic,
                     _mask(r.target.get(mid, ()))) for mid, rm in sorted(r.members.items()))
    return (r.group_epoch, r.assignment_epoch, members)


def projection(s: Any, ids: list[str] | None = None) -> tuple[Any, ...]:
    """The model's consumer group, as :func:`abstraction` shows the reference's (``ids``: each slot's member id)."""
    g = s.group
    ids = ids if ids is not None else member_ids(len(s.clients))
    members = tuple((ids[i], m.state, m.epoch, m.assigned, m.revoking, bool(getattr(m, "classic", False)),
                     g.target[i]) for i, m in enumerate(g.members) if m is not None)
    return (g.epoch, g.target_epoch, members)


def judge(d: "Driver", alpha: tuple[Any, ...] | None) -> None:
    """After every rule: the reference's consumer group maps to the model's (none while it is classic)."""
    where = d.last
    if alpha is None:
        if d.s.kind == Kind.CONSUMER:
            raise Mismatch(f"{where}: the model has a consumer group, the reference none")
        return
    want = projection(d.s, d.ids)
    if alpha[:2] != want[:2]:
        raise Mismatch(f"{where}: group/assignment epoch: reference {alpha[:2]}, model {want[:2]}")
    got_m, want_m = dict((m[0], m[1:]) for m in alpha[2]), dict((m[0], m[1:]) for m in want[2])
    for mid in sorted(set(got_m) | set(want_m)):
        if (mid in got_m) != (mid in want_m):
            raise Mismatch(f"{where}: member {mid}: reference {'has' if mid in got_m else 'lacks'} it, the model does not")
        if got_m[mid] != want_m[mid]:
            raise Mismatch(f"{where}: member {mid} (state, epoch, assigned, revoking, classic, target): "
                           f"reference {got_m[mid]}, model {want_m[mid]}")


def _drive(model: Any, s: Any, action: Any, t: Any, mixed: MixedConsumerGroup | None, now: int,
           faults: frozenset[str], ids: list[str]) -> MixedConsumerGroup | None:
    """Send the request ``action`` stands for to the reference; check its answer against the model's step
    (``ids``: each slot's member id now)."""
    i = action.member
    where = f"{action!r}"
    if s.kind == Kind.CLASSIC:
        if isinstance(action, ConsumerGroupHeartbeat) and s.clients[i].epoch == 0 and s.classic.members:
            try:
                mixed = MixedConsumerGroup.upgrade(view_of(s, ids), {"t": model.cfg.partitions}, faults=faults, now=now)
            except MigrationRefused:
                if t.kind != Kind.CLASSIC:
                    raise Mismatch(f"{where}: the reference refused the upgrade, the model made it") from None
                return None
            if t.kind == Kind.CLASSIC:
                raise Mismatch(f"{where}: the reference upgraded, the model refused")
            s = s.but(kind=Kind.CONSUMER, group=mixed_state_group(model, s))  # compare from the converted state
        elif isinstance(action, ConsumerGroupHeartbeat) and t.kind == Kind.CONSUMER:
            mixed = MixedConsumerGroup(_fresh(model))  # an empty classic group is deleted: a new consumer group
        else:
            return None
    assert mixed is not None
    c: Any  # (the model's clients, before and after; None for a group-wide step, which reads neither)
    c2: Any
    ans: Any  # the reference's answer to the request the step stands for
    c, c2 = s.clients[i] if i >= 0 else None, t.clients[i] if i >= 0 else None
    mid = ids[i] if i >= 0 else ""
    if c is not None and c.proc != Proc.UP and isinstance(action, _REQUESTS):
        raise Mismatch(f"{where}: the process is {c.proc.name.lower()}, yet the step sends a request for it")
    if isinstance(action, ConsumerGroupHeartbeat):
        owned = {"t": bits(c.owned)}
        ans = mixed.consumer_heartbeat(CGHeartbeat(mid, c.epoch, subscribed_topic_names=["t"] if c.epoch == 0 else None,
                                                   topic_partitions=owned), now)
        fenced = ans.error != Error.NONE
        if fenced != (c2.epoch == 0 and c.epoch > 0) and not (t.kind == Kind.CLASSIC and s.kind == Kind.CONSUMER):
            raise Mismatch(f"{where}: reference answered {ans.error.name}, the model's client went to epoch {c2.epoch}")
        if not fenced and ans.member_epoch != c2.epoch:
            raise Mismatch(f"{where}: reference epoch {ans.member_epoch}, model {c2.epoch}")
        if not fenced and ans.assignment is not None and _mask((tt, p) for tt, ps in ans.assignment.items() for p in ps) != c2.assigned:
            raise Mismatch(f"{where}: reference gives {ans.assignment}, model {bits(c2.assigned)}")
    elif isinstance(action, JoinGroup):
        ans = mixed.join_group(JoinGroupRequest("g", mid, "consumer", _protocols(c.owned), client_id=mid), now)
        if ans is None:  # the empty consumer group was deleted: the join goes to a classic group
            if t.kind != Kind.CLASSIC:
                raise Mismatch(f"{where}: the reference deleted the empty consumer group, the model did not")
            return None
        want_gen = c2.epoch if c2.phase == Phase.SYNC else None
        if (ans.error == Error.NONE) != (want_gen is not None) or (want_gen is not None and ans.generation_id != want_gen):
            raise Mismatch(f"{where}: reference {ans.error.name} generation {ans.generation_id}, model phase {c2.phase.name} {c2.epoch}")
    elif isinstance(action, SyncGroup):
        ans = mixed.sync_group(SyncGroupRequest("g", mid, c.epoch, protocol_name="cooperative-sticky"), now)
        if ans.error == Error.NONE:
            got = _mask(decode_assignment(ans.assignment).partitions)
            if got != c2.owned:
                raise Mismatch(f"{where}: reference SyncGroup gives {bits(got)}, model {bits(c2.owned)}")
        elif (c2.phase, c2.epoch) == (Phase.STABLE, c.epoch) or c2.phase != Phase.JOIN:
            raise Mismatch(f"{where}: reference SyncGroup {ans.error.name}, the model's client applied an assignment")
    elif isinstance(action, ClassicHeartbeat):
        ans = mixed.heartbeat(HeartbeatRequest("g", mid, c.epoch), now)
        if ans.error == Error.NONE:
            raise Mismatch(f"{where}: reference Heartbeat NONE, the model's client was told {c2.phase.name}")
    elif isinstance(action, (Upgrade, Downgrade, A.LeaveGroup)):
        if c.classic:
            mixed.leave_group(mid)
        else:
            mixed.consumer_heartbeat(CGHeartbeat(mid, -1), now)
    elif isinstance(action, (A.SessionExpired, A.ExpireLive)):
        if mid not in mixed.classic and mixed._downgrade_if_last(mid):
            pass
        else:
            mixed.group.expire_session(mid)
    elif isinstance(action, (RevokePartitions, A.Crash, A.Pause, A.Resume, A.Start)):
        pass  # the client alone
    else:
        raise Mismatch(f"{where}: no reference request for this step")
    if t.kind == Kind.CLASSIC and not mixed.group.members and mixed.downgraded is None:
        raise Mismatch(f"{where}: the model made a classic group, the reference kept its consumer group")
    if t.kind == Kind.CLASSIC:
        seed = mixed.downgraded
        if seed is None:
            raise Mismatch(f"{where}: the model downgraded the group, the reference did not")
        stored = {ids[k]: t.classic.assignment[k] for k in bits(t.classic.members)}
        if seed.generation != t.classic.generation or {k: _mask(v) for k, v in seed.assignments.items()} != stored:
            raise Mismatch(f"{where}: downgrade: reference generation {seed.generation} {seed.assignments}, model "
                           f"{t.classic.generation} {stored}")
        return None
    if mixed.downgraded is not None:
        raise Mismatch(f"{where}: the reference downgraded the group, the model did not")
    return mixed  # its consumer group is judged against the model's after the rule (judge)


# The steps that send a request of the process (a process that is down or paused sends none; Upgrade, Downgrade and
# LeaveGroup close it: its LeaveGroup or its heartbeat with epoch -1)
_REQUESTS = (ConsumerGroupHeartbeat, JoinGroup, SyncGroup, ClassicHeartbeat, Upgrade, Downgrade, A.LeaveGroup)


def mixed_state_group(model: Any, s: Any) -> Any:
    return model._upgrade(s).group


def _fresh(model: Any) -> Any:
    from groupspec.reference.consumer import ConsumerGroupCoordinator

    return ConsumerGroupCoordinator("g", {"t": model.cfg.partitions})


class Driver:
    """The model's walk and the reference it drives: the model state, the reference's group (``None``
    while the model's group is classic), the virtual clock, the steps checked on the reference."""

    def __init__(self, model: Any, faults: frozenset[str], checked: list[int]) -> None:
        self.model = model
        self.faults = faults
        self.s = model.init_states()[0]
        self.mixed: MixedConsumerGroup | None = None
        self.now = 0
        self.last = "the initial state"
        self.checked = checked
        self._enabled: tuple[Any, list[tuple[Any, Any]]] | None = None
        # Each slot's member id: a process started again (``Start``) is a new member, as in Kafka (a classic
        # client is given a new id by the coordinator, a consumer-protocol client makes up a new one), while its
        # old member, if the coordinator still has it, lingers under the old id until its session runs out.
        self.ids = member_ids(len(self.s.clients))
        self.starts = 0

    def enabled(self) -> list[tuple[Any, Any]]:
        if self._enabled is None or self._enabled[0] is not self.s:
            self._enabled = (self.s, list(self.model.successors(self.s)))
        return self._enabled[1]

    def enables(self, kind: type) -> bool:
        return any(type(a) is kind for a, _t in self.enabled())

    def converting(self) -> list[tuple[Any, Any]]:
        """The enabled steps of the classic group towards a consumer group: a member upgrades (it restarts
        with the consumer protocol), or a consumer-protocol heartbeat converts the group."""
        return [(a, t) for a, t in self.enabled() if self.s.kind == Kind.CLASSIC
                and (t.kind == Kind.CONSUMER or isinstance(a, (Upgrade, ConsumerGroupHeartbeat)))]

    def classic(self) -> list[tuple[Any, Any]]:
        """The other enabled steps of the classic group (only the model moves)."""
        towards = self.converting()
        return [(a, t) for a, t in self.enabled() if self.s.kind == Kind.CLASSIC and (a, t) not in towards]

    def consumer(self, kind: type) -> list[tuple[Any, Any]]:
        """The enabled steps of this kind in the consumer group."""
        return [(a, t) for a, t in self.enabled() if self.s.kind == Kind.CONSUMER and type(a) is kind]

    def take(self, steps: list[tuple[Any, Any]], k: int) -> None:
        """The ``k``-th of these enabled steps, in the model and on the reference."""
        action, t = steps[k % len(steps)]
        self.last = repr(action)
        if self.s.kind == Kind.CONSUMER or t.kind == Kind.CONSUMER:
            self.mixed = _drive(self.model, self.s, action, t, self.mixed, self.now, self.faults, self.ids)
            self.checked[0] += 1
        i = getattr(action, "member", -1)
        if isinstance(action, A.Start) or (i >= 0 and self.s.clients[i].proc == Proc.DOWN and t.clients[i].proc != Proc.DOWN):
            # a new process (whatever step brought a process that was down back): a new member id from its next
            # request on (in the model only Start does)
            self.starts += 1
            self.ids[action.member] = f"c{action.member + 1}.{self.starts}"
        self.s = t
        self.now += 100


# --------------------------------------------------------------------------------------------------
# The rules: one per kind of model step, its guard the model's
# --------------------------------------------------------------------------------------------------
KINDS: dict[str, type] = {
    "consumer_heartbeat": ConsumerGroupHeartbeat, "revoke": RevokePartitions, "join_group": JoinGroup,
    "sync_group": SyncGroup, "classic_heartbeat": ClassicHeartbeat, "upgrade": Upgrade, "downgrade": Downgrade,
    "leave": A.LeaveGroup, "session_timeout": A.SessionExpired, "expire_live": A.ExpireLive, "crash": A.Crash,
    "pause": A.Pause, "resume": A.Resume, "start": A.Start,
}
picks = st.integers(min_value=0, max_value=63)  # the k-th step the rule's guard allows (below 100: frame.simulator_seeds)


def _step_rule(name: str, kind: type) -> Any:
    def step(self: Any, k: int) -> None:
        self.h.take(self.h.consumer(kind), k)

    step.__name__ = step.__qualname__ = name
    step.__doc__ = f"The model's {kind.__name__} in the consumer group, and the request it stands for sent to the reference."
    return precondition(lambda self: bool(self.h.consumer(kind)))(rule(k=picks)(step))


@initialize()
def boot(self: Any) -> None:
    self.drivers = [Driver(self.model, self.faults, self.checked)]


@precondition(lambda self: bool(self.h.classic()))
@rule(k=picks)
def classic_step(self: Any, k: int) -> None:
    """A step of the classic group: only the model moves (the classic family's machine checks the classic
    protocol against its reference)."""
    self.h.take(self.h.classic(), k)


@precondition(lambda self: bool(self.h.converting()))
@rule(k=picks)
def convert(self: Any, k: int) -> None:
    """A step of the classic group towards a consumer group (a member upgrades, or a consumer-protocol
    heartbeat converts the group: the reference is given the classic group and converts it,
    ``MixedConsumerGroup.upgrade``). While both are enabled, the walk takes one as often as any other step
    of the classic group, so that it reaches the consumer group, where the reference is driven, sooner."""
    self.h.take(self.h.converting(), k)


@precondition(lambda self: not self.h.enabled())
@rule()
def idle(self: Any) -> None:
    """Nothing is enabled in the model (the group has settled and the budget is spent): time passes."""


RULES = (boot, classic_step, convert, idle, *(_step_rule(n, k) for n, k in KINDS.items()))
MIGRATION = Family("migration", abstraction=abstraction, judge=judge, rules=RULES,
                   attrs={"model": None, "faults": frozenset(), "checked": None}, seed="0")


def make_machine(members: int = 3, partitions: int = 3,
                 faults: Iterable[str] = frozenset({"crash", "timeout", "zombie", "leave", "join"}), budget: int = 3,
                 mutant: str | None = None, checked: list[int] | None = None) -> type[ConformanceMachine]:
    """The migration family's machine on one instance, with the reference's fault switch ``mutant`` on."""
    model = model_for(members, partitions, frozenset(faults), budget)
    return machine(MIGRATION, "MigrationConformance", model=model,
                   faults=frozenset({mutant}) if mutant else frozenset(),
                   checked=checked if checked is not None else [0])


def run(members: int = 3, partitions: int = 3, faults: Iterable[str] = frozenset({"crash", "timeout", "zombie", "leave", "join"}),
        budget: int = 3, walks: int = 300, steps: int = 60, seed: int | None = 0,
        mutant: str | None = None) -> tuple[str | None, int]:
    """``walks`` examples of up to ``steps`` model steps, Hypothesis seed ``seed`` (``None``: derandomized);
    (the first mismatch or None, steps checked on the reference)."""
    checked = [0]
    m = make_machine(members, partitions, faults, budget, mutant, checked)
    cfg = derandomized(walks, steps, shrink=False)
    if seed is not None:
        cfg = Settings(cfg, derandomize=False)
    return run_frame(m, cfg, seed=seed), checked[0]
