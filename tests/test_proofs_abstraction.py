"""The unbounded proofs are about model/: every reachable model state, abstracted to a relational
structure, satisfies every clause of the inductive invariant and every safety property (Z3 on a finite
structure). Replay a failure with ``pytest --hypothesis-seed=N``."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from groupspec.model import Config, make
from groupspec.model.core import CONSUMER_FLIGHT_FAULTS, FAULTS
from groupspec.proofs import abstraction, classic

_SPECS: dict = {}


def _spec(name: str):  # type: ignore[no-untyped-def]
    if name not in _SPECS:
        _SPECS[name] = classic.build(abstraction.VARIANT_OF[name])
    return _SPECS[name]


@st.composite
def instances(draw):  # type: ignore[no-untyped-def]
    name = draw(st.sampled_from(sorted(abstraction.VARIANT_OF)))
    members = draw(st.integers(1, 3))
    partitions = draw(st.integers(1, 3))
    topics = draw(st.integers(1, min(2, partitions)))
    faults = frozenset(draw(st.sets(st.sampled_from([f for f in FAULTS if f not in CONSUMER_FLIGHT_FAULTS]))))  # KIP-848's
    return make(name, Config(members=members, partitions=partitions, topics=topics, faults=faults,
                             budget=draw(st.integers(0, 3))))


@given(instances(), st.data())
def test_reachable_states_satisfy_the_inductive_invariant(proto, data) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(proto.name)
    s = proto.init_states()[0]
    for _ in range(data.draw(st.integers(1, 40), label="walk length")):
        bad = abstraction.check_state(proto, s, spec)
        assert bad == [], f"{proto.name} {proto.cfg}: clauses {bad} fail on {abstraction.abstract(proto, s)}"
        succ = list(proto.successors(s))
        if not succ:
            break
        s = succ[data.draw(st.integers(0, len(succ) - 1), label="successor")][1]


def test_a_double_owner_is_caught() -> None:
    """Mutant state: two members own the same partition; the abstraction check must object."""
    proto = make("cooperative", Config(members=2, partitions=2, budget=0))
    s = proto.init_states()[0]
    for _ in range(40):
        if proto.converged(s):
            break
        s = next(t for _a, t in proto.successors(s))
    assert proto.converged(s) and abstraction.check_state(proto, s) == []
    c0, c1 = s.clients
    bad = replace(s, clients=(replace(c0, owned=c0.owned | c1.owned), c1))
    assert "exclusive_ownership" in abstraction.check_state(proto, bad)
