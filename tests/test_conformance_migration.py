"""The reference migration refines the model (groupspec/conformance/migration.py); its mutants are caught."""
from __future__ import annotations

import pytest

from groupspec.conformance.migration import MUTANTS, run, run_mutant


@pytest.mark.parametrize("members,partitions", [(2, 2), (3, 3), (3, 4)])
def test_reference_refines_the_model(members, partitions):
    why, checked = run(members=members, partitions=partitions, walks=200, seed=1)
    assert why is None, why
    assert checked > 500  # steps of the consumer-group phase actually driven on the reference


@pytest.mark.parametrize("mutant", MUTANTS)
def test_every_mutant_is_caught(mutant):
    row = run_mutant(mutant, walks=200)
    assert row["caught"], row
    assert row["detail"].split("(")[0] in ("SyncGroup", "ClassicHeartbeat")
