"""The migration model's classic-group commits against the reference classic coordinator (issue 30, the migration
family's full run).

While the migration model's group is classic, the conformance machine (``groupspec.conformance.migration``) moves the
model only: nothing compared the model's answer to a classic member's OffsetCommit (``commit_accepted``: accepted in
the member's generation and not while COMPLETING_REBALANCE) with Kafka's. This check explores every reachable state
of the (possibly mutated) model at a small bound, breadth first, and in each state where the group is classic gives
the reference classic coordinator (``groupspec.reference.classic.GroupCoordinator``) the model's group as its
``__consumer_offsets`` record (generation, leader, members under their slot's member id), in the model's group
status (``GroupCoordinator.restore_group``), and sends it, for every running classic process that owns partitions
(the ones that commit), the OffsetCommit that process would send: its member id (its slot's while it is a member, an
id the group no longer knows once it was removed) and the generation of its last JoinGroup answer. The reference's answer (NONE or an error)
must be the model's ``commit_accepted``.

May import: ``groupspec.model``, ``groupspec.reference`` (inside the function: the mutant is applied by then).
"""
from __future__ import annotations

from collections import deque
from typing import Any

# (members, partitions, budget, faults): explored breadth first, every reachable state checked
MIGRATION_COMMIT_JOBS: tuple[tuple[int, int, int, str], ...] = (
    (2, 2, 2, "join,leave,crash,timeout,zombie"),
)
MAX_STATES = 40_000  # the unchanged model's job has under 3,000 states


def check(job: tuple[int, int, int, str]) -> str | None:
    """The first state where the reference's answer to a classic commit differs from the model's, or None."""
    from groupspec.model import Config, GroupStatus, Proc, make, migration
    from groupspec.reference.classic import (GroupCoordinator, GroupRecord, GroupStatus as RStatus, MemberRecord,
                                             OffsetCommitRequest)
    from groupspec.reference.errors import Error

    members, partitions, budget, faults = job
    proto: Any = make("classic-to-consumer", Config(members=members, partitions=partitions, budget=budget,
                                               assignor="uniform", faults=frozenset(f for f in faults.split(",") if f)))
    status_of = {GroupStatus.PREPARING_REBALANCE: RStatus.PREPARING_REBALANCE,
                 GroupStatus.COMPLETING_REBALANCE: RStatus.COMPLETING_REBALANCE}

    def answer(s: Any, i: int) -> Error:
        cg = s.classic
        ids = [f"c{k + 1}" for k in range(members)]
        recs = tuple(MemberRecord(ids[k], None, ids[k], "/h", 300_000, 45_000, b"", b"") for k in range(members)
                     if cg.members >> k & 1)
        coord = GroupCoordinator()
        # (loaded as from __consumer_offsets, then moved mid-rebalance by its own transition table)
        coord.restore_group(GroupRecord("g", "consumer", cg.generation, "cooperative-sticky" if recs else None,
                                        ids[cg.leader] if recs else None, recs), status_of.get(cg.status))
        c = s.clients[i]
        mid = ids[i] if cg.members >> i & 1 else f"gone-{i}"
        req = OffsetCommitRequest("g", (("t", 0, 1),), mid, c.epoch)
        (out,) = coord.handle(0, "client", req)
        resp: Any = out.response  # (an OffsetCommitResponse)
        err: Error = resp.partitions[0][2]
        return err

    init = proto.init_states()
    seen, todo = set(init), deque(init)
    while todo:
        s = todo.popleft()
        if s.kind == migration.Kind.CLASSIC:
            for i, c in enumerate(s.clients):
                if c.proc != Proc.UP or not c.classic or not c.owned:
                    continue
                err = answer(s, i)
                model = proto.commit_accepted(s, i)
                if model != (err == Error.NONE):
                    return (f"c{i + 1}'s OffsetCommit at generation {c.epoch} to the classic group (generation "
                            f"{s.classic.generation}, {s.classic.status.name}): the model "
                            f"{'accepts' if model else 'refuses'} it, the reference classic coordinator answers "
                            f"{err.name}")
        for _a, t in proto.successors(s):
            if t not in seen:
                if len(seen) >= MAX_STATES:
                    return f"more than {MAX_STATES} states reachable (the unchanged model has under 3,000)"
                seen.add(t)
                todo.append(t)
    return None
