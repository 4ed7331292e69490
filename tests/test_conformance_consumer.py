"""The KIP-848 reference conforms to the model; each of its fault switches (mutants) is caught."""
from __future__ import annotations

import pytest

from groupspec.conformance.consumer import MUTANT_BUGS, MUTANTS, SETUPS, make_machine, run

# Schedules that expose each mutant (the randomized search finds them too: see `groupspec verify`);
# the correct reference must pass every one of them.
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
    owner = MUTANT_BUGS[mutant][0] if mutant else None
    machine = make_machine(SETUPS["one-topic"], {mutant} if owner == "coordinator" else (),
                           {mutant} if owner == "consumer" else ())()
    for name, *args in schedule:
        getattr(machine, name)(*args)


def test_at_least_six_mutants():
    assert len(MUTANTS) >= 6 and set(MUTANTS) == set(SCHEDULES)


@pytest.mark.parametrize("mutant", MUTANTS)
def test_mutant_caught_on_its_schedule(mutant):
    replay(SCHEDULES[mutant])  # the correct reference conforms on it
    with pytest.raises(AssertionError, match="refine|commit|violated"):
        replay(SCHEDULES[mutant], mutant)


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_reference_conforms(setup):
    """The randomized refinement check (derandomized: the same runs every time)."""
    assert run(SETUPS[setup], examples=40, steps=30) is None


@pytest.mark.deep
@pytest.mark.parametrize("mutant", MUTANTS)
def test_mutant_caught_by_the_randomized_search(mutant):
    assert run(SETUPS["one-topic"], mutant, examples=400, steps=40) is not None
