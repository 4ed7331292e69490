"""groupspec serve: member ids are Kafka's (``<client.id>-<random UUID>``), seeded for replay, never repeated by
a restarted server (issue #31)."""
from __future__ import annotations

import uuid

from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

from groupspec.reference.classic import CoordinatorConfig
from groupspec.reference.sim import Replayer, parse_script
from groupspec.serve import Cluster, wire


def _cluster(seed: int | None = None, record: bool = False) -> Cluster:
    return Cluster(topics={"t": 2}, record=record, member_id_seed=seed,
                   config=CoordinatorConfig(initial_rebalance_delay_ms=0), clock=lambda: 0.0)


def _ask(c: Cluster, conn, req, client: str, version: int, resp_cls):
    c.request(conn, wire.frame_request(req, 1, client, version)[4:])
    if not c.out:
        c.tick()  # a parked JoinGroup: the join completes on the coordinator's timer
    out, c.out = c.out, []
    assert len(out) == 1, out
    return resp_cls.decode(out[0][1][4:], version=version, header=True)


def _member(c: Cluster, client: str = "cli", group: str = "g") -> tuple[str, int]:
    """A member of ``group`` (alone in it) that joined (two steps) and synced: its id and generation."""
    conn = c.connect(0)
    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")

    def join(mid: str):
        return _ask(c, conn, JoinGroupRequest(version=5, group_id=group, session_timeout_ms=30000,
                                              rebalance_timeout_ms=30000, member_id=mid, group_instance_id=None,
                                              protocol_type="consumer", protocols=[p]), client, 5, JoinGroupResponse)

    first = join("")
    assert first.error_code == 79  # MEMBER_ID_REQUIRED
    second = join(first.member_id)
    assert second.error_code == 0, second
    sync = _ask(c, conn, SyncGroupRequest(version=3, group_id=group, generation_id=second.generation_id,
                                          member_id=second.member_id, group_instance_id=None,
                                          assignments=[SyncGroupRequest.SyncGroupRequestAssignment(
                                              member_id=second.member_id, assignment=b"")]),
                client, 3, SyncGroupResponse)
    assert sync.error_code == 0
    return second.member_id, second.generation_id


def test_member_ids_are_client_id_and_a_random_uuid4():
    c = _cluster()
    ids = {_member(c, group=f"g{i}")[0] for i in range(3)}
    assert len(ids) == 3
    for mid in ids:
        prefix, _, rest = mid.partition("-")
        assert prefix == "cli" and uuid.UUID(rest).version == 4
    # not a counter: no two ids share their UUID's first 64 bits (a counter's ids all do)
    assert len({mid.split("-", 1)[1][:18] for mid in ids}) == 3


def test_a_restarted_server_answers_a_stale_member_unknown_member_id():
    old = _cluster()
    old_id, old_gen = _member(old)
    new = _cluster()  # the restart: a new server, same client id joining first
    new_id, new_gen = _member(new)
    assert new_id != old_id and new_gen == old_gen
    conn = new.connect(0)
    hb = _ask(new, conn, HeartbeatRequest(version=3, group_id="g", generation_id=old_gen, member_id=old_id,
                                          group_instance_id=None), "cli", 3, HeartbeatResponse)
    assert hb.error_code == 25  # UNKNOWN_MEMBER_ID, not NONE
    t = OffsetCommitRequest.OffsetCommitRequestTopic
    commit = _ask(new, conn, OffsetCommitRequest(
        version=8, group_id="g", generation_id_or_member_epoch=old_gen, member_id=old_id, group_instance_id=None,
        topics=[t(name="t", partitions=[t.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])]),
        "cli", 8, OffsetCommitResponse)
    assert [p.error_code for x in commit.topics for p in x.partitions] == [25]


def test_a_leave_group_with_guessed_ids_evicts_nobody():
    c = _cluster()
    real, _gen = _member(c)
    guesses = [f"cli-{uuid.UUID(int=i)}" for i in range(1, 6)] + [f"cli-{uuid.UUID(int=(1 << 64) | i)}" for i in range(1, 6)]
    mi = LeaveGroupRequest.MemberIdentity
    r = _ask(c, c.connect(0), LeaveGroupRequest(version=4, group_id="g", members=[
        mi(member_id=g, group_instance_id=None) for g in guesses]), "evil", 4, LeaveGroupResponse)
    assert {m.error_code for m in r.members} == {25}
    assert c.coordinator.group("g").member_ids == (real,)


def test_the_same_seed_hands_out_the_same_ids_and_a_fresh_one_others():
    a, b, other = _cluster(seed=7), _cluster(seed=7), _cluster()
    assert a.member_id_seed == 7 and other.member_id_seed is not None
    ids_a = [_member(a, group=f"g{i}")[0] for i in range(2)]
    assert ids_a == [_member(b, group=f"g{i}")[0] for i in range(2)]
    assert not set(ids_a) & {_member(other, group=f"g{i}")[0] for i in range(2)}


def test_a_recorded_session_replays_its_random_ids():
    # the script's config line carries the seed: the replayed coordinator hands out the served ids
    c = _cluster(record=True)
    first, gen = _member(c)
    _member(c, "other", group="h")
    conn = c.connect(0)
    _ask(c, conn, HeartbeatRequest(version=3, group_id="g", generation_id=gen, member_id=first,
                                   group_instance_id=None), "cli", 3, HeartbeatResponse)
    script = c.recorder.script_text()
    assert f'"member_id_seed": {c.member_id_seed}' in script.splitlines()[0]
    replayer = Replayer()
    replayer.run(parse_script(script))
    assert "".join(x + "\n" for x in replayer.lines) == c.recorder.transcript_text()
    assert sorted(replayer.coordinator.id_owner) == sorted(c.coordinator.id_owner)
