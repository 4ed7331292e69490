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

from .classic import ClassicProtocol


class ConnectDelayed(ClassicProtocol):
    name = "connect-delayed"
    summary = "KIP-415: a departed worker's work is held back until the delay is over, then handed out"
    rebalance = "cooperative"
    delayed = True
