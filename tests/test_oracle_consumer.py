"""The Kafka oracle for the next-generation protocol (KIP-848): ConsumerGroupHeartbeat scripts and generated
request sequences answered by the reference's ConsumerGroupCoordinator and by Kafka 4.3.1's, compared after every
step (epochs as the reference counts them: Kafka starts a new group at epoch 1, the reference at 0)."""
from __future__ import annotations

import json
import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from groupspec.oracle import KafkaOracle
from groupspec.oracle.abstractions import explain
from groupspec.oracle.compare import Difference
from groupspec.oracle.consumer import compare_consumer_script
from groupspec.oracle.consumer_machine import make_consumer_machine

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
RECORDED = pathlib.Path(__file__).parent / "serve_data" / "confluent-kafka-consumer-protocol.script.jsonl"


@pytest.fixture(scope="module")
def oracle():
    with KafkaOracle(fetch=True) as o:
        yield o


def test_a_recorded_consumer_protocol_session_agrees_with_kafka(oracle):
    # recorded from a real confluent-kafka consumer group against groupspec serve; its literal epochs are
    # shifted for Kafka (epoch-origin)
    result = compare_consumer_script(RECORDED.read_text(), oracle)
    assert result.compared == result.steps == 26
    assert result.unexplained == [], [d.to_dict() for d in result.unexplained][:2]


def test_the_reference_answers_consumer_heartbeats_as_kafka_does(oracle, tmp_path):
    here = settings() if DEEP else settings(max_examples=20, stateful_step_count=15)
    run_state_machine_as_test(make_consumer_machine(oracle, out_dir=tmp_path),
                              settings=settings(here, deadline=None, suppress_health_check=list(HealthCheck)))


def test_a_planted_consumer_difference_is_caught_and_shrunk(oracle, tmp_path):
    fault = frozenset({"unfenced_commits"})  # the reference accepts commits from anyone
    with pytest.raises(AssertionError, match="differ at step"):
        run_state_machine_as_test(make_consumer_machine(oracle, faults=fault, out_dir=tmp_path),
                                  settings=settings(max_examples=400, stateful_step_count=15, deadline=None,
                                                    derandomize=True, suppress_health_check=list(HealthCheck)))
    script = (tmp_path / "oracle-consumer-difference.jsonl").read_text()
    steps = [json.loads(ln) for ln in script.splitlines() if ln.strip() and not ln.startswith("#")]
    requests = [s for s in steps if "send" in s]
    assert 1 <= len(requests) <= 4 and requests[-1]["send"] == "OffsetCommit", script
    assert compare_consumer_script(script, oracle, faults=fault).unexplained
    assert not compare_consumer_script(script, oracle).unexplained


ORACLE = pathlib.Path(__file__).parent / "oracle"
CONSUMER_SCRIPTS = {  # script under tests/oracle/ -> the abstractions it shows (None: it must show no difference
    # but the re-sent assignment, a fixed finding kept as a regression)
    "consumer_fenced_rejoin": {"consumer-error-fields", "revocation-already-done", "assignment-resent"},
    "consumer_static_left": {"static-left-epoch", "assignment-resent"},
    "consumer_leave_target_later": {"target-computed-later", "assignment-resent"},
    "consumer_assignor_choice": {"assignor-choice", "target-computed-later", "assignment-resent"},
    "consumer_commit_older_epoch": {"assignment-resent"},
    # fixed findings of the model's Kafka walks (docs/oracle.md), kept as regressions of the reference
    "consumer_static_leave_revoking": {"static-left-epoch", "assignment-resent"},
    "consumer_subscription_drops": {"assignment-resent"},
    "consumer_previous_epoch": {"assignment-resent", "consumer-error-fields"},
    "consumer_rejoin_subscription": {"assignment-resent"},
}


@pytest.mark.parametrize("name", sorted(CONSUMER_SCRIPTS))
def test_each_consumer_difference_has_a_script_that_shows_it(name, oracle):
    result = compare_consumer_script((ORACLE / f"{name}.jsonl").read_text(), oracle)
    assert result.unexplained == []
    assert {d.explained_by.split(" (")[0] for d in result.differences} == CONSUMER_SCRIPTS[name]


def test_the_reference_rules_the_model_walks_found_are_kafkas(oracle, monkeypatch):
    """The two rules the model's Kafka walks found (a static leave clears pending revocation; a changed subscription
    drops the unsubscribed topics' partitions at once): each old rule, put back into the reference, is caught by
    its script against Kafka's coordinator, and the fixed reference agrees."""
    from groupspec.reference.consumer import ConsumerGroupCoordinator as C

    leave, sub = ((ORACLE / f"{n}.jsonl").read_text() for n in ("consumer_static_leave_revoking",
                                                                 "consumer_subscription_drops"))
    assert not compare_consumer_script(leave, oracle).unexplained
    assert not compare_consumer_script(sub, oracle).unexplained
    new_hb, new_reconcile = C.heartbeat, C._reconcile

    def old_leave(self, req, now=0):  # noqa: ANN001, ANN202 - the old rule: pending revocation kept after epoch -2
        m = self.members.get(req.member_id)
        kept = set(m.revoking) if m is not None and req.member_epoch == -2 else set()
        out = new_hb(self, req, now)
        if kept:
            self._set_holding(m, m.assigned, kept)
        return out

    with monkeypatch.context() as mp:
        mp.setattr(C, "heartbeat", old_leave)
        assert compare_consumer_script(leave, oracle).unexplained
    with monkeypatch.context() as mp:  # the old rule: a changed subscription changes nothing while revoking
        mp.setattr(C, "_reconcile", lambda self, m, owned, now, changed=False: new_reconcile(self, m, owned, now))
        found = compare_consumer_script(sub, oracle).unexplained
        assert found and found[0].line == 9, [d.to_dict() for d in found]


def test_the_reference_rules_the_in_flight_walks_found_are_kafkas(oracle, monkeypatch):
    """The two rules the model's Kafka walks with lost answers found: the previous epoch becomes the member's epoch at
    every reconciliation (also when the epoch stays), and an epoch-0 heartbeat of a member the coordinator kept updates
    its subscription. Each old rule, put back into the reference, is caught by its script against Kafka's coordinator
    (the first as an unexplained FENCED_MEMBER_EPOCH; the second needs an abstraction its script must not need)."""
    import dataclasses

    from groupspec.reference.consumer import ConsumerGroupCoordinator as C

    prev, rejoin = ((ORACLE / f"{n}.jsonl").read_text() for n in ("consumer_previous_epoch",
                                                                   "consumer_rejoin_subscription"))
    new_next, new_hb = C._next_assignment, C.heartbeat

    def old_prev(self, m, now):  # noqa: ANN001, ANN202 - the old rule: the previous epoch moves only with the epoch
        e, p = m.epoch, m.previous_epoch
        new_next(self, m, now)
        if m.epoch == e:
            m.previous_epoch = p

    def old_rejoin(self, req, now=0):  # noqa: ANN001, ANN202 - the old rule: epoch 0 keeps the member's subscription
        m = self.members.get(req.member_id)
        if req.member_epoch == 0 and m is not None and not m.left and req.subscribed_topic_names is not None:
            req = dataclasses.replace(req, subscribed_topic_names=sorted(m.topics))
        return new_hb(self, req, now)

    fenced_line = len(prev.splitlines())
    with monkeypatch.context() as mp:
        mp.setattr(C, "_next_assignment", old_prev)
        found = compare_consumer_script(prev, oracle).unexplained
        assert found and found[0].line == fenced_line and found[0].kafka[0]["error"] == "FENCED_MEMBER_EPOCH", \
            [d.to_dict() for d in found]
    with monkeypatch.context() as mp:
        mp.setattr(C, "heartbeat", old_rejoin)
        got = {d.explained_by.split(" (")[0] for d in compare_consumer_script(rejoin, oracle).differences
               if d.explained_by}
        assert got != CONSUMER_SCRIPTS["consumer_rejoin_subscription"] and "revocation-already-done" in got, got


def test_a_fenced_member_keeps_its_record_as_in_kafka(oracle):
    # fixed finding (fenced-member-kept): FENCED_MEMBER_EPOCH writes nothing in Kafka 4.3.1, and in the reference
    text = (ORACLE / "consumer_fenced_rejoin.jsonl").read_text()
    result = compare_consumer_script(text, oracle)
    fenced_line = next(n for n, ln in enumerate(text.splitlines(), 1) if '"member_epoch": 7' in ln)
    assert [d.explained_by for d in result.differences if d.line == fenced_line] == ["consumer-error-fields"]
    # and the switch back (the migration's rule) is caught: the member is gone on one side only
    from groupspec.oracle.consumer import ConsumerPair, compare_consumer_step
    from groupspec.oracle.consumer import parse_steps

    cfg, steps = parse_steps(text)
    pair = ConsumerPair(cfg, oracle)
    pair.ref.fenced_keeps_record = False
    unexplained = []
    for n, obj in steps:
        found, stopped = compare_consumer_step(n, obj, *pair.step(obj))
        unexplained += [d for d in found if d.explained_by is None]
        if stopped:
            break
    assert unexplained and unexplained[0].line == fenced_line


def _member(**kw):
    return {"state": "stable", "epoch": 3, "assigned": [["t", 0]], "revoking": [], "target": [["t", 0]], **kw}


def test_the_consumer_matchers_recognise_their_shape_only():
    base = {"at": 5, "group_epoch": 3, "assignment_epoch": 3, "members": {"S": _member()}}
    left = {**base, "members": {"S": _member(epoch=-2)}}
    assert explain(Difference(1, 5, "state", base, left)) == "static-left-epoch"
    assert explain(Difference(1, 5, "state", base, {**base, "members": {"S": _member(epoch=4)}})) is None
    later = {**base, "assignment_epoch": 2, "members": {"S": _member(target=[["t", 1]])}}
    moved = {**base, "members": {"S": _member(target=[["t", 1]])}}
    assert explain(Difference(1, 5, "state", moved, later)) == "target-computed-later"
    assert explain(Difference(1, 5, "state", moved, {**later, "group_epoch": 2})) is None
    hb = {"at": 5, "to": "A", "request": "ConsumerGroupHeartbeat", "error": "NONE", "member": "A", "member_epoch": 3,
          "heartbeat_interval_ms": 5000, "assignment": [["t", 0]]}
    assert explain(Difference(1, 5, "answer", [hb], [{**hb, "assignment": None}])) == "assignment-resent"
    assert explain(Difference(1, 5, "answer", [hb], [{**hb, "assignment": None, "member_epoch": 4}])) is None
    err = {**hb, "error": "UNKNOWN_MEMBER_ID", "assignment": None}
    assert explain(Difference(1, 5, "answer", [err], [{**err, "member": None, "member_epoch": 0,
                                                       "heartbeat_interval_ms": 0}])) == "consumer-error-fields"
    assert explain(Difference(1, 5, "answer", [err], [{**err, "error": "FENCED_MEMBER_EPOCH", "member": None,
                                                       "member_epoch": 0}])) is None


def test_another_coordinators_consumer_transcript_is_judged_by_kafkas(oracle):
    from groupspec.oracle.other import compare_transcript
    from groupspec.reference.sim import run_consumer_script

    text = RECORDED.read_text()
    mine = run_consumer_script(text)
    result = compare_transcript(text, mine, oracle)
    assert result.compared == result.steps == 26 and result.unexplained == []
    bad = [ln.replace('"error": "NONE"', '"error": "FENCED_MEMBER_EPOCH"', 1) if '"to"' in ln else ln for ln in mine]
    assert compare_transcript(text, bad, oracle).unexplained
