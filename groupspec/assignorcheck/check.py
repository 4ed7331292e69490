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
C1    multi-round churn (Hypothesis state machine)     all (checks the above that apply, every round)
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
candidate is no longer called on new inputs (the affected properties then say how many examples were tried).
"""
from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hseed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from . import strategies as gs
from .core import (
    Assignment, check_complete, check_cooperative, check_generation_validated, check_members,
    check_movability, check_no_duplicates, check_no_two_cycles, check_subscribed_only, canonical,
    describe_state, diff_assignments, expected_range, expected_roundrobin, max_generation, next_round,
    owned_of, reorder, as_sets,
)
from .load import CallResult, CallRunner, Candidate, candidate_from_object
from .optimum import balance_gap, moves_of, optimum

HELD, VIOLATED, NA = "held", "violated", "not applicable"
MAX_FOLLOW_UPS = 4  # KAFKA-9029 / KAFKA-8767

State = tuple[dict[str, int], dict[str, dict[str, Any]]]


# ------------------------------------------------------------------------------------------ report


@dataclass
class PropertyResult:
    id: str
    name: str
    verdict: str
    examples: int
    counterexample: dict[str, Any] | None = None
    note: str = ""
    seconds: float = 0.0  #: wall time of this property's search (not in the JSON: reports stay reproducible)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "verdict": self.verdict,
                             "examples": self.examples, "counterexample": self.counterexample}
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Report:
    """What ``check_assignor`` returns; ``ok`` is True when every applicable property held."""

    target: str
    protocol: str
    kind: str | None
    seed: int
    examples: int
    properties: list[PropertyResult]
    java_parity: bool = False
    quality: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    call_seconds: float = 0.0
    seconds: float = 0.0
    hangs: int = 0  #: calls cut off at the per-call limit (at most the hang budget)

    @property
    def ok(self) -> bool:
        return all(p.verdict != VIOLATED for p in self.properties)

    @property
    def violations(self) -> list[PropertyResult]:
        return [p for p in self.properties if p.verdict == VIOLATED]

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def __getitem__(self, pid: str) -> PropertyResult:
        for p in self.properties:
            if p.id == pid:
                return p
        raise KeyError(pid)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "protocol": self.protocol,
            "kind": self.kind,
            "seed": self.seed,
            "examples_per_property": self.examples,
            "java_parity": self.java_parity,
            "properties": [p.to_json() for p in self.properties],
            "quality": self.quality,
            "calls": self.calls,
            "hangs": self.hangs,
            "mean_call_ms": round(1000 * self.call_seconds / self.calls, 4) if self.calls else None,
        }


class AssignorCheckFailed(AssertionError):
    """Raised by :func:`assert_assignor` (and the pytest plugin) when a property is violated."""


# ------------------------------------------------------------------------------------------ context


class _Skip(Exception):
    """The candidate failed on this input (an I11 matter); the current property skips it."""


class _Violation(Exception):
    """The single raise site Hypothesis sees for every violation, so all shrink as one failure."""


@dataclass
class Rounds:
    rounds: list[tuple[dict[str, dict[str, Any]], Assignment]]
    converged: bool

    @property
    def final(self) -> Assignment:
        return self.rounds[-1][1]


class _Ctx:
    """One check run: the candidate, its call runner, the hang budget and the call statistics."""

    def __init__(self, cand: Candidate, runner: CallRunner, hang_budget: int = 3, java_parity: bool = False):
        self.cand = cand
        self.java_parity = java_parity
        self.runner = runner
        self.hang_budget = hang_budget
        self.hangs: dict[str, CallResult] = {}
        self.first_failure: tuple[State, CallResult] | None = None
        self.calls = 0
        self.call_seconds = 0.0
        self.cooperative = cand.protocol == "cooperative"
        self.sticky = cand.kind == "sticky"

    def call(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> CallResult:
        key = ""
        if self.hangs:
            key = _state_key(ppt, subs)
            if key in self.hangs:
                return self.hangs[key]
            if len(self.hangs) >= self.hang_budget:
                return CallResult(None, "skipped", "not called: hang budget spent", 0.0)
        res = self.runner.run(self.cand, ppt, subs)
        self.calls += 1
        self.call_seconds += res.seconds
        if res.failure == "timeout":
            self.hangs[key or _state_key(ppt, subs)] = res
        if res.failure and self.first_failure is None:
            self.first_failure = ((ppt, subs), res)
        return res

    def round(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> Assignment:
        res = self.call(ppt, subs)
        if res.assignment is None:
            raise _Skip(res.message)
        return res.assignment

    def converge(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> Rounds:
        """Eager: one round. Cooperative: follow-up rounds until nothing is revoked (≤ 4 follow-ups)."""
        out = self.round(ppt, subs)
        rounds = [(subs, out)]
        if not self.cooperative:
            return Rounds(rounds, True)
        gen = max_generation(subs)
        for _ in range(MAX_FOLLOW_UPS):
            cur_subs, cur_out = rounds[-1]
            if not _revokes(cur_subs, cur_out):
                return Rounds(rounds, True)
            gen += 1
            nxt = next_round(cur_subs, cur_out, gen)
            rounds.append((nxt, self.round(ppt, nxt)))
        cur_subs, cur_out = rounds[-1]
        return Rounds(rounds, not _revokes(cur_subs, cur_out))


def _state_key(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> str:
    return repr((sorted(ppt.items()), list(subs.items())))


def _revokes(subs: dict[str, dict[str, Any]], out: Assignment) -> bool:
    return any(owned_of(s) - set(out.get(m, ())) for m, s in subs.items())


# ---------------------------------------------------------------------------------------- properties

Failure = tuple[str, Assignment | None, dict[str, Any]]  # explanation, output, extra fields
Check = Callable[[State, _Ctx], Failure | None]


def _single(check: Callable[[dict[str, int], dict[str, dict[str, Any]], Assignment], str | None]) -> Check:
    def run(state: State, ctx: _Ctx) -> Failure | None:
        ppt, subs = state
        out = ctx.round(ppt, subs)
        why = check(ppt, subs, out)
        return (why, out, {}) if why else None
    return run


def _p_complete(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        raise _Skip("did not converge (I8)")
    why = check_complete(ppt, subs, r.final)
    if why:
        extra = {"rounds": len(r.rounds)} if ctx.cooperative else {}
        return why + (f" after {len(r.rounds)} round(s)" if ctx.cooperative else ""), r.final, extra
    return None


def _p_balance(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        raise _Skip("did not converge (I8)")
    why = check_movability(ppt, subs, r.final)
    return (why, r.final, {"rounds": len(r.rounds)}) if why else None


def _per_round(check: Callable[[dict[str, dict[str, Any]], Assignment, _Ctx], str | None]) -> Check:
    def run(state: State, ctx: _Ctx) -> Failure | None:
        ppt, subs = state
        r = ctx.converge(ppt, subs)
        for i, (s, out) in enumerate(r.rounds, 1):
            why = check(s, out, ctx)
            if why:
                extra: dict[str, Any] = {"round": i}
                if i > 1:
                    extra["round_input"] = describe_state(ppt, s)
                return f"round {i}: {why}", out, extra
        return None
    return run


def _p_converges(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    if not r.converged:
        return (f"still revoking partitions after {MAX_FOLLOW_UPS} follow-up rounds", r.final,
                {"rounds": len(r.rounds)})
    return None


def _p_sticky_cycles(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    r = ctx.converge(ppt, subs)
    why = check_no_two_cycles(subs, r.final)
    return (why, r.final, {}) if why else None


def _p_kafka_equal(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    out = ctx.round(ppt, subs)
    expected, oracle = _expected(ctx.cand.kind, ppt, subs)
    why = diff_assignments(expected, out)
    return (f"{why} ({oracle})", out, {"expected": canonical(expected)}) if why else None


def _expected(kind: str | None, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> tuple[Assignment, str]:
    """Kafka's Range/RoundRobin output: the project's own assignor when present, else the §1.1/§1.2 spec."""
    try:
        from groupspec.reference.assignors import get  # type: ignore[attr-defined]
        return get(kind).assign(ppt, subs), f"project's {kind} assignor"
    except ImportError:
        pass
    return (expected_range if kind == "range" else expected_roundrobin)(ppt, subs), f"Kafka's {kind} rule"


def _p_order(state: State, ctx: _Ctx) -> Failure | None:
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
        return (f"reversing the member order changes the result: {why}", flipped, {"reordered_members": order})
    return None


def _p_robust(state: State, ctx: _Ctx) -> Failure | None:
    ppt, subs = state
    res = ctx.call(ppt, subs)
    if res.failure == "skipped":
        raise _Skip(res.message)
    if res.failure:
        return res.message, None, {"failure": res.failure}
    return None


@dataclass
class Property:
    id: str
    name: str
    strategy: Callable[[], st.SearchStrategy[State]]
    check: Check
    applies: Callable[[_Ctx], str | None]  # None when it applies, else the reason it does not


def _all(_: _Ctx) -> str | None:
    return None


def _coop(ctx: _Ctx) -> str | None:
    return None if ctx.cooperative else "eager candidate"


def _sticky(ctx: _Ctx) -> str | None:
    return None if ctx.sticky else "not sticky-like (its name does not say sticky; use --kind sticky)"


def _kafka_kind(ctx: _Ctx) -> str | None:
    return None if ctx.cand.kind in ("range", "roundrobin") else "candidate does not declare itself range/roundrobin"


def _mixed() -> st.SearchStrategy[State]:
    return gs.group_states()


def _mixed_unusual() -> st.SearchStrategy[State]:
    return st.one_of(gs.group_states(), gs.group_states(unusual=True))


PROPERTIES: list[Property] = [
    Property("I11", "no exception, hang or malformed output on valid but unusual input",
             lambda: gs.group_states(unusual=True), _p_robust, _all),
    Property("I1", "output keys equal the member set", _mixed_unusual, _single(lambda p, s, o: check_members(s, o)), _all),
    Property("I2", "no partition assigned twice", _mixed_unusual, _single(lambda p, s, o: check_no_duplicates(o)), _all),
    Property("I3", "only partitions of subscribed, existing topics", _mixed_unusual, _single(check_subscribed_only), _all),
    Property("I4", "every subscribed partition assigned (cooperative: once converged)", _mixed_unusual, _p_complete, _all),
    Property("I5", "movability balance: |A| > |B|+1 ⇒ A holds nothing B subscribes to", _mixed, _p_balance, _sticky),
    Property("I6", "cooperative: added ∩ revoked = ∅ in every round", _mixed, _per_round(lambda s, o, c: check_cooperative(s, o)), _coop),
    Property("I6'", "cooperative: only the highest-generation claimant keeps a claimed partition",
             lambda: gs.group_states(history=True), _per_round(lambda s, o, c: check_generation_validated(s, o, c.java_parity)), _coop),
    Property("I7", "equal to Kafka's Range/RoundRobin", _mixed_unusual, _p_kafka_equal, _kafka_kind),
    Property("I8", "cooperative: converges within 4 follow-up rounds", _mixed, _p_converges, _coop),
    Property("I9", "no 2-cycles of movement per topic (Kafka isSticky)",
             lambda: gs.group_states(history=True), _p_sticky_cycles, _sticky),
    Property("I10", "deterministic and independent of the input's member order", _mixed, _p_order, _all),
]


# --------------------------------------------------------------------------------------- the search


def _seed_for(seed: int, pid: str) -> int:
    return zlib.crc32(f"{seed}:{pid}".encode())


def _settings(n: int, shrink: bool = True, steps: int | None = None) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    kw: dict[str, Any] = {}
    if steps is not None:
        kw["stateful_step_count"] = steps
    return settings(max_examples=max(1, n), database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    report_multiple_bugs=False, print_blob=False, derandomize=False, **kw)


def _run_property(prop: Property, ctx: _Ctx, n: int, seed: int) -> PropertyResult:
    reason = prop.applies(ctx)
    if reason:
        return PropertyResult(prop.id, prop.name, NA, 0, None, reason)
    box: dict[str, Any] = {"tried": 0, "evaluated": 0, "skipped": 0, "fail": None, "failed_once": False}

    @hseed(_seed_for(seed, prop.id))
    @_settings(n)
    @given(prop.strategy())
    def search(state: State) -> None:
        if not box["failed_once"]:
            box["tried"] += 1
        try:
            res = prop.check(state, ctx)
        except _Skip:
            if not box["failed_once"]:
                box["skipped"] += 1
            return
        if not box["failed_once"]:
            box["evaluated"] += 1
        if res is not None:
            box["failed_once"] = True
            box["fail"] = (state, res)
            raise _Violation(res[0])

    try:
        search()
    except Exception:  # noqa: BLE001 - _Violation, or Hypothesis' Flaky wrapping it
        if box["fail"] is None:
            raise
    if box["fail"] is not None:
        (ppt, subs), (why, out, extra) = box["fail"]
        cx = {"input": describe_state(ppt, subs), "output": canonical(out) if out is not None else None,
              "explanation": why, **extra}
        return PropertyResult(prop.id, prop.name, VIOLATED, box["tried"], cx)
    note = f"{box['skipped']} example(s) skipped: the candidate failed on them (I11)" if box["skipped"] else ""
    if box["evaluated"] == 0:
        return PropertyResult(prop.id, prop.name, NA, box["tried"], None,
                              "no example could be evaluated: the candidate failed on every input (see I11)")
    return PropertyResult(prop.id, prop.name, HELD, box["tried"], None, note)


# ----------------------------------------------------------------------------------------- churn (C1)


def _round_checks(ctx: _Ctx, ppt: dict[str, int], subs: dict[str, dict[str, Any]], r: Rounds) -> str | None:
    """Every per-round and final invariant that applies to this candidate, first violation as one line."""
    for i, (s, out) in enumerate(r.rounds, 1):
        for pid, why in (("I1", check_members(s, out)), ("I2", check_no_duplicates(out)),
                         ("I3", check_subscribed_only(ppt, s, out))):
            if why:
                return f"{pid} in round {i}: {why}"
        if ctx.cooperative:
            for pid, why in (("I6", check_cooperative(s, out)), ("I6'", check_generation_validated(s, out, ctx.java_parity))):
                if why:
                    return f"{pid} in round {i}: {why}"
    if not r.converged:
        return f"I8: still revoking after {MAX_FOLLOW_UPS} follow-up rounds"
    why = check_complete(ppt, subs, r.final)
    if why:
        return f"I4: {why}"
    if ctx.sticky:
        why = check_movability(ppt, subs, r.final) or check_no_two_cycles(subs, r.final)
        if why:
            return f"I5/I9: {why}"
    return None


def _churn_machine(ctx: _Ctx, box: dict[str, Any]) -> type[RuleBasedStateMachine]:
    topics_pool = [f"t{i}" for i in range(4)]

    class Churn(RuleBasedStateMachine):
        """Members join, leave, restart (static), change subscriptions; topics grow, appear, are deleted."""

        def __init__(self) -> None:
            super().__init__()
            self.ppt: dict[str, int] = {}
            self.members: dict[str, dict[str, Any]] = {}
            self.owned: dict[str, list[list[Any]]] = {}
            self.gens: dict[str, int] = {}
            self.generation = 0
            self.counter = 0
            self.steps: list[str] = []
            self.rebalances = 0

        @initialize(state=gs.group_states(history=False, max_members=4, tricky_ids=False))
        def start(self, state: State) -> None:
            ppt, subs = state
            self.ppt = dict(ppt)
            self.members = {m: {"topics": list(s["topics"]), "instance_id": s["instance_id"]} for m, s in subs.items()}
            self.owned = {m: [] for m in subs}
            self.gens = {m: -1 for m in subs}
            self.steps.append("start " + json.dumps(describe_state(ppt, subs), ensure_ascii=False))
            self.rebalance()

        def _subs(self) -> dict[str, dict[str, Any]]:
            return {m: {"topics": list(info["topics"]), "owned": [list(x) for x in self.owned.get(m, [])],
                        "generation": self.gens.get(m, -1), "instance_id": info["instance_id"], "rack": None}
                    for m, info in self.members.items()}

        @rule(topics=st.lists(st.sampled_from(topics_pool), min_size=1, max_size=3, unique=True),
              static=st.booleans())
        def join(self, topics: list[str], static: bool) -> None:
            self.counter += 1
            mid = f"m{self.counter:02d}"
            inst = f"inst-{99 - self.counter}" if static else None
            self.members[mid] = {"topics": topics, "instance_id": inst}
            self.owned[mid], self.gens[mid] = [], -1
            self.steps.append(f"join {mid} (instance {inst}) subscribed to {topics}")

        @rule(i=st.integers(0, 9))
        def leave(self, i: int) -> None:
            if len(self.members) <= 1:
                return
            mid = sorted(self.members)[i % len(self.members)]
            del self.members[mid]
            self.owned.pop(mid, None)
            self.steps.append(f"leave {mid}")

        @rule(i=st.integers(0, 9))
        def restart_static(self, i: int) -> None:
            static = sorted(m for m, info in self.members.items() if info["instance_id"] is not None)
            if not static:
                return
            old = static[i % len(static)]
            self.counter += 1
            new = f"m{self.counter:02d}"
            self.members[new] = self.members.pop(old)
            self.owned.pop(old, None)
            self.owned[new], self.gens[new] = [], -1
            self.steps.append(f"static member {old} restarts as {new} (same instance id)")

        @rule(i=st.integers(0, 9), topics=st.lists(st.sampled_from(topics_pool), max_size=3, unique=True))
        def resubscribe(self, i: int, topics: list[str]) -> None:
            mid = sorted(self.members)[i % len(self.members)]
            self.members[mid]["topics"] = topics
            self.steps.append(f"{mid} now subscribes to {topics}")

        @rule(t=st.sampled_from(topics_pool), by=st.integers(1, 3))
        def grow(self, t: str, by: int) -> None:
            self.ppt[t] = self.ppt.get(t, 0) + by
            self.steps.append(f"topic {t} grows to {self.ppt[t]} partitions")

        @rule(t=st.sampled_from(topics_pool))
        def delete(self, t: str) -> None:
            if t in self.ppt:
                del self.ppt[t]
                self.steps.append(f"topic {t} deleted")

        @rule()
        def rebalance(self) -> None:
            subs = self._subs()
            self.rebalances += 1
            box["rebalances"] += 1
            try:
                r = ctx.converge(self.ppt, subs)
            except _Skip as e:
                self.steps.append(f"rebalance: candidate failed ({e}); state unchanged")
                return
            why = _round_checks(ctx, self.ppt, subs, r)
            self.steps.append(f"rebalance ({len(r.rounds)} round(s))")
            if why:
                box["fail"] = {"steps": list(self.steps), "input": describe_state(self.ppt, subs),
                               "output": canonical(r.final), "explanation": why}
                raise _Violation(why)
            if box["fail"] is None:
                best = optimum(self.ppt, subs)
                box["moved"] += moves_of(subs, r.final)
                box["optimal_moves"] += best.moves
            self.generation = max(self.generation, max_generation(subs)) + len(r.rounds)
            for m in self.members:
                self.owned[m] = [[t, p] for t, p in sorted(set(r.final.get(m, ())))]
                self.gens[m] = self.generation

    return Churn


def _run_churn(ctx: _Ctx, n: int, seed: int, steps: int) -> PropertyResult:
    pid, name = "C1", "multi-round churn: join/leave/restart/resubscribe/grow/delete, output fed back"
    box: dict[str, Any] = {"fail": None, "rebalances": 0, "runs": 0, "moved": 0, "optimal_moves": 0}
    machine = _churn_machine(ctx, box)

    def factory() -> RuleBasedStateMachine:
        box["runs"] += 0 if box["fail"] else 1
        return machine()

    hseed(_seed_for(seed, pid))(factory)
    try:
        run_state_machine_as_test(factory, settings=_settings(n, steps=steps))
    except Exception:  # noqa: BLE001 - _Violation or Flaky around it
        if box["fail"] is None:
            raise
    if box["fail"] is not None:
        return PropertyResult(pid, name, VIOLATED, box["runs"], box["fail"])
    return PropertyResult(pid, name, HELD, box["runs"], None,
                          f"{box['rebalances']} rebalances; moved {box['moved']} partitions where "
                          f"{box['optimal_moves']} were enough")


# ------------------------------------------------------------------------------------------- quality


def _quality(ctx: _Ctx, n: int, seed: int) -> dict[str, Any]:
    """Movement and balance against the exact optimum, over ``n`` states with (clean) history."""
    q: dict[str, Any] = {"examples": 0, "moved": 0, "optimal_moves": 0, "more_moves_than_needed": 0,
                         "worst_moves": None, "below_best_balance": 0, "worst_balance": None}

    @hseed(_seed_for(seed, "quality"))
    @_settings(n, shrink=False)
    @given(gs.group_states(history=True, conflicts=False, tricky_ids=False))
    def sample(state: State) -> None:
        ppt, subs = state
        try:
            r = ctx.converge(ppt, subs)
        except _Skip:
            return
        out = r.final
        if not r.converged or any(f(out) for f in (
                lambda o: check_members(subs, o), check_no_duplicates,
                lambda o: check_subscribed_only(ppt, subs, o), lambda o: check_complete(ppt, subs, o))):
            return
        best = optimum(ppt, subs)
        moved = moves_of(subs, out)
        q["examples"] += 1
        q["moved"] += moved
        q["optimal_moves"] += best.moves
        if moved > best.moves:
            q["more_moves_than_needed"] += 1
            w = q["worst_moves"]
            if w is None or moved - best.moves > w["moved"] - w["needed"]:
                q["worst_moves"] = {"moved": moved, "needed": best.moves, "input": describe_state(ppt, subs),
                                    "output": canonical(out),
                                    "explanation": f"moved {moved} partitions where {best.moves} were enough"}
        gap = balance_gap(ppt, subs, out, best)
        if gap:
            q["below_best_balance"] += 1
            loads = [len(v) for v in out.values()] or [0]
            spread = max(loads) - min(loads)
            w = q["worst_balance"]
            if w is None or spread - best.spread > w["spread"] - w["best_spread"]:
                q["worst_balance"] = {"spread": spread, "best_spread": best.spread,
                                      "input": describe_state(ppt, subs), "output": canonical(out),
                                      "explanation": gap}

    sample()
    return q


# ---------------------------------------------------------------------------------------------- API


def check_assignor(candidate: Any, protocol: str | None = None, examples: int = 200, seed: int = 0, *,
                   kind: str | None = None, call_timeout: float = 5.0, churn_steps: int = 20,
                   quality: bool = True, properties: list[str] | None = None, java_parity: bool = False,
                   progress: Callable[[str], None] | None = None) -> Report:
    """Check a candidate assignor against I1–I11, I6′ and multi-round churn; return a :class:`Report`.

    ``candidate``: a target string (``module:attribute`` or a built-in name), a callable, an object with
    ``assign``, or a kafka-python assignor class/instance. ``protocol`` overrides the declared protocol;
    ``kind`` (``range``/``roundrobin``/``sticky``) overrides what the name declares. ``examples`` per
    property, ``seed`` for replay (same seed, same report). ``properties``: restrict to these ids.
    ``java_parity``: judge I6′ with assignors.md's Java-parity allowance (see ``check_generation_validated``).
    """
    cand = candidate_from_object(candidate, protocol=protocol, kind=kind)
    if protocol:
        cand.protocol = protocol
    if kind:
        cand.kind = kind
    runner = CallRunner(call_timeout)
    ctx = _Ctx(cand, runner, java_parity=java_parity)
    t0 = time.perf_counter()
    results: list[PropertyResult] = []
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
            results.append(_run_churn(ctx, max(1, examples // 10), seed, churn_steps))
            results[-1].seconds = time.perf_counter() - t1
        _fold_call_failures(results, ctx)
        q = {}
        if quality:
            if progress:
                progress("quality")
            q = _quality(ctx, max(1, examples // 4), seed)
    finally:
        runner.close()
    return Report(target=cand.target or cand.name, protocol=cand.protocol, kind=cand.kind, seed=seed,
                  examples=examples, properties=results, java_parity=java_parity, quality=q, calls=ctx.calls,
                  call_seconds=ctx.call_seconds, seconds=time.perf_counter() - t0, hangs=len(ctx.hangs))


def _fold_call_failures(results: list[PropertyResult], ctx: _Ctx) -> None:
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


def shared_states(n: int, seed: int) -> list[State]:
    """``n`` group states drawn once from a seeded strategy, to feed several candidates the same inputs."""
    out: list[State] = []

    @hseed(_seed_for(seed, "compare"))
    @_settings(n, shrink=False)
    @given(gs.group_states())
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
        ctx = _Ctx(cand, runner)
        col: dict[str, Any] = {"target": cand.target or cand.name, "protocol": cand.protocol, "failed_calls": 0,
                               "violations": {}, "examples": 0, "below_best_balance": 0, "moved": 0,
                               "optimal_moves": 0}
        try:
            for ppt, subs in states:
                try:
                    r = ctx.converge(ppt, subs)
                except _Skip:
                    col["failed_calls"] += 1
                    continue
                col["examples"] += 1
                why = _round_checks(ctx, ppt, subs, r)
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
