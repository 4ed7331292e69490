"""The mutation campaign over model/ (groupspec.specmut; docs/specification.md, "The mutation campaign").

* the operators: every kind the campaign promises is generated, for every family, with unique stable names;
* a mutant is applied on a copy: the checkout is never written, and the unchanged model is back afterwards;
* the killers judge against the unchanged model's baseline only (a changed state count kills nothing);
* the fixed sample (``SAMPLE``): each mutant must still be killed by its named check, so a weakened check fails here.
"""
from __future__ import annotations

import hashlib
import importlib
import sys
from typing import Any

import pytest

from groupspec.specmut import SAMPLE, generate, run_one
from groupspec.specmut.campaign import baseline, relevant, usable
from groupspec.specmut.killers import Killer, judge, killers
from groupspec.specmut.loader import applied
from groupspec.specmut.operators import MODEL_DIR


def test_every_operator_and_family_is_generated_with_unique_names():
    ms = generate()
    names = [m.name for m in ms]
    assert len(names) == len(set(names))
    assert {m.family for m in ms} == {"classic", "connect", "kip848", "migration", "zookeeper"}
    ops = {m.operator for m in ms}
    for op in ("negate-guard", "drop-guard", "drop-term", "off-by-one", "timer-never", "timer-early",
               "skip-callback", "keep-owned", "keep-generation", "keep-id", "wrong-error"):
        assert op in ops, op
    assert set(SAMPLE) <= set(names)
    assert generate() == ms  # generated the same way twice: names are stable


def test_a_mutant_is_applied_on_a_copy_and_undone():
    m = next(x for x in generate() if x.name == "join_phase.JoinPhase._complete_join:off-by-one#0")
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in MODEL_DIR.glob("*.py")}
    from groupspec.model import Config, make

    def first_generation(model) -> int:
        """The highest generation one consumer reaches on its own (breadth first, a few steps)."""
        proto = model.make("eager", model.Config(members=1, partitions=1))
        frontier, best = proto.init_states(), 0
        for _ in range(4):
            frontier = [t for s in frontier for _a, t in proto.successors(s)]
            best = max([best, *(t.group.generation for t in frontier)])
        return best

    assert first_generation(sys.modules["groupspec.model"]) == 1
    with applied(m):
        mutated = importlib.import_module("groupspec.model")
        assert first_generation(mutated) == 0  # the generation is no longer bumped
    original = importlib.import_module("groupspec.model")
    assert first_generation(original) == 1
    # the very objects loaded before come back: what a caller imported earlier still compares equal
    assert original.make is make and original.Config is Config and sys.modules["groupspec.model"] is original
    import groupspec

    assert groupspec.model is original
    assert digest == {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in MODEL_DIR.glob("*.py")}


def test_every_equivalent_mutant_exists_and_is_explained_in_the_docs():
    from pathlib import Path

    from groupspec.specmut.equivalent import EQUIVALENT

    names = {m.name for m in generate()}
    docs = (Path(__file__).resolve().parents[1] / "docs" / "specification.md").read_text()
    for name, why in EQUIVALENT.items():
        assert name in names, f"{name}: no such mutant any more (the model changed): re-judge it"
        assert f"`{name}`" in docs and why, name


def test_judge_counts_property_changes_not_state_counts():
    k = Killer("model:x", "model", "eager", ())
    base = {"verdicts": {"exclusive_ownership": True, "commit_fencing": False}, "complete": True, "states": 10}
    assert judge(k, base, {**base, "states": 99}) is None  # a change detector is no killer
    assert "violated" in judge(k, base, {**base, "verdicts": {"exclusive_ownership": False, "commit_fencing": False}})
    assert "no longer" in judge(k, base, {**base, "verdicts": {"exclusive_ownership": True, "commit_fencing": True}})
    # an exploration stopped early (the mutant's state space outgrew the job): a safety violation found on the way is
    # one; a violation no longer found is not judged (it may lie past where the exploration stopped)
    cut = {**base, "complete": False, "states": 20_000}
    assert "violated (within" in judge(k, base, {**cut, "verdicts": {"exclusive_ownership": False, "commit_fencing": False}})
    assert judge(k, base, {**cut, "verdicts": {"exclusive_ownership": True, "commit_fencing": True}}) is None


def test_a_mutant_explores_at_most_a_multiple_of_the_unchanged_state_space():
    from groupspec.specmut.killers import GROWTH, MAX_STATES, STATE_FLOOR, state_cap

    assert state_cap(None) == MAX_STATES
    assert state_cap(100) == STATE_FLOOR
    assert state_cap(19_490) == GROWTH * 19_490 < MAX_STATES


def test_killers_are_checks_against_something_else():
    kinds = {k.kind for k in killers()}
    assert kinds == {"model", "oracle", "kafka", "conformance", "client", "history", "trace"}
    assert not any("compiled" in k.name or "drift" in k.name or "figure" in k.name for k in killers())
    names = [k.name for k in killers()]
    assert len(names) == len(set(names)), "two killers share a name (the names key the baseline)"


def _killer_of(name: str) -> str:
    """The check that must kill a sample mutant; it must be one the campaign would run on it (it reads the module)."""
    m = next(x for x in generate() if x.name == name)
    assert SAMPLE[name] in [k.name for k in relevant(m, killers())], (name, SAMPLE[name])
    return SAMPLE[name]


@pytest.fixture(scope="module")
def sample_baseline():
    needed = {_killer_of(name) for name in SAMPLE}
    base = baseline(only=needed, trace=False)  # untraced: the sample's own checks on the unchanged model
    assert {k.name for k in usable(base)} == needed, "a check fails on the unchanged model"
    return base


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_sample_mutant_is_killed_by_its_check(name, sample_baseline):
    """Each sample mutant dies by the check named in SAMPLE. Only that check is run: which cheaper check comes first
    is the campaign's business (its order is COST's); this test is there so that a weakened check fails CI."""
    m = next(x for x in generate() if x.name == name)
    base = {k: v for k, v in sample_baseline.items() if k == _killer_of(name)}
    row = run_one(m, base)
    assert row["tried"] == [SAMPLE[name]], row
    assert row["status"] == "killed" and row["killer"] == SAMPLE[name], row
    print(f"{name}: killed by {row['killer']} ({row['detail']}) in {row['seconds']} s")


def test_the_functions_taken_as_uncalled_are_called_nowhere():
    """A mutant inside a function nothing calls is equivalent (UNCALLED): only while nothing in the project calls it."""
    import re
    from pathlib import Path

    from groupspec.specmut.equivalent import UNCALLED, equivalent_reason

    root = Path(__file__).resolve().parents[1]
    sources = [p for d in ("model", "groupspec", "reference", "proofs") for p in (root / d).rglob("*.py")]
    for qual in UNCALLED:
        fn = qual.rsplit(".", 1)[1]
        calls = [p for p in sources  # every "name(" that is not its "def name("
                 if len(re.findall(rf"\b{fn}\s*\(", p.read_text())) > len(re.findall(rf"def {fn}\s*\(", p.read_text()))]
        assert not calls, f"{qual} is called in {calls}: its mutants are no longer equivalent"
        ms = [m for m in generate() if m.name.startswith(qual + ":")]
        assert ms and all(equivalent_reason(m.name, m.diff) for m in ms)


def test_a_listed_equivalent_is_reported_without_its_checks_unless_rechecked(monkeypatch):
    """The campaign does not run the checks of a mutant listed as equivalent again (they are its most expensive
    rows); asked to recheck, it runs them, and a listed mutant that a check kills is reported killed, the listing
    wrong."""
    camp = importlib.import_module("groupspec.specmut.campaign")
    from groupspec.specmut.equivalent import EQUIVALENT

    name = "classic.ClassicProtocol._perturbations:drop-term#15"  # crashing a down process: changes nothing
    assert name in EQUIVALENT
    m = next(x for x in generate() if x.name == name)
    result = camp.campaign([m], workers=1)
    [row] = result["rows"]
    assert (row["status"], row["tried"], row["rechecked"]) == ("equivalent", [], False)
    assert result["families"]["classic"] == {"mutants": 1, "killed": 0, "equivalent": 1, "survived": 0,
                                             "undecided": 0, "score": 100.0}
    # rechecked: the checks run (here a stand-in check that tells every mutant apart, so the listing is shown wrong)
    seen: list[str] = []

    def fake_run_one(m, base, scale=1.0, planned=None):  # noqa: ANN001, ANN202 - the worker's entry point
        seen.append(m.name)
        return {**camp.listed_row(m), "status": "killed", "killer": "stand-in", "rechecked": True}

    class InlinePool:  # the worker pool, in this process (the stand-in above is not importable by a worker)
        def __init__(self, max_workers: int) -> None: ...
        def __enter__(self): return self  # noqa: E704, ANN204
        def __exit__(self, *exc: object) -> None: ...  # noqa: E704
        def submit(self, fn, *args):  # noqa: ANN001, ANN202
            from concurrent.futures import Future
            f: Future = Future()
            f.set_result(fn(*args))
            return f

    monkeypatch.setattr(camp, "run_one", fake_run_one)
    monkeypatch.setattr(camp, "ProcessPoolExecutor", InlinePool)
    monkeypatch.setattr(camp, "baseline", lambda scale, only: {n: {"states": 1} for n in only})
    monkeypatch.setattr(camp, "usable", lambda base, scale: [])
    again = camp.campaign([m], workers=1, recheck_equivalent=True)
    assert seen == [name] and again["rows"][0]["status"] == "killed"


def _declarations() -> dict[str, Any]:
    """What every variant declares to the tools (``applicable_faults``, ``compiled_encoding``, ``encodings``), with
    no fault and with each timing fault (which takes a variant off the compiled engine)."""
    from groupspec.model import VARIANTS, Config, make
    from groupspec.model.core import TIMING_FAULTS

    table: dict[str, Any] = {}
    for name in sorted(VARIANTS):
        row: list[Any] = [sorted(VARIANTS[name].applicable_faults())]
        for faults in [frozenset()] + [frozenset({f}) for f in sorted(TIMING_FAULTS)]:
            try:
                proto = make(name, Config(members=2, partitions=2, faults=faults,
                                          assignor="range" if name == "zookeeper" else "sticky"))
            except ValueError:  # a fault the family does not model
                row.append("refused")
                continue
            row.append((proto.compiled_encoding(), sorted(map(str, proto.encodings()))))
        table[name] = row
    return table


def test_declarations_are_left_out_of_the_campaign_and_each_mutant_of_them_is_seen() -> None:
    """The campaign does not mutate what a variant declares to the tools (``DECLARATIONS``): no step of the protocol
    reads it. Each of its mutants changes a declared value of some variant, which tests/test_spec.py pins per
    variant (its expected encodings and the faults verify ran before the pages declared them)."""
    from groupspec.specmut.operators import declaration_mutants

    names = {m.name for m in generate()}
    mutants = declaration_mutants()
    assert len(mutants) >= 13 and not names & {m.name for m in mutants}
    with applied(None):
        unchanged = _declarations()
    for m in mutants:
        with applied(m):
            assert _declarations() != unchanged, f"{m.name}: no declared value changed"


def test_the_list_is_a_json_document_with_json() -> None:
    """``verify --spec-mutants --list --json``: a JSON list with the fields of the text's columns, row for row."""
    import json

    from click.testing import CliRunner

    from groupspec.cli import cli

    doc = CliRunner().invoke(cli, ["verify", "--spec-mutants", "--list", "--family", "classic", "--json"])
    assert doc.exit_code == 0, doc.output
    rows = json.loads(doc.output)
    text = CliRunner().invoke(cli, ["verify", "--spec-mutants", "--list", "--family", "classic"]).output
    assert rows and [[r["name"], r["family"], r["diff"]] for r in rows] == [
        line.split("\t") for line in text.splitlines()]
    assert {r["family"] for r in rows} == {"classic"}
