"""KIP-848 requests and answers in flight: the steps of :mod:`groupspec.model.consumer` that the faults
``lose-answer``, ``late-answer``, ``late-commit`` and ``early-restart`` add (a mixin, as
:mod:`~groupspec.model.formation` is for the classic protocol).

Without these faults a ConsumerGroupHeartbeat and its answer are one step, and a client's epoch is
always its member's; with them the coordinator's state and the client's can differ, as in Kafka:

* ``lose-answer`` (a perturbation): the coordinator handles a heartbeat and changes the member
  (``GroupMetadataManager.consumerGroupHeartbeat``), but the answer never reaches the client, which
  keeps its epoch and assignment and sends its next heartbeat with them. This is also the
  *duplicated request*: the client's retry is the same request the coordinator already handled.
  The coordinator then accepts the **previous epoch** if the owned partitions it reports are a
  subset of the member's assignment (``throwIfConsumerGroupMemberEpochIsInvalid``), and answers
  **FENCED_MEMBER_EPOCH** to any other epoch that is not the member's: it keeps the member's record
  (the fencing answer does not remove it), the client gives up its partitions
  (``onPartitionsLost``) and rejoins with epoch 0 and its member id, which Kafka 4.3.1 accepts
  (the epoch check returns at once for epoch 0: KAFKA-19233, option ``kafka_19233``).
* ``late-answer`` (a perturbation): the answer is delayed; ``ReceiveHeartbeatAnswer`` (a protocol
  step) delivers it later, after anything else may have happened — a session timeout that removed the
  member included. The client sends no other heartbeat meanwhile (``ConsumerHeartbeatRequestManager``
  keeps one heartbeat in flight). A duplicated answer changes nothing (applying it twice is applying
  it once), so it is not a separate step.
* ``late-commit`` (a perturbation): the client sends an OffsetCommit for what it owns, with its
  epoch, and it is delivered later (``DeliverOffsetCommit``, a protocol step), whatever the client
  did meanwhile (revoked the partitions, was fenced). The coordinator validates it at delivery
  (``ConsumerGroup.validateOffsetCommit``): an unknown member id is UNKNOWN_MEMBER_ID; the member's
  epoch is accepted; a newer one is STALE_MEMBER_EPOCH; an older one is accepted, partition by
  partition, only for partitions assigned to the member or pending revocation whose assignment
  epoch is not newer than the commit's (``createAssignmentEpochValidator``, KIP-1251, in 4.3.1;
  option ``kip_1251``; without it STALE_MEMBER_EPOCH). ``commit_fencing`` is checked on the commit
  in flight at every state, i.e. for every moment it could be delivered. A crashed process's
  commit in flight is dropped with its connection.
* ``early-restart`` (a perturbation, ``consumer-static``): a static member's crashed process comes
  back with the same ``group.instance.id`` before its session expired. The coordinator answers
  **UNRELEASED_INSTANCE_ID**, which the Java client treats as fatal: the process stops. A static
  member fenced by FENCED_MEMBER_EPOCH that rejoins with epoch 0 gets the same answer in 4.3.1.

The member keeps the assignment epoch of each partition (``Member.since``, 0 where not held) while
these faults are on: a partition newly given gets the member's new epoch, a kept one keeps its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Iterator

from . import actions as A
from .consumer_state import Answer, KIP848State, S
from .core import CONSUMER_FLIGHT_FAULTS, Proc

if TYPE_CHECKING:
    from .consumer_state import ConsumerClient, ConsumerGroup, ConsumerState
    from .core import Config

FLIGHT_FAULTS = CONSUMER_FLIGHT_FAULTS  # their help: model.core.FAULT_HELP


OK = "OK"
FENCED = "FENCED_MEMBER_EPOCH"
UNKNOWN = "UNKNOWN_MEMBER_ID"
STALE = "STALE_MEMBER_EPOCH"
UNRELEASED = "UNRELEASED_INSTANCE_ID"


@dataclass(frozen=True, slots=True, repr=False)
class LoseHeartbeatAnswer(A.Action):
    verb = "sends ConsumerGroupHeartbeat; the coordinator handles it, the answer is lost"
    fair = False
    fault = "lose-answer"


@dataclass(frozen=True, slots=True, repr=False)
class DelayHeartbeatAnswer(A.Action):
    verb = "sends ConsumerGroupHeartbeat; the coordinator handles it, the answer is on its way"
    fair = False
    fault = "late-answer"


@dataclass(frozen=True, slots=True, repr=False)
class ReceiveHeartbeatAnswer(A.Action):
    verb = "receives the late ConsumerGroupHeartbeat answer and applies it"


@dataclass(frozen=True, slots=True, repr=False)
class SendOffsetCommit(A.Action):
    verb = "sends an OffsetCommit for the partitions it owns, with its epoch; it is delayed"
    fair = False
    fault = "late-commit"


@dataclass(frozen=True, slots=True, repr=False)
class DeliverOffsetCommit(A.Action):
    verb = "'s late OffsetCommit reaches the coordinator"


@dataclass(frozen=True, slots=True, repr=False)
class EarlyRestart(A.Action):
    verb = "restarts with its group.instance.id before its session expired"
    fair = False
    fault = "early-restart"


FLIGHT_ACTIONS = (LoseHeartbeatAnswer, DelayHeartbeatAnswer, ReceiveHeartbeatAnswer, SendOffsetCommit,
                  DeliverOffsetCommit, EarlyRestart)


class ConsumerFlight(Generic[S]):
    """The steps of the in-flight faults; mixed into ``Consumer`` (which provides ``handle``, ``answer``)."""

    if TYPE_CHECKING:  # what it uses of Consumer
        cfg: Config
        static_members: bool

        def handle(self, s: KIP848State, i: int) -> tuple[ConsumerGroup, Answer]: ...
        def apply_answer(self, c: ConsumerClient, answer: Answer) -> ConsumerClient: ...
        def commit_answer(self, s: KIP848State, i: int, epoch: int, parts: int) -> str: ...
        @staticmethod
        def _set(t: tuple[Any, ...], i: int, v: object) -> tuple[Any, ...]: ...
        @staticmethod
        def _with(s: ConsumerState, group: ConsumerGroup | None = None, clients: tuple[ConsumerClient, ...] | None = None,
                  spend: bool = False) -> ConsumerState: ...

    def _flight_init(self) -> None:
        cfg = self.cfg
        self.in_flight = bool(FLIGHT_FAULTS & set(cfg.faults))
        self._flight_acts = {cls: tuple(cls(i) for i in range(cfg.members)) for cls in FLIGHT_ACTIONS}

    def flight_successors(self, s: ConsumerState, i: int, spend: bool) -> Iterator[tuple[A.Action, ConsumerState]]:
        """The steps of client ``i`` that the in-flight faults add."""
        acts = self._flight_acts
        faults = self.cfg.faults
        c = s.clients[i]
        r = s.group.members[i]
        if c.answer is not None and c.proc == Proc.UP:
            yield acts[ReceiveHeartbeatAnswer][i], self._with(
                s, clients=self._set(s.clients, i, self.apply_answer(c.but(answer=None), c.answer)))
        if c.commit is not None:
            yield acts[DeliverOffsetCommit][i], self._with(s, clients=self._set(s.clients, i, c.but(commit=None)))
        if not spend:
            return
        if c.proc == Proc.UP and c.epoch >= 0 and c.answer is None and ("lose-answer" in faults or "late-answer" in faults):
            g2, ans = self.handle(s, i)
            if g2 != s.group and ans[0] == OK:
                if "lose-answer" in faults:
                    yield acts[LoseHeartbeatAnswer][i], self._with(s, group=g2, spend=True)
                if "late-answer" in faults:
                    yield acts[DelayHeartbeatAnswer][i], self._with(
                        s, group=g2, clients=self._set(s.clients, i, c.but(answer=ans)), spend=True)
        if "late-commit" in faults and c.proc == Proc.UP and c.epoch > 0 and c.owned and c.commit is None:
            yield acts[SendOffsetCommit][i], self._with(
                s, clients=self._set(s.clients, i, c.but(commit=(c.epoch, c.owned))), spend=True)
        if ("early-restart" in faults and self.static_members and c.proc == Proc.DOWN
                and r is not None and not r.left):
            yield acts[EarlyRestart][i], self._with(
                s, clients=self._set(s.clients, i, c.but(proc=Proc.UP, epoch=0, owned=0, assigned=0)), spend=True)

    # -- the coordinator's answers, for the properties and the tests ---------------------------------
    def heartbeat_answer(self, s: KIP848State, i: int) -> str:
        """The error code (or OK) the coordinator answers client ``i``'s heartbeat in state ``s``."""
        code: str = self.handle(s, i)[1][0]
        return code

    def commit_answers(self, s: KIP848State) -> Iterator[tuple[int, str]]:
        """Each running client's OffsetCommit, now and in flight: (client, answer)."""
        for i, c in enumerate(s.clients):
            if c.proc == Proc.UP and c.owned and c.epoch > 0:
                yield i, self.commit_answer(s, i, c.epoch, c.owned)
            if c.commit is not None:
                yield i, self.commit_answer(s, i, *c.commit)
