"""No drift between model/consumer.py and the KIP-848 Z3 encoding (proofs/consumer_drift.py), both halves:
sampled reachable states satisfy the encoding's invariant and properties (and its ``accepted`` is the model's
``commit_accepted``), sampled steps are runs of its actions; a one-line change to a rule of a copy of
model/consumer.py is caught. Replay a failure with ``pytest --hypothesis-seed=N``."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.model import Config, make
from groupspec.proofs import consumer_drift as D

from model_copy import mutant

FAULTS = ("join", "leave", "crash", "timeout", "zombie", "subscription", "partitions", "lose-answer", "late-answer",
          "late-commit", "early-restart")


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(("consumer", "consumer-static")), st.sets(st.sampled_from(FAULTS), min_size=1), st.data())
def test_sampled_states_and_steps_are_the_encodings(name, faults, data) -> None:  # type: ignore[no-untyped-def]
    proto = make(name, Config(members=2, partitions=2, topics=2 if "subscription" in faults else 1,
                              faults=frozenset(faults), budget=2))
    s = proto.init_states()[0]
    for _ in range(data.draw(st.integers(1, 6), label="walk length")):
        assert D.state_problems(proto, s) == [], f"{name} {proto.cfg}: {s}"
        succ = list(proto.successors(s))
        if not succ:
            break
        a, t = succ[data.draw(st.integers(0, len(succ) - 1), label="successor")]
        v = D.check_step(proto, s, t)
        assert v.admitted, f"{name} {proto.cfg}: {a!r} is no run of the encoding\nbefore: {s}\nafter: {t}"
        s = t


def test_prove_sample_of_consumer_static() -> None:
    r = D.sample("consumer-static", seed=5, steps=8, faults=("join", "crash", "early-restart", "lose-answer", "late-commit"))
    assert r.steps == 8 and r.rejected == [] and r.unknown == 0 and r.states == 8


def test_one_line_change_to_a_rule_is_drift(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Reconciliation gives a partition whose partition epoch another member still holds (one line of
    ``_next_assignment``): some step of the copy is no run of the encoding's HeartbeatAdvance."""
    mod = mutant(tmp_path, "consumer.py", "free = want & ~self.held_by_others(g, i) if self.wait_for_release else want",
                 "free = want")
    proto = mod.make("consumer", mod.Config(members=2, partitions=2, faults=frozenset({"join", "crash"}), budget=2))
    r = D.sample("consumer", seed=3, steps=80, proto=proto, stop_at_first=True)
    assert r.rejected and "ConsumerGroupHeartbeat" in r.rejected[0], r
    # the same walk of the unchanged model is admitted throughout
    good = make("consumer", Config(members=2, partitions=2, faults=frozenset({"join", "crash"}), budget=2))
    assert D.sample("consumer", seed=3, steps=r.steps, proto=good).rejected == []


def test_a_changed_commit_rule_is_drift_in_the_state_half(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An OffsetCommit accepted from a client whose member the coordinator no longer has (one line of
    ``commit_accepted``): the encoding's ``accepted`` disagrees on a reachable state."""
    mod = mutant(tmp_path, "consumer.py", "            return UNKNOWN\n", "            return OK\n")
    proto = mod.make("consumer", mod.Config(members=2, partitions=1, faults=frozenset({"timeout"}), budget=1))
    r = D.sample("consumer", seed=1, steps=60, proto=proto, stop_at_first=True)
    assert r.rejected and "OffsetCommit" in r.rejected[0], r


def _first_step(proto, wanted):  # type: ignore[no-untyped-def]
    """The first step (breadth-first) ``s -a-> t`` of ``proto`` with ``wanted(s, a, t)``."""
    from collections import deque

    s0 = proto.init_states()[0]
    seen, todo = {proto.key(s0)}, deque([s0])
    while todo:
        s = todo.popleft()
        for a, t in proto.successors(s):
            if wanted(s, a, t):
                return s, a, t
            if proto.key(t) not in seen:
                seen.add(proto.key(t))
                todo.append(t)
    raise AssertionError("no such step")


def test_a_static_leave_while_revoking_is_the_encodings_static_leave() -> None:
    """Kafka 4.3.1 keeps a static member that left (epoch -2) with nothing pending revocation: the model's step is
    a run of the encoding's StaticLeave (and of nothing that keeps the partitions pending)."""
    from groupspec.model import actions as A

    proto = make("consumer-static", Config(members=2, partitions=2, faults=frozenset({"leave", "zombie"}), budget=2))
    s, a, t = _first_step(proto, lambda s, a, t: isinstance(a, A.LeaveGroup) and s.group.members[a.member].revoking)
    assert t.group.members[a.member].revoking == 0 and t.group.members[a.member].left
    assert D.check_step(proto, s, t).admitted
    v = D.check_step(proto, s, t, k=1)  # one relational step: the encoding's own static leave
    assert v.admitted and v.relational == ["StaticLeave"], v


def test_a_subscription_change_while_revoking_is_the_encodings_drop() -> None:
    """Kafka 4.3.1 moves the partitions of dropped topics to pending revocation at once when a member still owning
    partitions pending revocation changes its subscription: a run of the encoding's HeartbeatDropUnsubscribed."""
    from groupspec.model.consumer import ConsumerGroupHeartbeat, MemberState

    proto = make("consumer", Config(members=2, partitions=3, topics=2, faults=frozenset({"subscription", "join"}),
                                    budget=2, assignor="range"))

    def wanted(s, a, t):  # type: ignore[no-untyped-def]
        r = s.group.members[a.member] if isinstance(a, ConsumerGroupHeartbeat) else None
        c = s.clients[a.member] if r is not None else None
        return (r is not None and r.state == MemberState.UNREVOKED_PARTITIONS and c.owned & r.revoking
                and r.topics != c.topics and t.group.members[a.member].revoking & ~r.revoking)

    s, a, t = _first_step(proto, wanted)
    assert D.check_step(proto, s, t).admitted
    v = D.check_step(proto, s, t, k=2)  # a new target, then the dropped partitions pending revocation
    assert v.admitted and "HeartbeatDropUnsubscribed" in v.relational, v
