"""Unit and property tests of the reference coordinator (reference/classic/coordinator.py) and its messages.

* §7 FindCoordinator arithmetic (Java String.hashCode over UTF-16 units, Utils.abs).
* The legal-transition table: exactly coordinator.md §1.3; an illegal move raises naming both states.
* A randomised driver (Hypothesis, seed printed on failure) sends arbitrary request sequences
  from a few simple clients and checks structural invariants of the group after every call, that
  no request is answered twice, and that a run is deterministic.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupspec.reference.classic import (
    COORDINATOR_FAULTS as FAULTS, VALID_PREVIOUS_STATES, CoordinatorConfig, GroupCoordinator, GroupStatus,
    java_string_hash, kafka_abs, partition_for,
)
from groupspec.reference.classic.group import GroupMetadata
from groupspec.reference.errors import Error, IllegalStateTransition, InvalidMessage, map_store_error
from groupspec.reference.classic import (
    FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    MemberIdentity, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, SyncGroupRequest,
    SyncGroupResponse, request_name,
)

E, PR, CR, ST, D = (GroupStatus.EMPTY, GroupStatus.PREPARING_REBALANCE, GroupStatus.COMPLETING_REBALANCE,
                    GroupStatus.STABLE, GroupStatus.DEAD)


# ---------------------------------------------------------------------------------------------
# §7
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("group,hash_,partition", [
    ("my-group", -1906497762, 12), ("test-group", 627841412, 12), ("connect-cluster", 1440343063, 13),
    ("", 0, 0), ("polygenelubricants", -2**31, 0), ("GydZG_", -2**31, 0), ("DESIGNING WORKHOUSES", -2**31, 0),
])
def test_find_coordinator_vectors(group: str, hash_: int, partition: int) -> None:
    assert java_string_hash(group) == hash_
    assert partition_for(group, 50) == partition


def test_hash_uses_utf16_code_units_and_wraps() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16: two units, not one code point
    assert java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00
    assert java_string_hash("é") == 0xE9
    # 32-bit wrap: a long string's hash stays in the int range
    h = java_string_hash("x" * 1000)
    assert -2**31 <= h < 2**31
    assert kafka_abs(-2**31) == 0 and kafka_abs(-5) == 5 and abs(-2**31) % 50 == 48
    with pytest.raises(ValueError):
        partition_for("g", 0)


# ---------------------------------------------------------------------------------------------
# §1.3 transition table
# ---------------------------------------------------------------------------------------------

def test_transition_table_is_coordinator_md() -> None:
    assert VALID_PREVIOUS_STATES == {
        PR: {ST, CR, E},
        CR: {PR},
        ST: {CR},
        E: {PR},
        D: {ST, PR, CR, E, D},
    }


@pytest.mark.parametrize("source", list(GroupStatus))
@pytest.mark.parametrize("target", list(GroupStatus))
def test_illegal_transition_raises_and_changes_nothing(source: GroupStatus, target: GroupStatus) -> None:
    g = GroupMetadata("g", status=source)
    if source in VALID_PREVIOUS_STATES[target]:
        g.transition(target)
        assert g.status is target
    else:
        with pytest.raises(IllegalStateTransition) as err:
            g.transition(target)
        assert source.value in str(err.value) and target.value in str(err.value)
        assert g.status is source


# ---------------------------------------------------------------------------------------------
# small API facts
# ---------------------------------------------------------------------------------------------

def test_time_cannot_go_backwards_and_faults_are_checked() -> None:
    c = GroupCoordinator()
    c.advance(10)
    with pytest.raises(Exception, match="backwards"):
        c.advance(5)
    with pytest.raises(ValueError, match="unknown fault"):
        GroupCoordinator(faults={"nope"})
    assert GroupCoordinator(faults=FAULTS).faults == FAULTS


def test_store_error_mapping() -> None:
    assert map_store_error(Error.NOT_ENOUGH_REPLICAS) is Error.COORDINATOR_NOT_AVAILABLE
    assert map_store_error(Error.REQUEST_TIMED_OUT) is Error.COORDINATOR_NOT_AVAILABLE
    assert map_store_error(Error.UNKNOWN_TOPIC_OR_PARTITION) is Error.COORDINATOR_NOT_AVAILABLE
    assert map_store_error(Error.NOT_LEADER_OR_FOLLOWER) is Error.NOT_COORDINATOR
    assert map_store_error(Error.KAFKA_STORAGE_ERROR) is Error.NOT_COORDINATOR
    assert map_store_error(Error.RECORD_LIST_TOO_LARGE) is Error.UNKNOWN_SERVER_ERROR
    assert map_store_error(Error.INVALID_FETCH_SIZE) is Error.UNKNOWN_SERVER_ERROR
    assert map_store_error(Error.ILLEGAL_GENERATION) is Error.ILLEGAL_GENERATION


def test_error_codes_are_kafkas() -> None:
    expected = {"NONE": 0, "UNKNOWN_SERVER_ERROR": -1, "COORDINATOR_LOAD_IN_PROGRESS": 14,
                "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16, "ILLEGAL_GENERATION": 22,
                "INCONSISTENT_GROUP_PROTOCOL": 23, "INVALID_GROUP_ID": 24, "UNKNOWN_MEMBER_ID": 25,
                "INVALID_SESSION_TIMEOUT": 26, "REBALANCE_IN_PROGRESS": 27, "NOT_ENOUGH_REPLICAS": 19,
                "MEMBER_ID_REQUIRED": 79, "GROUP_MAX_SIZE_REACHED": 81, "FENCED_INSTANCE_ID": 82}
    for name, code in expected.items():
        assert Error[name].code == code
        assert Error.from_name(name) is Error[name]
    with pytest.raises(KeyError, match="unknown Kafka error name"):
        Error.from_name("NOPE")


def test_messages_are_frozen_validated_and_normalised() -> None:
    r = JoinGroupRequest("g", "", "consumer", [["range", bytearray(b"x")]])
    assert r.protocols == (("range", b"x"),) and hash(r) == hash(JoinGroupRequest("g", "", "consumer", (("range", b"x"),)))
    with pytest.raises(Exception):
        r.member_id = "m"  # type: ignore[misc]
    s = SyncGroupRequest("g", "m", 1, {"a": b"1", "b": b"2"})
    assert s.assignments == (("a", b"1"), ("b", b"2")) and s.assignment_map() == {"a": b"1", "b": b"2"}
    for bad in [
        lambda: JoinGroupRequest("g", 1, "consumer", ()),  # type: ignore[arg-type]
        lambda: JoinGroupRequest("g", "", "consumer", [("range", "not-bytes")]),
        lambda: HeartbeatRequest("g", "m", True),  # type: ignore[arg-type]
        lambda: LeaveGroupRequest("g", (MemberIdentity("a"), MemberIdentity("b")), version=2),
        lambda: OffsetCommitRequest("g", [("t", -1, 0)]),
        lambda: JoinGroupResponse("NONE"),  # type: ignore[arg-type]
        lambda: FindCoordinatorRequest("g", key_type=1),
    ]:
        with pytest.raises(InvalidMessage):
            bad()
    assert OffsetCommitResponse((("t", 0, Error.NONE), ("t", 1, Error.ILLEGAL_GENERATION))).error is Error.ILLEGAL_GENERATION
    assert request_name(SyncGroupResponse(Error.NONE)) == "SyncGroup"


_PAIR_KEY = st.text(max_size=4) | st.integers(0, 3) | st.binary(max_size=2)
_PAIR_DATA = st.binary(max_size=4) | st.binary(max_size=4).map(bytearray) | st.text(max_size=2) | st.none()
_PAIR = st.tuples(_PAIR_KEY, _PAIR_DATA) | st.lists(_PAIR_KEY | _PAIR_DATA, max_size=3)


@given(pairs=st.lists(_PAIR, max_size=4), as_tuple=st.booleans(),
       data=st.binary(max_size=4) | st.binary(max_size=4).map(bytearray) | st.text(max_size=2),
       ptype=st.none() | st.text(max_size=2) | st.integers(0, 1), error=st.sampled_from([Error.NONE, Error.UNKNOWN_MEMBER_ID, 0]))
def test_the_sync_messages_quick_constructors_check_and_normalise_as_the_field_checks(
        pairs: list[Any], as_tuple: bool, data: Any, ptype: Any, error: Any) -> None:
    """SyncGroupRequest keeps a tuple of (str, bytes) tuples as given (a leader's: one per member) and SyncGroupResponse
    skips the field checks when every field has its exact type; anything else goes through the checks: the same
    messages, and the same InvalidMessage, as before those quick paths."""
    def checked_pairs(value: Any) -> tuple[tuple[str, bytes], ...]:  # the field check, as it was
        if isinstance(value, (str, bytes)):
            raise InvalidMessage("str")
        out = []
        for item in value:
            if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)
                    and isinstance(item[1], (bytes, bytearray))):
                raise InvalidMessage("pair")
            out.append((item[0], bytes(item[1])))
        return tuple(out)

    value: Any = [tuple(p) if as_tuple and isinstance(p, list) else p for p in pairs]
    value = tuple(value) if as_tuple else value
    try:
        expected: Any = checked_pairs(value)
    except InvalidMessage:
        expected = InvalidMessage
    try:
        got: Any = SyncGroupRequest("g", "m", 1, value).assignments
    except InvalidMessage:
        got = InvalidMessage
    assert got == expected
    if got is not InvalidMessage:
        assert all(type(k) is str and type(d) is bytes for k, d in got)
    ok = isinstance(data, (bytes, bytearray)) and (ptype is None or isinstance(ptype, str)) and isinstance(error, Error)
    if not ok:
        with pytest.raises(InvalidMessage):
            SyncGroupResponse(error, data, ptype, "range")
        return
    r = SyncGroupResponse(error, data, ptype, "range")
    assert type(r.assignment) is bytes and r.assignment == bytes(data)
    assert (r.error, r.protocol_type, r.protocol_name, r.throttle_time_ms) == (error, ptype, "range", 0)
    assert r == SyncGroupResponse(error=error, assignment=bytes(data), protocol_type=ptype, protocol_name="range")
    assert hash(r) == hash(replace(r, throttle_time_ms=0)) and replace(r, protocol_name=None).protocol_name is None
    with pytest.raises(Exception):
        r.assignment = b"x"  # type: ignore[misc]


def test_views_expose_state_for_conformance() -> None:
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
    out = c.handle(0, "a", JoinGroupRequest("g", "", "consumer", (("range", b"m"),), 10000, 60000, version=3))
    assert out == []
    view = c.group("g")
    assert view is not None and view.status is PR and view.num_awaiting_join == 1 and view.member_ids[0].startswith("consumer-")
    # a zero initial delay is due at once, but timers only fire on a later call that reaches them
    out = c.advance(0)
    assert [o.response.error for o in out] == [Error.NONE]
    mid = out[0].response.member_id
    c.handle(2, "a", SyncGroupRequest("g", mid, 1, {mid: b"asg"}))
    c.handle(3, "a", OffsetCommitRequest("g", (("t", 0, 9),), mid, 1))
    view = c.group("g")
    assert view is not None
    assert (view.status, view.generation, view.leader, view.protocol_name) == (ST, 1, mid, "range")
    assert view.assignments == {mid: b"asg"} and view.offsets == (("t", 0, 9),)
    assert c.log.groups["g"].members[0].assignment == b"asg"
    fetched = c.handle(4, "x", OffsetFetchRequest("g"))[0].response
    assert fetched.offset_map() == {("t", 0): 9}
    assert c.next_deadline() == 3 + 10000


# ---------------------------------------------------------------------------------------------
# randomised driver
# ---------------------------------------------------------------------------------------------

CLIENTS = ("c0", "c1", "c2", "c3")
STATIC = {"c2": "i-2", "c3": "i-3"}
PROTOCOLS = [(("range", b"r0"),), (("range", b"r1"), ("roundrobin", b"rr")), (("roundrobin", b"rr"),)]

_step = st.tuples(st.just("step"), st.sampled_from(CLIENTS))
_other = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(CLIENTS), st.booleans(), st.integers(0, 2), st.sampled_from([3, 9])),
    st.tuples(st.just("sync"), st.sampled_from(CLIENTS), st.integers(-1, 1)),
    st.tuples(st.just("heartbeat"), st.sampled_from(CLIENTS), st.integers(-1, 1)),
    st.tuples(st.just("leave"), st.sampled_from(CLIENTS), st.booleans()),
    st.tuples(st.just("commit"), st.sampled_from(CLIENTS), st.integers(-1, 1)),
    st.tuples(st.just("advance"), st.sampled_from([0, 50, 500, 3000, 7000, 61000])),
    st.tuples(st.just("failover")),
    st.tuples(st.just("store_fails")),
    st.tuples(st.just("max_size"), st.sampled_from([None, 1, 2])),
)
# three actions in four follow the protocol, so groups get to Stable; the rest disturb them
action = st.integers(0, 3).flatmap(lambda n: _step if n else _other)


class _Client:
    """Just enough of a client to follow the protocol when asked to "step"."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.member_id = ""
        self.generation = -1
        self.needs_join = True
        self.synced = False
        self.peers: tuple[str, ...] = ()
        self.outstanding = False
        self.requests: dict[str, int] = {"JoinGroup": 0, "SyncGroup": 0}
        self.answers: dict[str, int] = {"JoinGroup": 0, "SyncGroup": 0}

    def on_response(self, r: Any) -> None:
        if isinstance(r, (JoinGroupResponse, SyncGroupResponse)):
            self.outstanding = False
        if isinstance(r, JoinGroupResponse) and r.error in (Error.NONE, Error.MEMBER_ID_REQUIRED):
            self.member_id = r.member_id
            self.generation = r.generation_id
            self.needs_join = r.error is not Error.NONE
            self.synced = False
            self.peers = tuple(m.member_id for m in r.members)
        elif isinstance(r, SyncGroupResponse) and r.error is Error.NONE:
            self.synced = True
        elif getattr(r, "error", Error.NONE) in (Error.UNKNOWN_MEMBER_ID, Error.FENCED_INSTANCE_ID):
            self.member_id, self.generation, self.needs_join = "", -1, True
        elif getattr(r, "error", Error.NONE) in (Error.REBALANCE_IN_PROGRESS, Error.ILLEGAL_GENERATION,
                                                 Error.NOT_COORDINATOR, Error.COORDINATOR_NOT_AVAILABLE):
            self.needs_join = True


def _drive(actions: list[tuple[Any, ...]], faults: frozenset[str] = frozenset()) -> list[Any]:
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=100), faults=faults)
    clients = {n: _Client(n) for n in CLIENTS}
    now = 0
    last_generation = 0
    transcript: list[Any] = []
    for a in actions:
        kind = a[0]
        out = []
        if kind == "step" and clients[a[1]].outstanding:
            now += 100  # a client waiting for its JoinGroup/SyncGroup answer sends nothing
            out = c.advance(now)
        elif kind == "advance":
            now += a[1]
            out = c.advance(now)
        elif kind == "failover":
            now += 1
            out = c.unload_group("g", now) + c.load_group("g", now)
            last_generation = -1
        elif kind == "store_fails":
            c.fail_next_store(Error.NOT_ENOUGH_REPLICAS)
        elif kind == "max_size":
            c.set_config(CoordinatorConfig(initial_rebalance_delay_ms=100, group_max_size=a[1]))
        else:
            cl = clients[a[1]]
            now += 25
            req = _request(a, cl)
            if isinstance(req, (JoinGroupRequest, SyncGroupRequest)):
                cl.requests[request_name(req)] += 1
                cl.outstanding = True
            out = c.handle(now, cl.name, req)
        for o in out:
            cl = clients[o.destination]
            r = o.response
            name = request_name(r)
            if name in cl.answers:
                cl.answers[name] += 1
                assert cl.answers[name] <= cl.requests[name], f"{cl.name}: more {name} answers than requests"
            cl.on_response(r)
            transcript.append((o.at_ms, o.destination, r))
        view = c.group("g")
        if view is not None:
            _check_invariants(c, view)
            if last_generation >= 0:
                assert view.generation >= last_generation
            last_generation = view.generation
    return transcript


def _request(a: tuple[Any, ...], cl: _Client) -> Any:
    kind = a[0]
    instance = STATIC.get(cl.name)
    if kind == "step":
        if cl.needs_join:
            return JoinGroupRequest("g", cl.member_id, "consumer", PROTOCOLS[1], 10000, 60000, instance)
        if not cl.synced:
            plan = {m: m.encode() for m in cl.peers}
            return SyncGroupRequest("g", cl.member_id, cl.generation, plan, instance)
        return HeartbeatRequest("g", cl.member_id, cl.generation, instance)
    if kind == "join":
        member_id = cl.member_id if a[2] else ""
        return JoinGroupRequest("g", member_id, "consumer", PROTOCOLS[a[3]], 10000, 60000, instance, version=a[4])
    if kind == "sync":
        return SyncGroupRequest("g", cl.member_id, cl.generation + a[2], {cl.member_id: b"x"}, instance)
    if kind == "heartbeat":
        return HeartbeatRequest("g", cl.member_id, cl.generation + a[2], instance)
    if kind == "leave":
        ident = MemberIdentity("", instance) if a[2] and instance else MemberIdentity(cl.member_id, instance)
        return LeaveGroupRequest("g", (ident,))
    return OffsetCommitRequest("g", (("t", 0, 1),), cl.member_id, cl.generation + a[2], instance)


def _check_invariants(c: GroupCoordinator, view: Any) -> None:
    ids = set(view.member_ids)
    assert len(ids) == len(view.member_ids)
    if view.status in (E,):
        assert not ids
    if view.status in (CR, ST):
        assert ids and view.protocol_name is not None
    if view.status is not D:
        assert (view.leader is None) == (not ids)
        assert view.leader is None or view.leader in ids
    assert view.num_awaiting_join == sum(1 for m in view.members if m.awaiting_join)
    # the incremental protocol support counts ([GM] supportedProtocols) match a recount
    counts: dict[str, int] = {}
    for m in view.members:
        for name, _ in m.protocols:
            counts[name] = counts.get(name, 0) + 1
    assert {p: n for p, n in c._groups["g"].protocol_counts.items() if n} == counts
    assert not set(view.pending) & ids
    # (pending_sync may keep a replaced static member's old id: Kafka does not move it, see
    # NOTE(pending-sync) in reference/classic/coordinator.py)
    for instance, member_id in view.static:
        assert member_id in ids and view.member(member_id).group_instance_id == instance
    for m in view.members:
        if m.group_instance_id is not None:
            assert dict(view.static).get(m.group_instance_id) == m.member_id
        if view.status is ST:
            assert not m.awaiting_join
    if view.status is PR:
        assert any(k == "join" for _, k, _ in c.timers())
    if view.status is E:
        assert view.protocol_name is None


@given(st.lists(action, min_size=10, max_size=80))
def test_random_request_sequences_keep_invariants_and_are_deterministic(actions: list[tuple[Any, ...]]) -> None:
    assert _drive(actions) == _drive(actions)


@pytest.mark.parametrize("fault,actions", [
    # a restarted static member leaves a zombie behind: two members claim instance i-2
    ("no_static_fence", [("join", "c2", False, 1, 9), ("join", "c2", False, 1, 9)]),
    # a re-sent JoinGroup counted twice: the parked count no longer matches the parked members
    ("double_count_rejoin", [("join", "c0", False, 0, 3), ("join", "c1", False, 0, 3), ("advance", 500),
                             ("step", "c0"), ("join", "c0", True, 0, 3), ("join", "c0", True, 0, 3)]),
])
def test_invariant_checks_catch_mutants(fault: str, actions: list[tuple[Any, ...]]) -> None:
    _drive(actions)  # the real coordinator keeps the invariants on this sequence
    with pytest.raises(AssertionError):
        _drive(actions, frozenset({fault}))


def test_member_ids_stay_unique_across_coordinators_sharing_a_log() -> None:
    from groupspec.reference.classic import GroupMetadataLog

    log = GroupMetadataLog()
    first, second = GroupCoordinator(log=log), GroupCoordinator(log=log)
    join = JoinGroupRequest("g", "", "consumer", (("range", b"m"),), 10000, 60000)
    a = first.handle(0, "a", join)[0].response.member_id
    b = second.handle(0, "b", join)[0].response.member_id
    assert a != b and a.endswith("0000-0000-0000-000000000001") and b.endswith("0001-0000-000000000001")
