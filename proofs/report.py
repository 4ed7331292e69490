"""``run_all``: every proof obligation of the project, with verdicts and timings (used by ``groupspec prove``).

Theory of operation
-------------------
Three families of checks, each reported obligation by obligation:

1. **Unbounded safety** (:mod:`~groupspec.proofs.classic` on :mod:`~groupspec.proofs.epr`): for each
   correct variant, ``init ⇒ clause``, ``inv ∧ action ⇒ clause'`` for every action and clause,
   ``inv ⇒ property`` and the action properties — any number of members and partitions.  For each
   broken variant the same obligations are run and at least one must fail with a counterexample.
2. **Bounded checks on model/'s own transition relation** (:mod:`~groupspec.proofs.bmc`): each broken
   variant yields a concrete violating run, replayed by ``groupspec.model`` and printed as its
   timeline; (``deep``) correct variants have no violation within k steps.
3. **Convergence** for cooperative: no weakly fair non-converging lasso (or deadlock) within k steps
   (Z3), and the ranking argument of :mod:`~groupspec.proofs.liveness` on instances up to 3x4.
4. **Drift (unbounded)** (:mod:`~groupspec.proofs.epr_drift`): sampled steps of each correct variant of
   model/ are runs of its relational actions; two mutants of model/ must have a step that is not.
   Relational mutants (``RELATIONAL_MUTANTS``) show that obligations no model/ mutant reaches can fail
   (``generation_skip`` fails ``generation_plus_one``).

Expected outcomes: a check of a correct variant is ``ok`` when it is proved; a check of a broken
variant is ``ok`` when the bug is *caught* (a counterexample is printed).  ``Report.ok`` is true when
every check is ok — ``groupspec prove`` exits 1 otherwise.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

CORRECT = ("eager", "static", "cooperative", "connect-delayed", "coordinator-assigns", "static-cooperative")
BROKEN_SAFETY = ("eager-no-revoke", "cooperative-direct-transfer", "unfenced-commits")
BROKEN_LIVENESS = ("cooperative-flappy",)
CONSUMER = ("consumer", "consumer-static", "consumer-no-wait-release", "consumer-unfenced-commits")  # KIP-848: proofs/consumer.py
# KIP-848 drift (proofs/consumer_drift.py): sampled states and steps of model/consumer.py against the encoding;
# the mutant's steps must be rejected.
CONSUMER_DRIFT = ("consumer", "consumer-static")
CONSUMER_DRIFT_MUTANTS = ("consumer-no-wait-release",)
CONSUMER_DRIFT_STEPS = 12
CONSUMER_STATES = 100  # states where a client and its member disagree, checked breadth-first (2 x 2)
CONSUMER_STATES_FAULTS = ("lose-answer", "late-commit", "timeout", "crash", "early-restart")
PROTOCOLS = CORRECT + BROKEN_SAFETY + BROKEN_LIVENESS + CONSUMER
RANKING_FAULTS = ("join", "crash", "leave", "timeout", "zombie")

# Obligations that fail because Kafka itself allows the state they forbid (each reproduced in the
# reference simulator): they must fail, with a counterexample, and every other obligation must hold.
# static-cooperative: a static member the rebalance timeout kept (KAFKA-8220) rejoins at its old
# generation and reports partitions the generation it missed gave away (scenario
# static-member-left-behind): the cooperative "reported owned partitions are unique and assigned"
# clauses do not survive its JoinGroup.
KAFKA_TOO = {
    "static-cooperative": ("Join preserves coop_rep_assign", "Join preserves coop_rep_unique"),
}

# model/ variant -> (relational protocol, relational bug)
RELATIONAL = {
    "eager": ("eager", None),
    "static": ("static", None),
    "cooperative": ("cooperative", None),
    "connect-delayed": ("cooperative", None),
    "coordinator-assigns": ("coordinator-assigns", None),
    "static-cooperative": ("static-cooperative", None),
    "eager-no-revoke": ("eager", "no_revoke_before_join"),
    "cooperative-direct-transfer": ("cooperative", "direct_transfer"),
    "unfenced-commits": ("eager", "unfenced_commits"),
}

# Relational mutants, one per obligation that no model/ mutant reaches: (relational protocol, bug, the
# obligation that must fail).  Run with the protocol they are attached to.
RELATIONAL_MUTANTS = {
    "cooperative": (("cooperative", "generation_skip", "generation_plus_one",
                     "a completed join phase may skip generations"),),
}

# EPR drift (proofs/epr_drift.py): model steps sampled with a fixed seed, each must be a run of the
# relational actions (correct variants), and a mutant of model/ must have a step that is not.
DRIFT_SEED = 5
DRIFT_STEPS = 8
DRIFT_MUTANTS = ("cooperative-direct-transfer", "eager-no-revoke")

# Small instances on which the broken variants' bugs show (members, partitions, faults, budget, depth).
BMC_INSTANCES = {
    "eager-no-revoke": (2, 2, ("join",), 1, 12),
    "cooperative-direct-transfer": (2, 2, ("join",), 1, 12),
    "unfenced-commits": (2, 1, ("zombie",), 1, 10),
    "eager": (2, 2, ("join", "crash", "zombie"), 2, 8),
    "static": (2, 2, ("join", "zombie"), 2, 8),
    "cooperative": (2, 2, ("join", "crash", "zombie"), 2, 8),
    "connect-delayed": (2, 2, ("join", "crash"), 2, 8),
    "coordinator-assigns": (2, 2, ("join", "crash", "zombie"), 2, 8),
}


def _n(k: int, one: str, many: str | None = None) -> str:
    """``_n(1, "step") == "1 step"``, ``_n(3, "step") == "3 steps"``."""
    return f"{k} {one if k == 1 else (many or one + 's')}"


@dataclass
class Check:
    family: str  # "unbounded safety" | "bounded safety" | "convergence"
    protocol: str
    name: str
    verdict: str
    ok: bool
    seconds: float
    expect: str = "hold"  # "hold" (correct variant) or "fail" (broken variant)
    detail: str = ""
    count: int = 1  # obligations summarised by this row
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    checks: list[Check]
    seconds: float
    protocols: list[str]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "protocols": self.protocols,
            "obligations": sum(c.count for c in self.checks),
            "checks": [{k: v for k, v in asdict(c).items()} for c in self.checks],
        }


# ------------------------------------------------------------------------------------------------
# 1. unbounded safety
# ------------------------------------------------------------------------------------------------
def _epr_job(protocol: str) -> list[dict[str, Any]]:
    """Run in a worker process: every obligation of one variant's relational spec (plain data back)."""
    from . import classic, epr

    proto, bug = RELATIONAL[protocol]
    spec = classic.build(classic.Variant(proto, bug))
    results = epr.check_obligations(spec)
    sanity = epr.check_actions_enabled(spec)
    out = []
    for r in results:
        d = asdict(r)
        d["label"] = r.label
        d["cti_text"] = epr.format_cti(r) if r.cti else ""
        out.append(d)
    for name, (ok, secs) in sanity.items():
        out.append({"spec": spec.name, "kind": "non-vacuity", "clause": f"{name} is enabled in some invariant state",
                    "action": name, "ok": ok, "seconds": secs, "verdict": "witnessed" if ok else "FAILED",
                    "label": f"{name} enabled under the invariant", "cti_text": "", "cti": None})
    return out


def _mutant_job(args: tuple[str, str, str, str]) -> dict[str, Any]:
    """A relational mutant: the one obligation it targets must fail with a counterexample."""
    from . import classic, epr

    proto, bug, clause, _why = args
    spec = classic.build(classic.Variant(proto, bug))
    rs = epr.check_obligations(spec, only=lambda o: o.clause == clause)
    failed = [r for r in rs if r.verdict == "FAILED"]
    return {"spec": spec.name, "clause": clause, "n": len(rs), "failed": [r.label for r in failed],
            "seconds": sum(r.seconds for r in rs), "cti": epr.format_cti(failed[0]) if failed else ""}


def _mutant_check(protocol: str, args: tuple[str, str, str, str], d: dict[str, Any]) -> Check:
    _p, bug, clause, why = args
    ok = bool(d["failed"])
    name = f"mutant {bug} ({why}) fails {clause}" if ok else f"mutant {bug} must fail {clause}"
    return Check("unbounded safety", protocol, name, "caught" if ok else "MISSED", ok, d["seconds"], "fail",
                 d["cti"], d["n"], d)


def _drift_job(protocol: str) -> dict[str, Any]:
    """EPR drift: sampled model steps against the relational actions (proofs/epr_drift.py)."""
    from . import epr_drift

    mutant = protocol in DRIFT_MUTANTS
    r = epr_drift.sample(protocol, DRIFT_SEED, 40 if mutant else DRIFT_STEPS, stop_at_first=mutant)
    return asdict(r)


def _drift_check(protocol: str, d: dict[str, Any]) -> Check:
    from . import epr_drift

    spec = epr_drift.RELATIONAL_OF[protocol].name
    where = f"{d['instance']}, seed {d['seed']}"
    if protocol in DRIFT_MUTANTS:
        ok = bool(d["rejected"])
        name = (f"drift caught: a step of this mutant is no run of classic/{spec}'s actions ({where})" if ok
                else f"drift: some step must be rejected by classic/{spec} ({where})")
        return Check("drift (unbounded)", protocol, name, "caught" if ok else "MISSED", ok, d["seconds"], "fail",
                     "\n".join(d["rejected"]), d["steps"], d)
    ok = not d["rejected"] and not d["unknown"]
    name = f"{d['steps']} sampled model steps are runs of classic/{spec}'s actions ({where})"
    detail = "\n".join(d["rejected"]) or "\n".join(f"{n} x {k}" for k, n in sorted(d["used"].items()))
    return Check("drift (unbounded)", protocol, name, "admitted" if ok else ("FAILED" if d["rejected"] else "unknown"),
                 ok, d["seconds"], "hold", detail, d["steps"], d)


def _epr_checks(protocol: str, rows: list[dict[str, Any]]) -> list[Check]:
    broken = protocol in BROKEN_SAFETY
    if broken:
        failed = [r for r in rows if not r["ok"] and r["kind"] != "non-vacuity"]
        total = sum(r["seconds"] for r in rows)
        if failed:
            first = failed[0]
            names = ", ".join(r["label"] for r in failed[:4]) + (" ..." if len(failed) > 4 else "")
            return [Check("unbounded safety", protocol, f"{_n(len(failed), 'obligation fails', 'obligations fail')}: {names}",
                          "caught", True, total, "fail", first["cti_text"], len(rows),
                          {"failed": [r["label"] for r in failed],
                           "obligations": [_ob(r) for r in rows]})]
        return [Check("unbounded safety", protocol, "some obligation must fail", "MISSED", False, total,
                      "fail", "every obligation was proved: the broken variant is not caught", len(rows))]
    return invariant_rows(protocol, rows, set(KAFKA_TOO.get(protocol, ())))


def _ob(r: dict[str, Any]) -> dict[str, Any]:
    return {"label": r["label"], "verdict": r["verdict"], "seconds": round(r["seconds"], 4)}


def invariant_rows(protocol: str, rows: list[dict[str, Any]], expected_fail: set[str]) -> list[Check]:
    """One row per group of obligations of an inductive-invariant proof, saying only what they prove.

    ``rows``: every obligation as a dict (``label``, ``kind`` in init / consecution / safety /
    action-property / non-vacuity, ``clause``, ``action``, ``ok``, ``verdict``, ``seconds``,
    ``cti_text``). A row is "proved" only if every obligation under it is. If a consecution obligation
    fails, the invariant is **not inductive**: the consecution row says so, with its counterexamples
    to induction, and every row that concludes something from the invariant (``invariant implies P``,
    an action property) is "not proved", its own obligation notwithstanding — those obligations are
    listed under it (``data["depends"]``). ``expected_fail``: the consecution obligations that must
    fail because Kafka allows the state they forbid (``KAFKA_TOO``); the rows are then as expected
    (``ok``, ``expect="kafka"``) if exactly those fail, but they still say "not inductive" and "not proved".
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        key = r["kind"] if r["kind"] in ("init", "consecution", "non-vacuity") else r["clause"]
        groups.setdefault((r["kind"], key), []).append(r)
    n_clauses = len({r["clause"] for r in rows if r["kind"] == "init"})
    n_actions = len({r["action"] for r in rows if r["kind"] in ("non-vacuity", "consecution")})
    cons = [r for r in rows if r["kind"] == "consecution"]
    cons_failed = [r for r in cons if not r["ok"]]
    inductive = not cons_failed
    failed_labels = {r["label"] for r in cons_failed}
    as_expected = (failed_labels == expected_fail and all(r["verdict"] == "FAILED" for r in cons_failed)
                   and expected_fail <= {r["label"] for r in cons})
    expect = "kafka" if expected_fail else "hold"
    checks: list[Check] = []
    for (kind, key), rs in groups.items():
        own_ok = all(r["ok"] for r in rs)
        secs = sum(r["seconds"] for r in rs)
        data: dict[str, Any] = {"obligations": [_ob(r) for r in rs]}
        detail = ""
        if kind == "init":
            name = f"init implies each of the {n_clauses} invariant clauses"
        elif kind == "consecution":
            name = f"each of the {n_actions} actions preserves each invariant clause (inductive)"
        elif kind == "safety":
            name = f"invariant implies {key}"
        elif kind == "non-vacuity":
            name = f"each of the {n_actions} actions is enabled in some invariant state"
        else:
            acts = [r["action"] for r in rs]
            name = f"{key} on {acts[0]}" if len(acts) == 1 else f"{key} on every step ({len(acts)} actions)"
        row_expect = "hold"
        if kind == "consecution" and not inductive:
            name = (f"the invariant is not inductive: {len(cons_failed)} of {len(rs)} consecution obligations fail "
                    f"({', '.join(r['label'] for r in cons_failed[:4])}{' ...' if len(cons_failed) > 4 else ''})")
            verdict = "not inductive"
            ok = as_expected
            row_expect = expect
            detail = "counterexample to induction:\n" + "\n\n".join(r["cti_text"] for r in cons_failed if r["cti_text"])
        elif kind == "consecution" and expected_fail:
            verdict, ok = "proved", False  # Kafka allows what the invariant forbids: it must not be inductive
            name += f" (UNEXPECTED: {', '.join(sorted(expected_fail))} must fail as in Kafka)"
        elif kind in ("safety", "action-property") and own_ok and not inductive:
            verdict = "not proved"
            name += " — nothing about reachable states: the invariant is not inductive"
            ok = as_expected
            row_expect = expect
            data["depends"] = [_ob(r) for r in cons_failed]
        elif own_ok:
            verdict = "witnessed" if kind == "non-vacuity" else "proved"
            ok = True
        else:
            verdict = "FAILED" if any(r["verdict"] == "FAILED" for r in rs) else "unknown"
            bad = [r["label"] for r in rs if not r["ok"]]
            ok = False
            detail = "failing: " + "; ".join(bad) + "\n" + "\n\n".join(r["cti_text"] for r in rs if not r["ok"] and r["cti_text"])
        family = "unbounded safety" if kind != "non-vacuity" else "non-vacuity"
        checks.append(Check(family, protocol, name, verdict, ok, secs, row_expect, detail.strip(), len(rs), data))
    return checks


def proved_while_failed(checks: list[Check]) -> list[str]:
    """Rows that say "proved" although an obligation under them (their own or one they depend on) did not hold."""
    out = []
    for c in checks:
        if c.verdict != "proved":
            continue
        under = list(c.data.get("obligations", ())) + list(c.data.get("depends", ()))
        bad = [o["label"] for o in under if o.get("verdict") != "proved"]
        if bad:
            out.append(f"{c.protocol}: {c.name!r} says proved, yet {', '.join(bad)} did not hold")
    return out


# ------------------------------------------------------------------------------------------------
# 2. bounded safety on model/
# ------------------------------------------------------------------------------------------------
def _bmc_job(protocol: str) -> dict[str, Any]:
    from groupspec.model import Config, make

    from . import bmc

    m, p, faults, budget, depth = BMC_INSTANCES[protocol]
    proto = make(protocol, Config(members=m, partitions=p, faults=frozenset(faults), budget=budget))
    res = bmc.bmc(proto, depth)
    out = {"depth": res.depth_reached, "seconds": res.seconds, "rounds": res.rounds, "notes": res.notes,
           "instance": f"{_n(m, 'member')} x {_n(p, 'partition')}, faults {','.join(faults) or '-'}, budget {budget}"}
    if res.found is not None:
        out["violated"] = res.found.violated
        out["explanation"] = res.found.explanation
        out["timeline"] = "\n".join(bmc.timeline(proto, res.found))
        out["steps"] = len(res.found.actions)
    return out


def _bmc_check(protocol: str, d: dict[str, Any]) -> Check:
    broken = protocol in BROKEN_SAFETY
    name = f"no violation within {d['depth']} steps ({d['instance']})"
    if broken:
        if "violated" in d:
            return Check("bounded safety", protocol,
                         f"{d['violated']} violated after {_n(d['steps'], 'step')} ({d['instance']})", "caught", True,
                         d["seconds"], "fail", f"{d['explanation']}\n{d['timeline']}", 1, d)
        return Check("bounded safety", protocol, name, "MISSED", False, d["seconds"], "fail",
                     "no counterexample found: the broken variant is not caught", 1, d)
    if "violated" in d:
        return Check("bounded safety", protocol, f"{d['violated']} violated ({d['instance']})", "FAILED", False,
                     d["seconds"], "hold", f"{d['explanation']}\n{d['timeline']}", 1, d)
    ok = not d["notes"]
    return Check("bounded safety", protocol, name, "no violation" if ok else "unknown", ok, d["seconds"], "hold",
                 "; ".join(d["notes"]), 1, d)


# ------------------------------------------------------------------------------------------------
# 3. convergence
# ------------------------------------------------------------------------------------------------
def _lasso_job(args: tuple[str, int, int, tuple[str, ...], int, int]) -> dict[str, Any]:
    from groupspec.model import Config, make

    from . import bmc

    protocol, m, p, faults, budget, depth = args
    proto = make(protocol, Config(members=m, partitions=p, faults=frozenset(faults), budget=budget))
    res = bmc.lasso(proto, depth)
    out = {"depth": res.depth_reached, "seconds": res.seconds, "notes": res.notes, "rounds": res.rounds,
           "instance": f"{_n(m, 'member')} x {_n(p, 'partition')}, faults {','.join(faults) or '-'}, budget {budget}"}
    if res.found is not None:
        out["explanation"] = res.found.explanation
        out["timeline"] = "\n".join(bmc.timeline(proto, res.found))
    return out


def _lasso_check(protocol: str, d: dict[str, Any]) -> Check:
    broken = protocol in BROKEN_LIVENESS
    if "explanation" in d:
        return Check("convergence", protocol, f"bounded liveness ({d['instance']}): {d['explanation']}",
                     "caught" if broken else "FAILED", broken, d["seconds"], "fail" if broken else "hold",
                     d["timeline"], 1, d)
    ok = not d["notes"] and not broken
    verdict = "no fair lasso" if not d["notes"] else "unknown"
    if broken and not d["notes"]:
        verdict = "MISSED"
    return Check("convergence", protocol,
                 f"no weakly fair non-converging lasso or deadlock within {d['depth']} steps ({d['instance']})",
                 verdict, ok, d["seconds"], "fail" if broken else "hold", "; ".join(d["notes"]), 1, d)


def _ranking_job(args: tuple[str, int, int, tuple[str, ...], int]) -> dict[str, Any]:
    from . import liveness

    protocol, m, p, faults, budget = args
    return asdict(liveness.ranking(protocol, m, p, faults, budget))


def _ranking_check(protocol: str, d: dict[str, Any]) -> Check:
    name = f"ranking argument ({d['instance']})"
    detail = d["detail"]
    if protocol in BROKEN_LIVENESS:
        ok = not d["ok"]
        return Check("convergence", protocol, name + ("" if d["ok"] else f": {detail}"),
                     "caught" if ok else "MISSED", ok, d["seconds"], "fail", detail, 1, d)
    verdict = "proved" if d["ok"] else "FAILED"
    if d["ok"]:
        name += f": converges within {d['bound']} protocol steps"
    return Check("convergence", protocol, name, verdict, d["ok"], d["seconds"], "hold", detail, 1, d)


# ------------------------------------------------------------------------------------------------
def run_all(protocol: str | None = None, deep: bool = False, jobs: int | None = None,
            progress: Callable[[str], None] | None = None) -> Report:
    """Every check for ``protocol`` (or all of them). ``deep`` adds the slow bounded checks."""
    t0 = time.perf_counter()
    chosen, tasks = plan(protocol, deep)
    workers = jobs or min(2, os.cpu_count() or 1)
    results: list[Any] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futs = [(i, kind, p, pool.submit(fn, arg)) for i, (kind, p, fn, arg) in enumerate(tasks)]
        for i, kind, p, fut in futs:
            results[i] = fut.result()
            if progress is not None:
                progress(f"{kind} {p}")
    return assemble(chosen, tasks, results, t0, progress)


Task = tuple[str, str, Callable[[Any], Any], Any]  # kind, protocol, a picklable function, its argument


def plan(protocol: str | None = None, deep: bool = False) -> tuple[list[str], list[Task]]:
    """The chosen protocols and the independent tasks of :func:`run_all` (each ``fn(arg)`` may run in any
    process: ``groupspec verify`` runs them in its one pool beside the model checks); :func:`assemble` makes the
    report from their results."""
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    chosen = [protocol] if protocol else list(PROTOCOLS)
    tasks: list[Task] = []
    for p in chosen:
        if p in RELATIONAL:
            tasks.append(("epr", p, _epr_job, p))
        for m in RELATIONAL_MUTANTS.get(p, ()):
            tasks.append(("mutant", p, _mutant_job, m))
        if (p in RELATIONAL and p not in BROKEN_SAFETY) or p in DRIFT_MUTANTS:
            tasks.append(("drift", p, _drift_job, p))
        if p in BROKEN_SAFETY or (deep and p in BMC_INSTANCES):
            tasks.append(("bmc", p, _bmc_job, p))
    if "cooperative" in chosen:
        tasks.append(("lasso", "cooperative", _lasso_job, ("cooperative", 2, 2, (), 0, 10)))
        for members, parts in ((2, 2), (3, 3)):
            tasks.append(("ranking", "cooperative", _ranking_job, ("cooperative", members, parts, ("join", "crash"), 1)))
        if deep:
            tasks.append(("lasso", "cooperative", _lasso_job, ("cooperative", 2, 3, ("join",), 1, 12)))
            tasks.append(("lasso", "cooperative", _lasso_job, ("cooperative", 3, 4, (), 0, 8)))
            tasks.append(("ranking", "cooperative", _ranking_job, ("cooperative", 3, 4, RANKING_FAULTS, 2)))
    for p in chosen:
        if p in CORRECT:
            tasks.append(("ranking", p, _ranking_job, (p, 3, 4, RANKING_FAULTS, 1)))
    if "cooperative-flappy" in chosen:
        tasks.append(("ranking", "cooperative-flappy", _ranking_job, ("cooperative-flappy", 2, 2, (), 0)))
        tasks.append(("lasso", "cooperative-flappy", _lasso_job, ("cooperative-flappy", 2, 2, (), 0, 10)))
    for p in chosen:
        if p in CONSUMER_DRIFT or p in CONSUMER_DRIFT_MUTANTS:
            tasks.append(("cdrift", p, _consumer_drift_job, p))
    for p in chosen:
        if p in CONSUMER:  # the KIP-848 relational proofs (proofs/consumer.py)
            tasks.append(("consumer", p, _consumer_checks, p))
    return chosen, tasks


def assemble(chosen: list[str], tasks: list[Task], results: list[Any], t0: float,
             progress: Callable[[str], None] | None = None) -> Report:
    """The report from the results of :func:`plan`'s tasks (``results[i]`` is ``tasks[i]``'s)."""
    checks: list[Check] = []
    order = {"epr": 0, "mutant": 1, "drift": 2, "cdrift": 2, "bmc": 3, "lasso": 4, "ranking": 5, "consumer": 6}
    rows = sorted(((order[kind], i, kind, p) for i, (kind, p, _fn, _arg) in enumerate(tasks)),
                  key=lambda x: (chosen.index(x[3]) if x[3] in chosen else 99, x[0], x[1]))
    for _o, i, kind, p in rows:
        data = results[i]
        if kind == "epr":
            checks += _epr_checks(p, data)
        elif kind == "mutant":
            checks.append(_mutant_check(p, tasks[i][3], data))
        elif kind == "drift":
            checks.append(_drift_check(p, data))
        elif kind == "cdrift":
            checks.append(_consumer_drift_check(p, data))
        elif kind == "bmc":
            checks.append(_bmc_check(p, data))
        elif kind == "lasso":
            checks.append(_lasso_check(p, data))
        elif kind == "ranking":
            checks.append(_ranking_check(p, data))
    for p in chosen:  # after every other check of all the protocols, as before
        for i, (kind, q, _fn, _arg) in enumerate(tasks):
            if kind == "consumer" and q == p:
                checks += results[i]
                if progress is not None:
                    progress(f"epr {p}")
    return Report(checks, time.perf_counter() - t0, chosen)


def _consumer_checks(protocol: str) -> list[Check]:
    """The KIP-848 relational proofs (proofs/consumer.py): rows as for the classic variants; a broken
    variant's obligations: at least one must fail."""
    from .consumer import VARIANTS, check_all

    obs = check_all(VARIANTS[protocol])
    if protocol in ("consumer", "consumer-static"):
        return invariant_rows(protocol, [o.row() for o in obs], set())
    secs = sum(o.seconds for o in obs)
    failed = [o for o in obs if not o.ok and o.kind != "non-vacuity"]
    data = {"obligations": [_ob(o.row()) for o in obs], "failed": [o.label for o in failed]}
    ok = bool(failed)
    name = f"{len(failed)} obligation(s) fail: " + ", ".join(o.label for o in failed[:3]) if ok else "some obligation must fail"
    return [Check("unbounded safety", protocol, name, "caught" if ok else "MISSED", ok, secs, "fail",
                  failed[0].counterexample if failed else "", len(obs), data)]


def _consumer_drift_job(protocol: str) -> dict[str, Any]:
    from . import consumer_drift

    from groupspec.model import Config, make

    mutant = protocol in CONSUMER_DRIFT_MUTANTS
    r = asdict(consumer_drift.sample(protocol, DRIFT_SEED, 60 if mutant else CONSUMER_DRIFT_STEPS, stop_at_first=mutant))
    if not mutant:  # the state half where the in-flight rules act, breadth-first (epochs apart, late commits)
        t0 = time.perf_counter()
        proto = make(protocol, Config(members=2, partitions=2, faults=frozenset(CONSUMER_STATES_FAULTS), budget=3,
                                      assignor="uniform"))
        n, problems = consumer_drift.check_states(proto, CONSUMER_STATES)
        r["rejected"] += [f"state: {p}" for p in problems]
        r["in_flight_states"] = n
        r["seconds"] += time.perf_counter() - t0
    return r


def _consumer_drift_check(protocol: str, d: dict[str, Any]) -> Check:
    where = f"{d['instance']}, seed {d['seed']}"
    if protocol in CONSUMER_DRIFT_MUTANTS:
        ok = bool(d["rejected"])
        name = (f"drift caught: a step of this mutant of model/consumer.py is no run of the KIP-848 encoding ({where})"
                if ok else f"drift: some step must be rejected by the KIP-848 encoding ({where})")
        return Check("drift (unbounded)", protocol, name, "caught" if ok else "MISSED", ok, d["seconds"], "fail",
                     "\n".join(d["rejected"]), d["steps"], d)
    ok = not d["rejected"] and not d["unknown"]
    name = (f"{d['states']} sampled states and the first {d['in_flight_states']} with epochs apart (2 x 2, faults "
            f"{','.join(CONSUMER_STATES_FAULTS)}, budget 3) satisfy the KIP-848 invariant and agree on every commit's "
            f"answer; {d['steps']} sampled steps are runs of its actions ({where})")
    detail = "\n".join(d["rejected"]) or "\n".join(f"{n} x {k}" for k, n in sorted(d["used"].items()))
    return Check("drift (unbounded)", protocol, name, "admitted" if ok else ("FAILED" if d["rejected"] else "unknown"),
                 ok, d["seconds"], "hold", detail, d["steps"], d)
