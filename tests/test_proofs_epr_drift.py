"""No drift between model/ and the unbounded (EPR) relational model, step half: every sampled model step is
a run of at most members+2 relational actions (proofs/epr_drift.py); a mutant of model/ has a step that is
not. And "+1 per generation", unbounded, with the relational mutant that skips generations.
Replay a failure with ``pytest --hypothesis-seed=N``."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.model import Config, make
from groupspec.proofs import classic, epr, epr_drift

CORRECT = sorted(n for n in epr_drift.RELATIONAL_OF if n not in ("cooperative-direct-transfer", "eager-no-revoke"))
_SPECS: dict = {}


def _spec(name: str):  # type: ignore[no-untyped-def]
    if name not in _SPECS:
        _SPECS[name] = classic.build(epr_drift.RELATIONAL_OF[name])
    return _SPECS[name]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(CORRECT), st.sets(st.sampled_from(("join", "crash", "leave", "timeout", "zombie"))),
       st.data())
def test_sampled_model_steps_are_relational_runs(name, faults, data) -> None:  # type: ignore[no-untyped-def]
    proto = make(name, Config(members=2, partitions=2, faults=frozenset(faults), budget=1))
    spec = _spec(name)
    s = proto.init_states()[0]
    for _ in range(data.draw(st.integers(1, 6), label="walk length")):
        succ = list(proto.successors(s))
        if not succ:
            break
        a, t = succ[data.draw(st.integers(0, len(succ) - 1), label="successor")]
        v = epr_drift.check_step(spec, proto, s, t)
        assert v.admitted, f"{name} {proto.cfg}: {a!r} is no run of {spec.name}'s actions\nbefore: {s}\nafter: {t}"
        s = t


def test_prove_sample_admits_every_step_of_a_correct_variant() -> None:
    r = epr_drift.sample("cooperative", seed=5, steps=6)
    assert r.steps == 6 and r.rejected == [] and r.unknown == 0
    assert sum(r.used.values()) == 6


def test_a_mutant_of_the_model_is_caught() -> None:
    """cooperative-direct-transfer hands a still-owned partition over in one round: the leader's SyncGroup
    is no run of the correct cooperative relational spec (its Install withholds)."""
    r = epr_drift.sample("cooperative-direct-transfer", seed=5, steps=40, stop_at_first=True)
    assert len(r.rejected) == 1 and "ReceiveJoinResponse" in r.rejected[0]


def test_a_skipped_generation_number_is_drift() -> None:
    """Mutant step: the model jumps the generation by two; there is a generation in between, so no
    CompleteJoin (which takes the successor) explains it."""
    from dataclasses import replace

    proto = make("eager", Config(members=1, partitions=1, budget=0))
    spec = _spec("eager")
    s = proto.init_states()[0]
    while True:
        a, t = next(iter(proto.successors(s)))
        if t.group.generation > s.group.generation:
            break
        s = t
    assert epr_drift.check_step(spec, proto, s, t).admitted
    bad = replace(t, group=replace(t.group, generation=t.group.generation + 1))
    bad = replace(bad, clients=tuple(replace(c, inbox=replace(c.inbox, generation=c.inbox.generation + 1))
                                     if c.inbox is not None else c for c in bad.clients))
    assert not epr_drift.check_step(spec, proto, s, bad).admitted


def test_generation_plus_one_is_proved_and_its_mutant_fails() -> None:
    spec = classic.build(classic.Variant("cooperative"))
    rs = epr.check_obligations(spec, only=lambda o: o.clause in ("generation_plus_one", "generation_unchanged"))
    assert rs and all(r.ok for r in rs)
    assert {r.action for r in rs if r.clause == "generation_plus_one"} == {"CompleteJoin"}
    bad = classic.build(classic.Variant("cooperative", "generation_skip"))
    rs = epr.check_obligations(bad, only=lambda o: o.clause == "generation_plus_one")
    assert [r.verdict for r in rs] == ["FAILED"]
    assert "CompleteJoin" in epr.format_cti(rs[0])
