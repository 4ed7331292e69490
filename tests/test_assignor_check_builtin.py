"""The project's own assignors under the checker, and the I7 oracle cross-checked against the §1.1/§1.2 rules."""
from __future__ import annotations

import pytest
from hypothesis import given

from groupspec import check_assignor
from groupspec import strategies as gs
from groupspec.assignorcheck.core import diff_assignments, expected_range, expected_roundrobin

reference = pytest.importorskip("groupspec.reference.assignors")


@given(gs.group_states(unusual=True))
def test_reference_range_and_roundrobin_equal_kafkas_rules(state):
    ppt, subs = state
    for name, rule in (("range", expected_range), ("roundrobin", expected_roundrobin)):
        assert diff_assignments(rule(ppt, subs), reference.get(name).assign(ppt, subs)) is None, name


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_builtin_assignor_holds_every_applicable_property(name):
    rep = check_assignor(name, examples=25, seed=2026, quality=False)
    assert rep.ok, [(p.id, p.counterexample) for p in rep.violations]
    held = {p.id for p in rep.properties if p.verdict == "held"}
    expected = {"I1", "I2", "I3", "I4", "I10", "I11", "C1"}
    expected |= {"I7"} if name in ("range", "roundrobin") else {"I5", "I9"}
    expected |= {"I6", "I6'", "I8"} if name == "cooperative-sticky" else set()
    assert held == expected


@pytest.mark.deep
@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_builtin_assignor_deep(name):
    rep = check_assignor(name, examples=1000, seed=20261122)
    assert rep.ok, [(p.id, p.counterexample) for p in rep.violations]
