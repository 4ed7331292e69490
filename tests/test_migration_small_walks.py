"""The migration's conformance machine on small groups (``MIGRATION_SMALL`` in groupspec/specmut/killers.py)."""
from __future__ import annotations

from groupspec.specmut.killers import MIGRATION_SMALL, killers, run_killer
from groupspec.specmut.loader import applied
from groupspec.specmut.operators import generate


def _small(members: int) -> object:
    return next(k for k in killers() if k.name.startswith(f"conformance:migration {members}m×"))


def test_every_small_group_passes_on_the_unchanged_model():
    assert {j[0] for j in MIGRATION_SMALL} == {1, 2}
    assert run_killer(_small(1))["failure"] is None  # type: ignore[arg-type]


def test_the_last_member_leaving_bumps_the_group_epoch():
    """Kafka's consumerGroupFenceMember bumps the group epoch even when the group is left empty: the model's
    ``_remove`` without its ``rest`` conjunct keeps the epoch, and the reference tells."""
    m = next(x for x in generate() if x.name == "migration.ClassicToConsumer._remove:drop-term#0")
    with applied(m):
        why = run_killer(_small(1))["failure"]  # type: ignore[arg-type]
    assert why is not None and "group/assignment epoch" in why, why


def test_the_migration_broken_variants_pin_a_property_predicate_each():
    """A predicate weakened so that the broken variant's bug slips through is killed by that broken variant."""
    from groupspec.specmut.killers import _explore, judge

    cases = {"migration.ClassicToConsumer.generation_violation:drop-term#6": "gen-drops",
             "migration.ClassicToConsumer.commit_accepted:negate-return#0": "two-owners"}
    for name, variant in cases.items():
        k = next(k for k in killers() if k.name.startswith(f"broken:classic-to-consumer-{variant} "))
        base = _explore(k.job)
        m = next(x for x in generate() if x.name == name)
        with applied(m):
            why = judge(k, base, _explore(k.job))
        assert why is not None and "no longer violated" in why, (name, why)
