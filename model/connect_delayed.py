"""Kafka Connect's delayed incremental cooperative rebalancing (KIP-415, scheduled.rebalance.max.delay.ms).

The protocol
------------
Connect workers rebalance cooperatively (like KIP-429), and the leader adds one rule: when a worker
**departs** (its session expired, it left, or the rebalance timeout dropped it), its work (here: its
partitions, standing for connectors and tasks) is not handed out at once. It is **held back** for
``scheduled.rebalance.max.delay.ms``; work of every further worker that departs while the delay runs is
held too (one delay covers them all). Held work goes to nobody while the delay runs — not even to the
departed worker if it comes back in time: in Kafka the returning worker rejoins empty, the leader
remembers it as a *candidate* and tells every worker the time left; the workers rejoin when it is over
(the **scheduled rebalance**) and only then is the held work handed out, to the candidates
(coordinator.md §6, [ICA] ``handleLostAssignments``). So a bounce costs a delay, not a task movement
to another worker.

In the model:

* a departure adds the departed member's stored assignment to ``Group.held`` (``held_for`` names the
  first member it is held for); ``compute_target`` gives held work to nobody;
* the delay is a timer that may expire at any moment (``DelayExpired``), so both the return-in-time
  and the never-returns cases are explored; it clears ``held``. Kafka's leader also forgets the hold
  early when the leader changes or a round fails (its memory of the previous assignment is then
  discarded and the work is handed out as new): the same step, taken then;
* the scheduled rebalance: once the delay is over, the work nobody is assigned makes every worker —
  leader or not — rejoin (``NoticeMetadata``; Kafka's workers rejoin on their own when the delay in
  their assignment is over), and the assignor spreads the released work. With the sticky assignor the
  released work goes to the least-loaded members, which a worker that came back empty is: Kafka's
  round-robin over the candidates is not modelled beyond that (the conformance harness pins the
  target to what the reference leader computed).

While work is held, nobody owns it; the group is not converged until nothing is held.

Before issue 4 the model gave held work back at the first completed join phase in which the departed
member was present, i.e. before the delay was over; coordinator.md §6 and Kafka's
``IncrementalCooperativeAssignor`` keep it held until the scheduled rebalance.
"""
from __future__ import annotations

from .actions import PollTimeoutLeave as PollTimeoutLeave  # the step (model/formation.py), lent to its old importers
from .classic import ClassicProtocol
from .core import NO_GENERATION, MemberStatus as MS, Proc, State, bits
from .properties import Kind, Property


class ConnectDelayed(ClassicProtocol):
    name = "connect-delayed"
    summary = "KIP-415: a departed worker's work is held back until the delay is over, then handed out"
    rebalance = "cooperative"
    delayed = True

    @classmethod
    def applicable_faults(cls) -> frozenset[str]:
        """A Connect worker subscribes to no topics: its work is connectors and tasks (a connector's task
        count changing is ``partitions``)."""
        return super().applicable_faults() - {"subscription"}


def duplicate_work_settles(proto: "ConnectDelayed", s: "State") -> str | None:
    """Duplicated work never survives a round (Connect with workers that keep their work across a reset).

    Two live workers may run the same connector or task only while one of them is still in a rebalance
    round: it is not ``STABLE`` in the group's current generation (it is rejoining, or has not applied the
    current generation's assignment yet). Once both have applied one generation's assignment, the copy the
    leader did not assign has been revoked (Kafka's ``IncrementalCooperativeAssignor``: duplicated work
    is revoked; here the sticky assignor keeps the claim of the newer generation and the other worker
    revokes it at onJoinComplete). ``exclusive_ownership`` itself does not hold: that is Kafka's
    behaviour, not a modelling artefact (docs/conformance.md, gap 11).
    """
    g = s.group
    seen: dict[int, int] = {}
    for i, owned in proto.live_ownership(s):
        for p in bits(owned):
            j = seen.get(p)
            if j is not None and all(_settled(s, k) for k in (i, j)):
                return (f"{proto.partition_name(p)} is run by both {proto.member_name(j)} and {proto.member_name(i)}, "
                        f"both STABLE in generation {g.generation}: the duplicate outlived the round")
            seen[p] = i
    return None


def _settled(s: "State", i: int) -> bool:
    c = s.clients[i]
    return c.status == MS.STABLE and c.generation == s.group.generation and c.inbox is None


DUPLICATE_WORK_SETTLES = Property("duplicate_work_settles", Kind.ALWAYS, duplicate_work_settles.__doc__ or "",
                                  duplicate_work_settles)


class ConnectKeepWork(ConnectDelayed):
    """KIP-415 workers as Kafka runs them: work survives a member-id reset (docs/conformance.md gap 11).

    ``WorkerCoordinator.onJoinPrepare`` revokes nothing in the incremental protocol, even after
    UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION reset the worker: it keeps running its connectors and tasks and
    reports them in its next JoinGroup. The classic core's resets (heartbeat, JoinGroup, SyncGroup
    answers) set ``owned`` to nothing; here each reset keeps it, and the core's onJoinPrepare reports it
    (``keep_work_on_reset``). A crash still loses everything (the process is gone).

    **The poll timeout** (``PollTimeoutLeave``, with the ``leave`` fault). A worker whose poll loop
    stalled past its rebalance timeout (``WorkerCoordinator.handlePollTimeoutExpiry``) calls
    ``maybeLeaveGroup``: a joined worker (``STABLE`` or ``COMPLETING_REBALANCE``: the states in which the
    heartbeat thread watches the poll timer) sends LeaveGroup and resets its member id and generation,
    but its process runs on and so does its work: the incremental protocol revokes nothing, neither
    there nor at the next onJoinPrepare. So the step removes the worker's record as a LeaveGroup does
    (its stored allocation is held back for the delay, like any departed worker's), leaves the process
    up, reset (no member id, no generation, ``UNJOINED``), still running what it owned, and its next
    JoinGroup reports that work (the leader sees it running and revokes any copy it assigned
    elsewhere meanwhile: ``duplicate_work_settles``). A worker whose record already went away (its
    member id is stale) sends a LeaveGroup that removes nothing and resets the same way. ``LeaveGroup``
    stays what it is in every variant: the process *closes*, stops its work and is down. The step is the
    classic one (``poll-timeout``, model/formation.py), which keeps the work here (``keep_work_on_reset``)
    and which this variant also takes with ``leave``.
    """

    name = "connect-keep-work"
    z3 = False
    summary = "KIP-415 workers that keep running their work across a member-id reset (as Kafka's do)"
    keep_work_on_reset = True
    extra_safety = (DUPLICATE_WORK_SETTLES,)
    # What Kafka breaks here by design (the conformance harness checks duplicate_work_settles instead).
    kafka_violates = frozenset({"exclusive_ownership", "commit_fencing"})

    poll_timeout_faults = ("leave", "poll-timeout")

    def _kept(self, s: "State", t: "State", i: int) -> "State":
        a, b = s.clients[i], t.clients[i]
        # (not DOWN: a crash or a fence loses everything; PAUSED only where the harness replays a step of a
        # process it shows paused: in the model only a running process takes these steps)
        if a.owned and not b.owned and b.proc != Proc.DOWN and b.generation == NO_GENERATION \
                and b.status == MS.UNJOINED:
            return self._with(t, clients=self._set(t.clients, i, b.but(owned=a.owned)))
        return t

    def _join(self, s, i):  # type: ignore[no-untyped-def]
        return self._kept(s, super()._join(s, i), i)

    def _receive_error(self, s, i):  # type: ignore[no-untyped-def]
        return self._kept(s, super()._receive_error(s, i), i)

    def _receive_join(self, s, i):  # type: ignore[no-untyped-def]
        return self._kept(s, super()._receive_join(s, i), i)

    def _heartbeat(self, s, i):  # type: ignore[no-untyped-def]
        t = super()._heartbeat(s, i)
        return None if t is None else self._kept(s, t, i)
