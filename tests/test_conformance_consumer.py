"""The KIP-848 reference conforms to the model (the conformance frame's ``consumer`` family); each of its
fault switches (mutants, the family's rows of the one mutation table) is caught."""
from __future__ import annotations

import pytest

from groupspec.conformance import family_mutants
from groupspec.conformance.consumer import SETUPS, make_machine, run

MUTANTS = {m.switch: m for m in family_mutants("consumer")}

# Schedules that expose each mutant (the randomized search finds them too: see `groupspec verify`);
# the correct reference must pass every one of them. A rule's argument is a process (its slot) where the
# rule draws one from the bundle of running processes, else the k-th member the rule's guard allows.
JOIN2 = [("heartbeat", 0), ("heartbeat", 1), ("heartbeat", 0)]
SCHEDULES = {
    "no_wait_release": [("heartbeat", 0), ("heartbeat", 1)],
    "no_epoch_bump": [("heartbeat", 0), ("heartbeat", 1)],
    "unfenced_commits": [("heartbeat", 0), ("pause", 0), ("session_timeout", 0), ("resume", 0)],
    "early_epoch": JOIN2,
    "keep_removed_holding": [("heartbeat", 0), ("crash", 0), ("session_timeout", 0), ("heartbeat", 1)],
    "no_rebalance_timeout": JOIN2 + [("pause", 0), ("rebalance_timeout", 0)],
    "accept_unknown_member": [("heartbeat", 0), ("expire_live", 0), ("heartbeat", 0)],
    "keep_on_fence": [("heartbeat", 0), ("expire_live", 0), ("heartbeat", 0)],
    "no_ack_revocation": JOIN2 + [("revoke", 0), ("heartbeat", 0)],
}


def replay(schedule, mutant=None):
    """The rules called one by one, the frame's invariants after each (as Hypothesis runs them)."""
    owner = MUTANTS[mutant].owner if mutant else None
    machine = make_machine(SETUPS["one-topic"], {mutant} if owner == "coordinator" else (),
                           {mutant} if owner == "consumer" else ())()
    machine.boot()
    for name, *args in schedule:
        getattr(machine, name)(*args)
        machine.conforms()
        machine.topics_kept()


def test_at_least_six_mutants():
    assert len(MUTANTS) >= 6 and set(MUTANTS) == set(SCHEDULES)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_caught_on_its_schedule(mutant):
    replay(SCHEDULES[mutant])  # the correct reference conforms on it
    with pytest.raises(AssertionError, match="refine|commit|violated"):
        replay(SCHEDULES[mutant], mutant)


def test_a_rule_the_model_has_no_step_for_must_leave_the_reference_as_it_was():
    """The judge after a rule that implemented no model step: the reference must not have moved."""
    machine = make_machine(SETUPS["one-topic"])()
    machine.boot()
    machine.heartbeat(0)
    machine.conforms()
    machine.h.clients[0].owned = set(machine.h.layout.tp_of[:1])  # behind the machine's back
    with pytest.raises(AssertionError, match="a rule the model has no step for"):
        machine.conforms()


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_reference_conforms(setup):
    """The randomized refinement check (derandomized: the same runs every time)."""
    assert run(SETUPS[setup], examples=40, steps=30) is None


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_reference_conforms_seeded(setup):
    """The same check under the run's Hypothesis seed (the pytest header prints it; HYPOTHESIS_PROFILE decides
    the examples), so that sweeping seeds explores further than the derandomized runs."""
    from hypothesis import settings

    from groupspec.conformance.frame import run_machine

    run_machine(make_machine(SETUPS[setup]), settings(settings.default, max_examples=min(settings.default.max_examples, 60),
                                                      stateful_step_count=30))


@pytest.mark.deep
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_caught_by_the_randomized_search(mutant):
    assert run(SETUPS["one-topic"], mutant, examples=400, steps=40) is not None
