"""Kafka Connect's delayed incremental cooperative rebalancing (KIP-415, scheduled.rebalance.max.delay.ms).

The protocol
------------
Connect workers rebalance cooperatively (like KIP-429), and the leader adds one rule: when a worker
**departs** (its session expired or it was dropped), its tasks (here: its partitions) are not handed
out at once. They are **held back** for ``scheduled.rebalance.max.delay.ms``. If the worker comes back
within the delay, the next rebalance gives it its own work back — a bounce costs no task movement. If
it does not, the delay expires, the leader schedules a rebalance and spreads the held work over the
workers that remain.

In the model the delay is a timer that may expire at any moment (``DelayExpired``), so both the
return-in-time and the never-returns cases are explored. While work is held, nobody owns it; the
group is not converged until nothing is held.
"""
from __future__ import annotations

from .classic import ClassicProtocol


class ConnectDelayed(ClassicProtocol):
    name = "connect-delayed"
    summary = "KIP-415: a departed worker's work is held back for the delay, then given back or spread"
    rebalance = "cooperative"
    delayed = True
