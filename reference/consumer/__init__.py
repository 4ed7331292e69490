"""The next-generation consumer protocol (KIP-848, ``ConsumerGroupHeartbeat``): its coordinator and its client.

Owns: the coordinator side (``coordinator.py``: Kafka's ``GroupMetadataManager.consumerGroupHeartbeat`` and
``CurrentAssignmentBuilder``: group epoch, target assignment by a server-side assignor, reconciliation,
fencing, session and rebalance timeouts) and the client that reconciles its assignment (``client.py``:
Kafka's ``ConsumerMembershipManager`` in miniature).

May import: ``groupspec.reference.errors``, ``groupspec.reference.actor`` (the one actor contract) and ``groupspec.reference.assignors`` (the server-side assignors).

In ``groupspec.reference`` "consumer" means this protocol; the classic protocol's member is
``groupspec.reference.classic.Consumer`` (the classic client).
"""
from __future__ import annotations

from .client import CLIENT_FAULTS, ReconcilingConsumer
from .coordinator import (COORDINATOR_FAULTS, ConsumerOffsetCommit, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                          ConsumerGroupCoordinator, HeartbeatRequest, HeartbeatResponse, MemberState)

__all__ = ["ConsumerGroupCoordinator", "HeartbeatRequest", "HeartbeatResponse", "MemberState", "COORDINATOR_FAULTS",
           "LEAVE_GROUP_MEMBER_EPOCH", "LEAVE_GROUP_STATIC_MEMBER_EPOCH", "ReconcilingConsumer", "CLIENT_FAULTS",
           "ConsumerOffsetCommit"]
