"""`groupspec serve --protocol consumer|both`: ConsumerGroupHeartbeat (KIP-848) and member-epoch offsets on the wire."""
from __future__ import annotations

import struct

import pytest

from groupspec.serve import Cluster, wire
from kafka.protocol.consumer import JoinGroupRequest, JoinGroupResponse, OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

HB = wire.ConsumerGroupHeartbeatRequest
HBR = wire.ConsumerGroupHeartbeatResponse


def _cluster(protocol: str = "consumer") -> Cluster:
    return Cluster(topics={"t": 4}, protocol=protocol, clock=lambda: 0.0, record_group="g")


def _ask(c: Cluster, frame: bytes, conn=None) -> bytes:
    c.request(conn or c.connect(0), frame[4:])
    out, c.out = c.out, []
    assert len(out) == 1 and out[0][1], out
    return out[0][1]


def _hb(c: Cluster, conn=None, **fields) -> object:
    base = dict(group_id="g", member_id="m1", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=60000,
                subscribed_topic_names=["t"], subscribed_topic_regex=None, server_assignor=None, topic_partitions=[])
    base.update(fields)
    data = _ask(c, wire.frame_request(HB(version=1, **base), 7, "cli", 1), conn)
    return HBR.decode(data[4:], version=1, header=True)


def test_join_gets_an_epoch_and_the_assignment_by_topic_id():
    c = _cluster()
    r = _hb(c)
    assert (r.error_code, r.member_id, r.member_epoch, r.header.correlation_id) == (0, "m1", 1, 7)
    assert [(tp.topic_id, sorted(tp.partitions)) for tp in r.assignment.topic_partitions] == [(c.topic_ids["t"], [0, 1, 2, 3])]
    # a second member: the group epoch moves on, the first member is asked to give two partitions up
    assert _hb(c, member_id="m2").member_epoch == 2
    r = _hb(c, member_epoch=1, subscribed_topic_names=None, rebalance_timeout_ms=-1,
            topic_partitions=[HB.TopicPartitions(topic_id=c.topic_ids["t"], partitions=[0, 1, 2, 3])])
    assert r.error_code == 0 and len(r.assignment.topic_partitions[0].partitions) == 2


@pytest.mark.parametrize("fields, error", [
    ({"member_id": "", "member_epoch": 1}, 42),                        # INVALID_REQUEST: MemberId can't be empty
    ({"member_epoch": -3}, 42),                                        # MemberEpoch is invalid
    ({"rebalance_timeout_ms": -1}, 42),                                # RebalanceTimeoutMs must be provided
    ({"topic_partitions": None}, 42),                                  # TopicPartitions must be empty when joining
    ({"subscribed_topic_names": []}, 42),                              # SubscribedTopicNames must be set
    ({"subscribed_topic_names": None, "subscribed_topic_regex": "("}, 42),  # a regex that does not compile
    ({"server_assignor": "sticky"}, 112),                              # UNSUPPORTED_ASSIGNOR
    ({"member_epoch": 5}, 69),                                         # GROUP_ID_NOT_FOUND: no group before a join (Kafka 4.3.1, the oracle)
])
def test_requests_kafka_refuses(fields, error):
    c = _cluster()
    r = _hb(c, **fields)
    assert r.error_code == error and r.member_id is None and r.member_epoch == 0
    assert c.stats.get("internal_error", 0) == 0


def test_a_join_without_member_id_gets_one_from_the_server():
    r = _hb(_cluster(), member_id="")
    assert r.error_code == 0 and r.member_id and r.member_epoch == 1


def test_offset_commit_is_fenced_by_member_epoch_and_version():
    c = _cluster()
    _hb(c)

    def commit(version: int, epoch: int, member: str = "m1") -> int:
        t = OffsetCommitRequest.OffsetCommitRequestTopic
        p = t.OffsetCommitRequestPartition(partition_index=0, committed_offset=5, committed_leader_epoch=-1,
                                           committed_metadata="")
        req = OffsetCommitRequest(version=version, group_id="g", generation_id_or_member_epoch=epoch, member_id=member,
                                  group_instance_id=None, topics=[t(name="t", partitions=[p])])
        data = _ask(c, wire.frame_request(req, 3, "cli", version))
        return OffsetCommitResponse.decode(data[4:], version=version, header=True).topics[0].partitions[0].error_code

    assert commit(9, 0) == 113  # STALE_MEMBER_EPOCH
    assert commit(9, 1, "nobody") == 25  # UNKNOWN_MEMBER_ID
    assert commit(8, 1) == 35  # UNSUPPORTED_VERSION: a consumer-protocol member commits with v9+
    assert commit(9, 1) == 0
    assert c.consumer.groups["g"].commits[("t", 0)][2] == 5


def test_classic_requests_to_a_consumer_group_get_group_id_not_found():
    c = _cluster("both")
    _hb(c)
    proto = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
    req = JoinGroupRequest(version=9, group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                           group_instance_id=None, protocol_type="consumer", protocols=[proto], reason=None)
    resp = JoinGroupResponse.decode(_ask(c, wire.frame_request(req, 1, "cli", 9))[4:], version=9, header=True)
    assert resp.error_code == 69  # GROUP_ID_NOT_FOUND: "Group g is not a classic group."


@pytest.mark.parametrize("protocol, has, lacks", [
    ("classic", {11, 12, 13, 14}, {68}), ("consumer", {68}, {11, 12, 13, 14}), ("both", {11, 12, 13, 14, 68}, set()),
])
def test_api_versions_per_protocol(protocol, has, lacks):
    c = _cluster(protocol)
    data = _ask(c, wire.frame_request(ApiVersionsRequest(version=3, client_software_name="x", client_software_version="1"),
                                      1, "cli", 3))
    keys = {k.api_key: (k.min_version, k.max_version) for k in ApiVersionsResponse.decode(data[4:], version=3, header=True).api_keys}
    assert has <= set(keys) and not lacks & set(keys)
    assert keys[8][1] == (8 if protocol == "classic" else 9)
    if 68 in keys:
        assert keys[68] == (0, 1)


def test_an_unserved_api_closes_the_connection_as_kafka():
    # Kafka 4.3.1: an API not enabled on the listener fails Processor.parseRequestHeader; the channel is closed
    c = _cluster("classic")
    frame = wire.frame_request(HB(version=1, group_id="g", member_id="m", member_epoch=0, instance_id=None, rack_id=None,
                                  rebalance_timeout_ms=1, subscribed_topic_names=["t"], subscribed_topic_regex=None,
                                  server_assignor=None, topic_partitions=[]), 9, "cli", 1)
    conn = c.connect(0)
    c.request(conn, frame[4:])
    assert c.out == [(conn, None, 0)] and c.stats["closed_unsupported"] == 1


def test_recorded_session_replays_and_a_tampered_one_does_not():
    from groupspec.reference.sim import run_consumer_script

    c = _cluster()
    _hb(c)
    _hb(c, member_id="m2")
    c.tick()
    script, transcript = c.consumer.script_text(), c.consumer.transcript_text()
    assert "".join(x + "\n" for x in run_consumer_script(script)) == transcript
    tampered = script.replace('"member_id": "m2"', '"member_id": "m3"')
    assert "".join(x + "\n" for x in run_consumer_script(tampered)) != transcript


def test_nothing_is_written_down_when_the_cluster_does_not_record():
    c = Cluster(topics={"t": 4}, protocol="consumer", clock=lambda: 0.0, record=False)
    _hb(c)
    _hb(c, member_id="", member_epoch=3)  # refused: recorded as a comment when recording
    assert c.consumer.script == [] and c.consumer.transcript == []
