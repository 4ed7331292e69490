"""Coordinator-side assignment (the pre-0.9 design, for teaching).

The protocol
------------
Before Kafka 0.9 moved the assignment into the clients, the group coordinator itself computed the
assignment: when the join phase completes it runs the (server-side) assignor and puts each member's
share straight into its JoinGroup answer. There is no SyncGroup round and no leader computation; the
group is ``STABLE`` as soon as the generation is bumped. Members revoke everything before joining,
exactly as in the eager protocol, so ownership is exclusive for the same reason.

The design was abandoned because the broker had to understand every assignment strategy (and every
client's subscription format); the client-side protocol made the assignor a client plug-in and kept
the coordinator ignorant of assignment bytes.
"""
from __future__ import annotations

from .classic import ClassicProtocol


class CoordinatorAssigns(ClassicProtocol):
    name = "coordinator-assigns"
    summary = "pre-0.9: the coordinator computes the assignment and returns it in JoinGroup"
    rebalance = "eager"
    coordinator_assigns = True
