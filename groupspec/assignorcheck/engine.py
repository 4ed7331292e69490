"""The checker's engine room: reports, the per-run context (candidate calls, cooperative rounds) and the
seeded Hypothesis settings every search of :mod:`groupspec.assignorcheck` uses.

Theory of operation
-------------------
:class:`Ctx` wraps one loaded candidate and its :class:`~groupspec.assignorcheck.load.CallRunner`: ``call``
counts calls and remembers hangs (a hanging input is not called again; after ``hang_budget`` hangs new inputs
get a shorter limit, and past ``hang_seconds_cap`` seconds lost to hangs none is called), ``round`` turns a failed call into :class:`Skip` (an I11 matter: the property skips that example), and
``converge`` drives a cooperative candidate round after round as Kafka's ``CooperativeStickyAssignorTest`` does.
:func:`search_settings` and :func:`seed_for` make every search reproducible from the run's seed.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st

from . import strategies as gs
from .classes import Coverage
from .core import Assignment, max_generation, next_round, owned_of
from .load import CallResult, CallRunner, Candidate

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
    hangs: int = 0  #: calls cut off at the per-call limit (no input twice; past the hang budget at a shorter limit)
    failed_calls: int = 0  #: calls that raised, hung or returned malformed output (I11)
    domain: dict[str, Any] = field(default_factory=dict)  #: the declared domain the states were drawn from
    nondeterministic_ok: bool = False
    #: the input classes hit (:meth:`groupspec.assignorcheck.classes.Coverage.to_json`)
    coverage: dict[str, Any] = field(default_factory=dict)
    kind_source: str | None = None  #: "flag", "name", "behaviour" (inferred from probes) or None
    kind_note: str = ""  #: how the kind was inferred, or why not
    thorough: bool = False  #: the release check (--thorough)
    scale_factor: float = 10.0  #: S1's budget factor (--scale-factor)

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
            "failed_calls": self.failed_calls,
            "hangs": self.hangs,
            "domain": self.domain,
            "nondeterministic_ok": self.nondeterministic_ok,
            "coverage": self.coverage,
            "kind_source": self.kind_source,
            "kind_note": self.kind_note,
            "thorough": self.thorough,
            "mean_call_ms": round(1000 * self.call_seconds / self.calls, 4) if self.calls else None,
        }


class AssignorCheckFailed(AssertionError):
    """Raised by :func:`assert_assignor` (and the pytest plugin) when a property is violated."""


# ------------------------------------------------------------------------------------------ context


class Skip(Exception):
    """The candidate failed on this input (an I11 matter); the current property skips it."""


class Violation(Exception):
    """The single raise site Hypothesis sees for every violation, so all shrink as one failure."""


@dataclass
class Rounds:
    rounds: list[tuple[dict[str, dict[str, Any]], Assignment]]
    converged: bool

    @property
    def final(self) -> Assignment:
        return self.rounds[-1][1]


class Ctx:
    """One check run: the candidate, its call runner, the hang budget and the call statistics."""

    def __init__(self, cand: Candidate, runner: CallRunner, hang_budget: int = 3, java_parity: bool = False,
                 domain: dict[str, Any] | None = None, nondeterministic_ok: bool = False):
        self.cand = cand
        self.java_parity = java_parity
        #: keyword arguments for :func:`groupspec.strategies.group_states`: the candidate's declared domain
        #: (``topics_per_member``, ``static``, ``small``)
        self.domain = dict(domain or {})
        self.nondeterministic_ok = nondeterministic_ok
        self.runner = runner
        self.hang_budget = hang_budget
        self.hangs: dict[str, CallResult] = {}
        self.hang_seconds = 0.0  #: time lost to hanging calls
        #: past this much time lost to hangs, new inputs are no longer called
        self.hang_seconds_cap = max(60.0, 10 * (runner.call_timeout or 5.0))
        self.slowest_ok = 0.0  #: the slowest call that answered
        self.first_failure: tuple[State, CallResult] | None = None
        self.calls = 0
        self.failed_calls = 0
        self.call_seconds = 0.0
        #: resources a property opened for this run (worker processes), closed when the run ends
        self.closers: list[Callable[[], None]] = []
        self.cooperative = cand.protocol == "cooperative"
        self.sticky = cand.kind == "sticky"
        #: examples of every input class (:mod:`.classes`) per property, and what the run hit
        self.per_class = 0
        self.swept: list[str] = []
        self.coverage = Coverage()

    def states(self, **kw: Any) -> st.SearchStrategy[State]:
        """Group states within the candidate's declared domain (``kw`` refines the draw)."""
        return gs.group_states(**{**self.domain, **kw})

    def call(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]],
             fn: Callable[[dict[str, int], dict[str, dict[str, Any]]], Any] | None = None) -> CallResult:
        """One call of the candidate (or of ``fn``, another instance of it) under the per-call limit.

        A hanging input is not called again. After ``hang_budget`` hangs the candidate is still called on new
        inputs (so the properties that other inputs decide are still judged), under a shorter limit
        (:meth:`short_limit`); only when the hangs have cost ``hang_seconds_cap`` seconds in all are new inputs
        no longer called."""
        key = ""
        limit = None
        if self.hangs:
            key = _state_key(ppt, subs)
            if key in self.hangs:
                return self.hangs[key]
            if self.hang_seconds >= self.hang_seconds_cap:
                return CallResult(None, "skipped", f"not called: the hangs have cost {self.hang_seconds:.0f} s "
                                                   f"(budget {self.hang_seconds_cap:g} s)", 0.0)
            if len(self.hangs) >= self.hang_budget:
                limit = self.short_limit()
        res = self.runner.run(self.cand, ppt, subs, fn, timeout=limit)
        self.calls += 1
        self.call_seconds += res.seconds
        if res.failure == "timeout":
            self.hangs[key or _state_key(ppt, subs)] = res
            self.hang_seconds += res.seconds
        elif res.assignment is not None:
            self.slowest_ok = max(self.slowest_ok, res.seconds)
        if res.failure:
            self.failed_calls += 1
        if res.failure and self.first_failure is None:
            self.first_failure = ((ppt, subs), res)
        return res

    def short_limit(self) -> float:
        """The per-call limit once the hang budget is spent: 50 times the slowest answered call, at least
        0.25 s, at most the per-call limit."""
        full = self.runner.call_timeout or 30.0
        return min(full, max(0.25, 50 * self.slowest_ok))

    def round(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]],
              fn: Callable[[dict[str, int], dict[str, dict[str, Any]]], Any] | None = None) -> Assignment:
        res = self.call(ppt, subs, fn)
        if res.assignment is None:
            raise Skip(res.message)
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



# --------------------------------------------------------------------------------------- the search


def seed_for(seed: int, pid: str) -> int:
    return zlib.crc32(f"{seed}:{pid}".encode())


def search_settings(n: int, shrink: bool = True, steps: int | None = None) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    kw: dict[str, Any] = {}
    if steps is not None:
        kw["stateful_step_count"] = steps
    return settings(max_examples=max(1, n), database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    report_multiple_bugs=False, print_blob=False, derandomize=False, **kw)


