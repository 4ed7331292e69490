"""Kafka Connect in the group protocol: the worker (KIP-415 incremental cooperative rebalancing) and its bytes.

Owns: ``worker.py`` (``ConnectWorker``: a classic client with the Connect parts swapped in) and
``protocol.py`` (the worker metadata and Connect assignment bytes inside JoinGroup / SyncGroup).

May import: ``groupspec.reference.classic`` (the client it extends, the framing helpers of the consumer
protocol), ``groupspec.reference.assignors`` (Connect's assignor), ``groupspec.reference.errors``.
"""
from __future__ import annotations

from .protocol import (CONNECTOR_TASK, PROTOCOL_VERSIONS, ConnectAssignment, WorkerMetadata,
                       decode_connect_assignment, decode_worker_metadata, encode_connect_assignment,
                       encode_worker_metadata)
from .worker import FAULTS as WORKER_FAULTS
from .worker import ConnectWorker, LeaderRound, WorkerConfig, items_running

__all__ = ["ConnectWorker", "WorkerConfig", "LeaderRound", "WORKER_FAULTS", "items_running", "CONNECTOR_TASK",
           "PROTOCOL_VERSIONS", "ConnectAssignment", "WorkerMetadata", "encode_connect_assignment",
           "decode_connect_assignment", "encode_worker_metadata", "decode_worker_metadata"]
