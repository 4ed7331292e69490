"""Conformance of the reference migration (``reference.migration.mixed_group``) to the model (``model.migration``).

Theory of operation
-------------------
Seeded random walks of the model ``classic-to-consumer`` (whose server-side target is computed by the
reference's uniform assignor, so the check is about the protocol) drive the reference: while the model's
group is classic, only the model moves (the classic protocol has its own conformance suite); at the
step where a consumer-protocol heartbeat converts it, the reference is given the classic group as the
reference classic coordinator shows one (a ``GroupView``: generation, members' subscriptions with their
owned partitions, stored assignments as ConsumerProtocol bytes, empty bytes for a member that never got
one) and converts it with ``MixedConsumerGroup.upgrade``; from then on every model step is sent to the
reference as the request it stands for, with the client's own fields (member id = slot, epoch or
generation, owned partitions):

* ``JoinGroup`` / ``SyncGroup`` / ``ClassicHeartbeat`` of a classic client, ``ConsumerGroupHeartbeat``
  of a consumer-protocol one, ``Upgrade`` / ``Downgrade`` / ``LeaveGroup`` (leave requests), and the
  coordinator's removals (session timeout, live expiry);

and the check demands, after each step: the reference's answer is the one the model's client applied
(error or not, generation / epoch, the partitions given), and the reference coordinator's state maps to
the model's (group epoch, assignment epoch, target, each member's state, epoch, assigned and pending
partitions). A refused conversion must be refused by both; a downgrade must give the same generation
and stored assignments. The fault switches of ``reference.migration.mixed_group`` (``MUTANTS``) must make it fail.
"""
from __future__ import annotations

import random
import time

from groupspec.model import actions as A
from groupspec.model.consumer import ConsumerGroup, ConsumerGroupHeartbeat, MemberState as MS, RevokePartitions
from groupspec.model.core import Config, GroupStatus, Proc, bits
from groupspec.model.migration import (ClassicHeartbeat, ClassicToConsumer, Downgrade, JoinGroup, Kind, Phase,
                                       SyncGroup, Upgrade)
from groupspec.reference.assignors.server import get_server
from groupspec.reference.consumer import HeartbeatRequest as CGHeartbeat, MemberState as RMS
from groupspec.reference.classic import (
    Assignment, Subscription, decode_assignment, encode_assignment, encode_subscription,
)
from groupspec.reference.classic import GroupStatus as RGroupStatus, GroupView, MemberView
from groupspec.reference.errors import Error
from groupspec.reference.classic import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest
from groupspec.reference.migration import MigrationRefused, MixedConsumerGroup

__all__ = ["MUTANTS", "MUTANT_BUGS", "walk", "run", "run_mutant"]

MUTANT_BUGS = {
    "sync_gives_target": ("coordinator", "a classic member's SyncGroup answers its target, not its assigned partitions"),
    "no_rejoin_signal": ("coordinator", "a classic member's Heartbeat never answers REBALANCE_IN_PROGRESS"),
}
MUTANTS = tuple(MUTANT_BUGS)
_STATE = {RMS.STABLE: MS.STABLE, RMS.UNREVOKED_PARTITIONS: MS.UNREVOKED_PARTITIONS,
          RMS.UNRELEASED_PARTITIONS: MS.UNRELEASED_PARTITIONS}


class Mismatch(AssertionError):
    pass


def model_for(members: int, partitions: int, faults: frozenset[str], budget: int):
    """``classic-to-consumer`` with its target computed by the reference's uniform assignor."""
    cfg = Config(members=members, partitions=partitions, faults=faults, budget=budget, assignor="uniform")
    assignor = get_server("uniform")

    class WithReferenceAssignor(ClassicToConsumer):
        def compute_target(self, g: ConsumerGroup) -> tuple[int, ...]:
            subs = {f"c{i + 1}": ["t"] for i, m in enumerate(g.members) if m is not None}
            current = {f"c{i + 1}": {"t": bits(g.target[i])} for i, m in enumerate(g.members) if m is not None}
            result = assignor.assign({"t": partitions}, subs, current)
            return tuple(sum(1 << p for p in result.get(f"c{i + 1}", {}).get("t", [])) for i in range(members))

    return WithReferenceAssignor(cfg)


def _tps(mask: int) -> tuple:
    return tuple(("t", p) for p in bits(mask))


def _mask(tps) -> int:
    return sum(1 << p for _t, p in tps)


def _protocols(owned: int) -> tuple:
    return (("cooperative-sticky", encode_subscription(Subscription(topics=("t",), owned_partitions=_tps(owned)))),)


def view_of(s) -> GroupView:
    """The model's classic group as the reference classic coordinator would show it."""
    cg = s.classic
    members = tuple(
        MemberView(member_id=f"c{i + 1}", group_instance_id=None, client_id=f"c{i + 1}", protocol_type="consumer",
                   protocols=_protocols(cg.reported[i]),
                   assignment=b"" if cg.unsynced >> i & 1 else encode_assignment(Assignment(_tps(cg.assignment[i]))),
                   session_timeout_ms=45_000, rebalance_timeout_ms=300_000, awaiting_join=False, awaiting_sync=False,
                   is_new=False)
        for i in bits(cg.members))
    status = {GroupStatus.EMPTY: RGroupStatus.EMPTY, GroupStatus.STABLE: RGroupStatus.STABLE,
              GroupStatus.PREPARING_REBALANCE: RGroupStatus.PREPARING_REBALANCE,
              GroupStatus.COMPLETING_REBALANCE: RGroupStatus.COMPLETING_REBALANCE}[cg.status]
    return GroupView(group_id="g", status=status, generation=cg.generation, protocol_type="consumer",
                     protocol_name="cooperative-sticky", leader=f"c{cg.leader + 1}" if cg.members else None,
                     members=members, pending=(), pending_sync=(), static=(), offsets=(), num_awaiting_join=0,
                     new_member_added=False)


def compare(s, mixed: MixedConsumerGroup, where: str) -> None:
    """The reference coordinator's consumer group maps to the model's."""
    g, r = s.group, mixed.group
    got = (r.group_epoch, r.assignment_epoch)
    if got != (g.epoch, g.target_epoch):
        raise Mismatch(f"{where}: group/assignment epoch: reference {got}, model {(g.epoch, g.target_epoch)}")
    for i, m in enumerate(g.members):
        mid = f"c{i + 1}"
        rm = r.members.get(mid)
        if (m is None) != (rm is None):
            raise Mismatch(f"{where}: member {mid}: reference {'has' if rm else 'lacks'} it, the model does not")
        if m is None:
            continue
        mine = (m.state, m.epoch, m.assigned, m.revoking, bool(getattr(m, "classic", False)), g.target[i])
        theirs = (_STATE[rm.state], rm.epoch, _mask(rm.assigned), _mask(rm.revoking), mid in mixed.classic,
                  _mask(r.target.get(mid, ())))
        if mine != theirs:
            raise Mismatch(f"{where}: member {mid} (state, epoch, assigned, revoking, classic, target): "
                           f"reference {theirs}, model {mine}")


def _drive(model, s, action, t, mixed: MixedConsumerGroup | None, now: int) -> MixedConsumerGroup | None:
    """Send the request ``action`` stands for to the reference; check its answer against the model's step."""
    i = action.member
    where = f"{action!r}"
    if s.kind == Kind.CLASSIC:
        if isinstance(action, ConsumerGroupHeartbeat) and s.clients[i].epoch == 0 and s.classic.members:
            try:
                mixed = MixedConsumerGroup.upgrade(view_of(s), {"t": model.cfg.partitions}, faults=FAULTS, now=now)
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
    c, c2 = s.clients[i] if i >= 0 else None, t.clients[i] if i >= 0 else None
    mid = f"c{i + 1}"
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
        stored = {f"c{k + 1}": t.classic.assignment[k] for k in bits(t.classic.members)}
        if seed.generation != t.classic.generation or {k: _mask(v) for k, v in seed.assignments.items()} != stored:
            raise Mismatch(f"{where}: downgrade: reference generation {seed.generation} {seed.assignments}, model "
                           f"{t.classic.generation} {stored}")
        return None
    if mixed.downgraded is not None:
        raise Mismatch(f"{where}: the reference downgraded the group, the model did not")
    compare(t, mixed, where)
    return mixed


def mixed_state_group(model, s):
    return model._upgrade(s).group


def _fresh(model):
    from groupspec.reference.consumer import ConsumerGroupCoordinator

    return ConsumerGroupCoordinator("g", {"t": model.cfg.partitions})


FAULTS: frozenset[str] = frozenset()


def walk(model, rng: random.Random, steps: int) -> int:
    """One random walk; returns the number of steps checked on the reference. Raises Mismatch."""
    s = model.init_states()[0]
    mixed = None
    checked = 0
    for k in range(steps):
        succ = list(model.successors(s))
        if not succ:
            break
        upgrades = [x for x in succ if isinstance(x[0], (Upgrade, ConsumerGroupHeartbeat))]
        if s.kind == Kind.CLASSIC and upgrades and rng.random() < 0.5:
            succ = upgrades  # reach the consumer group sooner: that is where the reference is driven
        action, t = succ[rng.randrange(len(succ))]
        if s.kind == Kind.CONSUMER or t.kind == Kind.CONSUMER:
            mixed = _drive(model, s, action, t, mixed, now=k * 100)
            checked += 1
        s = t
    return checked


def run(members: int = 3, partitions: int = 3, faults=frozenset({"crash", "timeout", "zombie", "leave", "join"}),
        budget: int = 3, walks: int = 300, steps: int = 60, seed: int = 0, mutant: str | None = None) -> tuple[str | None, int]:
    """``walks`` seeded walks; (the first mismatch or None, steps checked on the reference)."""
    global FAULTS
    FAULTS = frozenset({mutant}) if mutant else frozenset()
    model = model_for(members, partitions, frozenset(faults), budget)
    rng = random.Random(seed)
    checked = 0
    try:
        for _w in range(walks):
            checked += walk(model, rng, steps)
    except Mismatch as e:
        return str(e).splitlines()[0], checked
    finally:
        FAULTS = frozenset()
    return None, checked


def run_mutant(mutant: str, walks: int = 300) -> dict:
    """One row of ``groupspec verify``'s mutation table."""
    owner, bug = MUTANT_BUGS[mutant]
    t0 = time.perf_counter()
    why, _n = run(mutant=mutant, walks=walks)
    return {"mutant": mutant, "switch owner": owner, "variant": "classic-to-consumer", "bug": bug,
            "check": "conformance (migration)" if why else "", "caught": why is not None, "detail": why or "",
            "examples": walks, "seed": 0, "seconds": time.perf_counter() - t0}
