"""The migration model's classic phase mirrored by the reference classic coordinator (issue 30, the migration
family's last three survivors; docs/specification.md, "Migration survivors, the classic phase").

While the migration model's group is classic, the conformance machine (``groupspec.conformance.migration``) moves the
model only, and at the upgrade gives the reference the model's *own* classic group (``view_of``, built from the
model's ``unsynced``). So nothing compared the classic phase's rules with an implementation written without the
model: which JoinGroup leaves a member with no stored assignment at all (the empty bytes Kafka's
``ConsumerGroup.fromClassicGroup`` cannot parse, which refuse the upgrade), or which requests a classic client sends.

This check explores every reachable state of the (possibly mutated) ``classic-to-consumer`` model at a small bound,
breadth first, and mirrors each path (forked per step; each state with the mirror of the first path that reached it)
while the group is classic by the reference classic coordinator (``groupspec.reference.classic.GroupCoordinator``,
seeded with the model's initial group through ``__consumer_offsets``), every step sent as the request it stands for:

* ``JoinGroup``: the client's JoinGroup with the member id it holds (none for a new process: the KIP-394 two-step
  join, MEMBER_ID_REQUIRED then the same request with the id given), its owned partitions and generation in the
  ConsumerProtocol subscription (cooperative-sticky, as Kafka's ``ConsumerCoordinator.metadata``);
* ``SyncGroup``: the leader's carries the model's ``pending`` assignment for every member (the leader's assignor is
  pinned to Kafka's elsewhere, ``assignor:*``), a follower's none; ``ClassicHeartbeat``: the client's Heartbeat;
* ``LeaveGroup`` and ``Upgrade`` of a classic member: its LeaveGroup (the client then restarts without a member id);
  ``SessionExpired`` and ``ExpireLive``: a LeaveGroup of that member sent by nobody (Kafka's session expiry and
  LeaveGroup both end in ``removeMemberAndUpdateClassicGroup``; the reference coordinator's in
  ``_remove_member_and_update_group``); ``Crash``: the process is gone (a later one starts without a member id);
* ``ConsumerGroupHeartbeat`` at epoch 0 to a non-empty classic group: the upgrade. ``MixedConsumerGroup.upgrade`` is
  given the reference coordinator's group (``GroupCoordinator.group``) and must refuse it exactly when the model
  does. From a state whose group is not classic the path is no longer mirrored.

The coordinator's clock stays at 0 (no session or rebalance timeout fires; the model's removals are its own steps)
with ``initial_rebalance_delay_ms=0`` (the model completes a join phase of an empty group at its first JoinGroup).

After every step the reference coordinator's group must be the model's: status, generation, members (the ids the
slots' processes hold) and, per member, whether its stored assignment is *no assignment* (empty bytes) —
the model's ``unsynced`` — and otherwise its partitions. And every request the model's client sends must be one
Kafka's client sends: a Heartbeat only while the client is not waiting for its JoinGroup answer (Kafka's
``AbstractCoordinator.HeartbeatThread`` is disabled while ``state.hasNotJoinedGroup()``, and the reference client's
``tick`` sends heartbeats only in COMPLETING_REBALANCE and STABLE).

What the mirror steps around (the path is no longer mirrored from there; ``abstractions`` in the result counts them):
*leader*, the member that leads a generation. The model's leader is the lowest slot that is a member (the model has
no member renaming); Kafka's is the old leader if it rejoined, else the first member that rejoined
(``maybeElectNewJoinedLeader``). Where they differ after a join phase, the two would send the leader's SyncGroup from
different members. Not a gap here: a known member that rejoins a group that is not rebalancing with an unchanged
subscription (Kafka answers it at once, the model starts a join phase) is never reached at the jobs' bounds: the
model's classic member rejoins a STABLE group only after something in its subscription changed (partitions it revoked,
or its generation reset by an error answer).

May import: ``groupspec.model`` and ``groupspec.reference`` (inside the function: the mutant is applied by then).
"""
from __future__ import annotations

import copy
from collections import deque
from typing import Any

# (members, partitions, budget, faults): explored breadth first, every reachable state checked
MIGRATION_CLASSIC_JOBS: tuple[tuple[int, int, int, str], ...] = (
    (2, 2, 2, "join,leave,crash,timeout,zombie"),
    (3, 2, 1, "join,leave,crash,timeout,zombie"),
)
MAX_STATES = 40_000  # the unchanged model's job has under 3,000 states


class _Diverged(AssertionError):
    pass


class _Mirror:
    """The reference classic coordinator and, per slot, what its process holds: member id, connection, and whether
    its JoinGroup waits for an answer."""

    def __init__(self, coord: Any, members: int) -> None:
        self.coord = coord
        self.ids = [f"c{i + 1}" for i in range(members)]  # the member id the slot's process holds ("": none)
        self.member = list(self.ids)  # the id of the slot's member at the coordinator (a crashed process's lingers)
        self.conn = [0] * members  # a new connection (process) per restart
        self.joining = [False] * members  # its JoinGroup is parked at the coordinator

    def fork(self) -> "_Mirror":
        return copy.deepcopy(self)


def check(job: tuple[int, int, int, str]) -> str | None:
    """The first step where the reference classic coordinator and the model part, or None."""
    failure: str | None = run(job)["failure"]
    return failure


def run(job: tuple[int, int, int, str]) -> dict[str, Any]:
    """``failure`` (or None), ``states`` explored, ``mirrored`` (states checked against the reference), ``upgrades``
    compared, ``abstractions`` (paths no longer mirrored, see the module docstring)."""
    from groupspec.model import Config, GroupStatus, bits, make, migration
    from groupspec.reference.classic import (Assignment, CoordinatorConfig, GroupCoordinator,
                                             GroupRecord, GroupStatus as RStatus, HeartbeatRequest, JoinGroupRequest,
                                             JoinGroupResponse, LeaveGroupRequest, MemberIdentity, MemberRecord,
                                             Subscription, SyncGroupRequest, SyncGroupResponse, HeartbeatResponse,
                                             decode_assignment, encode_assignment, encode_subscription)
    from groupspec.reference.errors import Error
    from groupspec.reference.migration import MigrationRefused, MixedConsumerGroup

    members, partitions, budget, faults = job
    proto: Any = make("classic-to-consumer", Config(members=members, partitions=partitions, budget=budget,
                                               assignor="uniform", faults=frozenset(f for f in faults.split(",") if f)))
    Kind = migration.Kind
    around = {"leader": 0}  # paths no longer mirrored at an abstraction, by kind
    status_of = {GroupStatus.EMPTY: RStatus.EMPTY, GroupStatus.STABLE: RStatus.STABLE,
                 GroupStatus.PREPARING_REBALANCE: RStatus.PREPARING_REBALANCE,
                 GroupStatus.COMPLETING_REBALANCE: RStatus.COMPLETING_REBALANCE}

    def tps(mask: int) -> tuple[tuple[str, int], ...]:
        return tuple(("t", p) for p in bits(mask))

    def sub(owned: int, generation: int) -> bytes:
        return encode_subscription(Subscription(topics=("t",), owned_partitions=tps(owned), generation_id=generation))

    def who(i: int) -> str:
        return f"c{i + 1}"

    def start(s: Any) -> _Mirror:
        cg = s.classic
        ids = [who(i) for i in range(members)]
        recs = tuple(MemberRecord(ids[k], None, ids[k], "/h", 300_000, 45_000, sub(cg.reported[k], 0),
                                  encode_assignment(Assignment(tps(cg.assignment[k])))) for k in bits(cg.members))
        coord = GroupCoordinator(config=CoordinatorConfig(initial_rebalance_delay_ms=0))
        coord.restore_group(GroupRecord("g", "consumer", cg.generation, "cooperative-sticky", ids[cg.leader], recs))
        return _Mirror(coord, members)

    def send(m: _Mirror, sender: Any, req: Any) -> list[tuple[Any, Any]]:
        out = [(o.destination, o.response) for o in m.coord.handle(0, sender, req)]
        out += [(o.destination, o.response) for o in m.coord.advance(0)]  # (the initial delay, 0 ms)
        return out

    def deliver(m: _Mirror, out: list[tuple[Any, Any]]) -> dict[int, Any]:
        """Each answer to the process it was sent to (answers to a process that is gone are dropped)."""
        got: dict[int, Any] = {}
        for dest, resp in out:
            if not (isinstance(dest, tuple) and dest[0] == "p"):
                continue
            i = dest[1]
            if dest[2] != m.conn[i]:
                continue
            got[i] = resp
            if isinstance(resp, JoinGroupResponse):
                m.joining[i] = False
                if resp.error in (Error.UNKNOWN_MEMBER_ID, Error.FENCED_INSTANCE_ID):
                    m.ids[i] = ""
            elif isinstance(resp, (SyncGroupResponse, HeartbeatResponse)) and resp.error is Error.UNKNOWN_MEMBER_ID:
                m.ids[i] = ""
        return got

    def conn(m: _Mirror, i: int) -> tuple[str, int, int]:
        return ("p", i, m.conn[i])

    def step(m: _Mirror, s: Any, a: Any, t: Any) -> str | None:
        """Send step ``a`` (from ``s`` to ``t``); a failure, ``"off"`` (no longer mirrored), or None."""
        i = a.member
        c: Any = s.clients[i]  # (every step of this page names its member)
        name = type(a).__name__
        if name == "JoinGroup":
            req = JoinGroupRequest("g", m.ids[i], "consumer", (("cooperative-sticky", sub(c.owned, c.epoch)),),
                                   client_id=who(i))
            got = deliver(m, send(m, conn(m, i), req))
            r = got.get(i)
            if isinstance(r, JoinGroupResponse) and r.error is Error.MEMBER_ID_REQUIRED:
                m.ids[i] = m.member[i] = r.member_id
                req = JoinGroupRequest("g", r.member_id, "consumer", req.protocols, client_id=who(i))
                got = deliver(m, send(m, conn(m, i), req))
            if i not in got:
                m.joining[i] = True
        elif name == "SyncGroup":
            cg = s.classic
            leader = cg.status == GroupStatus.COMPLETING_REBALANCE and i == cg.leader
            asg = tuple((m.member[k], encode_assignment(Assignment(tps(cg.pending[k])))) for k in bits(cg.members)) if leader else ()
            deliver(m, send(m, conn(m, i), SyncGroupRequest("g", m.ids[i], c.epoch, asg, protocol_type="consumer",
                                                          protocol_name="cooperative-sticky")))
        elif name == "ClassicHeartbeat":
            if m.joining[i]:
                return (f"{who(i)} heartbeats while its JoinGroup waits for its answer: Kafka's client does not "
                        "(AbstractCoordinator's heartbeat thread is off while it has not joined; the reference "
                        "client's tick sends none outside COMPLETING_REBALANCE and STABLE)")
            deliver(m, send(m, conn(m, i), HeartbeatRequest("g", m.ids[i], c.epoch)))
        elif name in ("LeaveGroup", "Upgrade", "SessionExpired", "ExpireLive"):
            if s.classic.members >> i & 1:
                sender = conn(m, i) if name in ("LeaveGroup", "Upgrade") else "expiry"
                deliver(m, send(m, sender, LeaveGroupRequest("g", (MemberIdentity(m.member[i]),))))
            if name in ("LeaveGroup", "Upgrade"):
                m.conn[i] += 1
                m.ids[i], m.joining[i] = "", False
        elif name == "Crash":
            m.conn[i] += 1
            m.ids[i], m.joining[i] = "", False
        elif name == "ConsumerGroupHeartbeat":
            if c.epoch == 0 and s.classic.members:
                gv = m.coord.group("g")
                try:
                    MixedConsumerGroup.upgrade(gv, {"t": partitions})
                    ref = None
                except MigrationRefused as e:
                    ref = str(e)
                model_refused = t.kind == Kind.CLASSIC
                if model_refused != (ref is not None):
                    return (f"{who(i)}'s first ConsumerGroupHeartbeat to the classic group (generation "
                            f"{s.classic.generation}, {s.classic.status.name}): the model "
                            f"{'refuses' if model_refused else 'converts'} it, the reference "
                            f"{'refuses it: ' + ref if ref else 'converts it'}")
            if t.kind != Kind.CLASSIC:
                return "off"
        elif name in ("Pause", "Resume", "Start", "RevokePartitions"):
            pass
        else:
            return f"a step the mirror does not know in a classic group: {a!r}"
        if t.kind != Kind.CLASSIC:
            return "off"
        return compare(m, t)

    def compare(m: _Mirror, t: Any) -> str | None:
        cg = t.classic
        gv = m.coord.group("g")
        if gv is None:
            return "the reference coordinator has no group"
        where = f"(model: {cg.status.name} generation {cg.generation}; reference: {gv.status.name} generation {gv.generation})"
        if status_of[cg.status] != gv.status or cg.generation != gv.generation:
            return f"the group's status or generation differ {where}"
        ids = {m.member[i]: i for i in bits(cg.members)}
        if set(ids) != set(gv.member_ids):
            return (f"the members differ {where}: the model's "
                    f"{sorted(who(i) for i in bits(cg.members))}, the reference's {sorted(gv.member_ids)}")
        for mid, i in ids.items():
            stored = gv.member(mid).assignment
            if bool(cg.unsynced >> i & 1) != (stored == b""):
                return (f"{who(i)}'s stored assignment {where}: the model's is "
                        f"{'no assignment (unsynced)' if cg.unsynced >> i & 1 else 'partitions ' + str(bits(cg.assignment[i]))}, "
                        f"the reference's {'empty bytes' if stored == b'' else 'an assignment'}")
            if stored:
                got = sum(1 << p for _t, p in decode_assignment(stored).partitions)
                if got != cg.assignment[i]:
                    return f"{who(i)}'s stored assignment {where}: the model's {bits(cg.assignment[i])}, the reference's {bits(got)}"
        # The leader, chosen at the end of a join phase (the model's field means nothing before): the model's is the
        # lowest slot, Kafka's the old leader if it rejoined, else the first member that did (module docstring).
        if cg.status in (GroupStatus.COMPLETING_REBALANCE, GroupStatus.STABLE) and gv.leader != m.member[cg.leader]:
            return "around:leader"
        return None

    init = proto.init_states()
    mirrors: dict[Any, _Mirror | None] = {s: start(s) for s in init}
    seen, todo = set(init), deque(init)
    mirrored = upgrades = 0
    while todo:
        s = todo.popleft()
        m0 = mirrors.pop(s)
        if m0 is not None:
            mirrored += 1
        for a, t in proto.successors(s):
            m = None
            if m0 is not None and s.kind == Kind.CLASSIC:
                m = m0.fork()
                if type(a).__name__ == "ConsumerGroupHeartbeat" and s.clients[a.member].epoch == 0 and s.classic.members:
                    upgrades += 1
                verdict = step(m, s, a, t)
                if verdict == "off" or verdict is not None and verdict.startswith("around:"):
                    if verdict != "off":
                        around[verdict[len("around:"):]] += 1
                    m = None
                elif verdict is not None:
                    return {"failure": f"{a!r}: {verdict}", "states": len(seen), "mirrored": mirrored,
                            "upgrades": upgrades, "abstractions": dict(around)}
            if t not in seen:
                if len(seen) >= MAX_STATES:
                    return {"failure": f"more than {MAX_STATES} states reachable (the unchanged model has under 3,000)",
                            "states": len(seen), "mirrored": mirrored, "upgrades": upgrades, "abstractions": dict(around)}
                seen.add(t)
                todo.append(t)
                mirrors[t] = m
    return {"failure": None, "states": len(seen), "mirrored": mirrored, "upgrades": upgrades, "abstractions": dict(around)}
