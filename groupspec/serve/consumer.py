"""The next-generation protocol (KIP-848) served: ``ConsumerGroupHeartbeat`` and member-epoch offsets.

Theory of operation
-------------------
``ConsumerGroups`` is to ``groupspec.reference.consumer.coordinator.ConsumerGroupCoordinator`` what
``Cluster`` is to the classic coordinator: a driver without IO. The reference decides everything
about membership, epochs and assignments; this module translates the wire (topic ids, nullable
"unchanged" fields), checks a request the way Kafka's ``GroupMetadataManager`` does before it
reaches a group, and keeps the groups' timers running:

* a group is created by its first ``ConsumerGroupHeartbeat`` (with the member's ``ServerAssignor``,
  ``uniform`` by default, as Kafka's default ``group.consumer.assignors``); a group id held by a
  classic group with members is refused with GROUP_ID_NOT_FOUND ("Group g is not a consumer
  group"), and classic requests to a consumer group get GROUP_ID_NOT_FOUND ("... not a classic
  group"), as Kafka answers when no migration is configured;
* Kafka's request checks (``throwIfConsumerGroupHeartbeatRequestIsInvalid``): an empty group id,
  instance id or rack id, an empty member id with an epoch other than 0, a join (epoch 0) without
  a rebalance timeout, without subscription or with owned partitions, an epoch below -2, a regular
  expression that does not compile (Python's ``re`` here, RE2/J in Kafka) are INVALID_REQUEST; an unknown ``ServerAssignor`` is UNSUPPORTED_ASSIGNOR. A join with an empty
  member id (clients before KIP-1082) gets a member id from the server;
* an empty ``SubscribedTopicRegex`` means no regular expression (librdkafka sends ``""`` when the
  subscription has none: ``rd_kafka_topic_partition_list_combine_regexes`` in its
  ``src/rdkafka_partition.c``); it reaches the reference as "unchanged" (None);
* before a heartbeat the group's timers run to the request's time (``tick``), as the replay does,
  and ``Cluster.tick`` runs them between requests;
* OffsetCommit: an unknown member is UNKNOWN_MEMBER_ID, a consumer-protocol member committing
  with a version below 9 UNSUPPORTED_VERSION (Kafka's ``ConsumerGroup.validateOffsetCommit``),
  then the reference's epoch check (STALE_MEMBER_EPOCH); OffsetFetch v9 checks the member id and
  epoch the same way (``validateOffsetFetch``; no member id and epoch -1: anyone may read);
* a failover moves the groups unchanged (their state lives in the group-metadata log in Kafka).

Recording (when the cluster records): the group chosen by ``record_group`` (else the first consumer group) is written as a
script and transcript in the format of ``groupspec coordinator replay`` for consumer-protocol
scripts (``groupspec.reference.sim.replay_consumer``): one step per request the reference handled,
``advance`` steps when a timer removed members between requests, ``metadata`` steps when a topic
was created; answers given without asking the reference are ``#`` comment lines. Replaying the
script gives the transcript back, byte for byte.
"""
from __future__ import annotations

import base64
import json
import random
import re
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from groupspec.reference.assignors.server import NAMES as SERVER_ASSIGNORS
from groupspec.reference.consumer import ConsumerGroupCoordinator, HeartbeatRequest, HeartbeatResponse
from groupspec.reference.errors import Error

from . import wire

if TYPE_CHECKING:
    from groupspec.reference.classic import GroupCoordinator



class Cluster(Protocol):
    """What the consumer groups read of ``cluster.Cluster`` (not imported: cluster.py imports this module)."""

    record: bool
    record_group: str | None
    member_id_seed: int | None
    coordinator_node: int
    coordinator: GroupCoordinator
    topics: dict[str, int]
    topic_ids: dict[str, uuid.UUID]


class Conn(Protocol):
    """What they read and set of ``cluster.Conn``."""

    node: int
    number: int
    alias: str | None

__all__ = ["ConsumerGroups"]


class ConsumerGroups:
    def __init__(self, cluster: "Cluster", session_timeout_ms: int = 45_000, heartbeat_interval_ms: int = 5_000) -> None:
        self.cluster = cluster
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.groups: dict[str, ConsumerGroupCoordinator] = {}
        self.aliases: dict[str, str] = {}  # member id -> alias (the connection it first came on)
        self.recording = cluster.record  # off: nothing is written down (a long-running server keeps no history)
        self.record_group: str | None = cluster.record_group if cluster.record else None
        self.script: list[str] = []
        self.transcript: list[str] = []
        # member ids the server hands out (a join with an empty member id): Kafka's Uuid.randomUuid(),
        # written as Kafka writes a Uuid (URL-safe base64, no padding), seeded as the classic ids are
        self._ids = random.Random(f"consumer-member-ids:{cluster.member_id_seed}")
        self.last_node: dict[str, int] = {}  # member id -> node its last answered heartbeat came to

    def owns(self, group_id: str | None) -> bool:
        return group_id is not None and group_id in self.groups

    # ------------------------------------------------------------------ time

    def tick(self, now: int) -> None:
        for group_id, group in self.groups.items():
            gone = group.tick(now)
            if gone and group_id == self.record_group:
                self.script.append(json.dumps({"at": now, "advance": True}))
                self._removed(now, gone)
                self._state(now, group)

    def _tick_before(self, group_id: str, now: int) -> None:
        """The group's timers up to ``now`` before a step (the replay does the same before each step)."""
        gone = self.groups[group_id].tick(now)
        if group_id == self.record_group:
            self._removed(now, gone)

    def topic_created(self, now: int, name: str, partitions: int) -> None:
        for group_id, group in self.groups.items():
            if group_id == self.record_group:
                self.script.append(json.dumps({"at": now, "metadata": {name: partitions}}))
            self._tick_before(group_id, now)
            group.add_partitions(name, partitions)
            if group_id == self.record_group:
                self._state(now, group)

    # ------------------------------------------------------------------ ConsumerGroupHeartbeat

    def heartbeat(self, conn: "Conn", header: Any, body: Any, now: int) -> bytes:
        c = self.cluster
        cls = wire.response_class(68, header.api_version)
        refused = self._check(body)
        if refused is None and conn.node != c.coordinator_node:
            refused = (Error.NOT_COORDINATOR, None)
        group = self.groups.get(body.group_id)
        if refused is None and group is None:
            classic = c.coordinator.group(body.group_id)
            if classic is not None and classic.members:
                refused = (Error.GROUP_ID_NOT_FOUND, f"Group {body.group_id} is not a consumer group")
        if refused is not None:
            self._comment(now, conn, body, refused[0].name)
            return wire.encode_response(header, cls(throttle_time_ms=0, error_code=refused[0].code,
                                                    error_message=refused[1], member_id=None, member_epoch=0,
                                                    heartbeat_interval_ms=0, assignment=None))
        if group is None:
            group = ConsumerGroupCoordinator(body.group_id, dict(c.topics), assignor=body.server_assignor or "uniform",
                                             session_timeout_ms=self.session_timeout_ms,
                                             heartbeat_interval_ms=self.heartbeat_interval_ms)
            self.groups[body.group_id] = group
            if self.record_group is None and self.recording:
                self.record_group = body.group_id
            if body.group_id == self.record_group:
                self.script.append(json.dumps({"config": {
                    "group_protocol": "consumer", "group_id": body.group_id, "topics": dict(group.topics),
                    "assignor": body.server_assignor or "uniform", "session_timeout_ms": self.session_timeout_ms,
                    "heartbeat_interval_ms": self.heartbeat_interval_ms}}))
        member_id = body.member_id
        if not member_id:  # a join from a client that leaves the member id to the server (before KIP-1082)
            raw = self._ids.getrandbits(128).to_bytes(16, "big")
            member_id = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
        alias = self.aliases.setdefault(member_id, conn.alias or f"c{conn.number}")
        conn.alias = conn.alias or alias
        names = {tid: name for name, tid in c.topic_ids.items()}
        owned: dict[str, list[int]] | None = None
        if body.topic_partitions is not None:
            owned = {}
            for tp in body.topic_partitions:
                if tp.topic_id in names:
                    owned.setdefault(names[tp.topic_id], []).extend(tp.partitions)
        req = HeartbeatRequest(member_id, body.member_epoch, instance_id=body.instance_id,
                               rebalance_timeout_ms=body.rebalance_timeout_ms,
                               subscribed_topic_names=None if body.subscribed_topic_names is None else list(body.subscribed_topic_names),
                               subscribed_topic_regex=getattr(body, "subscribed_topic_regex", None) or None,
                               server_assignor=body.server_assignor, topic_partitions=owned)
        recorded = body.group_id == self.record_group
        if recorded:
            self._step(now, alias, req)
        self._tick_before(body.group_id, now)
        r = group.heartbeat(req, now)
        self.last_node[member_id] = conn.node
        if recorded:
            self._answer(now, alias, r)
            self._state(now, group)
        return wire.encode_response(header, self._to_wire(cls, r))

    def _check(self, b: Any) -> tuple[Error, str | None] | None:
        """Kafka's checks of a request before any group sees it (see the module docstring)."""
        def invalid(msg: str) -> tuple[Error, str]:
            return Error.INVALID_REQUEST, msg

        if not b.group_id:
            return invalid("GroupId can't be empty.")
        if b.instance_id == "":
            return invalid("InstanceId can't be empty.")
        if b.rack_id == "":
            return invalid("RackId can't be empty.")
        epoch = b.member_epoch
        if epoch > 0 or epoch == -1 or epoch == -2:
            if not b.member_id:
                return invalid("MemberId can't be empty.")
            if epoch == -2 and b.instance_id is None:
                return invalid("InstanceId can't be null.")
        elif epoch == 0:
            if b.rebalance_timeout_ms == -1:
                return invalid("RebalanceTimeoutMs must be provided in first request.")
            if b.topic_partitions is None or len(b.topic_partitions) > 0:
                return invalid("TopicPartitions must be empty when (re-)joining.")
            if not b.subscribed_topic_names and not getattr(b, "subscribed_topic_regex", None):
                return invalid("SubscribedTopicNames must be set in first request.")
        else:
            return invalid("MemberEpoch is invalid.")
        regex = getattr(b, "subscribed_topic_regex", None)
        if regex:
            try:
                re.compile(regex)
            except re.error as e:
                return invalid(f"SubscribedTopicRegex {regex!r} is not a valid regular expression: {e}")
        if b.server_assignor is not None and b.server_assignor not in SERVER_ASSIGNORS:
            return (Error.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {b.server_assignor} is not supported. "
                    f"Supported assignors: {', '.join(SERVER_ASSIGNORS)}.")
        return None

    def _to_wire(self, cls: Any, r: HeartbeatResponse) -> Any:
        if r.error != Error.NONE:  # Kafka's error answer: the code and message, every other field its default
            return cls(throttle_time_ms=0, error_code=r.error.code, error_message=r.error_message or None,
                       member_id=None, member_epoch=0, heartbeat_interval_ms=0, assignment=None)
        assignment = None
        if r.assignment is not None:
            ids = self.cluster.topic_ids
            assignment = cls.Assignment(topic_partitions=[
                cls.Assignment.TopicPartitions(topic_id=ids[t], partitions=list(ps)) for t, ps in sorted(r.assignment.items())])
        return cls(throttle_time_ms=0, error_code=0, error_message=None, member_id=r.member_id,
                   member_epoch=r.member_epoch, heartbeat_interval_ms=r.heartbeat_interval_ms, assignment=assignment)

    # ------------------------------------------------------------------ offsets

    def offset_commit(self, conn: "Conn", header: Any, body: Any, now: int) -> bytes:
        cls = wire.response_class(8, header.api_version)
        group = self.groups[body.group_id]
        epoch = body.generation_id_or_member_epoch
        offsets = {(t.name, p.partition_index): p.committed_offset for t in body.topics for p in t.partitions}
        if conn.node != self.cluster.coordinator_node:
            err = Error.NOT_COORDINATOR
        elif body.member_id in group.members and header.api_version < 9:
            err = Error.UNSUPPORTED_VERSION  # "OffsetCommit version 9 or above must be used by members using the modern group protocol"
        else:
            recorded = body.group_id == self.record_group
            alias = self.aliases.get(body.member_id, conn.alias or f"c{conn.number}")
            if recorded:
                self.script.append(json.dumps({"at": now, "from": alias, "send": "OffsetCommit",
                                               "member_id": body.member_id, "member_epoch": epoch,
                                               "offsets": [[t, p, o] for (t, p), o in offsets.items()]}))
            self._tick_before(body.group_id, now)
            err = group.offset_commit(body.member_id, epoch, offsets)
            if recorded:
                self.transcript.append(json.dumps({"at": now, "to": alias, "request": "OffsetCommit", "error": err.name}))
                self._state(now, group)
        if err in (Error.NOT_COORDINATOR, Error.UNSUPPORTED_VERSION):
            self._comment(now, conn, body, err.name, "OffsetCommit")
        return wire.encode_response(header, cls(throttle_time_ms=0, topics=[
            cls.OffsetCommitResponseTopic(name=t.name, partitions=[
                cls.OffsetCommitResponseTopic.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                                            error_code=err.code)
                for p in t.partitions]) for t in body.topics]))

    def fetch_error(self, conn: "Conn", group_id: str, member_id: str | None, epoch: int) -> Error:
        """Kafka's ``validateOffsetFetch`` for a consumer group (plus the coordinator's node)."""
        if conn.node != self.cluster.coordinator_node:
            return Error.NOT_COORDINATOR
        if member_id is None and epoch < 0:
            return Error.NONE
        group = self.groups[group_id]
        if member_id not in group.members:
            return Error.UNKNOWN_MEMBER_ID
        return Error.NONE if group.members[member_id].epoch == epoch else Error.STALE_MEMBER_EPOCH

    def committed(self, group_id: str, wanted: list[tuple[str, list[int]]] | None) -> list[tuple[str, list[tuple[int, int]]]]:
        """Committed offsets of a consumer group, per topic: (partition, offset), -1 when none."""
        commits = self.groups[group_id].commits
        if wanted is None:
            per: dict[str, list[int]] = {}
            for t, p in sorted(commits):
                per.setdefault(t, []).append(p)
            wanted = list(per.items())
        return [(t, [(p, commits[(t, p)][2] if (t, p) in commits else -1) for p in ps]) for t, ps in wanted]

    # ------------------------------------------------------------------ recording

    def _comment(self, now: int, conn: "Conn", body: Any, what: str, request: str = "ConsumerGroupHeartbeat") -> None:
        if self.recording and (body.group_id == self.record_group or self.record_group is None):
            alias = self.aliases.get(getattr(body, "member_id", "") or "", conn.alias or f"c{conn.number}")
            self.script.append("# " + json.dumps({"at": now, "from": alias, "request": request, "answered": what,
                                                  "node": conn.node}))

    def _step(self, now: int, alias: str, req: HeartbeatRequest) -> None:
        step: dict[str, Any] = {"at": now, "from": alias, "send": "ConsumerGroupHeartbeat", "member_id": req.member_id,
                                "member_epoch": req.member_epoch, "rebalance_timeout_ms": req.rebalance_timeout_ms}
        if req.instance_id is not None:
            step["instance_id"] = req.instance_id
        if req.subscribed_topic_names is not None:
            step["subscribed_topic_names"] = req.subscribed_topic_names
        if req.subscribed_topic_regex is not None:
            step["subscribed_topic_regex"] = req.subscribed_topic_regex
        if req.server_assignor is not None:
            step["server_assignor"] = req.server_assignor
        if req.topic_partitions is not None:
            step["owned"] = [[t, p] for t, ps in req.topic_partitions.items() for p in ps]
        self.script.append(json.dumps(step))

    def _removed(self, now: int, gone: list[str]) -> None:
        for mid in gone:
            self.transcript.append(json.dumps({"at": now, "event": "removed", "member": mid}))

    def _answer(self, now: int, alias: str, r: HeartbeatResponse) -> None:
        self.transcript.append(json.dumps({"at": now, "to": alias, "request": "ConsumerGroupHeartbeat",
                                           "error": r.error.name, "member": r.member_id, "member_epoch": r.member_epoch,
                                           "heartbeat_interval_ms": r.heartbeat_interval_ms,
                                           "assignment": _pairs(r.assignment)}))

    def _state(self, now: int, group: ConsumerGroupCoordinator) -> None:
        d = group.describe()
        self.transcript.append(json.dumps({
            "at": now, "group_epoch": d["group_epoch"], "assignment_epoch": d["assignment_epoch"],
            "members": {mid: {"state": m["state"], "epoch": m["epoch"], "assigned": _pairs(m["assigned"]),
                              "revoking": _pairs(m["revoking"]), "target": _pairs(m["target"])}
                        for mid, m in d["members"].items()}}))

    def script_text(self) -> str:
        return "".join(line + "\n" for line in self.script)

    def transcript_text(self) -> str:
        return "".join(line + "\n" for line in self.transcript)


def _pairs(d: dict[str, list[int]] | None) -> list[list[Any]] | None:
    if d is None:
        return None
    return [[t, p] for t in sorted(d) for p in sorted(d[t])]
