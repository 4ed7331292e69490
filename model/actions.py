"""Actions: one frozen dataclass per protocol step, named after the protocol's own steps.

An action names *who* does *what*; whether it is enabled in a state and which state follows are
decided by the protocol variant (``enabled`` / ``step``). Each action class says whether it is a
*protocol step* — weakly fair: if it stays enabled it is eventually taken — or a *perturbation*
(a fault or an operator's act: never forced to happen, and bounded by the perturbation budget).
Weak fairness is per action *instance* (the class and the member), as TLC's ``WF_vars`` on each
parameterised action.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class Action:
    member: int = -1
    fair: ClassVar[bool] = True  # protocol step (weakly fair) or perturbation (unfair, budgeted)
    fault: ClassVar[str] = ""  # for perturbations: the --faults name that enables it
    verb: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return type(self).__name__

    def describe(self, who: str) -> str:
        return f"{who} {self.verb}" if self.member >= 0 else self.verb

    def __repr__(self) -> str:
        return f"{self.name}({self.member})" if self.member >= 0 else f"{self.name}()"


# -- client steps (the consumer) -----------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class SendJoinGroup(Action):
    verb = "prepares to join (onJoinPrepare) and sends JoinGroup"


@dataclass(frozen=True, slots=True, repr=False)
class ReceiveJoinResponse(Action):
    # (a timeline names the leader from the state: groupspec/checker/timeline.py; these words name nobody)
    verb = "receives its JoinGroup response and sends SyncGroup (the leader's carries the assignment)"


@dataclass(frozen=True, slots=True, repr=False)
class ReceiveSyncResponse(Action):
    verb = "receives its SyncGroup response and applies the assignment (onJoinComplete)"


@dataclass(frozen=True, slots=True, repr=False)
class ReceiveError(Action):
    verb = "receives an error for its parked request"


@dataclass(frozen=True, slots=True, repr=False)
class Heartbeat(Action):
    verb = "heartbeats and learns something from the answer"


@dataclass(frozen=True, slots=True, repr=False)
class Resume(Action):
    verb = "wakes up from its pause"


@dataclass(frozen=True, slots=True, repr=False)
class GhostFenced(Action):
    verb = "(the replaced old process) is answered FENCED_INSTANCE_ID and stops"


@dataclass(frozen=True, slots=True, repr=False)
class NoticeMetadata(Action):
    verb = ("(the leader; with Connect, any worker) sees partitions that nobody is assigned (a topic grew, or a "
            "delay ended) and rejoins")


# -- coordinator steps (timers) ------------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class SessionExpired(Action):
    verb = "is removed by the coordinator: its process is gone or silent past its timeout"


@dataclass(frozen=True, slots=True, repr=False)
class RebalanceTimeout(Action):
    verb = "the rebalance timeout fires: members that did not rejoin are dropped (static ones kept)"


@dataclass(frozen=True, slots=True, repr=False)
class InitialDelayExpired(Action):
    verb = ("group.initial.rebalance.delay ends (KIP-134): the first join phase of the formed group completes "
            "with every member that joined meanwhile")


@dataclass(frozen=True, slots=True, repr=False)
class PendingExpired(Action):
    verb = "(its pending member id, KIP-394) is dropped: the process never joined again with it"


@dataclass(frozen=True, slots=True, repr=False)
class PendingSyncExpired(Action):
    verb = ("the pending-sync timer fires for an id no SyncGroup can clear (a replaced static member's): "
            "the group rebalances, removing nobody")


@dataclass(frozen=True, slots=True, repr=False)
class DelayExpired(Action):
    verb = "scheduled.rebalance.max.delay expires: held partitions are released for reassignment"


# -- perturbations -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class Start(Action):
    fair = False
    fault = "join"
    verb = "starts (a new consumer process)"


@dataclass(frozen=True, slots=True, repr=False)
class LeaveGroup(Action):
    fair = False
    fault = "leave"
    verb = "closes: revokes its partitions and sends LeaveGroup"


@dataclass(frozen=True, slots=True, repr=False)
class Crash(Action):
    fair = False
    fault = "crash"
    verb = "crashes"


@dataclass(frozen=True, slots=True, repr=False)
class ExpireLive(Action):
    fair = False
    fault = "timeout"
    verb = "is expired by the coordinator although it is alive (session timeout)"


@dataclass(frozen=True, slots=True, repr=False)
class RebalanceTimeoutOvertakes(Action):
    fair = False
    fault = "timeout"
    verb = ("the rebalance timeout fires while a running member has not rejoined yet (it is slower than "
            "max.poll.interval.ms): every member that did not rejoin is dropped (static ones kept, a generation "
            "behind)")


@dataclass(frozen=True, slots=True, repr=False)
class Pause(Action):
    fair = False
    fault = "zombie"
    verb = "pauses (a long GC pause) and stops heartbeating"


@dataclass(frozen=True, slots=True, repr=False)
class SyncTimeout(Action):
    fair = False
    fault = "sync-timeout"
    verb = ("the pending-sync timer fires (a member was slow to send SyncGroup): every member that has not "
            "synced is removed and the group rebalances")


@dataclass(frozen=True, slots=True, repr=False)
class PollTimeoutLeave(Action):
    fair = False
    fault = "poll-timeout"  # connect-keep-work: with ``leave`` (model/connect_delayed.py)
    verb = ("misses its poll timeout (max.poll.interval.ms): its heartbeat thread sends LeaveGroup (a dynamic "
            "member) and resets its member id; the process runs on and rejoins at its next poll")


@dataclass(frozen=True, slots=True, repr=False)
class ChangeSubscription(Action):
    fair = False
    fault = "subscription"
    verb = "changes its subscription"


@dataclass(frozen=True, slots=True, repr=False)
class AddPartition(Action):
    fair = False
    fault = "partitions"
    verb = "a topic grows by one partition"
