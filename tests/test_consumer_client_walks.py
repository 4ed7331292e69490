"""The KIP-848 client checks (groupspec/specmut/consumer_client_walks.py): the reference reconciling consumer driven
along the model's paths. They pass on the unchanged model and meet what they are for (fences, lost and late answers,
commits in flight, a fatal UNRELEASED_INSTANCE_ID); the model mutants the campaign left to them die by them; and a
weakened check, or a reference member that does something else, is caught."""
from __future__ import annotations

import pytest

from groupspec.specmut.consumer_client_walks import CONSUMER_CLIENT_WALK_JOBS, SEED, Divergence, check, explore, run_walks


def _run(job: tuple, stats: dict[str, int]) -> None:
    if job[7]:
        run_walks(*job, seed=SEED, stats=stats)
    else:
        explore(*job[:7], stats=stats)


@pytest.mark.parametrize("job", CONSUMER_CLIENT_WALK_JOBS, ids=lambda j: f"{j[0]}-{j[1]}-{j[2]}m{j[3]}p{j[4]}t-{j[7]}")
def test_the_walks_agree_with_the_reference_member_on_the_unchanged_model(job):
    stats: dict[str, int] = {}
    print(f"seed {SEED} (replay: run_walks(*{job!r}) or explore(*{job[:7]!r}))")
    try:
        _run(job, stats)
    finally:
        print(stats)
    assert stats.get("answer OK", 0) > 100 and stats.get("RevokePartitions", 0) > 0, stats
    if "late-commit" in job[5]:
        # commits delivered late, an older epoch among them (KIP-1251), compared with the reference coordinator's rule
        assert stats.get("commit OK older epoch", 0) > 0, stats
    if "late-commit" in job[5] and "timeout" in job[5]:
        assert stats.get("commit UNKNOWN_MEMBER_ID", 0) + stats.get("commit STALE_MEMBER_EPOCH older epoch", 0) > 0, stats
    if "lose-answer" in job[5] and job[5].startswith("join,lose"):
        assert stats.get("answer FENCED_MEMBER_EPOCH", 0) > 0, stats
    if "early-restart" in job[5]:
        assert stats.get("answer UNRELEASED_INSTANCE_ID", 0) > 0, stats  # fatal for both


def _mutant(name: str):  # noqa: ANN202
    from groupspec.specmut.operators import generate

    return next(m for m in generate() if m.name == name)


def _first_failure() -> str | None:
    for job in CONSUMER_CLIENT_WALK_JOBS:
        why = check(job)
        if why is not None:
            return why
    return None


KILLED = {
    # a paused (stalled) process sends a heartbeat whose answer is lost or delayed
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#2": "its process is paused",
    # a second OffsetCommit replaces the one in flight: the first vanishes (one connection delivers in order)
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#12": "OffsetCommit in flight",
    # KIP-1251 off: an older epoch's commit refused although its partitions are held since that epoch
    "consumer.Consumer.commit_answer:drop-guard#5": "the reference coordinator's rule",
    # every assignor read as the uniform one: a group asked to assign by range gets another target
    "consumer.Consumer.__init__:drop-guard#1": "Kafka's range assignor",
    # a live member's session expiry also for a slot with no member: the group epoch bumped for nothing
    "consumer.Consumer.successors:drop-guard#11": "bumps the group epoch",
}


@pytest.mark.parametrize("name", sorted(KILLED))
def test_the_mutants_left_to_the_client_checks_die_by_them(name):
    from groupspec.specmut.loader import applied

    m = _mutant(name)
    print(f"{name}: {m.diff}")
    with applied(m):
        why = _first_failure()
    assert why is not None and why.startswith("client:consumer") and KILLED[name] in why, why
    print(why[:400])


def test_a_weakened_check_lets_its_mutant_through(monkeypatch):
    """The check itself mutated (the commits in flight no longer counted, the commit answers no longer compared): the
    mutants above that only those parts kill survive it, so the tests above fail on such a weakening."""
    from groupspec.specmut import consumer_client_walks as W
    from groupspec.specmut.loader import applied

    compare = W._Mirror.compare

    def no_commit_count(self, k, m):  # noqa: ANN001, ANN202
        sl = self.slots[k]
        if sl is not None:
            sl.commits[:-1] = []  # keeps the newest commit in flight only (as the mutant does)
        return compare(self, k, m)

    monkeypatch.setattr(W._Mirror, "compare", no_commit_count)
    monkeypatch.setattr(W._Mirror, "check_commit", lambda self, s, i, epoch, parts: None)
    for name in ("consumer_flight.ConsumerFlight.flight_successors:drop-term#12", "consumer.Consumer.commit_answer:drop-guard#5"):
        with applied(_mutant(name)):
            assert _first_failure() is None, name


def test_a_model_member_that_drops_partitions_without_revoking_them_is_caught(monkeypatch):
    """The model's member broken by hand: on an answer it simply owns what it was given, dropping the partitions it
    should revoke without the revocation (no commit, no onPartitionsRevoked: Kafka's ConsumerMembershipManager revokes
    them first)."""
    from groupspec.model.consumer import Consumer

    apply = Consumer.apply_answer

    def no_revocation(self, c, answer):  # noqa: ANN001, ANN202
        c2 = apply(self, c, answer)
        return c2.but(owned=c2.assigned) if answer[0] == "OK" else c2

    monkeypatch.setattr(Consumer, "apply_answer", no_revocation)
    with pytest.raises(Divergence, match="owns"):
        run_walks(*CONSUMER_CLIENT_WALK_JOBS[0], seed=SEED)


def test_the_model_commit_rule_before_kip_1251_is_caught(monkeypatch):
    """The model's commit validation as it was before Kafka 4.3.1 (``kip_1251`` off: any older epoch is stale)."""
    from groupspec.model.consumer import Consumer

    monkeypatch.setattr(Consumer, "kip_1251", False)
    with pytest.raises(Divergence, match="reference coordinator's rule"):
        explore(*CONSUMER_CLIENT_WALK_JOBS[3][:7])


def test_a_reference_member_that_keeps_its_partitions_when_fenced_is_caught(monkeypatch):
    """The other side broken (the reference client's own fault switch ``keep_on_fence``): the check tells them apart
    too, whichever side misreads Kafka."""
    from groupspec.reference.consumer import ReconcilingConsumer
    from groupspec.specmut import consumer_client_walks as W

    made = W._Mirror.start

    def start(self, i, topics):  # noqa: ANN001, ANN202
        made(self, i, topics)
        self.slots[i].ref.faults = frozenset({"keep_on_fence"})

    monkeypatch.setattr(W._Mirror, "start", start)
    assert ReconcilingConsumer  # (the front door's class is the one mirrored)
    with pytest.raises(Divergence, match="its reference member"):
        explore(*CONSUMER_CLIENT_WALK_JOBS[-1][:7])


def test_the_checks_are_registered_killers():
    from groupspec.specmut.killers import killers, run_killer

    ks = [k for k in killers() if k.kind == "client" and k.variant.startswith("consumer")]
    assert len(ks) == len(CONSUMER_CLIENT_WALK_JOBS)
    assert {k.name for k in ks} >= {"client:consumer·uniform 3m×3p 150×40", "client:consumer·uniform 3m×2p b3 explored"}
    assert run_killer(ks[0]) == {"failure": None}
