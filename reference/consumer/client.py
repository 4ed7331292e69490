"""A consumer that speaks the next-generation protocol (KIP-848) and reconciles its assignment.

Theory of operation
-------------------
Kafka's ``ConsumerMembershipManager`` in miniature, sans-IO: :meth:`heartbeat_request` builds the
next ``ConsumerGroupHeartbeat`` (epoch 0 with the subscription to join; the owned partitions to
acknowledge; epoch -1, or -2 for a static member, to leave), :meth:`on_heartbeat_response` applies
the answer, and reconciliation moves what the member *owns* towards what it was *given*, in Kafka's
order: first the revocation — commit the offsets of the partitions given up, then
``onPartitionsRevoked`` — and only then ``onPartitionsAssigned`` for the new partitions
(:meth:`revoke`, :meth:`assign`, or both with :meth:`reconcile`). A fenced member
(``UNKNOWN_MEMBER_ID``, ``FENCED_MEMBER_EPOCH``) calls ``onPartitionsLost`` — no commit — and
rejoins with epoch 0 and the same member id. Every callback is appended to :attr:`callbacks`.

On the one actor contract (``reference/actor.py``), :meth:`handle` takes the events a driver delivers —
``TimerFired("heartbeat")`` (send the next heartbeat), ``TimerFired("commit")`` (commit what it owns),
``Invoked("close")`` (leave), ``Received`` of the coordinator's answer — and returns the commands: ``Send``
to ``COORDINATOR`` (a :class:`~.coordinator.HeartbeatRequest` or a :class:`~.coordinator.ConsumerOffsetCommit`),
``CallListener`` for every listener callback in the order it ran (with the epoch it ran in), and
``SetTimer(now, "heartbeat")`` when reconciliation changed what it owns (acknowledge soon).

Fault switches (mutants for the conformance check): ``keep_on_fence`` (a fenced member keeps its
partitions), ``no_ack_revocation`` (the member never reports its owned partitions after revoking).
"""
from __future__ import annotations

from typing import Iterable

from .coordinator import (ConsumerOffsetCommit, HeartbeatRequest, HeartbeatResponse, LEAVE_GROUP_MEMBER_EPOCH,
                          LEAVE_GROUP_STATIC_MEMBER_EPOCH)
from ..actor import COORDINATOR, LISTENER_CALLBACKS, CallListener, Command, Event, Invoked, Received, Send, SetTimer, TimerFired
from ..errors import Error

__all__ = ["ReconcilingConsumer", "CLIENT_FAULTS"]

CLIENT_FAULTS = frozenset({"keep_on_fence", "no_ack_revocation"})
TP = tuple[str, int]


class ReconcilingConsumer:
    def __init__(self, member_id: str, topics: list[str], instance_id: str | None = None,
                 faults: frozenset[str] = frozenset()) -> None:
        unknown = set(faults) - CLIENT_FAULTS
        if unknown:
            raise ValueError(f"unknown consumer fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(CLIENT_FAULTS))}")
        self.member_id = member_id
        self.instance_id = instance_id
        self.topics = sorted(topics)
        self.faults = frozenset(faults)
        self.epoch = 0  # 0: joining
        self.owned: set[TP] = set()
        self.assigned: set[TP] = set()  # what the last answer gave: reconciliation's goal
        self.callbacks: list[tuple[str, list[TP]]] = []
        self._send_subscription = True
        self._ack = True
        # the error Kafka's client stops on (ConsumerHeartbeatRequestManager.handleSpecificError: UNRELEASED_INSTANCE_ID
        # goes to handleFatalFailure, Kafka 4.3.1); recorded for a driver, which stops the process (None: running)
        self.fatal: Error | None = None
        self._commands: list[Command] | None = None  # collecting, while :meth:`handle` runs

    # -- the actor contract -------------------------------------------------------------------------
    def handle(self, now_ms: int, event: Event) -> list[Command]:
        """One event in, the commands out (``reference/actor.py``)."""
        if type(event) is TimerFired:  # the common events, every step of a simulation; no listener runs on them
            key = event.key
            if key == "heartbeat":
                return [Send(COORDINATOR, self.heartbeat_request())]
            if key == "commit" and self.owned:
                return [Send(COORDINATOR, ConsumerOffsetCommit(self.member_id, self.epoch, self.commit_offsets()))]
            return []
        out: list[Command] = []
        self._commands = out
        try:
            if isinstance(event, Invoked) and event.call == "close":
                out.append(Send(COORDINATOR, self.leave_request()))
            elif isinstance(event, Received) and isinstance(event.message, HeartbeatResponse):
                self.on_heartbeat_response(event.message)
                if self.reconcile():
                    out.append(SetTimer(now_ms, "heartbeat"))
        finally:
            self._commands = None
        return out

    def _listen(self, callback: str, parts: list[TP]) -> None:
        """A callback runs now: recorded in :attr:`callbacks` and, inside :meth:`handle`, as a command."""
        self.callbacks.append((callback, parts))
        if self._commands is not None and callback in LISTENER_CALLBACKS:
            self._commands.append(CallListener(callback, tuple(parts), self.epoch))

    # -- requests ---------------------------------------------------------------------------------
    def heartbeat_request(self) -> HeartbeatRequest:
        owned = None
        if self._ack or self.epoch == 0:
            owned = _by_topic(self.owned)
        return HeartbeatRequest(
            member_id=self.member_id, member_epoch=self.epoch, instance_id=self.instance_id,
            subscribed_topic_names=list(self.topics) if (self._send_subscription or self.epoch == 0) else None,
            topic_partitions=owned, rebalance_timeout_ms=300_000 if self.epoch == 0 else -1,
        )

    def leave_request(self) -> HeartbeatRequest:
        """Close: revoke everything (committing first), then leave with epoch -1 (-2 if static)."""
        self._revoke(set(self.owned))
        epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH if self.instance_id is not None else LEAVE_GROUP_MEMBER_EPOCH
        return HeartbeatRequest(member_id=self.member_id, member_epoch=epoch, instance_id=self.instance_id)

    def subscribe(self, topics: list[str]) -> None:
        self.topics = sorted(topics)
        self._send_subscription = True

    # -- answers ------------------------------------------------------------------------------------
    def on_heartbeat_response(self, resp: HeartbeatResponse) -> None:
        if resp.error == Error.NONE:
            self.epoch = resp.member_epoch
            self._send_subscription = False
            self._ack = False
            if resp.assignment is not None:
                self.assigned = {(t, p) for t, ps in resp.assignment.items() for p in ps}
            return
        if resp.error in (Error.UNKNOWN_MEMBER_ID, Error.FENCED_MEMBER_EPOCH):
            if "keep_on_fence" not in self.faults:
                if self.owned:
                    self._listen("onPartitionsLost", sorted(self.owned))
                self.owned = set()
                self.assigned = set()
            self.epoch = 0
            self._send_subscription = True
            return
        if resp.error == Error.UNRELEASED_INSTANCE_ID:
            self.fatal = resp.error  # fatal in Kafka's client: the driver stops the process (see ``fatal``)
            return
        # retriable errors: try again at the next heartbeat.

    # -- reconciliation ---------------------------------------------------------------------------
    def revoking(self) -> set[TP]:
        return self.owned - self.assigned

    def adding(self) -> set[TP]:
        return self.assigned - self.owned

    def _revoke(self, parts: set[TP]) -> None:
        if parts:
            self._listen("commit", sorted(parts))
            self._listen("onPartitionsRevoked", sorted(parts))
            self.owned -= parts

    def revoke(self) -> bool:
        """Revoke what was not given (commit, onPartitionsRevoked); then acknowledge. False if nothing to do."""
        parts = self.revoking()
        if not parts:
            return False
        self._revoke(parts)
        self._ack = "no_ack_revocation" not in self.faults
        return True

    def assign(self) -> bool:
        """Take the new partitions (onPartitionsAssigned), once no revocation is pending."""
        if self.revoking():
            return False
        parts = self.adding()
        if not parts:
            return False
        self._listen("onPartitionsAssigned", sorted(parts))
        self.owned |= parts
        self._ack = True
        return True

    def reconcile(self) -> bool:
        a = self.revoke()
        b = self.assign()
        return a or b

    def commit_offsets(self) -> dict[TP, int]:
        """The offsets it would commit now (one per owned partition; the value is immaterial here)."""
        return {tp: 0 for tp in sorted(self.owned)}


def _by_topic(tps: Iterable[TP]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out
