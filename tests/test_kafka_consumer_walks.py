"""The KIP-848 model's walks on Kafka's coordinator (groupspec/specmut/kafka_consumer_walks.py): they pass on the
unchanged model, a one-line mutant of model/consumer.py dies by them, and they are a registered killer."""
from __future__ import annotations

from pathlib import Path

import pytest

from groupspec.specmut.kafka_consumer_walks import ABSTRACTIONS, CONSUMER_WALK_JOBS, check, run_walks
from groupspec.specmut.kafka_walks import Divergence

SEED = 20261128


@pytest.mark.parametrize("job", CONSUMER_WALK_JOBS, ids=lambda j: f"{j[0]}-{j[1]}-{j[2]}m{j[3]}p{j[4]}t")
def test_the_walks_agree_with_kafka_on_the_unchanged_model(job):
    stats: dict[str, int] = {}
    print(f"seed {SEED} (replay: run_walks(*{job!r}, seed={SEED}))")
    try:
        assert run_walks(*job, seed=SEED, stats=stats) is None
    finally:
        print(stats)
    # the walks go somewhere: most of their steps are taken, not stepped around
    assert stats["steps"] >= job[7] * 5, stats
    assert {k for k in set(stats) - {"steps", "walks"} if not k.startswith(("checked ", "seen "))} <= set(ABSTRACTIONS), \
        stats
    if "lose-answer" in job[5]:
        # requests in flight: the client's epoch differs from its member's, and Kafka's answers to that are compared
        assert stats.get("seen heartbeat with the previous epoch", 0) > 0, stats
        assert stats.get("checked previous-epoch-on-reconcile", 0) > 0, stats
    if "late-commit" in job[5]:
        assert stats.get("seen commit STALE_MEMBER_EPOCH", 0) + stats.get("seen commit UNKNOWN_MEMBER_ID", 0) > 0, stats
    if job[5] == "join,lose-answer":
        assert stats.get("seen heartbeat FENCED_MEMBER_EPOCH", 0) > 0, stats
    if job[0] == "consumer" and "subscription" in job[5] and "lose-answer" in job[5]:
        assert stats.get("checked rejoin-subscription", 0) > 0, stats


def _mutant(name: str):
    from groupspec.specmut.operators import generate

    return next(m for m in generate() if m.name == name)


@pytest.mark.parametrize("name", [
    # `if r.topics != c.topics` -> `if True`: a join with an unchanged subscription bumps the group epoch twice
    "consumer.Consumer.handle:drop-guard#2",
    # `if owned is None or owned & r.revoking` -> `if True`: a revocation is never acknowledged
    "consumer.Consumer.reconcile:drop-guard#2",
])
def test_a_planted_one_line_model_mutant_is_caught(name):
    from groupspec.specmut.loader import applied

    m = _mutant(name)
    print(f"{name}: {m.diff}")
    with applied(m):
        failures = [check(job) for job in CONSUMER_WALK_JOBS[:1]]
        if failures[0] is None:
            failures = [check(job) for job in CONSUMER_WALK_JOBS[1:]]
    why = next((f for f in failures if f), None)
    assert why is not None and why.startswith("kafka:consumer"), failures
    print(why[:300])


def test_a_monkeypatched_model_rule_is_caught(monkeypatch):
    """A rule switched off in the model class (partitions given before their previous owner released them)."""
    from groupspec.model.consumer import Consumer

    monkeypatch.setattr(Consumer, "wait_for_release", False)
    with pytest.raises(Divergence, match="kafka:consumer"):
        run_walks(*CONSUMER_WALK_JOBS[0][:7], walks=40, steps=40, seed=SEED)


def _job(variant: str, faults_with: str):
    return next(j for j in CONSUMER_WALK_JOBS if j[0] == variant and faults_with in j[5])


def test_the_old_static_leave_rule_is_caught(monkeypatch):
    """Before the fix the model kept a static member's partitions pending revocation after its leave with epoch -2
    (their partition epoch set until its session expired); Kafka 4.3.1 clears them at once
    (GroupMetadataManager.consumerGroupStaticMemberGroupLeave). The old rule, put back, is caught by the walks."""
    from groupspec.model import actions as A
    from groupspec.model.consumer import Consumer

    new = Consumer.successors

    def old_rule(self, s):  # noqa: ANN001, ANN202
        for a, t in new(self, s):
            if isinstance(a, A.LeaveGroup) and self.static_members:
                r = s.group.members[a.member]
                members = list(t.group.members)
                members[a.member] = members[a.member].but(revoking=r.revoking, since=r.since)
                t = t.but(group=t.group.but(members=tuple(members)))
            yield a, t

    monkeypatch.setattr(Consumer, "successors", old_rule)
    # (the 3 x 3 one-topic static job met it with this seed until issue 30's k848d pass; since a joining client may
    # pause too its walks take other paths and do not; the two-topic static job's walk 40 does)
    job = _job("consumer-static", "subscription")
    print(f"seed {SEED}: run_walks(*{job!r})")
    with pytest.raises(Divergence, match=r"LeaveGroup\(\d\): member m\d .*revoking") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:400])


def test_the_old_subscription_rule_is_caught(monkeypatch):
    """Before the fix a heartbeat changing the subscription of a member still owning partitions pending revocation
    kept the dropped topics' partitions assigned; Kafka 4.3.1 moves them to pending revocation at once
    (CurrentAssignmentBuilder.build with withHasSubscriptionChanged). The old rule, put back, is caught."""
    from groupspec.model.consumer import Consumer

    new = Consumer.reconcile
    monkeypatch.setattr(Consumer, "reconcile", lambda self, g, i, r, owned, changed=False: new(self, g, i, r, owned))
    job = next(j for j in CONSUMER_WALK_JOBS if j[5] == "join,subscription")
    print(f"seed {SEED}: run_walks(*{job!r})")
    with pytest.raises(Divergence, match=r"step \d+ ConsumerGroupHeartbeat\(\d\): ") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:400])


def test_the_old_previous_epoch_rule_is_caught(monkeypatch):
    """Before the fix the model moved a member's previous epoch only when its epoch moved; Kafka 4.3.1 sets it to
    the member's epoch at every reconciliation (ConsumerGroupMember.Builder.updateMemberEpoch, called by each
    outcome of CurrentAssignmentBuilder.computeNextAssignment, UNREVOKED_PARTITIONS at the member's own epoch and
    UNRELEASED_PARTITIONS again at the target epoch included), so a client two lost answers behind is fenced where
    the old model accepted it. The old rule, put back, is caught by the walks with lost answers."""
    from groupspec.model.consumer import Consumer

    new = Consumer._next_assignment

    def old_rule(self, g, i, r):  # noqa: ANN001, ANN202
        r2 = new(self, g, i, r)
        return r2.but(previous_epoch=r.previous_epoch if r2.epoch == r.epoch else r.epoch)

    monkeypatch.setattr(Consumer, "_next_assignment", old_rule)
    from groupspec.specmut import kafka_consumer_walks as K

    monkeypatch.setattr(K._Walk, "compare_previous", False)  # by the answers alone (the state shows it too: below)
    job = next(j for j in CONSUMER_WALK_JOBS if j[5] == "join,lose-answer")
    print(f"seed {SEED}: run_walks(*{job!r})")
    with pytest.raises(Divergence, match=r"answer to m\d: model \('OK', .*Kafka \('FENCED_MEMBER_EPOCH',\)") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:600])


def test_the_old_epoch_zero_rejoin_rule_is_caught(monkeypatch):
    """Before the fix a member the coordinator kept (fenced, or its join answer lost) that heartbeats with epoch 0
    and another subscription kept its old one until its next heartbeat; Kafka 4.3.1 updates the member from that
    request as from any other (GroupMetadataManager.consumerGroupHeartbeat: getOrMaybeSubscribeDynamicConsumerGroupMember
    skips the epoch check for epoch 0, then maybeUpdateSubscribedTopicNames and hasMemberSubscriptionChanged bump
    the group epoch). The old rule, put back, is caught by the walks with lost answers and subscription changes."""
    from groupspec.model.consumer import Consumer

    new = Consumer.handle

    def old_rule(self, s, i):  # noqa: ANN001, ANN202
        c, r = s.clients[i], s.group.members[i]
        if c.epoch == 0 and r is not None and not r.left and not self.static_members:
            s = s.but(clients=self._set(s.clients, i, c.but(topics=r.topics)))
        return new(self, s, i)

    monkeypatch.setattr(Consumer, "handle", old_rule)
    job = next(j for j in CONSUMER_WALK_JOBS if j[0] == "consumer" and "subscription" in j[5] and "lose-answer" in j[5])
    print(f"seed {SEED}: run_walks(*{job!r})")
    with pytest.raises(Divergence, match=r"(Heartbeat|HeartbeatAnswer)\(\d\): answer to m\d") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:600])


def test_the_old_previous_epoch_rule_shows_in_the_group_state_without_faults_in_flight(monkeypatch):
    """The walks compare each member's previous epoch with Kafka's (the oracle's state line carries it): the old rule
    differs there at the first reconciliation that keeps the epoch, lost answers or not."""
    from groupspec.model.consumer import Consumer

    new = Consumer._next_assignment

    def old_rule(self, g, i, r):  # noqa: ANN001, ANN202
        r2 = new(self, g, i, r)
        return r2.but(previous_epoch=r.previous_epoch if r2.epoch == r.epoch else r.epoch)

    monkeypatch.setattr(Consumer, "_next_assignment", old_rule)
    job = CONSUMER_WALK_JOBS[0]
    assert "lose-answer" not in job[5]
    with pytest.raises(Divergence, match=r"member m\d's previous epoch: model") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:400])


def test_a_static_takeover_is_the_one_previous_epoch_not_compared(monkeypatch):
    """static-takeover-previous-epoch: Kafka 4.3.1 gives a static member's new process epoch 0 and previous epoch 0
    (getOrMaybeSubscribeStaticConsumerGroupMember) before reconciling it; the model keeps the departed member's. The
    walks compare that member's previous epoch again once its epoch moves; not excluding it, they diverge exactly
    there (so the exclusion is needed, and no wider than that)."""
    from groupspec.specmut import kafka_consumer_walks as K

    class Never(dict):  # noqa: D401 - a took_over table that records nothing
        def __setitem__(self, k, v):  # noqa: ANN001, ANN204
            pass

    init = K._Walk.__init__

    def no_exclusion(self, *a, **kw):  # noqa: ANN002, ANN003, ANN202
        init(self, *a, **kw)
        self.took_over = Never()

    monkeypatch.setattr(K._Walk, "__init__", no_exclusion)
    job = next(j for j in CONSUMER_WALK_JOBS if j[0] == "consumer-static" and j[5] == "join,leave,crash,timeout,zombie")
    with pytest.raises(Divergence, match=r"member m(\d)'s previous epoch: model \d+ \(Kafka's \d+\), Kafka 0; path .*LeaveGroup\(\1\).*Start\(\1\)") as e:
        run_walks(*job, seed=SEED)
    print(str(e.value)[:400])


def test_the_walks_are_a_registered_killer_of_consumer_mutants():
    """Registered, run by the campaign's own dispatch: silent on the unchanged model, a failure on the mutant."""
    from groupspec.specmut.campaign import relevant
    from groupspec.specmut.killers import killers, run_killer
    from groupspec.specmut.loader import applied

    m = _mutant("consumer.Consumer.handle:drop-guard#2")
    ks = {k.name: k for k in relevant(m, killers())}
    assert "kafka:consumer-static·uniform 3m×3p 300×40" in ks
    k = ks["kafka:consumer·uniform 3m×3p 300×40"]
    with applied(None):
        assert run_killer(k) == {"failure": None}
    with applied(m):
        got = run_killer(k)["failure"]
    assert got is not None and got.startswith("kafka:consumer·uniform"), got


def test_every_walk_job_is_a_killer_of_its_own_name():
    from groupspec.specmut.killers import killers

    names = [k.name for k in killers() if k.name.startswith("kafka:consumer")]
    assert len(names) == len(set(names)) == len(CONSUMER_WALK_JOBS), names


def test_every_abstraction_stepped_around_is_documented():
    docs = (Path(__file__).resolve().parents[1] / "docs" / "oracle.md").read_text()
    for name in ABSTRACTIONS:
        assert f"`{name}`" in docs, name
