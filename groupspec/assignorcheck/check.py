"""The assignor checker: does a candidate partition assignor keep Kafka's invariants?

Theory of operation
-------------------
``check_assignor(candidate)`` loads the candidate (:mod:`groupspec.assignorcheck.load`), then runs one
Hypothesis search per *property*. Each property pairs a strategy from :mod:`groupspec.strategies` with a
pure check from :mod:`groupspec.assignorcheck.core`; the search tries ``examples`` group states (seeded, so
the same seed gives the same report), and on the first violation Hypothesis shrinks the input. The check
records every failing state it sees; since Hypothesis replays the minimal failing example last, the recorded
one is the shrunk counterexample, reported with the candidate's output and a one-line explanation.

Properties (assignors.md §2) and when they apply:

====  ==============================================  ===========================================
I1    output keys equal the member set                 all
I2    no partition assigned twice                      all
I3    only subscribed, existing partitions             all
I4    complete (cooperative: once converged)           all
I5    strong movability balance                        sticky-like (name says sticky, or kind=sticky)
I6    added ∩ revoked = ∅ per round                    cooperative
I6′   generation-validated transfers                   cooperative
I7    equal to Kafka's Range / RoundRobin              candidates named range / roundrobin
I8    converges within 4 follow-up rounds              cooperative
I9    no 2-cycles of movement per topic                sticky-like
I10   independent of the input's member order          all
I11   no exception/hang/malformed output               all
I12   racks change nothing unless KIP-881 applies      candidates declaring rack-awareness (racks.py)
C1    multi-round churn (Hypothesis state machine)     all (checks the above that apply, every round)
S1    within a time budget at scale-test sizes        all (:mod:`.scale`; ``--thorough``: up to 2,000 × 1M)
====  ==============================================  ===========================================

A cooperative candidate is driven the way ``CooperativeStickyAssignorTest.verifyValidityAndBalance`` drives
Kafka's: round after round, each round's output fed back as the members' owned partitions at the next
generation, until a round revokes nothing (at most 4 follow-ups).

Two *quality* figures are reported besides the verdicts (they never change the exit status, since Kafka's
assignors do not promise them): how many partitions moved compared with the fewest that had to move to reach
the best balance, and how often the balance is worse than the best achievable — both from the exact min-cost
flow oracle in :mod:`groupspec.assignorcheck.optimum`.

A call that raises, hangs past ``call_timeout`` or returns malformed output fails I11; the other properties
skip that example and go on. A hang costs one ``call_timeout``; after ``hang_budget`` hangs in one run the
candidate is still called on new inputs under a shorter limit, so a candidate that hangs on some inputs is still
judged on the properties the other inputs decide; only when the hangs have cost ``hang_seconds_cap`` in all is
it no longer called on new inputs (the affected properties then say how many examples were skipped).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import assume, given, seed as hseed
from hypothesis import strategies as st

from . import strategies as gs
from .churn import churn_quality, round_checks, run_churn
from .core import (
    Assignment, as_sets, canonical, check_complete, check_cooperative, check_generation_validated, check_members,
    check_movability, check_no_duplicates, check_no_two_cycles, check_subscribed_only, describe_state,
    diff_assignments, expected_range, expected_roundrobin, reorder,
)
from .determinism import p_across_instances, p_across_processes, applies_instances, applies_processes
from .classes import CLASS_IDS, classify, class_states
from .faults import fault_cases, faulted, p_failure_paths
from .engine import (
    HELD, MAX_FOLLOW_UPS, NA, VIOLATED, AssignorCheckFailed, PropertyResult, Report, State, Ctx, Skip,
    Violation, seed_for, search_settings,
)
from .kinds import infer_kind, looks_cooperative
from .load import CallRunner, candidate_from_object
from .scale import DEFAULT_SIZES, THOROUGH_SIZES, run_scale
from .racks import call_args, check_racks_ignored, rack_mode, strip_racks
from .optimum import balance_gap, moves_of, optimum

__all__ = ["PROPERTIES", "Report", "PropertyResult", "AssignorCheckFailed", "check_assignor", "assert_assignor",
           "compare", "shared_states", "HELD", "VIOLATED", "NA", "MAX_FOLLOW_UPS"]

# ---------------------------------------------------------------------------------------- properties

Failure = tuple[str, Assignment | None, dict[str, Any]]  # explanation, output, extra fields
Check = Callable[[Any, Ctx], Failure | None]


def _single(check: Callable[[dict[str, int], dict[str, dict[str, Any]], Assignment], str | None]) -> Check:
    def run(state: State, ctx: Ctx) -> Failure | None:
        ppt, subs = state
        out = ctx.round(ppt, subs)
        why = check(ppt, subs, out)
        return (why, out, {}) if why else None
    return run


def _p_complete(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        raise Skip("did not converge (I8)")
    why = check_complete(ppt, subs, r.final)
    if why:
        extra = {"rounds": len(r.rounds)} if ctx.cooperative else {}
        return why + (f" after {len(r.rounds)} round(s)" if ctx.cooperative else ""), r.final, extra
    return None


def _p_balance(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        raise Skip("did not converge (I8)")
    why = check_movability(ppt, subs, r.final)
    return (why, r.final, {"rounds": len(r.rounds)}) if why else None


def _per_round(check: Callable[[dict[str, dict[str, Any]], Assignment, Ctx], str | None]) -> Check:
    def run(state: State, ctx: Ctx) -> Failure | None:
        ppt, subs = state
        r = ctx.converge(ppt, subs)
        for i, (s, out) in enumerate(r.rounds, 1):
            why = check(s, out, ctx)
            if why:
                extra: dict[str, Any] = {"round": i}
                if i > 1:
                    extra["round_input"] = describe_state(ppt, s)
                return (f"round {i}: {why}" if ctx.cooperative else why), out, extra
        return None
    return run


def _p_converges(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        return (f"still revoking partitions after {MAX_FOLLOW_UPS} follow-up rounds", r.final,
                {"rounds": len(r.rounds)})
    return None


def _p_kafka_equal(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    out = ctx.round(ppt, subs)
    kind = ctx.cand.kind
    assert kind is not None  # _kafka_kind: this property runs on range and roundrobin candidates only
    expected, oracle = _expected(kind, ppt, subs)
    why = diff_assignments(expected, out)
    return (f"{why} ({oracle})", out, {"expected": canonical(expected)}) if why else None


def _expected(kind: str, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> tuple[Assignment, str]:
    """Kafka's Range/RoundRobin output: the project's own assignor when present, else the §1.1/§1.2 spec."""
    try:
        from groupspec.reference.assignors import get
        ref = get(kind)
        counts, racks = call_args(ppt)  # range is rack-aware (KIP-881): a racked input passes its racks
        return ref.assign(counts, subs, **(racks if getattr(ref, "rack_aware", False) else {})), \
            f"project's {kind} assignor"
    except ImportError:
        pass
    return (expected_range if kind == "range" else expected_roundrobin)(ppt, subs), f"Kafka's {kind} rule"


def _p_order(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    first = ctx.round(ppt, subs)
    again = ctx.round(ppt, subs)
    if as_sets(first) != as_sets(again):
        return (f"two calls on the same input differ: {diff_assignments(first, again, 'the first call gave')}",
                again, {})
    order = list(reversed(list(subs)))
    flipped = ctx.round(ppt, reorder(subs, order))
    if as_sets(first) != as_sets(flipped):
        why = diff_assignments(first, flipped, "in the original order it got")
        what = ("reversing the order of the members (and of each member's topics and owned partitions)"
                if len(subs) > 1 else "reversing the order of the only member's topics and owned partitions")
        return f"{what} changes the result: {why}", flipped, {"reordered_members": order}
    return None


def _p_robust(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    res = ctx.call(ppt, subs)
    if res.failure == "skipped":
        raise Skip(res.message)
    if res.failure:
        return res.message, None, {"failure": res.failure}
    return None


def _p_racks_ignored(state: State, ctx: Ctx) -> Failure | None:
    ppt, subs = state
    assume(not any(rack_mode(ppt, subs).values()))  # drawn so by construction (rack_mode_off)
    out = ctx.round(ppt, subs)
    bare_ppt, bare_subs = strip_racks(ppt, subs)
    why = check_racks_ignored(ppt, subs, out, ctx.round(bare_ppt, bare_subs))
    return (why, out, {}) if why else None


def _rack_aware(ctx: Ctx) -> str | None:
    return None if ctx.cand.rack_aware else "the candidate does not declare rack-awareness (rack_aware / --rack-aware)"


@dataclass
class Property:
    id: str
    name: str
    strategy: Callable[[Ctx], st.SearchStrategy[Any]]
    check: Check
    applies: Callable[[Ctx], str | None]  # None when it applies, else the reason it does not
    #: the property's input built around a state of one input class (None: the catalogue does not apply)
    sweep: Callable[[Ctx, st.SearchStrategy[State]], st.SearchStrategy[Any]] | None = lambda c, s: s


def _all(_: Ctx) -> str | None:
    return None


def _coop(ctx: Ctx) -> str | None:
    return None if ctx.cooperative else "eager candidate"


def _sticky(ctx: Ctx) -> str | None:
    return None if ctx.sticky else "not sticky-like (its name does not say sticky; use --kind sticky)"


def _kafka_kind(ctx: Ctx) -> str | None:
    return None if ctx.cand.kind in ("range", "roundrobin") else "candidate does not declare itself range/roundrobin"


def _deterministic(ctx: Ctx) -> str | None:
    return "the candidate declares itself nondeterministic (--nondeterministic-ok)" if ctx.nondeterministic_ok else None


def _mixed(ctx: Ctx) -> st.SearchStrategy[State]:
    return ctx.states()


def _mixed_unusual(ctx: Ctx) -> st.SearchStrategy[State]:
    return st.one_of(ctx.states(), ctx.states(unusual=True))


def _history(ctx: Ctx) -> st.SearchStrategy[State]:
    return ctx.states(history=True)


def _pairs(ctx: Ctx) -> st.SearchStrategy[tuple[State, State]]:
    return st.tuples(ctx.states(), ctx.states(history=True))


PROPERTIES: list[Property] = [
    Property("I11", "no exception, hang or malformed output on valid but unusual input",
             lambda c: c.states(unusual=True), _p_robust, _all),
    Property("I1", "output keys equal the member set", _mixed_unusual, _single(lambda p, s, o: check_members(s, o)), _all),
    Property("I2", "no partition assigned twice", _mixed_unusual, _single(lambda p, s, o: check_no_duplicates(o)), _all),
    Property("I3", "only partitions of subscribed, existing topics", _mixed_unusual, _single(check_subscribed_only), _all),
    Property("I4", "every subscribed partition assigned (cooperative: once converged)", _mixed_unusual, _p_complete, _all),
    Property("I5", "movability balance: |A| > |B|+1 ⇒ A holds nothing B subscribes to", _mixed, _p_balance, _sticky),
    Property("I6", "cooperative: added ∩ revoked = ∅ in every round", _mixed, _per_round(lambda s, o, c: check_cooperative(s, o)), _coop),
    Property("I6'", "cooperative: only the highest-generation claimant keeps a claimed partition",
             _history, _per_round(lambda s, o, c: check_generation_validated(s, o, c.java_parity)), _coop),
    Property("I7", "equal to Kafka's Range/RoundRobin", _mixed_unusual, _p_kafka_equal, _kafka_kind),
    Property("I8", "cooperative: converges within 4 follow-up rounds", _mixed, _p_converges, _coop),
    Property("I8f", "cooperative failure paths (lost SyncGroup answer, missed round, member leaving half-way)",
             fault_cases, p_failure_paths, _coop, sweep=faulted),
    Property("I9", "no 2-cycles of movement per topic in one assign call (Kafka isSticky)",
             _history, _per_round(lambda s, o, c: check_no_two_cycles(s, o)), _sticky),
    Property("I10", "deterministic and independent of the input's member order", _mixed, _p_order, _deterministic),
    Property("I10p", "same result in processes with different PYTHONHASHSEED", _mixed, p_across_processes,
             applies_processes),
    Property("I10i", "instances in one process do not share state (two consumers, one process)", _pairs,
             p_across_instances, applies_instances, sweep=lambda c, s: st.tuples(s, c.states(history=True))),
    Property("I12", "racks change nothing unless KIP-881's conditions hold",
             lambda c: c.states(rack_mode_off=True), _p_racks_ignored, _rack_aware, sweep=None),
]

PROPERTY_IDS: list[str] = [p.id for p in PROPERTIES] + ["C1", "S1"]


# --------------------------------------------------------------------------------------- the search


def _run_property(prop: Property, ctx: Ctx, n: int, seed: int) -> PropertyResult:
    """The property's own search over ``n`` examples, then ``ctx.per_class`` examples of every input class of
    the catalogue (:mod:`.classes`), each class its own seeded search, so a violation found there shrinks within
    its class. Stops at the first violation."""
    reason = prop.applies(ctx)
    if reason:
        return PropertyResult(prop.id, prop.name, NA, 0, None, reason)
    box: dict[str, Any] = {"tried": 0, "evaluated": 0, "skipped": 0, "fail": None, "failed_once": False}
    sources: list[tuple[str, Any, int]] = [("", prop.strategy(ctx), n)]
    if prop.sweep is not None and ctx.per_class > 0:
        ctx.swept.append(prop.id)
        sources += [(cid, prop.sweep(ctx, class_states(cid, ctx.domain)), ctx.per_class) for cid in CLASS_IDS]
    for cid, strategy, count in sources:
        _search(prop, ctx, strategy, count, seed_for(seed, f"{prop.id}:{cid}" if cid else prop.id), box)
        if box["fail"] is not None:
            state, (why, out, extra) = box["fail"]
            ppt, subs = state[0] if isinstance(state[0], tuple) else state  # pairs: the first state is the input
            cx = {"input": describe_state(ppt, subs), "output": canonical(out) if out is not None else None,
                  "explanation": why, **extra, "classes": sorted(classify(ppt, subs))}
            return PropertyResult(prop.id, prop.name, VIOLATED, box["tried"], cx)
    why = box.get("why", "")
    note = f"{box['skipped']} example(s) skipped: the candidate failed on them (the first: {why})" if box["skipped"] else ""
    if box["evaluated"] == 0:
        return PropertyResult(prop.id, prop.name, NA, box["tried"], None,
                              f"no example could be evaluated: the candidate failed on every input (the first: {why})")
    return PropertyResult(prop.id, prop.name, HELD, box["tried"], None, note)


def _search(prop: Property, ctx: Ctx, strategy: Any, n: int, hyp_seed: int, box: dict[str, Any]) -> None:
    @hseed(hyp_seed)
    @search_settings(n)
    @given(strategy)
    def search(state: Any) -> None:
        if not box["failed_once"]:
            box["tried"] += 1
            ctx.coverage.add(state)
        try:
            res = prop.check(state, ctx)
        except Skip as e:
            if not box["failed_once"]:
                box["skipped"] += 1
                box.setdefault("why", str(e))
            return
        if not box["failed_once"]:
            box["evaluated"] += 1
        if res is not None:
            box["failed_once"] = True
            box["fail"] = (state, res)
            raise Violation(res[0])

    try:
        search()
    except Exception:  # noqa: BLE001 - Violation, or Hypothesis' Flaky wrapping it
        if box["fail"] is None:
            raise


# ---------------------------------------------------------------------------------------------- API


def check_assignor(candidate: Any, protocol: str | None = None, examples: int = 200, seed: int = 0, *,
                   kind: str | None = None, call_timeout: float = 5.0, churn_steps: int = 20,
                   quality: bool = True, properties: list[str] | None = None, java_parity: bool = False,
                   topics_per_member: int | None = None, static: bool = True, small: bool = False,
                   nondeterministic_ok: bool = False, rack_aware: bool | None = None,
                   per_class: int | None = None, scale: list[tuple[int, int, int]] | str | None = "default",
                   scale_factor: float = 10.0, thorough: bool = False, hash_seeds: int | None = None,
                   progress: Callable[[str], None] | None = None) -> Report:
    """Check a candidate assignor against I1–I11, I6′ and multi-round churn; return a :class:`Report`.

    ``candidate``: a target string (``module:attribute`` or a built-in name), a callable, an object with
    ``assign``, or a kafka-python assignor class/instance. ``protocol`` overrides the declared protocol;
    ``kind`` (``range``/``roundrobin``/``sticky``/``cooperative`` (sticky and cooperative), or ``none`` for none
    of them) overrides what the name declares; a candidate whose name declares none has its kind inferred from
    its behaviour on probe inputs (:mod:`.kinds`). ``examples`` per property, ``seed`` for replay (same seed, same report). ``properties``: restrict
    to these ids. ``java_parity``: judge I6′ with assignors.md's Java-parity allowance (see
    ``check_generation_validated``). The declared domain: ``topics_per_member`` (every member subscribes to
    exactly that many topics), ``static=False`` (no static members); ``small`` draws only small groups (the
    bounds before large groups were added). ``nondeterministic_ok``: the candidate does not promise
    determinism, so I10, I10p and I10i do not apply. ``rack_aware``: the candidate takes replica racks
    (KIP-881; default: its ``rack_aware`` attribute): they are drawn and passed as ``partition_racks=``, and I12
    applies. ``per_class``: examples of every input class of the catalogue (:mod:`.classes`) in each property
    whose input is a group state (default ``max(1, round(examples / 40))``; 0 turns the sweep off).
    ``scale``: the sizes of the scale tier S1 (:mod:`.scale`): ``"default"``, ``"thorough"``, a list of
    ``(members, topics, partitions per topic)``, or None (no S1); ``scale_factor``: its budget is the project's
    assignor of the same kind times this. ``thorough``: the release check: the full scale tier, 25 examples of
    every input class per property and 16 hash seeds for I10p (``examples`` is the caller's to raise).
    ``hash_seeds``: how many worker processes I10p compares (PYTHONHASHSEED 1..n; default 8).
    """
    if kind == "cooperative":  # cooperative sticky: the sticky properties, judged round by round
        kind, protocol = "sticky", protocol or "cooperative"
    cand = candidate_from_object(candidate, protocol=protocol, kind=None if kind == "none" else kind)
    if protocol:
        cand.protocol = protocol
        cand.protocol_declared = True
    kind_source = "flag" if kind else ("name" if cand.kind else None)
    if kind:
        cand.kind = None if kind == "none" else kind
    domain: dict[str, Any] = {}
    if topics_per_member is not None:
        domain["topics_per_member"] = topics_per_member
    if not static:
        domain["static"] = False
    if small:
        domain["small"] = True
    if rack_aware is not None:
        cand.rack_aware = rack_aware
    if cand.rack_aware:
        domain["replica_racks"] = True
    runner = CallRunner(call_timeout)
    kind_note = ""
    if kind_source is None:
        inferred, kind_note = infer_kind(cand, runner)
        if inferred:
            cand.kind, kind_source = inferred, "behaviour"
    if not cand.protocol_declared and cand.protocol == "eager" and looks_cooperative(cand, runner):
        kind_note += ("; it withholds a partition when a member joins, as a cooperative assignor does: it is judged "
                      "as eager (declared by default); declare protocol = 'cooperative' or pass --kind cooperative "
                      "if it is cooperative")
    ctx = Ctx(cand, runner, java_parity=java_parity, domain=domain, nondeterministic_ok=nondeterministic_ok)
    ctx.per_class = (25 if thorough else max(1, round(examples / 40))) if per_class is None else per_class
    ctx.hash_seeds = hash_seeds or (16 if thorough else 8)  # type: ignore[attr-defined]
    if isinstance(scale, str):
        scale = THOROUGH_SIZES if scale == "thorough" or thorough else DEFAULT_SIZES
    t0 = time.perf_counter()
    results: list[PropertyResult] = []
    q: dict[str, Any] = {}
    try:
        for prop in PROPERTIES:
            if properties and prop.id not in properties:
                continue
            if progress:
                progress(prop.id)
            t1 = time.perf_counter()
            results.append(_run_property(prop, ctx, examples, seed))
            results[-1].seconds = time.perf_counter() - t1
        if not properties or "C1" in properties:
            if progress:
                progress("C1")
            t1 = time.perf_counter()
            results.append(run_churn(ctx, max(1, examples // 10), seed, churn_steps))
            results[-1].seconds = time.perf_counter() - t1
        if scale and (not properties or "S1" in properties):
            if progress:
                progress("S1")
            t1 = time.perf_counter()
            results.append(run_scale(ctx, scale, scale_factor))
            results[-1].seconds = time.perf_counter() - t1
        _fold_call_failures(results, ctx)
        if quality:
            if progress:
                progress("quality")
            q = churn_quality(ctx, max(1, examples // 4), seed)
    finally:
        runner.close()
        for close in ctx.closers:
            close()
    return Report(target=cand.target or cand.name, protocol=cand.protocol, kind=cand.kind, seed=seed,
                  examples=examples, properties=results, java_parity=java_parity, quality=q, calls=ctx.calls,
                  call_seconds=ctx.call_seconds, seconds=time.perf_counter() - t0, hangs=len(ctx.hangs),
                  failed_calls=ctx.failed_calls, domain=domain, nondeterministic_ok=nondeterministic_ok,
                  coverage=ctx.coverage.to_json(ctx.per_class, ctx.swept), kind_source=kind_source,
                  kind_note=kind_note.lstrip("; "), thorough=thorough, scale_factor=scale_factor)


def _fold_call_failures(results: list[PropertyResult], ctx: Ctx) -> None:
    """If I11's own search held but another property saw the candidate fail, I11 is violated after all."""
    for r in results:
        if r.id == "I11" and r.verdict != VIOLATED and ctx.first_failure is not None:
            (ppt, subs), res = ctx.first_failure
            r.verdict = VIOLATED
            r.counterexample = {"input": describe_state(ppt, subs), "output": None, "explanation": res.message,
                                "failure": res.failure, "shrunk": False}
            r.note = "found while checking another property (not shrunk)"


def assert_assignor(candidate: Any, **kw: Any) -> Report:
    """Like :func:`check_assignor`, but raise :class:`AssignorCheckFailed` naming each violation."""
    rep = check_assignor(candidate, **kw)
    if not rep.ok:
        lines = [f"{rep.target}: {len(rep.violations)} propert{'y' if len(rep.violations) == 1 else 'ies'} violated "
                 f"(seed {rep.seed})"]
        for p in rep.violations:
            cx = p.counterexample or {}
            lines.append(f"  {p.id} {p.name}: {cx.get('explanation')}")
            lines.append(f"    input:  {cx.get('input')}")
            lines.append(f"    output: {cx.get('output')}")
        raise AssignorCheckFailed("\n".join(lines))
    return rep


# ------------------------------------------------------------------------------------------- compare


def shared_states(n: int, seed: int, domain: dict[str, Any] | None = None) -> list[State]:
    """``n`` group states drawn once from a seeded strategy, to feed several candidates the same inputs."""
    out: list[State] = []

    @hseed(seed_for(seed, "compare"))
    @search_settings(n, shrink=False)
    @given(gs.group_states(**(domain or {})))
    def collect(state: State) -> None:
        out.append(state)

    collect()
    return out


def compare(a: Any, b: Any, examples: int = 200, seed: int = 0, call_timeout: float = 5.0,
            protocol: str | None = None) -> dict[str, Any]:
    """Two candidates on the same generated inputs: violations, balance and movement vs optimum, time per call."""
    states = shared_states(examples, seed)
    cols = []
    for c in (a, b):
        cand = candidate_from_object(c, protocol=protocol)
        runner = CallRunner(call_timeout)
        ctx = Ctx(cand, runner)
        col: dict[str, Any] = {"target": cand.target or cand.name, "protocol": cand.protocol, "failed_calls": 0,
                               "violations": {}, "examples": 0, "below_best_balance": 0, "moved": 0,
                               "optimal_moves": 0}
        try:
            for ppt, subs in states:
                try:
                    r = ctx.converge(ppt, subs)
                except Skip:
                    col["failed_calls"] += 1
                    continue
                col["examples"] += 1
                why = round_checks(ctx, ppt, subs, r)
                if why:
                    pid = why.split(":")[0].split(" ")[0]
                    col["violations"][pid] = col["violations"].get(pid, 0) + 1
                    continue
                best = optimum(ppt, subs)
                col["moved"] += moves_of(subs, r.final)
                col["optimal_moves"] += best.moves
                if balance_gap(ppt, subs, r.final, best):
                    col["below_best_balance"] += 1
        finally:
            runner.close()
        col["calls"] = ctx.calls
        col["mean_call_ms"] = round(1000 * ctx.call_seconds / ctx.calls, 4) if ctx.calls else None
        cols.append(col)
    return {"seed": seed, "examples": len(states), "candidates": cols}
