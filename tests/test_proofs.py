"""Z3 proofs: unbounded obligations, broken variants caught, BMC/lasso traces replayed by the model,
ranking argument, and `groupspec prove`."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from groupspec.model import Config, make
from groupspec.proofs import bmc, classic, epr, liveness
from groupspec.proofs.drift import check_state
from groupspec.proofs.finite import Encoding


@pytest.mark.parametrize("protocol", ["eager", "static", "cooperative", "coordinator-assigns"])
def test_unbounded_safety_is_proved(protocol: str) -> None:
    spec = classic.build(classic.Variant(protocol))
    results = epr.check_obligations(spec)
    failed = [epr.format_cti(r) or r.label for r in results if not r.ok]
    assert failed == []
    kinds = {r.kind for r in results}
    assert kinds == {"init", "consecution", "safety", "action-property"}
    assert {r.clause for r in results if r.kind == "safety"} >= {"exclusive_ownership"}
    assert {r.clause for r in results if r.kind == "action-property"} >= {"commit_fencing", "generation_monotonic"}
    # non-vacuity: every action can fire under the invariant
    enabled = epr.check_actions_enabled(spec)
    assert all(ok for ok, _t in enabled.values()), [a for a, (ok, _t) in enabled.items() if not ok]


@pytest.mark.parametrize("bug, expect", [
    ("no_revoke_before_join", "Join preserves eager_only_stable_owns"),
    ("direct_transfer", "Install preserves coop_rep_assign"),
    ("unfenced_commits", "Commit satisfies commit_fencing"),
])
def test_broken_relational_variants_fail_with_a_cti(bug: str, expect: str) -> None:
    protocol = "cooperative" if bug == "direct_transfer" else "eager"
    spec = classic.build(classic.Variant(protocol, bug))
    results = epr.check_obligations(spec, only=lambda ob: ob.action in ("Join", "Install", "Commit"))
    bad = [r for r in results if not r.ok]
    assert expect in [r.label for r in bad]
    text = epr.format_cti(next(r for r in bad if r.label == expect))
    assert "state before:" in text and "step:" in text and "state after:" in text


def test_a_weakened_invariant_is_not_inductive() -> None:
    """Mutant: drop a supporting clause; consecution must fail somewhere (the checks are not vacuous)."""
    spec = classic.build(classic.Variant("cooperative"))
    del spec.invariant["coop_rep_unique"]
    results = epr.check_obligations(spec, only=lambda ob: ob.kind in ("safety", "consecution") and ob.action in (None, "Join", "Install"))
    assert any(not r.ok for r in results)


def test_unknown_variant_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        classic.build(classic.Variant("eagre"))


def test_bmc_finds_the_unfenced_commit_and_the_model_replays_it() -> None:
    proto = make("unfenced-commits", Config(members=2, partitions=1, faults=frozenset({"zombie"}), budget=1))
    res = bmc.bmc(proto, 8)
    assert res.found is not None
    run = res.found
    assert run.violated == "commit_fencing"
    # the run is the model's own
    s = proto.init_states()[0]
    for a, t in zip(run.actions, run.states[1:]):
        s = proto.step(s, a)
        assert s == t
    lines = bmc.timeline(proto, run)
    assert lines[0].strip().startswith("0.") and any(line.strip().startswith(f"{len(run.actions)}.") for line in lines)


def test_bmc_finds_no_violation_in_a_small_correct_instance() -> None:
    proto = make("eager", Config(members=2, partitions=1, faults=frozenset(), budget=0))
    res = bmc.bmc(proto, 6)
    assert res.found is None and res.depth_reached == 6 and not res.notes


def test_bmc_catches_direct_transfer() -> None:
    proto = make("cooperative-direct-transfer", Config(members=2, partitions=2, faults=frozenset({"join"}), budget=1))
    res = bmc.bmc(proto, 12)
    assert res.found is not None and res.found.violated == "exclusive_ownership"


def test_lasso_finds_the_flappy_assignor_stuck_and_not_cooperative() -> None:
    flappy = make("cooperative-flappy", Config(members=2, partitions=2, budget=0))
    res = bmc.lasso(flappy, 9)
    assert res.found is not None and res.found.violated == "convergence"
    good = make("cooperative", Config(members=2, partitions=2, budget=0))
    res2 = bmc.lasso(good, 8)
    assert res2.found is None and not res2.notes


def test_ranking_argument_up_to_3x4_and_its_mutant() -> None:
    r = liveness.ranking("cooperative", 3, 4, ("join", "crash"), 1)
    assert r.ok and r.bound is not None and r.bound > 0
    bad = liveness.ranking("cooperative-flappy", 2, 2, (), 0)
    assert not bad.ok and "deadlock" in bad.detail


class _BrokenEncoding(Encoding):
    """Mutant of the Z3 relation: an eager SyncGroup answer is not applied."""

    def _receive_sync(self, s, i):  # type: ignore[no-untyped-def]
        t = super()._receive_sync(s, i)
        c = t.clients[i]
        from dataclasses import replace

        return type(t)(t.group, t.clients[:i] + (replace(c, owned=s.clients[i].owned),) + t.clients[i + 1:], t.budget)


def test_drift_check_catches_a_wrong_encoding() -> None:
    proto = make("eager", Config(members=1, partitions=1, budget=0))
    enc = _BrokenEncoding(proto)
    good = Encoding(proto)
    s = proto.init_states()[0]
    problems: list[str] = []
    for _ in range(6):
        assert check_state(proto, good, s) == []
        problems += check_state(proto, enc, s)
        succ = [t for _a, t in proto.successors(s)]
        if not succ:
            break
        s = succ[0]
    assert any("ReceiveSyncResponse" in p for p in problems)


def test_cli_prove_json_and_errors() -> None:
    from groupspec.cli import cli

    runner = CliRunner()
    r = runner.invoke(cli, ["prove", "--protocol", "unfenced-commits", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["ok"] is True
    assert {c["family"] for c in doc["checks"]} == {"unbounded safety", "bounded safety"}
    assert all(c["verdict"] == "caught" for c in doc["checks"])
    from groupspec.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["prove", "--protocol", "nope"])
    assert exc.value.code == 2


def test_cli_prove_exits_1_when_a_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from groupspec.cli import cli
    from groupspec.proofs import report

    def fake(protocol=None, deep=False, jobs=None, progress=None):  # type: ignore[no-untyped-def]
        return report.Report([report.Check("unbounded safety", "eager", "x", "FAILED", False, 0.0)], 0.0, ["eager"])

    monkeypatch.setattr(report, "run_all", fake)
    r = CliRunner().invoke(cli, ["prove", "--protocol", "eager"])
    assert r.exit_code == 1
    assert "FAILED" in r.output


@pytest.mark.deep
@pytest.mark.parametrize("protocol", ["eager", "static", "cooperative", "connect-delayed", "coordinator-assigns"])
def test_deep_bmc_correct_variants_have_no_violation(protocol: str) -> None:
    from groupspec.proofs.report import BMC_INSTANCES

    m, p, faults, budget, depth = BMC_INSTANCES[protocol]
    proto = make(protocol, Config(members=m, partitions=p, faults=frozenset(faults), budget=budget))
    res = bmc.bmc(proto, depth)
    assert res.found is None and not res.notes, res.found and "\n".join(bmc.timeline(proto, res.found))


@pytest.mark.deep
def test_deep_lasso_cooperative_3x4() -> None:
    proto = make("cooperative", Config(members=3, partitions=4, budget=0))
    res = bmc.lasso(proto, 8)
    assert res.found is None and not res.notes


@pytest.mark.deep
@pytest.mark.parametrize("protocol", ["eager", "static", "cooperative", "connect-delayed", "coordinator-assigns",
                                      "eager-no-revoke", "cooperative-direct-transfer", "unfenced-commits"])
def test_deep_drift_breadth_first(protocol: str) -> None:
    """The first 300 states (breadth-first) of a 2x2 instance with every fault: no drift."""
    from collections import deque

    from groupspec.model.core import CONSUMER_FLIGHT_FAULTS, FAULTS, TIMING_FAULTS

    # every fault the finite encoding encodes: the timing faults are the Python engine's (docs/proofs.md),
    # the in-flight faults KIP-848's
    faults = frozenset(FAULTS) - TIMING_FAULTS - CONSUMER_FLIGHT_FAULTS
    proto = make(protocol, Config(members=2, partitions=2, topics=2, faults=faults, budget=2))
    enc = Encoding(proto)
    s0 = proto.init_states()[0]
    seen = {s0}
    queue = deque([s0])
    while queue and len(seen) <= 300:
        s = queue.popleft()
        assert check_state(proto, enc, s) == []
        for _a, t in proto.successors(s):
            if t not in seen:
                seen.add(t)
                queue.append(t)
