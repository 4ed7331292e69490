"""The reference migration refines the model (the conformance frame's ``migration`` family,
groupspec/conformance/migration.py); its mutants (the family's rows of the one mutation table) are caught."""
from __future__ import annotations

import pytest

from groupspec.conformance import family_mutants, run_mutant
from groupspec.conformance.migration import run


@pytest.mark.parametrize("members,partitions", [(2, 2), (3, 3), (3, 4)])
def test_reference_refines_the_model(members, partitions):
    why, checked = run(members=members, partitions=partitions, walks=200, seed=1)
    assert why is None, why
    assert checked > 500  # steps of the consumer-group phase actually driven on the reference


@pytest.mark.parametrize("members,partitions", [(2, 2), (3, 3)])
def test_reference_refines_the_model_seeded(members, partitions):
    """The same under the pytest run's Hypothesis seed (printed in its header): sweeping seeds explores more."""
    from hypothesis import settings

    from groupspec.conformance.frame import run_machine
    from groupspec.conformance.migration import make_machine

    run_machine(make_machine(members, partitions), settings(settings.default, stateful_step_count=60))


@pytest.mark.parametrize("mutant", family_mutants("migration"), ids=lambda m: m.switch)
def test_every_mutant_is_caught(mutant):
    row = run_mutant(mutant)
    assert row["caught"], row
    assert row["detail"].split("(")[0] in ("SyncGroup", "ClassicHeartbeat")
