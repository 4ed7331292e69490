"""The dead-field reduction (``groupspec.model.symmetry.forget_dead``, ``groupspec check --forget-dead``).

* Soundness on small instances: with and without it, every variant it applies to gets the same verdict
  for every property, the same convergence bound, and counterexamples the model's own steps replay;
  it never stores more states, and it stores fewer where stale clients or ghosts occur.
* The compiled kernel forgets exactly what the model forgets (its keys identify the same states).
* The reduction is a bisimulation on every state the unreduced search stores: two states with one
  reduced key have the same enabled actions, successors with the same reduced keys, and the same
  verdict for every state and step property. A mutant that also forgets what is not dead (a live
  member's owned set, a paused member's) breaks it, and the check catches it.
"""
from __future__ import annotations

import pytest

from groupspec.checker import Explorer
from groupspec.checker.compiled import CompiledExplorer, Kernel
from groupspec.model import VARIANTS, Config, make
from groupspec.model import symmetry
from groupspec.model.symmetry import dead_fields_apply, forget_dead_fields

from test_compiled import CLASSIC, disagreements, reachable

FAULT_SETS = [
    frozenset({"crash", "timeout", "zombie"}),
    frozenset({"join", "crash", "zombie", "timeout"}),
    frozenset({"subscription", "partitions", "join", "leave", "timeout"}),
]
APPLIES = [n for n in CLASSIC if dead_fields_apply(make(n, Config(members=2, partitions=2)))]


def instances(members: int = 2, partitions: int = 2):
    for name in APPLIES:
        for faults in FAULT_SETS:
            topics = 2 if "subscription" in faults else 1
            yield name, Config(members=members, partitions=partitions, topics=topics, faults=faults, budget=2)


INSTANCES = list(instances())


def explore(name: str, cfg: Config, dead: bool, explorer=Explorer):
    proto = make(name, cfg)
    if dead:
        forget_dead_fields(proto)
    return proto, explorer(proto).run()


def verdicts(res) -> dict:
    return {k: v.held for k, v in res.verdicts.items()}


def replays(proto, res) -> bool:
    """Every counterexample is a run of the model: each step is the model's own step."""
    for v in res.verdicts.values():
        trace = v.trace or []
        for prev, step in zip(trace, trace[1:]):
            if proto.step(prev.state, step.action) != step.state:
                return False
    return True


def test_it_applies_to_the_fenced_classic_variants_only():
    assert {"eager", "static", "cooperative", "static-cooperative"} <= set(APPLIES)
    for name in ("unfenced-commits", "coordinator-assigns", "connect-delayed", "connect-keep-work"):
        assert name in VARIANTS and not dead_fields_apply(make(name, Config(members=2, partitions=2)))
        with pytest.raises(ValueError, match="--forget-dead does not apply"):
            forget_dead_fields(make(name, Config(members=2, partitions=2)))


@pytest.mark.parametrize("name,cfg", INSTANCES, ids=[f"{n}-{'+'.join(sorted(c.faults))}" for n, c in INSTANCES])
def test_forgetting_dead_fields_keeps_every_verdict(name, cfg):
    _p, full = explore(name, cfg, dead=False)
    proto, reduced = explore(name, cfg, dead=True)
    assert verdicts(reduced) == verdicts(full)
    assert reduced.convergence_bound == full.convergence_bound
    assert reduced.states <= full.states
    assert replays(proto, reduced)


def test_it_stores_fewer_states_where_stale_clients_occur():
    cfg = Config(members=2, partitions=3, faults=frozenset({"crash", "timeout", "zombie"}), budget=2)
    _p, full = explore("static-cooperative", cfg, dead=False)
    _p, reduced = explore("static-cooperative", cfg, dead=True)
    assert (full.states, reduced.states) == (8289, 4972)


@pytest.mark.parametrize("name", ["static-cooperative", "static", "cooperative", "eager-no-revoke"])
def test_the_compiled_kernel_forgets_what_the_model_forgets(name):
    cfg = Config(members=3, partitions=3, faults=frozenset({"join", "crash", "zombie", "timeout"}), budget=2)
    proto = make(name, cfg)
    forget_dead_fields(proto)
    assert disagreements(proto, Kernel(proto), reachable(proto, 3000)) == []


def test_the_compiled_search_with_it_is_the_reference_search():
    cfg = Config(members=2, partitions=3, faults=frozenset({"crash", "timeout", "zombie"}), budget=2)
    _p, ref = explore("static-cooperative", cfg, dead=True)
    _p, fast = explore("static-cooperative", cfg, dead=True, explorer=CompiledExplorer)
    assert (fast.states, fast.edges, verdicts(fast)) == (ref.states, ref.edges, verdicts(ref))


def bisimulation_breaches(name: str, cfg: Config, limit: int = 3) -> list[str]:
    """Where states with one reduced key behave differently (on the states the full search stores).

    Without member and partition symmetry, so that actions can be compared by their member."""
    from groupspec.model.properties import commit_fencing, exclusive_ownership, generation_monotonic

    plain = make(name, cfg)
    plain.symmetric = plain.canon.symmetric = False
    full = Explorer(plain)
    full.run()
    proto = make(name, cfg)
    proto.symmetric = proto.canon.symmetric = False
    forget_dead_fields(proto)

    def behaviour(s):
        steps = [(a, proto.key(t), generation_monotonic(proto, s, t) is None) for a, t in proto.successors(s)]
        return (steps, exclusive_ownership(proto, s) is None, commit_fencing(proto, s) is None, proto.converged(s),
                proto.members_in_group(s))

    seen: dict = {}
    out = []
    for s in full._states:
        b = behaviour(s)
        first = seen.setdefault(proto.key(s), (s, b))
        if first[1] != b:
            out.append(f"{first[0]} and {s} share a reduced key but behave differently")
            if len(out) >= limit:
                break
    return out


@pytest.mark.parametrize("name,cfg", INSTANCES, ids=[f"{n}-{'+'.join(sorted(c.faults))}" for n, c in INSTANCES])
def test_states_with_one_reduced_key_are_bisimilar(name, cfg):
    assert bisimulation_breaches(name, cfg) == []


def _forget_too_much(s, cooperative, cfg):
    """A mutant: also forgets the owned set of members whose id is current (it is not dead)."""
    s = REAL_FORGET(s, cooperative, cfg)
    return s.but(clients=tuple(c.but(owned=0) for c in s.clients))


REAL_FORGET = symmetry.forget_dead


def _forget_paused(s, cooperative, cfg):
    """A subtler mutant: forgets the owned set of a paused member (it may come back and report it)."""
    s = REAL_FORGET(s, cooperative, cfg)
    return s.but(clients=tuple(c.but(owned=0) if c.proc == 2 else c for c in s.clients))


@pytest.mark.parametrize("mutant", [_forget_too_much, _forget_paused])
def test_a_reduction_that_forgets_a_live_field_is_caught(monkeypatch, mutant):
    monkeypatch.setattr(symmetry, "forget_dead", mutant)
    cfg = Config(members=2, partitions=2, faults=frozenset({"crash", "timeout", "zombie"}), budget=2)
    assert bisimulation_breaches("static-cooperative", cfg)
