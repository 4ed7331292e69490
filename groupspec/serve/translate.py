"""Wire messages (kafka-python's codec objects) to the reference coordinator's messages and back.

``to_reference`` builds the reference's request from a decoded wire request (fields a version lacks
get the reference's defaults); ``to_wire`` builds the codec's answer at the request's version;
``encode_direct`` encodes the answers a round sends one per member (Heartbeat, and JoinGroup/SyncGroup of
the flexible versions) without the codec's objects; ``error_body`` is an error answer holding the
request's entities, as Kafka's ``getErrorResponse`` echoes them.
"""
from __future__ import annotations

from typing import Any

from groupspec.reference import messages as m
from groupspec.reference.errors import Error

from . import wire

__all__ = ["to_reference", "to_wire", "encode_direct", "offset_fetch_group", "error_body"]



def to_reference(header: Any, name: str, b: Any) -> Any:
    v = header.api_version
    if name == "JoinGroup":
        return m.JoinGroupRequest(
            group_id=b.group_id, member_id=b.member_id, protocol_type=b.protocol_type,
            protocols=tuple((p.name, bytes(p.metadata)) for p in b.protocols),
            session_timeout_ms=b.session_timeout_ms,
            rebalance_timeout_ms=b.rebalance_timeout_ms if v >= 1 else b.session_timeout_ms,
            group_instance_id=b.group_instance_id if v >= 5 else None, version=v,
            client_id=header.client_id or "", reason=b.reason if v >= 8 else None)
    if name == "SyncGroup":
        return m.SyncGroupRequest(
            group_id=b.group_id, member_id=b.member_id, generation_id=b.generation_id,
            assignments=b.pairs if type(b) is wire.SyncGroupBody else tuple(
                (a.member_id, bytes(a.assignment)) for a in b.assignments),
            group_instance_id=b.group_instance_id if v >= 3 else None,
            protocol_type=b.protocol_type if v >= 5 else None, protocol_name=b.protocol_name if v >= 5 else None,
            version=v)
    if name == "Heartbeat":
        return m.HeartbeatRequest(group_id=b.group_id, member_id=b.member_id, generation_id=b.generation_id,
                                  group_instance_id=b.group_instance_id if v >= 3 else None, version=v)
    if name == "LeaveGroup":
        if v < 3:
            members: tuple[m.MemberIdentity, ...] = (m.MemberIdentity(b.member_id),)
        else:
            members = tuple(m.MemberIdentity(x.member_id, x.group_instance_id, x.reason if v >= 5 else None)
                            for x in b.members)
        return m.LeaveGroupRequest(group_id=b.group_id, members=members, version=v)
    if name == "OffsetCommit":
        return m.OffsetCommitRequest(
            group_id=b.group_id,
            offsets=tuple((t.name, p.partition_index, p.committed_offset) for t in b.topics for p in t.partitions),
            member_id=b.member_id, generation_id=b.generation_id_or_member_epoch,
            group_instance_id=b.group_instance_id if v >= 7 else None, version=v)
    if name == "OffsetFetch":
        parts = None if b.topics is None else tuple((t.name, p) for t in b.topics for p in t.partition_indexes)
        return m.OffsetFetchRequest(group_id=b.group_id, partitions=parts,
                                    require_stable=bool(getattr(b, "require_stable", False)) if v >= 7 else False)
    raise AssertionError(name)  # pragma: no cover


_NONE = Error.NONE


def encode_direct(header: Any, r: Any) -> bytes | None:
    # (Error.code is a property and an Error's hash a Python call: a round's N answers are nearly all NONE, told by
    # identity; the three classes are distinct, so the order of the tests is free)
    if isinstance(r, m.SyncGroupResponse):
        e = r.error
        return wire.sync_group_response(header, 0 if e is _NONE else e.code, r.protocol_type, r.protocol_name,
                                        r.assignment)
    if isinstance(r, m.JoinGroupResponse):
        e = r.error
        return wire.join_group_response(header, 0 if e is _NONE else e.code, r.generation_id, r.protocol_type,
                                        r.protocol_name, r.leader, r.skip_assignment, r.member_id,
                                        [(x.member_id, x.group_instance_id, x.metadata) for x in r.members])
    if isinstance(r, m.HeartbeatResponse):
        return wire.heartbeat_response(header, r.error.code)
    return None


def to_wire(header: Any, req: Any, r: Any) -> Any:
    """The wire answer (at the request's version) for a reference response."""
    v = header.api_version
    cls = wire.response_class(header.api_key, v)
    if isinstance(r, m.JoinGroupResponse):
        return cls(error_code=r.error.code, generation_id=r.generation_id,
                   protocol_type=r.protocol_type,
                   protocol_name=r.protocol_name if (r.protocol_name is not None or v >= 7) else "",
                   leader=r.leader, skip_assignment=r.skip_assignment, member_id=r.member_id,
                   members=[cls.JoinGroupResponseMember(member_id=x.member_id, group_instance_id=x.group_instance_id,
                                                        metadata=x.metadata) for x in r.members])
    if isinstance(r, m.SyncGroupResponse):
        return cls(error_code=r.error.code, protocol_type=r.protocol_type, protocol_name=r.protocol_name,
                   assignment=r.assignment)
    if isinstance(r, m.HeartbeatResponse):
        return cls(error_code=r.error.code)
    if isinstance(r, m.LeaveGroupResponse):
        return cls(error_code=r.error.code, members=[
            cls.MemberResponse(member_id=x.member_id, group_instance_id=x.group_instance_id, error_code=x.error.code)
            for x in r.members])
    if isinstance(r, m.OffsetCommitResponse):
        topics: dict[str, list[Any]] = {}
        for t, p, err in r.partitions:
            topics.setdefault(t, []).append(
                cls.OffsetCommitResponseTopic.OffsetCommitResponsePartition(partition_index=p, error_code=err.code))
        return cls(topics=[cls.OffsetCommitResponseTopic(name=t, partitions=ps) for t, ps in topics.items()])
    if isinstance(r, m.OffsetFetchResponse):
        topics2: dict[str, list[Any]] = {}
        for t, p, off, err in r.offsets:
            topics2.setdefault(t, []).append(cls.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
                partition_index=p, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=err.code))
        return cls(error_code=r.error.code,
                   topics=[cls.OffsetFetchResponseTopic(name=t, partitions=ps) for t, ps in topics2.items()])
    raise AssertionError(type(r))  # pragma: no cover


def offset_fetch_group(cls: Any, group_id: str, r: Any) -> Any:
    g = cls.OffsetFetchResponseGroup
    topics: dict[str, list[Any]] = {}
    for t, p, off, err in r.offsets:
        topics.setdefault(t, []).append(g.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
            partition_index=p, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=err.code))
    return g(group_id=group_id, error_code=r.error.code,
             topics=[g.OffsetFetchResponseTopics(name=t, partitions=ps) for t, ps in topics.items()])


def error_body(header: Any, error: Error, body: Any) -> Any:
    """An answer of the request's API holding its entities, for an error answer (None: no entities).

    Kafka's ``getErrorResponse`` of each request: Produce, Fetch (before v13), ListOffsets,
    OffsetCommit, CreateTopics echo every topic and partition asked; Metadata every topic asked
    (``""`` for a topic asked by id only: the answer's name is not nullable); OffsetFetch v1 every
    partition, v2-v7 the top-level error only, v8+ every group; FindCoordinator v4 every key; the
    others (the group APIs, InitProducerId, ConsumerGroupHeartbeat) carry a top-level error code.
    ``wire.error_response`` then sets every ``error_code`` of the answer to the error.
    """
    api = header.api_key
    lo, hi = wire.APIS[api][3:5]
    v = min(max(header.api_version, lo), hi)
    cls = wire.response_class(api, v)
    if body is None:
        return None
    if api == 0:  # Produce
        t_cls = cls.TopicProduceResponse
        p_cls = t_cls.PartitionProduceResponse
        return cls(responses=[t_cls(name=t.name, partition_responses=[
            p_cls(index=p.index, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1)
            for p in t.partition_data]) for t in body.topic_data])
    if api == 1:  # Fetch
        t_cls = cls.FetchableTopicResponse
        p_cls = t_cls.PartitionData
        return cls(session_id=0, responses=[t_cls(topic=t.topic, partitions=[
            p_cls(partition_index=p.partition, high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                  records=None) for p in t.partitions]) for t in body.topics])
    if api == 2:  # ListOffsets
        t_cls = cls.ListOffsetsTopicResponse
        p_cls = t_cls.ListOffsetsPartitionResponse
        return cls(topics=[t_cls(name=t.name, partitions=[
            p_cls(partition_index=p.partition_index, timestamp=-1, offset=-1, leader_epoch=-1)
            for p in t.partitions]) for t in body.topics])
    if api == 3:  # Metadata
        topics = [] if body.topics is None else body.topics
        return cls(brokers=[], topics=[cls.MetadataResponseTopic(
            name=t.name if t.name is not None else "", topic_id=getattr(t, "topic_id", None) or wire.ZERO_UUID,
            is_internal=False, partitions=[]) for t in topics])
    if api == 8:  # OffsetCommit: per-partition errors only
        return cls(topics=[cls.OffsetCommitResponseTopic(name=t.name, partitions=[
            cls.OffsetCommitResponseTopic.OffsetCommitResponsePartition(partition_index=p.partition_index)
            for p in t.partitions]) for t in body.topics])
    if api == 9:  # OffsetFetch
        if v >= 8:
            g = cls.OffsetFetchResponseGroup
            return cls(groups=[g(group_id=x.group_id, topics=[]) for x in body.groups])
        if v == 1 and body.topics is not None:
            t_cls = cls.OffsetFetchResponseTopic
            return cls(topics=[t_cls(name=t.name, partitions=[t_cls.OffsetFetchResponsePartition(
                partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="")
                for p in t.partition_indexes]) for t in body.topics])
        return cls(topics=[])
    if api == 10 and v >= 4:  # FindCoordinator with a batch of keys
        return cls(coordinators=[cls.Coordinator(key=k, node_id=-1, host="", port=-1, error_message=None)
                                 for k in body.coordinator_keys])
    if api == 13 and v >= 3:  # LeaveGroup: the top-level error only
        return cls(members=[])
    if api == 19:  # CreateTopics
        return cls(topics=[cls.CreatableTopicResult(
            name=t.name, topic_id=wire.ZERO_UUID, error_message=None, num_partitions=-1, replication_factor=-1,
            configs=None) for t in body.topics])
    return None
