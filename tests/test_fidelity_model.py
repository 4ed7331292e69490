"""Issue 15 in the model: static-cooperative, and the static rules read against Kafka.

* A static member restarted with a narrower subscription applies nothing of a stored assignment
  outside it and rejoins (it used to deadlock the model);
* a static member whose instance expired is answered UNKNOWN_MEMBER_ID on JoinGroup and rejoins as a
  new member (it used to be killed as if fenced);
* static-cooperative's double ownership is Kafka's (reference scenario ``static-member-left-behind``):
  pinned here as the model's counterexample, with its preconditions.
Each fix is shown to matter: the old rule, restored in a subclass, fails the same check.
"""
from __future__ import annotations

from groupspec.checker.explorer import Explorer
from groupspec.model import Config, make
from groupspec.model.core import GroupStatus as GS, Id, MemberStatus as MS, Proc
from groupspec.model.static import Static

DEADLOCK = Config(members=2, partitions=3, topics=2, faults=frozenset({"subscription", "crash", "join"}), budget=3)


class _OldStaticReplace(Static):
    """The rule before issue 15: the stored assignment applied whatever the subscription."""

    name = "static-old-replace"

    def _static_replace(self, s, clients, i, c, meta):
        t = super()._static_replace(s, clients, i, c, meta)
        c2, r = t.clients[i], t.group.records[i]
        if s.group.status == GS.STABLE and c2.rejoin and r.assignment:
            c2 = c2.but(owned=r.assignment, rejoin=False)
            t = t.but(clients=t.clients[:i] + (c2,) + t.clients[i + 1:])
        return t


class _OldStaleJoin(Static):
    """The rule before issue 15: a JoinGroup with a stale id kills a static member even when its
    instance has expired."""

    name = "static-old-stale-join"

    def _join(self, s, i):
        c = s.clients[i]
        if c.id == Id.STALE and s.group.records[i] is None and c.proc == Proc.UP:
            from groupspec.model.core import Client

            return self._with(s, clients=self._set(s.clients, i, Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)))
        return super()._join(s, i)


def test_narrower_subscription_restart_converges() -> None:
    res = Explorer(make("static", DEADLOCK)).run()
    assert res.complete
    assert res.verdicts["convergence"].held is True, res.verdicts["convergence"].explanation
    assert all(v.held is not False for v in res.verdicts.values())


def test_old_static_replace_deadlocks() -> None:
    """The issue's counterexample (deadlock in 7 steps), with the old rule restored."""
    res = Explorer(_OldStaticReplace(DEADLOCK)).run()
    v = res.verdicts["convergence"]
    assert v.held is False and "deadlock" in v.explanation
    assert len(v.trace) - 1 == 7


def _walk_to_expired_stale(proto):
    """A reachable state where a static member's process holds a stale id and its record is gone."""
    from collections import deque

    seen = set()
    q = deque(proto.init_states())
    while q:
        s = q.popleft()
        for i, c in enumerate(s.clients):
            if (c.proc == Proc.UP and c.id == Id.STALE and s.group.records[i] is None and c.inbox is None
                    and c.status != MS.PREPARING_REBALANCE and (c.status == MS.UNJOINED or c.rejoin)):
                return s, i
        for _a, t in proto.successors(s):
            k = proto.exact_key(t)
            if k not in seen:
                seen.add(k)
                q.append(t)
    raise AssertionError("no such state")


def test_expired_static_instance_gets_unknown_member_id_and_rejoins() -> None:
    cfg = Config(members=2, partitions=2, faults=frozenset({"timeout", "join", "crash"}), budget=2)
    proto = make("static", cfg)
    s, i = _walk_to_expired_stale(proto)
    from groupspec.model import actions as A

    t = proto.step(s, A.SendJoinGroup(i))
    c = t.clients[i]
    assert c.proc == Proc.UP and c.id == Id.NONE and c.status == MS.UNJOINED and c.owned == 0
    # it then joins as a new static member
    u = proto.step(t, A.SendJoinGroup(i))
    assert u.group.records[i] is not None and u.clients[i].id == Id.CURRENT
    old = _OldStaleJoin(cfg)
    assert old.step(s, A.SendJoinGroup(i)).clients[i].proc == Proc.DOWN


def test_static_cooperative_slow_member_and_restart_findings() -> None:
    """Without pauses too: a slow static member (alive, not rejoined when the rebalance timeout fires)
    is left behind with the same overlap, and a static restart between a cooperative round's SyncGroup
    and its answer leaves the withheld partitions with nobody (deadlock). Both are Kafka's: reference
    scenarios static-member-left-behind and static-restart-in-cooperative-round."""
    cfg = Config(members=3, partitions=3, faults=frozenset({"crash", "timeout", "join"}), budget=2)
    res = Explorer(make("static-cooperative", cfg)).run()
    assert res.verdicts["exclusive_ownership"].held is False
    conv = res.verdicts["convergence"]
    assert conv.held is False and "deadlock" in conv.explanation
    names = [type(st.action).__name__ for st in conv.trace[1:]]
    assert "Crash" in names and "Start" in names
    last = conv.trace[-1].state
    assert last.group.status == GS.STABLE and not any(c.rejoin for c in last.clients)
    owned = 0
    for c in last.clients:
        owned |= c.owned
    assert owned != (1 << cfg.partitions) - 1  # a withheld partition nobody owns, and nobody will rejoin
    assert res.verdicts["generation_monotonic"].held is True


def test_static_cooperative_without_restarts_or_timeouts_holds() -> None:
    cfg = Config(members=2, partitions=3, topics=2, faults=frozenset({"join", "subscription", "partitions"}), budget=2)
    res = Explorer(make("static-cooperative", cfg)).run()
    assert res.ok, {k: v.explanation for k, v in res.verdicts.items() if v.held is False}


def test_static_cooperative_left_behind_double_ownership_is_found() -> None:
    """The model's counterexample: a paused static member kept by the rebalance timeout rejoins at its
    old generation owning a partition the generation it missed gave to another member. The reference
    reproduces it (tests/test_fidelity_scenarios.py), so it stays: Kafka does not prevent it."""
    cfg = Config(members=2, partitions=3, faults=frozenset({"zombie"}), budget=1)
    res = Explorer(make("static-cooperative", cfg)).run()
    v = res.verdicts["exclusive_ownership"]
    assert v.held is False
    names = [type(st.action).__name__ for st in v.trace[1:]]
    assert "Pause" in names and "RebalanceTimeout" in names
    assert names.index("Pause") < names.index("RebalanceTimeout")
    last = v.trace[-1].state
    # the stale owner is a member whose generation is at least two behind the group's
    stale = [c for c in last.clients if c.owned and c.generation != -1 and c.generation <= last.group.generation - 2]
    assert stale
    # the plain static (eager) variant on the same instance has no such overlap: onJoinPrepare revokes
    assert Explorer(make("static", cfg)).run().verdicts["exclusive_ownership"].held is True


def test_verify_kafka_too_rows_need_exactly_the_named_violations() -> None:
    from dataclasses import replace as dc_replace

    from groupspec.verify import MODEL_JOBS, run_model_job

    job = next(j for j in MODEL_JOBS if j.protocol == "static-cooperative" and j.faults == "crash,timeout,join")
    row = run_model_job(job)
    assert row.passed, row.detail
    assert set(job.kafka_too.split(",")) == {"exclusive_ownership", "commit_fencing", "convergence"}
    # a row that names fewer (or other) properties than the ones violated fails
    assert not run_model_job(dc_replace(job, kafka_too="exclusive_ownership,commit_fencing")).passed


def _rows(failing: set[str]) -> list[dict]:
    labels = ["Join preserves coop_rep_assign", "Join preserves coop_rep_unique", "Install preserves owned_assigned",
              "init implies coop_rep_unique"]
    return [{"label": lb, "kind": "init" if lb.startswith("init") else "consecution", "clause": lb.split()[-1],
             "action": lb.split()[0], "ok": lb not in failing, "verdict": "FAILED" if lb in failing else "proved",
             "seconds": 0.01, "cti_text": "cti" if lb in failing else ""} for lb in labels]


def test_prove_kafka_too_obligations_must_fail_and_only_they() -> None:
    from groupspec.proofs.report import KAFKA_TOO, _epr_checks

    expected = set(KAFKA_TOO["static-cooperative"])
    ok = _epr_checks("static-cooperative", _rows(expected))
    assert all(c.ok for c in ok) and any(c.verdict == "not inductive" for c in ok)
    assert not any(c.verdict == "proved" and c.family == "unbounded safety" and "init" not in c.name for c in ok)
    # one of them proved: the row is not ok
    assert not all(c.ok for c in _epr_checks("static-cooperative", _rows({"Join preserves coop_rep_assign"})))
    # another obligation failing as well: not ok
    assert not all(c.ok for c in _epr_checks("static-cooperative", _rows(expected | {"Install preserves owned_assigned"})))


def test_verify_runs_every_correct_variant_with_every_fault_that_applies() -> None:
    from groupspec.model import CORRECT
    from groupspec.verify import EVERY_FAULT_JOBS, MODEL_JOBS, applicable_faults

    correct = [j for j in MODEL_JOBS if not j.expect]
    for name in CORRECT:
        want = applicable_faults(name)
        # one search with all of them together (not only each somewhere)
        assert any(j.protocol == name and set(j.faults.split(",")) == want for j in EVERY_FAULT_JOBS), name
        assert any(j.protocol == name for j in correct), name
    # the static variants get subscription, timeout and leave (topics > 1 for subscription to act)
    for name in ("static", "static-cooperative"):
        jobs = [j for j in correct if j.protocol == name and {"subscription", "timeout", "leave"} <= set(j.faults.split(","))]
        assert jobs and all(j.topics > 1 for j in jobs), name
    # the faults ZooKeeper's and Connect's models leave out are really refused or meaningless there
    assert applicable_faults("zookeeper") < applicable_faults("eager")
    assert "subscription" not in applicable_faults("connect-delayed")



def test_verify_lists_static_cooperative_at_four_members_by_six_partitions() -> None:
    from groupspec.verify import MODEL_JOBS

    from groupspec.verify import run_model_job

    jobs = [j for j in MODEL_JOBS if j.protocol == "static-cooperative" and (j.members, j.partitions) == (4, 6)]
    assert jobs
    row = run_model_job(jobs[0])
    assert row.passed and row.states > 100_000, (row.states, row.detail)
    # and with restarts (the crash, timeout, zombie), as Kafka: a static member left behind owns twice
    crashy = [j for j in jobs if {"crash", "timeout", "zombie"} <= set(j.faults.split(","))]
    assert crashy and crashy[0].kafka_too == "exclusive_ownership,commit_fencing"
    row = run_model_job(crashy[0])
    assert row.passed and row.states > 500_000, (row.states, row.detail)
