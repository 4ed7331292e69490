"""Connect workers that keep their work across a member-id reset (model/connect_delayed.py,
``connect-keep-work``; docs/conformance.md gap 11): exclusivity fails as in Kafka, and what Kafka does
guarantee — duplicated work does not outlive the round that sees it — holds, and catches a mutant. A worker
that leaves at its poll timeout keeps running its work and reports it when it rejoins (``PollTimeoutLeave``);
one that closes (``LeaveGroup``) stops it."""
from __future__ import annotations

from dataclasses import replace

from groupspec.checker.engines import check
from groupspec.checker.explorer import Explorer
from groupspec.model import Config, make
from groupspec.model.connect_delayed import ConnectKeepWork, PollTimeoutLeave, duplicate_work_settles
from groupspec.model.core import Id, MemberStatus as MS, Proc


def _run(cls, faults, budget=1):  # type: ignore[no-untyped-def]
    return Explorer(cls(Config(members=2, partitions=2, faults=frozenset(faults), budget=budget))).run()


def test_two_workers_run_one_task_after_a_reset_as_in_kafka() -> None:
    proto, res = check("connect-keep-work", members=2, partitions=2, faults=frozenset({"timeout"}), budget=1)
    v = res.verdicts["exclusive_ownership"]
    assert v.held is False
    names = [st.action.name for st in v.trace[1:]]
    assert "ExpireLive" in names and "Heartbeat" in names  # expired, reset, kept its work
    s = v.trace[0].state
    for st in v.trace[1:]:
        s = proto.step(s, st.action)
        assert s == st.state
    assert res.verdicts["duplicate_work_settles"].held is True
    assert res.verdicts["convergence"].held is True
    assert res.engine == "python"  # the compiled kernel does not cover it


def test_without_keeping_work_there_is_no_duplicate() -> None:
    res = _run(make("connect-delayed", Config(members=2, partitions=2)).__class__, {"timeout"})
    assert res.verdicts["exclusive_ownership"].held is True


def test_a_worker_keeps_its_work_at_a_reset() -> None:
    proto = make("connect-keep-work", Config(members=1, partitions=1, faults=frozenset({"timeout"}), budget=1))
    s = proto.init_states()[0]
    path = ["SendJoinGroup", "ReceiveJoinResponse", "ReceiveSyncResponse", "ExpireLive", "Heartbeat"]
    for name in path:
        s = next(t for a, t in proto.successors(s) if a.name == name)
    c = s.clients[0]
    assert c.status == MS.UNJOINED and c.owned == 1
    s = next(t for a, t in proto.successors(s) if a.name == "SendJoinGroup")
    assert s.group.records[0].owned == 1  # reported in its JoinGroup


class KeepDuplicates(ConnectKeepWork):
    """Mutant: onJoinComplete adds the assignment to what the worker runs instead of revoking the rest."""

    name = "connect-keep-duplicates"

    def _receive_sync(self, s, i):  # type: ignore[no-untyped-def]
        kept = s.clients[i].owned
        t = super()._receive_sync(s, i)
        c = t.clients[i]
        return self._with(t, clients=self._set(t.clients, i, replace(c, owned=c.owned | kept)))


def test_duplicate_work_settles_catches_a_worker_that_never_revokes() -> None:
    res = _run(KeepDuplicates, {"timeout"})
    assert res.verdicts["duplicate_work_settles"].held is False
    assert "outlived the round" in res.verdicts["duplicate_work_settles"].explanation


def test_duplicate_work_settles_on_a_state() -> None:
    proto = make("connect-keep-work", Config(members=2, partitions=2))
    s = proto.init_states()[0]
    while not proto.converged(s):
        s = next(t for _a, t in proto.successors(s))
    assert duplicate_work_settles(proto, s) is None
    c0, c1 = s.clients
    both = replace(s, clients=(replace(c0, owned=c0.owned | c1.owned), c1))
    assert duplicate_work_settles(proto, both) is not None
    mid = replace(both, clients=(replace(both.clients[0], status=MS.PREPARING_REBALANCE), c1))
    assert duplicate_work_settles(proto, mid) is None  # one of them is still in its round


# -- the poll timeout: LeaveGroup and a reset, the work kept (PollTimeoutLeave); a close still drops it --
def _stable_worker(faults=("leave",)):  # type: ignore[no-untyped-def]
    proto = make("connect-keep-work", Config(members=1, partitions=1, faults=frozenset(faults), budget=1))
    s = proto.init_states()[0]
    for name in ["SendJoinGroup", "ReceiveJoinResponse", "ReceiveSyncResponse"]:
        s = next(t for a, t in proto.successors(s) if a.name == name)
    return proto, s


def test_a_worker_that_misses_its_poll_timeout_leaves_but_keeps_its_work() -> None:
    proto, s = _stable_worker()
    t = next(t for a, t in proto.successors(s) if a.name == "PollTimeoutLeave")
    c = t.clients[0]
    assert t.group.records[0] is None and t.budget == s.budget - 1  # it left (a perturbation)
    assert c.proc == Proc.UP and c.id == Id.NONE and c.status == MS.UNJOINED and c.owned == 1  # reset, still running it
    t = next(u for a, u in proto.successors(t) if a.name == "SendJoinGroup")
    assert t.group.records[0].owned == 1  # and it reports it when it rejoins
    closed = next(u for a, u in proto.successors(s) if a.name == "LeaveGroup")
    assert closed.clients[0].proc == Proc.DOWN and closed.clients[0].owned == 0  # a close stops the work


def test_the_poll_timeout_holds_the_departed_workers_allocation() -> None:
    proto = make("connect-keep-work", Config(members=2, partitions=2, faults=frozenset({"leave"}), budget=1))
    s = proto.init_states()[0]
    while not proto.converged(s):
        s = next(t for a, t in proto.successors(s) if a.fair)
    i = next(k for k, r in enumerate(s.group.records) if r is not None and r.assignment)
    t = proto.step(s, PollTimeoutLeave(i))
    assert t.group.held == s.group.records[i].assignment and t.clients[i].owned == s.clients[i].owned


def test_only_connect_keep_work_has_the_step() -> None:
    for name in ("connect-delayed", "cooperative"):
        proto = make(name, Config(members=1, partitions=1, faults=frozenset({"leave"}), budget=1))
        seen, todo = set(), proto.init_states()
        while todo:
            s = todo.pop()
            for a, t in proto.successors(s):
                assert a.name != "PollTimeoutLeave"
                if t not in seen:
                    seen.add(t)
                    todo.append(t)


def test_a_poll_timeout_alone_lets_two_workers_run_one_task_and_the_duplicate_settles() -> None:
    """With the leave fault alone (no session expiry): the worker that left at its poll timeout still runs
    its task while the leader hands it out after the delay; the duplicate does not outlive the round."""
    proto, res = check("connect-keep-work", members=2, partitions=2, faults=frozenset({"leave"}), budget=1)
    v = res.verdicts["exclusive_ownership"]
    assert v.held is False and "PollTimeoutLeave" in [st.action.name for st in v.trace[1:]]
    assert res.verdicts["duplicate_work_settles"].held is True and res.verdicts["convergence"].held is True
    closing = _run(make("connect-delayed", Config(members=2, partitions=2)).__class__, {"leave"})
    assert closing.verdicts["exclusive_ownership"].held is True  # a LeaveGroup that closes leaves no duplicate


class DropsWorkOnPollTimeout(ConnectKeepWork):
    """Mutant: the poll-timeout leave drops the work, as a close does."""

    name = "connect-drops-work-on-poll-timeout"

    def _poll_timeout_leave(self, s, i):  # type: ignore[no-untyped-def]
        t = super()._poll_timeout_leave(s, i)
        return self._with(t, clients=self._set(t.clients, i, replace(t.clients[i], owned=0)))


def test_a_model_that_drops_work_on_the_poll_timeout_finds_no_duplicate() -> None:
    """The mutant hides Kafka's duplicate under the leave fault: exclusive_ownership holds there."""
    assert _run(DropsWorkOnPollTimeout, {"leave"}).verdicts["exclusive_ownership"].held is True
    assert _run(ConnectKeepWork, {"leave"}).verdicts["exclusive_ownership"].held is False


def test_a_reset_keeps_the_work_of_a_process_the_harness_shows_paused() -> None:
    """The conformance harness replays ReceiveJoinResponse for a worker it shows paused (it woke into a
    refused SyncGroup, --hypothesis-seed=18 in the sweep profile): the reset keeps the work (it failed with
    the rule that kept it only for a running process)."""
    from groupspec.model.core import Inbox, Reply

    proto, s = _stable_worker()
    c = s.clients[0]
    shown = replace(s, group=replace(s.group, records=(None,)), clients=(replace(
        c, proc=Proc.PAUSED, id=Id.STALE, status=MS.PREPARING_REBALANCE, inbox=Inbox(Reply.JOIN, s.group.generation + 1)),))
    after = proto._receive_join(shown, 0).clients[0]
    assert after.id == Id.NONE and after.status == MS.UNJOINED and after.owned == c.owned == 1
