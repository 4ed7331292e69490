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
from groupspec.model.core import FAULTS
from groupspec.proofs.drift import check_state
from groupspec.proofs.finite import Encoding

CLASSIC = sorted(n for n, cls in VARIANTS.items() if issubclass(cls, ClassicProtocol))
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
    faults = frozenset(draw(st.sets(st.sampled_from(FAULTS))))
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
