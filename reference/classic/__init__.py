"""The classic rebalance protocol (JoinGroup / SyncGroup / Heartbeat): its coordinator, its client, its bytes.

Owns: the sans-IO group coordinator of one broker (``coordinator.py``: its driving surface, timers, log and
offsets, and ``GroupCoordinator.restore_group``, a group held as loaded and, on request, mid-rebalance; ``group.py``: the group it holds; ``join_sync.py``: the join and sync phases; ``sessions.py``: member
expiry, Heartbeat, LeaveGroup), the classic consumer client
(``client.py``: Kafka's ``AbstractCoordinator`` + ``ConsumerCoordinator``, the member half of the classic
protocol: its inputs, requests in flight, heartbeats, commits; ``client_rebalance.py``: joining and syncing,
the listener calls; ``client_types.py``: the values it takes and gives), the protocol's request and response values (``messages.py``) and the bytes a consumer puts inside
JoinGroup / SyncGroup (``consumer_protocol.py``, Kafka's ``ConsumerProtocol``).

May import: ``groupspec.reference.errors`` only (never another family, never ``sim``, never ``model``).

"Consumer" in ``groupspec.reference`` means the next-generation protocol (KIP-848, ``reference/consumer/``);
the classic protocol's member is the classic *client* here. Both families have a coordinator and a client,
so the two families' fault tables are exported under the same names: ``COORDINATOR_FAULTS`` and
``CLIENT_FAULTS``.
"""
from __future__ import annotations

from . import consumer_protocol, messages
from .client import TICK, Consumer
from .client_types import (COOPERATIVE, EAGER, ConsumerConfig, MemberEvent, MemberState, RebalanceListener, Send,
                           rebalance_protocol, validate_cooperative_assignment)
from .client_types import FAULTS as CLIENT_FAULTS
from .consumer_protocol import (HIGHEST_ASSIGNMENT_VERSION, HIGHEST_SUBSCRIPTION_VERSION, Assignment,
                                ConsumerProtocolError, Subscription, TopicPartition, decode_assignment,
                                decode_cooperative_user_data, decode_sticky_user_data, decode_subscription,
                                encode_assignment, encode_cooperative_user_data, encode_sticky_user_data,
                                encode_subscription, peek_version)
from .coordinator import (DEADLINE, MAX_OFFSETS_PARTITIONS, CoordinatorConfig, GroupCoordinator, Outbound, java_string_hash,
                          kafka_abs, partition_for)
from .group import (VALID_PREVIOUS_STATES, GroupMetadataLog, GroupRecord, GroupStatus, GroupView, MemberRecord,
                    MemberView)
from .coordinator import FAULTS as COORDINATOR_FAULTS
from .messages import (FIND_COORDINATOR_VERSION, HEARTBEAT_VERSION, JOIN_GROUP_VERSION, LEAVE_GROUP_VERSION,
                       NO_GENERATION, OFFSET_COMMIT_VERSION, OFFSET_FETCH_VERSION, SYNC_GROUP_VERSION, UNKNOWN_MEMBER,
                       FindCoordinatorRequest, FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse,
                       JoinGroupMember, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
                       LeaveMemberResponse, MemberIdentity, OffsetCommitRequest, OffsetCommitResponse,
                       OffsetFetchRequest, OffsetFetchResponse, Request, Response, SyncGroupRequest,
                       SyncGroupResponse, request_name)

__all__ = [
    # modules
    "messages", "consumer_protocol",
    # the coordinator
    "GroupCoordinator", "CoordinatorConfig", "COORDINATOR_FAULTS", "GroupStatus", "VALID_PREVIOUS_STATES", "Outbound",
    "GroupView", "MemberView", "GroupMetadataLog", "GroupRecord", "MemberRecord", "java_string_hash", "kafka_abs",
    "partition_for", "DEADLINE", "MAX_OFFSETS_PARTITIONS",
    # the client
    "Consumer", "TICK", "ConsumerConfig", "CLIENT_FAULTS", "MemberState", "MemberEvent", "RebalanceListener", "Send", "EAGER",
    "COOPERATIVE", "rebalance_protocol", "validate_cooperative_assignment",
    # the embedded consumer protocol
    "Subscription", "Assignment", "TopicPartition", "ConsumerProtocolError", "encode_subscription",
    "decode_subscription", "encode_assignment", "decode_assignment", "peek_version", "encode_sticky_user_data",
    "decode_sticky_user_data", "encode_cooperative_user_data", "decode_cooperative_user_data",
    "HIGHEST_SUBSCRIPTION_VERSION", "HIGHEST_ASSIGNMENT_VERSION",
    # the messages
    "JoinGroupRequest", "JoinGroupMember", "JoinGroupResponse", "SyncGroupRequest", "SyncGroupResponse",
    "HeartbeatRequest", "HeartbeatResponse", "MemberIdentity", "LeaveGroupRequest", "LeaveMemberResponse",
    "LeaveGroupResponse", "OffsetCommitRequest", "OffsetCommitResponse", "OffsetFetchRequest", "OffsetFetchResponse",
    "FindCoordinatorRequest", "FindCoordinatorResponse", "Request", "Response", "request_name", "JOIN_GROUP_VERSION",
    "SYNC_GROUP_VERSION", "HEARTBEAT_VERSION", "LEAVE_GROUP_VERSION", "OFFSET_COMMIT_VERSION", "OFFSET_FETCH_VERSION",
    "FIND_COORDINATOR_VERSION", "NO_GENERATION", "UNKNOWN_MEMBER",
]
