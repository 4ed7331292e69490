"""No drift between ``groupspec.model.consumer`` and its unbounded Z3 encoding (:mod:`~groupspec.proofs.consumer`).

Theory of operation
-------------------
The KIP-848 proof is about the relational actions of :class:`~groupspec.proofs.consumer.ConsumerSpec`;
it says something about ``model/consumer.py`` only if the model's states and steps are states and runs
of that encoding. Both halves are checked here, as :mod:`~groupspec.proofs.abstraction` and
:mod:`~groupspec.proofs.epr_drift` do for the classic protocol:

* **The state half** (:func:`state_problems`). :func:`abstract` maps one model state to a finite
  structure over the encoding's vocabulary: one Member element per slot, one Partition element per
  partition; ``present`` = the coordinator has a record (a static member that left with epoch -2
  included: its partitions are still held), ``up``/``paused`` the process, ``cep`` the client's epoch
  (0 for a process not in the group), ``mepoch`` the member epoch, ``pepoch`` the previous epoch,
  ``assigned``/``revoking``/``target`` the coordinator's masks, ``owns`` the client's, ``tepoch`` the
  assignment epoch. Z3 checks that the structure satisfies every invariant clause and every property,
  and that the encoding's ``accepted`` (an OffsetCommit accepted) agrees with the model's
  ``commit_accepted`` for every running or paused process.
* **The step half** (:func:`check_step`). For one model step ``s -> t``: is there a run of at most
  ``MAX_STEPS`` relational steps (each an action with a member parameter of its own, or a stutter)
  from the structure of ``s`` to the structure of ``t``? The Member and Partition sorts are closed to
  the instance's elements; the intermediate states are free. UNSAT is drift: the model took a step the
  unbounded proof does not cover.

``tests/test_proofs_consumer_drift.py`` samples reachable states and steps of ``consumer`` and
``consumer-static`` (Hypothesis, seeds printed), and edits one line of a copy of ``model/consumer.py``
to show that the check fails; ``groupspec prove`` runs :func:`sample` with a fixed seed.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import z3

from .consumer import ConsumerSpec, Vocabulary
from .relational_runs import Option, StepVerdict, admit_run

MAX_STEPS = 6  # Remove, Bump, Unknown (a fence); Join, Bump, Ack, Advance, ClientApply (a join with a reconciliation)
VARIANT_BUG = {"consumer": None, "consumer-static": None}


@dataclass
class Structure:
    """One model state as values of the encoding's vocabulary (slot i is Member i)."""

    present: list[bool]
    up: list[bool]
    paused: list[bool]
    cep: list[int]
    mepoch: list[int]
    pepoch: list[int]
    assigned: list[int]
    revoking: list[int]
    owns: list[int]
    target: list[int]
    tepoch: int
    since: list[tuple[int, ...]] | None = None  # each member's partition assignment epochs (in-flight faults only)


def abstract(proto: Any, s: Any) -> Structure:
    from groupspec.model import Proc

    g = s.group
    n = len(s.clients)
    rec = [g.members[i] for i in range(n)]
    return Structure(
        present=[r is not None for r in rec],
        up=[c.proc == Proc.UP for c in s.clients],
        paused=[c.proc == Proc.PAUSED for c in s.clients],
        cep=[max(c.epoch, 0) for c in s.clients],
        mepoch=[r.epoch if r is not None else 0 for r in rec],
        pepoch=[r.previous_epoch if r is not None else 0 for r in rec],
        assigned=[r.assigned if r is not None else 0 for r in rec],
        revoking=[r.revoking if r is not None else 0 for r in rec],
        owns=[c.owned for c in s.clients],
        target=list(g.target),
        tepoch=g.target_epoch,
        since=[r.since if r is not None and r.since else (0,) * proto.cfg.partitions for r in rec]
        if getattr(proto, "in_flight", False) else None,
    )


class _Domain:
    """The closed Member and Partition sorts of one instance, in one solver."""

    def __init__(self, spec: ConsumerSpec, solver: z3.Solver, members: int, partitions: int) -> None:
        self.ms = [z3.Const(f"el_m{i}", spec.M) for i in range(members)]
        self.ps = [z3.Const(f"el_p{k}", spec.P) for k in range(partitions)]
        for els, srt in ((self.ms, spec.M), (self.ps, spec.P)):
            if len(els) > 1:
                solver.add(z3.Distinct(*els))
            x = z3.Const(f"dom_{srt}", srt)
            solver.add(z3.ForAll([x], z3.Or(*[x == e for e in els])))

    def pin(self, v: Vocabulary, st: Structure, absent_epochs: bool = True) -> list[z3.BoolRef]:
        """``st`` as constraints on ``v``; ``absent_epochs=False`` leaves the epochs of a member the
        coordinator has no record of free (the encoding keeps them after ``Remove``, the model forgets)."""
        out = [v.tepoch == st.tepoch]
        for i, m in enumerate(self.ms):
            out += [v.present(m) == st.present[i], v.up(m) == st.up[i], v.paused(m) == st.paused[i],
                    v.cep(m) == st.cep[i]]
            if st.present[i] or absent_epochs:
                out += [v.mepoch(m) == st.mepoch[i], v.pepoch(m) == st.pepoch[i]]
            for k, p in enumerate(self.ps):
                for rel, mask in (("assigned", st.assigned), ("revoking", st.revoking), ("owns", st.owns),
                                  ("target", st.target)):
                    out.append(getattr(v, rel)(m, p) == bool(mask[i] >> k & 1))
                if st.since is not None and (st.present[i] or absent_epochs):
                    out.append(v.since(m, p) == st.since[i][k])
        return out


def state_problems(proto: Any, s: Any, bug: str | None = None) -> list[str]:
    """Invariant clauses and properties the structure of ``s`` violates, and disagreements of ``accepted``."""
    from groupspec.model import Proc

    spec = ConsumerSpec(bug)
    st = abstract(proto, s)
    solver = z3.Solver()
    dom = _Domain(spec, solver, len(s.clients), proto.cfg.partitions)
    solver.add(*dom.pin(spec.s, st))
    out = []
    for name, f in {**spec.clauses(spec.s), **spec.properties(spec.s)}.items():
        solver.push()
        solver.add(z3.Not(f))
        if solver.check() != z3.unsat:
            out.append(f"the state violates {name!r}")
        solver.pop()
    for i, c in enumerate(s.clients):
        if c.proc == Proc.DOWN:
            continue
        commits = [("OffsetCommit", spec.accepted(spec.s, dom.ms[i]), bool(proto.commit_accepted(s, i)))]
        if getattr(c, "commit", None) is not None:  # a commit in flight (late-commit), were it delivered now
            epoch, parts = c.commit
            chosen = [dom.ps[k] for k in range(proto.cfg.partitions) if parts >> k & 1]
            enc = spec.accepts_commit(spec.s, dom.ms[i], epoch, lambda q, ch=chosen: z3.Or(*[q == e for e in ch]))
            commits.append((f"late OffsetCommit (epoch {epoch})", enc, proto.commit_answer(s, i, epoch, parts) == "OK"))
        for what, formula, model in commits:
            rel = _decide(solver, formula)
            if rel is None or rel != model:
                out.append(f"{proto.member_name(i)}: the model {'accepts' if model else 'rejects'} its {what}, "
                           f"the encoding {'accepts' if rel else 'rejects'} it")
    return out


def _decide(solver: z3.Solver, formula: z3.BoolRef) -> bool | None:
    """The value of ``formula`` in the one structure the solver's constraints pin (None: not decided)."""
    answers = []
    for f in (z3.Not(formula), formula):
        solver.push()
        solver.add(f)
        answers.append(solver.check())
        solver.pop()
    if answers[0] == z3.unsat:
        return True
    if answers[1] == z3.unsat:
        return False
    return None


def check_step(proto: Any, s: Any, t: Any, k: int = MAX_STEPS, bug: str | None = None,
               timeout_ms: int = 20000) -> StepVerdict:
    """Whether the model step ``s -> t`` is a run of at most ``k`` relational steps of the encoding."""
    t0 = time.perf_counter()
    spec = ConsumerSpec(bug)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    dom = _Domain(spec, solver, len(s.clients), proto.cfg.partitions)
    states = [Vocabulary(f"@{j}", spec.M, spec.P) for j in range(k + 1)]
    solver.add(*dom.pin(states[0], abstract(proto, s), False), *dom.pin(states[-1], abstract(proto, t), False))

    def options(j: int) -> list[Option]:
        pre, post = states[j], states[j + 1]
        m = z3.Const(f"actor_{j}", spec.M)
        return [("stutter", spec.stutter(pre, post))] + list(spec.actions(pre, post, m).items())

    return admit_run(solver, k, options, t0)


@dataclass
class Sample:
    protocol: str
    instance: str
    seed: int
    steps: int
    rejected: list[str]
    unknown: int
    seconds: float
    states: int = 0  # states whose structure was checked (state half)
    used: dict[str, int] = field(default_factory=dict)


def sample(protocol: str, seed: int, steps: int, members: int = 2, partitions: int = 2,
           faults: tuple[str, ...] = ("join", "crash", "zombie", "leave", "lose-answer", "late-answer", "late-commit"),
           budget: int = 2,
           stop_at_first: bool = False, proto: Any = None, bug: str | None = None) -> Sample:
    """Random walks of ``protocol`` (seeded; restarted when stuck): check ``steps`` steps and their states."""
    from groupspec.model import Config, make

    t0 = time.perf_counter()
    if proto is None:
        proto = make(protocol, Config(members=members, partitions=partitions, faults=frozenset(faults), budget=budget))
    rng = random.Random(seed)
    s = proto.init_states()[0]
    rejected: list[str] = []
    unknown = 0
    used: dict[str, int] = {}
    done = states = 0
    while done < steps:
        succ = list(proto.successors(s))
        if not succ or proto.converged(s) and rng.random() < 0.2:
            s = proto.init_states()[0]
            continue
        problems = state_problems(proto, s, bug)
        states += 1
        if problems:
            rejected.append(f"state after {done} checked steps: {'; '.join(problems)}")
            if stop_at_first:
                break
        a, t = succ[rng.randrange(len(succ))]
        v = check_step(proto, s, t, bug=bug)
        done += 1
        if v.admitted:
            key = f"{type(a).__name__}: " + ("; ".join(v.relational) or "(no relational step)")
            used[key] = used.get(key, 0) + 1
        elif v.unknown:
            unknown += 1
        else:
            rejected.append(f"{a!r} after {done - 1} checked steps: no run of at most {MAX_STEPS} relational steps "
                            f"of the KIP-848 encoding leads from the state before to the state after")
            if stop_at_first:
                break
        s = t
    cfg = proto.cfg
    inst = f"{cfg.members} x {cfg.partitions}, faults {','.join(sorted(cfg.faults)) or '-'}, budget {cfg.budget}"
    return Sample(protocol, inst, seed, done, rejected, unknown, time.perf_counter() - t0, states, used)


def check_states(proto: Any, limit: int = 400, bug: str | None = None) -> tuple[int, list[str]]:
    """The state half, breadth-first: reachable states of ``proto`` where a client and its member disagree
    (its epoch, or a commit in flight at another epoch) — where the in-flight rules act — each checked with
    :func:`state_problems`, at most ``limit`` of them. Returns (states checked, first problems found)."""
    from collections import deque

    s0 = proto.init_states()[0]
    seen = {proto.key(s0)}
    todo = deque([s0])
    checked = 0
    while todo and checked < limit:
        s = todo.popleft()
        if any(r is not None and (c.epoch > 0 and c.epoch != r.epoch or
                                  getattr(c, "commit", None) is not None and c.commit[0] != r.epoch)
               for c, r in zip(s.clients, s.group.members)):
            checked += 1
            problems = state_problems(proto, s, bug)
            if problems:
                return checked, problems
        for _a, t in proto.successors(s):
            k = proto.key(t)
            if k not in seen:
                seen.add(k)
                todo.append(t)
    return checked, []
