"""The reference implementation: every protocol family's actors, Kafka's assignors, the simulators, script replay.

It follows Apache Kafka 4.3.1 (the pinned release; the rules that depend on the release: docs/versions.md).

It never imports ``groupspec.model``: the two are independent and checked against each other.

This is the room's front door. Other rooms import the reference through it, or through one of its
sub-packages' front doors, never a module inside them:

* ``classic/`` - the classic protocol: the group coordinator, the classic client, messages, embedded bytes;
* ``consumer/`` - the next-generation protocol (KIP-848): the consumer-group coordinator, the reconciling client;
* ``migration/`` - classic members inside a consumer group, online upgrade and downgrade;
* ``connect/`` - Kafka Connect's worker and its bytes;
* ``history/`` - the ZooKeeper-era group and the 0.9 draft's coordinator-side assignment;
* ``sim/`` - the simulators, the network, the clocks, scenarios, traces, script replay;
* ``assignors/`` - Kafka's partition assignors (client side, server side, Connect's);
* ``errors.py`` - Kafka's error codes and the reference's own exceptions (every family uses them);
* ``actor.py`` - the one actor contract: events in (``Received``, ``TimerFired``, ``Invoked``), commands out
  (``Send``, ``SetTimer``, ``CallListener``); every family may import it.

Each sub-package's docstring says what it may import; ``tests/test_layout.py`` enforces it.

``from groupspec.reference import X`` works for every public name of the sub-packages that only one family
defines (loaded on first use, so importing one sub-package does not load the others). The names two families
share are imported from the family: ``Send`` (classic / actor), ``CLIENT_FAULTS`` (classic / consumer), ``COORDINATOR_FAULTS`` (classic / consumer), ``HeartbeatRequest`` (classic / consumer), ``HeartbeatResponse`` (classic / consumer), ``MemberState`` (classic / consumer).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: sub-package (or module) -> the public names it lends to this front door
_EXPORTS: dict[str, tuple[str, ...]] = {
    'actor': ('Actor', 'COORDINATOR', 'CallListener', 'Command', 'Event', 'Invoked', 'LISTENER_CALLBACKS', 'Received', 'SetTimer', 'TimerFired',),
    'errors': ('Error', 'GroupspecProtocolError', 'IllegalStateTransition', 'InvalidMessage', 'RETRIABLE', 'ScriptError', 'map_store_error',),
    'classic': ('DEADLINE', 'TICK', 'Assignment', 'COOPERATIVE', 'Consumer', 'ConsumerConfig', 'ConsumerProtocolError', 'CoordinatorConfig', 'EAGER', 'FIND_COORDINATOR_VERSION', 'FindCoordinatorRequest', 'FindCoordinatorResponse', 'GroupCoordinator', 'GroupMetadataLog', 'GroupRecord', 'GroupStatus', 'GroupView', 'HEARTBEAT_VERSION', 'HIGHEST_ASSIGNMENT_VERSION', 'HIGHEST_SUBSCRIPTION_VERSION', 'JOIN_GROUP_VERSION', 'JoinGroupMember', 'JoinGroupRequest', 'JoinGroupResponse', 'LEAVE_GROUP_VERSION', 'LeaveGroupRequest', 'LeaveGroupResponse', 'LeaveMemberResponse', 'MAX_OFFSETS_PARTITIONS', 'MemberEvent', 'MemberIdentity', 'MemberRecord', 'MemberView', 'NO_GENERATION', 'OFFSET_COMMIT_VERSION', 'OFFSET_FETCH_VERSION', 'OffsetCommitRequest', 'OffsetCommitResponse', 'OffsetFetchRequest', 'OffsetFetchResponse', 'Outbound', 'RebalanceListener', 'Request', 'Response', 'SYNC_GROUP_VERSION', 'Subscription', 'SyncGroupRequest', 'SyncGroupResponse', 'TopicPartition', 'UNKNOWN_MEMBER', 'VALID_PREVIOUS_STATES', 'consumer_protocol', 'decode_assignment', 'decode_cooperative_user_data', 'decode_sticky_user_data', 'decode_subscription', 'encode_assignment', 'encode_cooperative_user_data', 'encode_sticky_user_data', 'encode_subscription', 'java_string_hash', 'kafka_abs', 'messages', 'partition_for', 'peek_version', 'rebalance_protocol', 'request_name', 'validate_cooperative_assignment',),
    'consumer': ('ConsumerGroupCoordinator', 'LEAVE_GROUP_MEMBER_EPOCH', 'ConsumerOffsetCommit', 'LEAVE_GROUP_STATIC_MEMBER_EPOCH', 'ReconcilingConsumer',),
    'migration': ('ClassicSeed', 'MIGRATION_FAULTS', 'MigrationRefused', 'MixedConsumerGroup', 'POLICIES',),
    'connect': ('CONNECTOR_TASK', 'ConnectAssignment', 'ConnectWorker', 'LeaderRound', 'PROTOCOL_VERSIONS', 'WORKER_FAULTS', 'WorkerConfig', 'WorkerMetadata', 'decode_connect_assignment', 'decode_worker_metadata', 'encode_connect_assignment', 'encode_worker_metadata', 'items_running',),
    'history': ('CoordinatorSideGroup', 'CsConfig', 'CsConsumer', 'CsCoordinator', 'ZkConfig', 'ZkConsumer', 'ZkGroup', 'ZkRecord', 'ZooKeeper',),
    'sim': ('ActorSim', 'Address', 'Links', 'NetworkLinks', 'UniformLinks', 'CONSUMER_SCENARIOS', 'ConsumerScenarioError', 'ConsumerSimulation', 'EXPECT_VIOLATIONS', 'Envelope', 'FAMILIES', 'Ledger', 'MIGRATION_SCENARIOS', 'MigrationScenarioError', 'Network', 'NetworkConfig', 'Ownership', 'PROTOCOLS', 'RecordFlow', 'RecordsConfig', 'ReplayFamily', 'Replayer', 'SCENARIOS', 'STEP_MS', 'STRATEGIES', 'ScenarioError', 'ScenarioOptions', 'ScenarioReport', 'SimConfig', 'SimProc', 'Simulator', 'Step', 'StepRecord', 'TOPIC', 'TraceError', 'VirtualClock', 'dumps_jsonl', 'family_of', 'is_consumer_script', 'json_type', 'member_config', 'ownership', 'parse_script', 'process_name', 'read_consumer_script', 'read_trace', 'run_consumer_scenario', 'run_consumer_script', 'run_migration_scenario', 'run_scenario', 'run_script', 'strategy_config', 'trace', 'write_trace',),
}
_SUBPACKAGES = ("classic", "consumer", "migration", "connect", "history", "sim", "assignors", "errors", "actor")
#: names defined by two families: import them from the family's own front door
SHARED: dict[str, tuple[str, ...]] = {'Send': ('classic', 'actor'), 'CLIENT_FAULTS': ('classic', 'consumer'), 'COORDINATOR_FAULTS': ('classic', 'consumer'), 'HeartbeatRequest': ('classic', 'consumer'), 'HeartbeatResponse': ('classic', 'consumer'), 'MemberState': ('classic', 'consumer')}
_WHERE = {name: sub for sub, names in _EXPORTS.items() for name in names}

__all__ = [*_SUBPACKAGES, *sorted(_WHERE)]

if TYPE_CHECKING:
    from . import actor, assignors, classic, connect, consumer, errors, history, migration, sim
    from .actor import (Actor, COORDINATOR, CallListener, Command, Event, Invoked, LISTENER_CALLBACKS, Received, SetTimer, TimerFired)
    from .errors import (Error, GroupspecProtocolError, IllegalStateTransition, InvalidMessage, RETRIABLE, ScriptError, map_store_error)
    from .classic import (DEADLINE, TICK, Assignment, COOPERATIVE, Consumer, ConsumerConfig, ConsumerProtocolError, CoordinatorConfig, EAGER, FIND_COORDINATOR_VERSION, FindCoordinatorRequest, FindCoordinatorResponse, GroupCoordinator, GroupMetadataLog, GroupRecord, GroupStatus, GroupView, HEARTBEAT_VERSION, HIGHEST_ASSIGNMENT_VERSION, HIGHEST_SUBSCRIPTION_VERSION, JOIN_GROUP_VERSION, JoinGroupMember, JoinGroupRequest, JoinGroupResponse, LEAVE_GROUP_VERSION, LeaveGroupRequest, LeaveGroupResponse, LeaveMemberResponse, MAX_OFFSETS_PARTITIONS, MemberEvent, MemberIdentity, MemberRecord, MemberView, NO_GENERATION, OFFSET_COMMIT_VERSION, OFFSET_FETCH_VERSION, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, Outbound, RebalanceListener, Request, Response, SYNC_GROUP_VERSION, Subscription, SyncGroupRequest, SyncGroupResponse, TopicPartition, UNKNOWN_MEMBER, VALID_PREVIOUS_STATES, consumer_protocol, decode_assignment, decode_cooperative_user_data, decode_sticky_user_data, decode_subscription, encode_assignment, encode_cooperative_user_data, encode_sticky_user_data, encode_subscription, java_string_hash, kafka_abs, messages, partition_for, peek_version, rebalance_protocol, request_name, validate_cooperative_assignment)
    from .consumer import (ConsumerGroupCoordinator, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerOffsetCommit, ReconcilingConsumer)
    from .migration import (ClassicSeed, MIGRATION_FAULTS, MigrationRefused, MixedConsumerGroup, POLICIES)
    from .connect import (CONNECTOR_TASK, ConnectAssignment, ConnectWorker, LeaderRound, PROTOCOL_VERSIONS, WORKER_FAULTS, WorkerConfig, WorkerMetadata, decode_connect_assignment, decode_worker_metadata, encode_connect_assignment, encode_worker_metadata, items_running)
    from .history import (CoordinatorSideGroup, CsConfig, CsConsumer, CsCoordinator, ZkConfig, ZkConsumer, ZkGroup, ZkRecord, ZooKeeper)
    from .sim import (ActorSim, Address, Links, NetworkLinks, UniformLinks, CONSUMER_SCENARIOS, ConsumerScenarioError, ConsumerSimulation, EXPECT_VIOLATIONS, Envelope, FAMILIES, Ledger, MIGRATION_SCENARIOS, MigrationScenarioError, Network, NetworkConfig, Ownership, PROTOCOLS, RecordFlow, RecordsConfig, ReplayFamily, Replayer, SCENARIOS, STEP_MS, STRATEGIES, ScenarioError, ScenarioOptions, ScenarioReport, SimConfig, SimProc, Simulator, Step, StepRecord, TOPIC, TraceError, VirtualClock, dumps_jsonl, family_of, is_consumer_script, json_type, member_config, ownership, parse_script, process_name, read_consumer_script, read_trace, run_consumer_scenario, run_consumer_script, run_migration_scenario, run_scenario, run_script, strategy_config, trace, write_trace)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    sub = _WHERE.get(name)
    if sub is None:
        hint = f" (defined by {' and '.join(SHARED[name])}: import it from one of them)" if name in SHARED else ""
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}{hint}")
    value = getattr(importlib.import_module(f"{__name__}.{sub}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
