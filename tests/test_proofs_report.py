"""`groupspec prove` says only what it proves (issue 29): a row is "proved" only if every obligation under
it is; a failing consecution obligation makes the invariant "not inductive" (with its counterexample to
induction) and every conclusion drawn from the invariant "not proved", whatever the variant's expected
verdict; docs/proofs.md shows static-cooperative's rows exactly as the report has them."""
from __future__ import annotations

import re
from pathlib import Path

from groupspec.proofs import report as R

DOC = Path(__file__).resolve().parents[1] / "docs" / "proofs.md"


def _rows(failing: set[str]) -> list[dict]:
    out = []
    for label, kind, clause, action in (
        ("init implies one_owner", "init", "one_owner", None),
        ("Join preserves one_owner", "consecution", "one_owner", "Join"),
        ("Sync preserves one_owner", "consecution", "one_owner", "Sync"),
        ("invariant implies exclusive_ownership", "safety", "exclusive_ownership", None),
        ("Commit satisfies commit_fencing", "action-property", "commit_fencing", "Commit"),
        ("Join enabled under the invariant", "non-vacuity", "Join is enabled", "Join"),
    ):
        bad = label in failing
        out.append({"label": label, "kind": kind, "clause": clause, "action": action, "ok": not bad,
                    "verdict": "FAILED" if bad else ("witnessed" if kind == "non-vacuity" else "proved"),
                    "seconds": 0.0, "cti_text": "a state before, Join, a state after" if bad else ""})
    return out


def test_a_failing_consecution_obligation_makes_the_invariant_not_inductive() -> None:
    checks = R.invariant_rows("cooperative", _rows({"Join preserves one_owner"}), set())
    by = {c.name.split(" —")[0].split(":")[0]: c for c in checks}
    cons = by["the invariant is not inductive"]
    assert cons.verdict == "not inductive" and not cons.ok and "a state before, Join" in cons.detail
    for name in ("invariant implies exclusive_ownership", "commit_fencing on Commit"):
        assert by[name].verdict == "not proved" and not by[name].ok
        assert [o["label"] for o in by[name].data["depends"]] == ["Join preserves one_owner"]
    assert by["init implies each of the 1 invariant clauses"].verdict == "proved"
    assert R.proved_while_failed(checks) == []
    # every obligation proved: every row proved
    assert all(c.verdict in ("proved", "witnessed") and c.ok for c in R.invariant_rows("cooperative", _rows(set()), set()))


def test_expected_failures_are_as_expected_but_still_not_proved() -> None:
    want = {"Join preserves one_owner"}
    checks = R.invariant_rows("static-cooperative", _rows(want), want)
    assert all(c.ok for c in checks)
    said = {c.verdict for c in checks}
    assert "not inductive" in said and "not proved" in said
    assert [c.name for c in checks if c.verdict == "proved"] == ["init implies each of the 1 invariant clauses"]
    # expected to fail but proved: not as expected
    assert not all(c.ok for c in R.invariant_rows("static-cooperative", _rows(set()), want))


def test_the_guard_itself_catches_a_row_that_says_proved_over_a_failed_obligation() -> None:
    """The old report's shape: the consecution row kept "proved" after the failing obligations were taken out."""
    row = R.Check("unbounded safety", "static-cooperative", "invariant implies exclusive_ownership", "proved", True, 0.0,
                  data={"obligations": [{"label": "invariant implies exclusive_ownership", "verdict": "proved"}],
                        "depends": [{"label": "Join preserves coop_rep_assign", "verdict": "FAILED"}]})
    assert R.proved_while_failed([row]) and "Join preserves coop_rep_assign" in R.proved_while_failed([row])[0]


def _report_rows(protocol: str) -> list[R.Check]:
    return R.run_all(protocol, jobs=1).checks


def test_static_cooperative_is_not_printed_as_proved() -> None:
    checks = _report_rows("static-cooperative")
    assert R.proved_while_failed(checks) == []
    safety = [c for c in checks if c.family == "unbounded safety"]
    cons = [c for c in safety if c.verdict == "not inductive"]
    assert len(cons) == 1 and "Join preserves coop_rep_assign" in cons[0].name and cons[0].ok
    assert "counterexample to induction" in cons[0].detail
    assert not [c.name for c in safety if c.verdict == "proved" and not c.name.startswith("init implies")]
    assert any(c.name.startswith("invariant implies exclusive_ownership") and c.verdict == "not proved" for c in safety)
    _matches_docs("static-cooperative", checks)


def test_consumer_rows_say_only_what_they_prove() -> None:
    checks = _report_rows("consumer")
    assert R.proved_while_failed(checks) == []
    assert any(c.verdict == "proved" and "(inductive)" in c.name for c in checks)


def _matches_docs(protocol: str, checks: list[R.Check]) -> None:
    """docs/proofs.md has a block `prove --protocol <protocol>` whose lines are the report's rows."""
    text = DOC.read_text()
    m = re.search(rf"<!-- prove {re.escape(protocol)} -->\n```text\n(.*?)```", text, re.S)
    assert m, f"docs/proofs.md has no block for {protocol}"
    doc_lines = [ln.rstrip() for ln in m.group(1).splitlines() if ln.strip()]
    want = [f"{c.family} | {c.name} | {_shown(c)}" for c in checks]
    assert doc_lines == want, "docs/proofs.md differs from the report; the report's rows:\n" + "\n".join(want)


def _shown(c: R.Check) -> str:
    from groupspec.cli.prove import _shown as shown

    return shown(c.verdict, c.expect)
