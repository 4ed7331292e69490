"""The compiled engine's state encoding: one model ``State`` as one row of small integers.

A row is a flat integer vector: the group's fields first, then one block of ``SLOT`` fields per member
slot (its client, the coordinator's record for it, and its share of the leader's target). Every field
stores exactly what the model's dataclass field stores, in the same units (generations are absolute,
partition and topic sets are the same bit masks), so :func:`encode` and :func:`decode` are exact
inverses on every reachable state; absent parts (no inbox, no ghost, no record, no target) are stored
as all-default fields with a presence flag, so that a row is a function of the state alone.

The field numbers are module constants: the kernel (``groupspec.checker.compiled.kernel``) reads them as
compile-time constants.
"""
from __future__ import annotations

import numpy as np

from groupspec.model import actions as A
from groupspec.model.core import (
    NO_GENERATION,
    Client,
    Group,
    GroupStatus,
    Id,
    Inbox,
    MemberStatus,
    Proc,
    Record,
    Reply,
    State,
)

# -- the group (header) ----------------------------------------------------------------------------
G_STATUS = 0
G_GEN = 1
G_LEADER = 2
G_TSET = 3  # 1 when the leader's target is set (Group.target is not None)
G_PARTS = 4
G_HELD = 5
G_HELDFOR = 6
G_BUDGET = 7  # State.budget
HEADER = 8

# -- one member slot, at HEADER + i * SLOT -----------------------------------------------------------
C_PROC = 0
C_STATUS = 1
C_ID = 2
C_GEN = 3
C_OWNED = 4
C_TOPICS = 5
C_REJOIN = 6
C_IB = 7  # inbox reply (0: no inbox)
C_IBGEN = 8
C_IBASG = 9
C_GH = 10  # 1 when a ghost (a replaced static member's old process) lives on
C_GHGEN = 11
C_GHOWN = 12
R_SET = 13  # 1 when the coordinator has a record for this slot
R_STATIC = 14
R_JOINED = 15
R_AWAIT = 16
R_SYNCED = 17
R_TOPICS = 18
R_OWNED = 19
R_GEN = 20
R_ASG = 21
T_ASG = 22  # this slot's share of Group.target (0 when no target is set)
SLOT = 23


def width(members: int) -> int:
    return HEADER + SLOT * members


# -- actions: one small integer per action instance ---------------------------------------------------
# The order is the kernel's: class id * 8 + (member + 1); member -1 for the coordinator's global steps.
ACTION_CLASSES: tuple[type, ...] = (
    A.SendJoinGroup, A.ReceiveJoinResponse, A.ReceiveSyncResponse, A.ReceiveError, A.Heartbeat,
    A.Resume, A.GhostFenced, A.NoticeMetadata, A.SessionExpired, A.RebalanceTimeout, A.DelayExpired,
    A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause, A.ChangeSubscription, A.AddPartition,
    A.RebalanceTimeoutOvertakes,
)
FAIR_CLASSES = sum(1 for c in ACTION_CLASSES if c.fair)  # fair classes come first
assert all(c.fair for c in ACTION_CLASSES[:FAIR_CLASSES]) and not any(c.fair for c in ACTION_CLASSES[FAIR_CLASSES:])


def action_code(act: A.Action) -> int:
    return ACTION_CLASSES.index(type(act)) * 8 + act.member + 1


def action_of(code: int) -> A.Action:
    cls = ACTION_CLASSES[code // 8]
    member = code % 8 - 1
    return cls(member) if member >= 0 else cls()


# -- encode / decode ------------------------------------------------------------------------------------
def encode(s: State, members: int) -> np.ndarray:
    row = np.zeros(width(members), dtype=np.int64)
    g = s.group
    row[G_STATUS] = int(g.status)
    row[G_GEN] = g.generation
    row[G_LEADER] = g.leader
    row[G_TSET] = 0 if g.target is None else 1
    row[G_PARTS] = g.partitions
    row[G_HELD] = g.held
    row[G_HELDFOR] = g.held_for
    row[G_BUDGET] = s.budget
    for i in range(members):
        b = HEADER + i * SLOT
        c = s.clients[i]
        row[b + C_PROC] = int(c.proc)
        row[b + C_STATUS] = int(c.status)
        row[b + C_ID] = int(c.id)
        row[b + C_GEN] = c.generation
        row[b + C_OWNED] = c.owned
        row[b + C_TOPICS] = c.topics
        row[b + C_REJOIN] = int(c.rejoin)
        if c.inbox is None:
            row[b + C_IBGEN] = NO_GENERATION
        else:
            row[b + C_IB] = int(c.inbox.reply)
            row[b + C_IBGEN] = c.inbox.generation
            row[b + C_IBASG] = c.inbox.assignment
        if c.ghost is not None:
            row[b + C_GH] = 1
            row[b + C_GHGEN], row[b + C_GHOWN] = c.ghost
        r = g.records[i]
        if r is not None:
            row[b + R_SET] = 1
            row[b + R_STATIC] = int(r.static)
            row[b + R_JOINED] = int(r.joined)
            row[b + R_AWAIT] = int(r.awaiting_sync)
            row[b + R_SYNCED] = int(r.synced)
            row[b + R_TOPICS] = r.topics
            row[b + R_OWNED] = r.owned
            row[b + R_GEN] = r.generation
            row[b + R_ASG] = r.assignment
        if g.target is not None:
            row[b + T_ASG] = g.target[i]
    return row


def decode(row: np.ndarray, members: int) -> State:
    v = [int(x) for x in row]
    clients = []
    records = []
    target = []
    for i in range(members):
        b = HEADER + i * SLOT
        inbox = None
        if v[b + C_IB]:
            inbox = Inbox(Reply(v[b + C_IB]), v[b + C_IBGEN], v[b + C_IBASG])
        ghost = (v[b + C_GHGEN], v[b + C_GHOWN]) if v[b + C_GH] else None
        clients.append(Client(
            proc=Proc(v[b + C_PROC]), status=MemberStatus(v[b + C_STATUS]), id=Id(v[b + C_ID]),
            generation=v[b + C_GEN], owned=v[b + C_OWNED], topics=v[b + C_TOPICS], rejoin=bool(v[b + C_REJOIN]),
            inbox=inbox, ghost=ghost,
        ))
        if v[b + R_SET]:
            records.append(Record(
                static=bool(v[b + R_STATIC]), joined=bool(v[b + R_JOINED]), awaiting_sync=bool(v[b + R_AWAIT]),
                synced=bool(v[b + R_SYNCED]), topics=v[b + R_TOPICS], owned=v[b + R_OWNED],
                generation=v[b + R_GEN], assignment=v[b + R_ASG],
            ))
        else:
            records.append(None)
        target.append(v[b + T_ASG])
    group = Group(
        status=GroupStatus(v[G_STATUS]), generation=v[G_GEN], leader=v[G_LEADER], records=tuple(records),
        target=tuple(target) if v[G_TSET] else None, partitions=v[G_PARTS], held=v[G_HELD], held_for=v[G_HELDFOR],
    )
    return State(group=group, clients=tuple(clients), budget=v[G_BUDGET])
