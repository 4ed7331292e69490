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
