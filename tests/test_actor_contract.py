"""The one actor contract (reference/actor.py): the KIP-848 reconciling consumer takes events and returns commands."""
from __future__ import annotations

from groupspec.reference.actor import COORDINATOR, CallListener, Invoked, Received, Send, SetTimer, TimerFired
from groupspec.reference.consumer import ConsumerGroupCoordinator, ConsumerOffsetCommit, HeartbeatRequest, ReconcilingConsumer
from groupspec.reference.errors import Error


def _beat(coord: ConsumerGroupCoordinator, c: ReconcilingConsumer, now: int) -> list:
    """One heartbeat round trip through the contract: the timer fires, the request goes, the answer comes back."""
    (send,) = c.handle(now, TimerFired("heartbeat"))
    assert isinstance(send, Send) and send.to == COORDINATOR and isinstance(send.message, HeartbeatRequest)
    return c.handle(now, Received(COORDINATOR, coord.heartbeat(send.message, now)))


def test_a_consumer_joins_takes_its_partitions_and_asks_to_acknowledge_soon():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    c = ReconcilingConsumer("a", ["t"])
    assert c.handle(0, TimerFired("commit")) == []  # nothing owned: nothing to commit
    out = _beat(coord, c, 0)
    assert out == [CallListener("onPartitionsAssigned", (("t", 0), ("t", 1)), 1), SetTimer(0, "heartbeat")]
    (commit,) = c.handle(1000, TimerFired("commit"))
    assert commit == Send(COORDINATOR, ConsumerOffsetCommit("a", 1, {("t", 0): 0, ("t", 1): 0}))
    assert _beat(coord, c, 1000) == []  # nothing changed: no listener call, no early heartbeat


def test_a_fenced_consumer_loses_its_partitions_in_the_epoch_it_had():
    coord = ConsumerGroupCoordinator("g", {"t": 2}, session_timeout_ms=1000)
    c = ReconcilingConsumer("a", ["t"])
    _beat(coord, c, 0)
    coord.tick(5000)  # the session expired: the member is gone
    out = _beat(coord, c, 5000)
    assert out[0] == CallListener("onPartitionsLost", (("t", 0), ("t", 1)), 1) and c.epoch == 0 and not c.owned


def test_close_revokes_first_then_leaves():
    coord = ConsumerGroupCoordinator("g", {"t": 1})
    c = ReconcilingConsumer("a", ["t"])
    _beat(coord, c, 0)
    revoke, leave = c.handle(100, Invoked("close"))
    assert revoke == CallListener("onPartitionsRevoked", (("t", 0),), 1)
    assert isinstance(leave, Send) and leave.message.member_epoch == -1
    assert coord.heartbeat(leave.message, 100).error == Error.NONE


def test_the_old_entry_points_collect_no_commands():
    """Callers that drive the consumer by its methods (replay, conformance, serve) still see only its callback list."""
    coord = ConsumerGroupCoordinator("g", {"t": 1})
    c = ReconcilingConsumer("a", ["t"])
    c.on_heartbeat_response(coord.heartbeat(c.heartbeat_request(), 0))
    c.reconcile()
    assert c.callbacks == [("onPartitionsAssigned", [("t", 0)])] and c._commands is None  # noqa: SLF001


def test_the_kip848_coordinator_answers_on_the_contract():
    """The coordinator takes what a member sent and returns the answer to send back; its timers send nothing."""
    coord = ConsumerGroupCoordinator("g", {"t": 1}, session_timeout_ms=1000)
    c = ReconcilingConsumer("a", ["t"])
    (send,) = c.handle(0, TimerFired("heartbeat"))
    (reply,) = coord.handle(0, Received("a", send.message))
    assert reply.to == "a" and reply.message.error == Error.NONE and reply.message.member_epoch == 1
    c.handle(0, Received(COORDINATOR, reply.message))
    (commit,) = c.handle(500, TimerFired("commit"))
    assert coord.handle(500, Received("a", commit.message)) == [Send("a", Error.NONE)]
    assert coord.handle(5000, TimerFired("timers")) == [] and "a" not in coord.members  # session expired, silently
    assert coord.handle(5000, Received("a", commit.message)) == [Send("a", Error.UNKNOWN_MEMBER_ID)]


# ------------------------------------------------------------------------------------- classic coordinator
def test_the_classic_coordinator_answers_on_the_contract():
    """Received(sender, request) in, Send(sender, response) per answer out, then SetTimer of its earliest deadline;
    TimerFired(DEADLINE) lets time pass. The same answers as the wire's entry point (handle with three arguments)."""
    from groupspec.reference.classic import DEADLINE, GroupCoordinator, JoinGroupRequest, SyncGroupRequest
    from groupspec.reference.classic import HeartbeatRequest as ClassicHeartbeat
    actor, wire = GroupCoordinator(), GroupCoordinator()

    def same(now: int, request) -> list:
        """The actor's commands for ``request`` from "a", checked against the wire's answers and deadline."""
        out = actor.handle(now, Received("a", request))
        answers = [Send(o.destination, o.response) for o in wire.handle(now, "a", request)]
        assert out == answers + [SetTimer(wire.next_deadline(), DEADLINE)]
        return out

    join = JoinGroupRequest("g", "", "consumer", (("range", b"m"),), 10000, 60000)
    ask = same(0, join)[0].message  # v4+: a new member is asked to rejoin with its member id
    assert ask.error is Error.MEMBER_ID_REQUIRED
    mid = ask.member_id
    (timer,) = same(10, JoinGroupRequest("g", mid, "consumer", (("range", b"m"),), 10000, 60000))  # parked
    # the join phase ends when its timer fires (the initial rebalance delay): the parked JoinGroup is answered
    out = actor.handle(timer.at_ms, TimerFired(DEADLINE))
    answers = [Send(o.destination, o.response) for o in wire.advance(timer.at_ms)]
    assert answers and out == answers + [SetTimer(wire.next_deadline(), DEADLINE)]
    gen = answers[0].message.generation_id
    same(timer.at_ms + 1, SyncGroupRequest("g", mid, gen, ((mid, b"a"),)))
    (answer, _t) = same(timer.at_ms + 2, ClassicHeartbeat("g", mid, gen))
    assert answer.message.error is Error.NONE


def test_the_classic_coordinator_refuses_what_is_no_event_for_it():
    import pytest
    from groupspec.reference.classic import GroupCoordinator
    from groupspec.reference.errors import GroupspecProtocolError
    with pytest.raises(GroupspecProtocolError):
        GroupCoordinator().handle(0, Invoked("close"))
    with pytest.raises(GroupspecProtocolError):
        GroupCoordinator().handle(0, TimerFired("heartbeat"))


# ------------------------------------------------------------------------------------- classic client
def _classic_member():
    from groupspec.reference.assignors import get
    from groupspec.reference.classic import Consumer, ConsumerConfig
    config = ConsumerConfig(assignors=("range",), session_timeout_ms=10000, heartbeat_interval_ms=3000,
                            max_poll_interval_ms=60000, enable_auto_commit=False)
    return Consumer("c1", config, lambda: {"t": 2}, get)


def test_the_classic_client_on_the_contract_does_what_its_methods_do():
    """A member joins a classic coordinator, polls, heartbeats and closes twice: once through handle (events in,
    commands out), once through its methods. Same requests and member events; a CallListener per listener
    event; SetTimer(TICK) at next_timer_ms."""
    from groupspec.reference.classic import DEADLINE, TICK, GroupCoordinator
    actor, plain = _classic_member(), _classic_member()
    ca, cp = GroupCoordinator(), GroupCoordinator()
    listened: list = []

    def answer(now: int, outs: list, cmds: list) -> None:
        """The coordinators' answers (the same through both paths) go back to the member."""
        assert [c.message for c in cmds if isinstance(c, Send)] == [o.response for o in outs]
        for o in outs:
            corr = o.destination[1]
            step(now, Received("coordinator", (corr, o.response)), lambda n, o=o, corr=corr: plain.receive(n, corr, o.response))

    def step(now: int, event, method) -> None:
        cmds = actor.handle(now, event)
        sends = method(now)
        assert [c.message for c in cmds if isinstance(c, Send)] == sends
        assert [c for c in cmds if isinstance(c, SetTimer)] == (
            [SetTimer(plain.next_timer_ms(), TICK)] if plain.next_timer_ms() is not None else [])
        listened.extend(c for c in cmds if isinstance(c, CallListener))
        for s in sends:  # the requests answered at once (or parked), through each path's coordinator
            answer(now, cp.handle(now, ("c1", s.corr), s.request), ca.handle(now, Received(("c1", s.corr), s.request)))

    step(0, Invoked("start"), plain.start)
    for now in range(0, 9000, 1000):
        answer(now, cp.advance(now), ca.handle(now, TimerFired(DEADLINE)))  # the initial rebalance delay ends
        step(now, Invoked("poll"), plain.poll)
        step(now, TimerFired(TICK), plain.tick)
    step(9000, Invoked("close"), plain.close)
    assert actor.events == plain.events and len(actor.events) > 2
    kinds = {"assigned": "onPartitionsAssigned", "revoked": "onPartitionsRevoked", "lost": "onPartitionsLost"}
    assert listened == [CallListener(kinds[e.event], tuple(e.partitions), e.generation)
                        for e in plain.events if e.event in kinds] != []


def test_the_classic_client_refuses_what_is_no_event_for_it():
    import pytest
    with pytest.raises(ValueError):
        _classic_member().handle(0, Invoked("dance"))
    with pytest.raises(ValueError):
        _classic_member().handle(0, TimerFired("heartbeat"))
