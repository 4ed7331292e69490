"""No drift between model/ and the Z3 transition relation of groupspec.proofs.finite.

Hypothesis draws a small instance of a classic-protocol variant (correct or broken) and a random walk
of reachable states; at every state, for every action instance, the Z3 relation must admit exactly the
successor model/ computes (guard and successor, both directions), and the encoded properties must agree
with the model's. Replay a failure with ``pytest --hypothesis-seed=N``.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.model import Config, VARIANTS, make
from groupspec.model.classic import ClassicProtocol
from groupspec.model.core import CONSUMER_FLIGHT_FAULTS, FAULTS, TIMING_FAULTS
from groupspec.proofs.drift import check_state
from groupspec.proofs.finite import Encoding

CLASSIC = sorted(n for n, cls in VARIANTS.items() if issubclass(cls, ClassicProtocol)
                 and not cls.keep_work_on_reset  # connect-keep-work: not in the bounded encoding
                 and not getattr(cls, "python_only", False))  # the protocol vote: not either (docs/proofs.md)
_ENC: dict = {}


def _encoding(proto):  # type: ignore[no-untyped-def]
    key = (proto.name, proto.cfg)
    if key not in _ENC:
        _ENC[key] = Encoding(proto)
    return _ENC[key]


@st.composite
def instances(draw):  # type: ignore[no-untyped-def]
    name = draw(st.sampled_from(CLASSIC))
    members = draw(st.integers(1, 2))
    partitions = draw(st.integers(1, 2))
    topics = draw(st.integers(1, partitions))
    # the formation and timer faults (model/formation.py) are not in the bounded encoding: docs/proofs.md
    faults = frozenset(draw(st.sets(st.sampled_from([f for f in FAULTS if f not in TIMING_FAULTS | CONSUMER_FLIGHT_FAULTS]))))
    budget = draw(st.integers(0, 2))
    return make(name, Config(members=members, partitions=partitions, topics=topics, faults=faults, budget=budget))


@settings(max_examples=max(5, settings().max_examples // 4))
@given(instances(), st.data())
def test_z3_relation_admits_exactly_the_model_successors(proto, data) -> None:  # type: ignore[no-untyped-def]
    enc = _encoding(proto)
    s = proto.init_states()[0]
    for _ in range(data.draw(st.integers(1, 12), label="walk length")):
        problems = check_state(proto, enc, s)
        assert problems == [], f"{proto.name} {proto.cfg}: {problems}\nstate: {s}"
        succ = list(proto.successors(s))
        if not succ:
            break
        s = succ[data.draw(st.integers(0, len(succ) - 1), label="successor")][1]


def test_the_encoding_refuses_the_faults_it_does_not_encode() -> None:
    import pytest

    for fault in sorted(TIMING_FAULTS):
        with pytest.raises(ValueError, match=fault):
            Encoding(make("eager", Config(members=2, partitions=2, faults=frozenset({fault, "crash"}))))


def test_every_reachable_state_of_a_tiny_instance() -> None:
    """Exhaustive on one tiny instance: all reachable states, all action instances."""
    proto = make("cooperative", Config(members=2, partitions=1, faults=frozenset({"crash"}), budget=1))
    enc = Encoding(proto)
    seen = {proto.init_states()[0]}
    todo = list(seen)
    while todo:
        s = todo.pop()
        assert check_state(proto, enc, s) == []
        for _a, t in proto.successors(s):
            if t not in seen and len(seen) < 60:
                seen.add(t)
                todo.append(t)
    assert len(seen) > 10


def test_connect_delayed_holds_agree_along_random_runs() -> None:
    """connect-delayed's hold (departures while work is held, drops at the rebalance timeout, any worker
    noticing released work) on random runs that mostly take protocol steps: every state whose successors
    involve the hold, all action instances."""
    import random

    proto = make("connect-delayed", Config(members=3, partitions=2, faults=frozenset(
        {"join", "crash", "leave", "zombie", "timeout", "partitions"}), budget=8))
    enc = _encoding(proto)
    rng = random.Random(1)
    checked = held = 0
    for _walk in range(12):
        s = proto.init_states()[0]
        for _ in range(80):
            succ = list(proto.successors(s))
            if not succ:
                break
            if s.group.held or any(a.name in ("DelayExpired", "NoticeMetadata", "RebalanceTimeout") for a, _t in succ):
                assert check_state(proto, enc, s) == [], s
                checked += 1
                held += s.group.held != 0
            fair = [x for x in succ if x[0].fair]
            s = rng.choice(fair if fair and rng.random() < 0.75 else succ)[1]
    assert checked > 20 and held > 10
