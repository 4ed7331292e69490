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
    expected = {"I1", "I2", "I3", "I4", "I10", "I10p", "I10i", "I11", "C1", "S1"}
    expected |= {"I7"} if name in ("range", "roundrobin") else {"I5", "I9"}
    expected |= {"I12"} if name == "range" else set()  # range is rack-aware (KIP-881)
    expected |= {"I6", "I6'", "I8", "I8f"} if name == "cooperative-sticky" else set()
    assert held == expected


@pytest.mark.deep
@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_builtin_assignor_deep(name):
    rep = check_assignor(name, examples=1000, seed=20261122)
    assert rep.ok, [(p.id, p.counterexample) for p in rep.violations]


# Seed sweep (issue 17): the check with its default example count must pass for every seed, since the pytest
# plugin's default is a random seed. cooperative-sticky (which used to fail I9 judged across rounds for 2 seeds
# in 43) gets the full default check; the other built-ins a lighter one per seed. 200 seeds per assignor, in
# CHUNKS chunks so `make test-deep` (-n 2) spreads them over both cores. Each chunk draws its seeds from
# GROUPSPEC_SWEEP_SEED (printed; random when unset) and the chunk number, so a failing chunk replays exactly,
# and each failing seed is named with its replay command.
SWEEP_SEEDS = 200
CHUNKS = 8


def _sweep_seeds(chunk: int) -> tuple[int, list[int]]:
    import os
    import random

    base = int(os.environ.get("GROUPSPEC_SWEEP_SEED") or random.SystemRandom().randrange(2**31))
    rng = random.Random(base * CHUNKS + chunk)
    return base, [rng.randrange(2**31) for _ in range(SWEEP_SEEDS // CHUNKS)]


@pytest.mark.deep
@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("name, examples", [("cooperative-sticky", 200), ("sticky", 100), ("range", 50),
                                            ("roundrobin", 50)])
def test_builtin_assignor_passes_for_200_random_seeds(name, examples, chunk):
    base, seeds = _sweep_seeds(chunk)
    print(f"sweep of {name}, chunk {chunk} of {CHUNKS}: GROUPSPEC_SWEEP_SEED={base}")
    failed = []
    for s in seeds:
        rep = check_assignor(name, examples=examples, seed=s, quality=False)
        if not rep.ok:
            failed.append((s, [(p.id, (p.counterexample or {}).get("explanation")) for p in rep.violations]))
    assert not failed, (f"GROUPSPEC_SWEEP_SEED={base}, chunk {chunk}: {len(failed)} of {len(seeds)} seeds failed; "
                        f"replay with groupspec assignor check {name} --examples {examples} --seed SEED", failed[:3])
