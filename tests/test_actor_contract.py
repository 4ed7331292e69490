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
