"""The typed view of the model (groupspec.model.spec): every variant is a ``Spec``, and what the tools read of it
(faults, encodings, properties) is what the pages declare.

* every variant is a ``Spec`` and a ``SpecBase``; its properties are the common ones plus its own;
* the compiled encoding the model declares is the engine ``groupspec check`` takes (classic variants but
  the Connect worker that keeps its work and the protocol vote's; the KIP-848 family; the migration), and
  a timing fault or an overridden encoded rule takes the object off the compiled engine (the mutants);
* the Z3 encoding declared is ``groupspec.proofs``' list of protocols;
* ``applicable_faults`` is what ``groupspec verify`` ran before the pages declared it (pinned below).
"""
from __future__ import annotations

import pytest

from groupspec.model import VARIANTS, Config, make
from groupspec.model.core import TIMING_FAULTS
from groupspec.model.properties import ACTIONS, SAFETY, SOMETIMES
from groupspec.model.spec import (COMPILED_CLASSIC, COMPILED_CONSUMER, COMPILED_MIGRATION, Z3, Spec, SpecBase)

BASE = ["crash", "join", "leave", "partitions", "subscription", "timeout", "zombie"]
TIMING = sorted(TIMING_FAULTS)
MIGRATION = ["crash", "join", "leave", "timeout", "zombie"]
# groupspec.verify.applicable_faults before the pages declared their faults (commit 2774b8c), per variant
FAULTS_BEFORE = {
    **{n: BASE for n in VARIANTS},
    "eager": sorted(BASE + TIMING), "cooperative": sorted(BASE + TIMING),
    "static": sorted(BASE + [f for f in TIMING if f != "two-step-join"]),
    "static-cooperative": sorted(BASE + [f for f in TIMING if f != "two-step-join"]),
    "coordinator-assigns": sorted(BASE + [f for f in TIMING if f != "sync-timeout"]),
    "connect-delayed": sorted([f for f in BASE if f != "subscription"] + TIMING),
    "connect-keep-work": sorted([f for f in BASE if f != "subscription"] + TIMING),
    "zookeeper": MIGRATION,
    **{n: MIGRATION for n in VARIANTS if n.startswith("classic-to-consumer")},
    # broken variants added after that commit: the faults they were written to be checked with
    "connect-hold-outlives-group": [f for f in BASE if f != "subscription"],
    "connect-ignores-revocation": [f for f in BASE if f != "subscription"],
    "connect-no-scheduled-rebalance": [f for f in BASE if f != "subscription"],
}


def cfg_for(name: str, **kw: object) -> Config:
    assignor = "range" if name == "zookeeper" else "sticky"
    return Config(members=2, partitions=2, assignor=assignor, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_is_a_spec(name: str) -> None:
    proto = make(name, cfg_for(name))
    assert isinstance(proto, Spec) and isinstance(proto, SpecBase)
    assert proto.safety_properties()[: len(SAFETY)] == SAFETY
    assert proto.action_properties() in (ACTIONS, ())
    assert proto.sometimes_properties() == SOMETIMES
    assert proto.encodings() <= {COMPILED_CLASSIC, COMPILED_CONSUMER, COMPILED_MIGRATION, Z3}


def test_zookeeper_has_its_own_property_and_no_generations() -> None:
    proto = make("zookeeper", cfg_for("zookeeper"))
    assert len(proto.safety_properties()) == len(SAFETY) + 1 and proto.action_properties() == ()


def expected_encoding(name: str) -> str | None:
    if name in ("zookeeper", "connect-keep-work", "eager-to-cooperative", "static-leader-snapshot") or name.startswith(
            "upgrade-"):
        return None
    if getattr(VARIANTS[name], "python_only", False):  # a broken variant written for the Python explorer only
        return None
    if name.startswith("classic-to-consumer"):
        return COMPILED_MIGRATION
    if name.startswith("consumer"):
        return COMPILED_CONSUMER
    return COMPILED_CLASSIC


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_compiled_encoding_is_the_engine_check_takes(name: str) -> None:
    from groupspec.checker.compiled import family_of

    proto = make(name, cfg_for(name))
    assert proto.compiled_encoding() == expected_encoding(name)
    assert (family_of(proto) is not None) == (expected_encoding(name) is not None)


def test_a_timing_fault_or_an_overridden_rule_takes_a_variant_off_the_compiled_engine() -> None:
    from groupspec.model.classic import ClassicProtocol
    from groupspec.model.consumer import Consumer
    from groupspec.model.eager import Eager

    assert make("eager", cfg_for("eager")).compiled_encoding() == COMPILED_CLASSIC
    assert make("eager", cfg_for("eager", faults=frozenset({"sync-timeout"}))).compiled_encoding() is None

    class Mutant(Consumer):  # changes a rule consumer_kernel mirrors
        def reconcile(self, g, i, r, owned):  # type: ignore[no-untyped-def]
            return r

    assert Mutant(cfg_for("consumer")).compiled_encoding() is None
    # the requests and answers in flight are in the kernel (issue 29): their faults, and the switches of their
    # rules, which the kernel reads; overriding one of their functions takes a variant off it
    assert make("consumer", cfg_for("consumer", faults=frozenset({"late-commit"}))).compiled_encoding() == COMPILED_CONSUMER

    class Lenient(Consumer):
        previous_epoch_subset = False

    assert Lenient(cfg_for("consumer")).compiled_encoding() == COMPILED_CONSUMER

    class OtherAnswer(Consumer):
        def apply_answer(self, c, answer):  # type: ignore[no-untyped-def]
            return c

    assert OtherAnswer(cfg_for("consumer")).compiled_encoding() is None

    class Voting(Eager):
        python_only = True

    assert Voting(cfg_for("eager")).compiled_encoding() is None
    assert ClassicProtocol.encoding == COMPILED_CLASSIC


def test_z3_encodings_are_the_proofs_protocols() -> None:
    from groupspec.proofs.report import PROTOCOLS

    declared = {n for n, cls in VARIANTS.items() if cls.z3}
    assert declared == set(PROTOCOLS)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_applicable_faults_are_what_verify_ran_before(name: str) -> None:
    from groupspec.verify import applicable_faults

    assert sorted(applicable_faults(name)) == FAULTS_BEFORE[name]
