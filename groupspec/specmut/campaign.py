"""The campaign: every mutant against the killers that reach the rule it changes, in parallel worker processes.

Each worker process is reused for many mutants (the pool keeps it, and its Kafka oracle); per mutant it loads
the mutated model in-process (:func:`groupspec.specmut.loader.applied`: no interpreter started), runs the
relevant killers cheapest first (``COST`` in :mod:`.killers`) and stops at the first that tells the mutant from
the unchanged model. The baseline (every check on the unchanged model) is computed once before the mutants, one
check per task spread over the workers, each traced (:mod:`.reach`): a deterministic check that never executed
the statement a mutant changes cannot tell the mutant apart and is not run on it. Everything is derandomized:
the same mutants die by the same checks on every run.

May import: ``.operators``, ``.loader``, ``.killers``, ``.equivalent``, ``.reach``.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from types import FrameType
from typing import Any, Callable, Iterable, NoReturn

from .equivalent import equivalent_reason, listed_reason
from .killers import Killer, judge, killers, run_killer, state_cap, variant_modules
from .loader import applied
from .operators import SpecMutant, generate
from .reach import reached, reaches

PER_MUTANT_SECONDS = 900  # a mutant still running after this is reported as undecided ("timeout")

# The fixed sample `make test` runs (tests/test_spec_mutants.py): each mutant with the check that must kill it
# (only that check is run on it there), at least one per family and per kind of check, so a
# weakened check, or a model change that makes one of these rules unobservable, fails CI.
SAMPLE: dict[str, str] = {
    "assignors.roundrobin:negate-guard#0": "assignor:roundrobin",  # Kafka's RoundRobinAssignor's answer
    "assignors.sticky:drop-guard#3": "assignor:sticky",  # the balancing loop stops: movability (I5)
    # two claimants of one generation no longer mark the partition: Kafka's claim resolution (the reference's)
    "assignors.resolve_claims:negate-guard#2": "assignor:sticky-claims",
    "join_phase.JoinPhase._complete_join:off-by-one#0": "model:eager 3m×2p b1",  # no generation bump
    "classic.ClassicProtocol.successors:timer-never#0": "model:static 2m×3p b2",  # a ghost is never fenced
    "classic.ClassicProtocol.successors:negate-guard#12": "conformance:static-range",  # rebalance timer
    # a parked JoinGroup of a removed member answered FENCED_INSTANCE_ID: Kafka's coordinator says UNKNOWN_MEMBER_ID
    "join_phase.JoinPhase._remove:wrong-error#0": "kafka:static-cooperative·sticky 2m×3p 200×40",
    "consumer.Consumer.successors:timer-never#0": "model:consumer 3m×2p b2",  # KIP-848 session timeout
    # `== OK + 1` raises TypeError wherever a commit is judged; since issue 30's KIP-848 last eleven the cheapest check
    # that judges one is the trace check (the commit lines at the end of each path), before the one-topic conformance
    "consumer.Consumer.commit_accepted:off-by-one#0": "trace:consumer·range 2m×4p×2t 20×25",
    # two topics' partitions named alike: the model's paths read as traces are ill-formed (the trace check's own)
    "consumer_view.ConsumerView.partition_name:negate-guard#0": "trace:consumer·range 2m×4p×2t 20×25",
    # a partition added to an empty group bumps its epoch: the reference's coordinator does not
    "consumer.Consumer.successors:drop-guard#16": "conformance:consumer:two-topics",
    # (the one-member walks, cheapest, reach it since issue 30's migration full run: the conformance driver refuses a
    # request from a process that is down or paused)
    "migration.ClassicToConsumer.successors:drop-term#7": "conformance:migration 1m×2p 100×30",
    # a restarted static process (its old one's SyncGroup parked) told REBALANCE_IN_PROGRESS for a SyncGroup it never
    # sent: the reference client has no request waiting (the client half of the reverse direction)
    "join_phase.JoinPhase._prepare_rebalance:drop-term#1": "client:static·range 2m×2p b4 explored",
    "migration.ClassicToConsumer.successors:timer-never#0": "model:classic-to-consumer 2m×2p b2",
    "zookeeper.ZooKeeper._claim:skip-callback#0": "model:zookeeper·range 2m×2p b2",  # claims never taken
    # a running consumer "started" again, forgetting its partitions: the reference's ZooKeeper-era group tells
    "zookeeper.ZooKeeper.successors:drop-term#5": "history:zookeeper 2m×2p b2 explored",
}


def relevant(m: SpecMutant, ks: Iterable[Killer], base: dict[str, Any] | None = None) -> list[Killer]:
    """The killers whose variant reads ``m``'s module (and, given a traced baseline, that reach its statement)."""
    out = [k for k in ks if (m.module in ("assignors", "core") if k.kind == "oracle"
                             else m.module in variant_modules(k.variant))]
    if base is not None:
        out = [k for k, _only in plan(m, out, base)]
    return out


Plan = list[tuple[Killer, "frozenset[int] | None"]]


def plan(m: SpecMutant, ks: Iterable[Killer], base: dict[str, Any]) -> Plan:
    """The killers of ``ks`` that can tell ``m`` from the unchanged model, given the traced baseline (:mod:`.reach`),
    each with the walks (or recorded schedules) to run (None: all of it).

    A check that never executed ``m``'s statement is left out; of a classic Kafka walk job only the walks that
    executed it are run, and those whose reach is not fixed; of the recorded schedules only those that executed it. The KIP-848 walks are not segmented (their module,
    ``kafka_consumer_walks``, is another helper's): they are run whole when they executed any line of ``m``'s module.
    """
    out: Plan = []
    for k in ks:
        b = base.get(k.name, {})
        walks = b.get("walks")
        if walks is not None:
            setup = b.get("setup", {})
            unsure = set(b.get("unsure", ()))
            sel = frozenset(w for w, r in walks.items()
                            if w in unsure or reaches({**r, **{mod: r.get(mod, []) + v for mod, v in setup.items()}}, m))
            if sel:
                out.append((k, sel if len(sel) < len(walks) else None))
        elif k.kind == "kafka":
            reach = b.get("reach")
            if reach is None or reach.get(m.module):
                out.append((k, None))
        elif reaches(b.get("reach"), m):
            out.append((k, None))
    return out


def lean(base: dict[str, Any]) -> dict[str, Any]:
    """The baseline without what the checks reached (only the parent plans with it; the workers need the verdicts)."""
    return {k: {f: v for f, v in b.items() if f not in ("reach", "walks", "unsure", "setup")} for k, b in base.items()}


# --------------------------------------------------------------------------------------------- worker
_STATE: dict[str, Any] = {}


def _alarm(_sig: int, _frame: FrameType | None) -> NoReturn:
    # Raised wherever the mutant is; if that is a place whose exceptions are swallowed (a garbage-collector callback
    # "ignores" them), the alarm fires again a second later until the TimeoutError reaches run_one (which cancels it).
    signal.alarm(1)
    raise TimeoutError("per-mutant time limit")


def baseline(scale: float = 1.0, only: Iterable[str] | None = None, trace: bool = True) -> dict[str, Any]:
    """Every killer (or those named in ``only``) on the unchanged model (in a worker); ``trace``: record what each
    reaches (:mod:`.reach`; without it every mutant is run by every check that reads its module)."""
    out: dict[str, Any] = {}
    wanted = set(only) if only is not None else None
    with applied(None):
        for k in killers(scale):
            if wanted is not None and k.name not in wanted:
                continue
            t0 = time.perf_counter()
            with (reached() if trace else contextlib.nullcontext()) as rec:  # which lines of model/ it executes
                try:
                    r = run_killer(k)
                except Exception as e:  # a killer that cannot run on the unchanged model is left out
                    r = {"error": f"{type(e).__name__}: {e}"[:300]}
            r["seconds"] = round(time.perf_counter() - t0, 2)
            if rec is None:
                out[k.name] = r
                continue
            r["reach"] = rec.total()
            if rec.segments:  # a classic Kafka walk job, recorded schedules: what each walk or schedule reached
                r["walks"] = {w: {mod: sorted(v) for mod, v in seg.items()} for w, seg in rec.segments.items()}
                r["unsure"] = sorted(rec.unsure)
                r["setup"] = {mod: sorted(v) for mod, v in rec.hits.items()}
            out[k.name] = r
    return out


def usable(base: dict[str, Any], scale: float = 1.0) -> list[Killer]:
    """The killers the unchanged model passes (a conformance suite that fails on it kills nothing)."""
    return [k for k in killers(scale)
            if k.name in base and "error" not in base[k.name] and base[k.name].get("failure") is None]


def _timed_out(e: BaseException) -> bool:
    """Whether ``e`` is, wraps or groups the per-mutant time limit's TimeoutError (a check that catches what its test
    raised, as Hypothesis does, re-raises it inside its own exception: a FlakyFailure when a rerun then passes)."""
    seen: set[int] = set()
    todo: list[BaseException] = [e]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, TimeoutError):
            return True
        todo += [y for y in (x.__cause__, x.__context__) if y is not None]
        todo += list(getattr(x, "exceptions", ()) or ())
    return False


def run_one(m: SpecMutant, base: dict[str, Any], scale: float = 1.0,
            planned: list[tuple[str, "frozenset[int] | None"]] | None = None) -> dict[str, Any]:
    """One mutant: the relevant killers in order until one tells it from the baseline (``planned``: the killers'
    names and walks, as :func:`plan` chose them in the parent; else chosen here from ``base``).

    The row carries where the time went (``split``): ``compile`` (the mutated module's source changed and
    compiled), ``load`` (the mutated model imported), ``checks`` (the killers, each in ``check_seconds``)."""
    import importlib

    t0, c0 = time.perf_counter(), time.process_time()
    row: dict[str, Any] = {**asdict(m), "status": "survived", "killer": None, "detail": "", "tried": [],
                           "check_seconds": {}, "split": {"compile": 0.0, "load": 0.0, "checks": 0.0}}
    if planned is None:
        steps = plan(m, relevant(m, usable(base, scale)), base)
    else:
        by_name = {k.name: k for k in killers(scale)}
        steps = [(by_name[name], only) for name, only in planned]
    ks = [k for k, _only in steps]
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") and ks else None
    if old is not None:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        if ks:  # a mutant no check reaches is not even compiled
            t1 = time.perf_counter()
            with applied(m):
                t2 = time.perf_counter()
                importlib.import_module("groupspec.model")
                t3 = time.perf_counter()
                row["split"].update(compile=round(t2 - t1, 3), load=round(t3 - t2, 3))
                for k, only in steps:
                    row["tried"].append(k.name if only is None else f"{k.name} ({len(only)} of its runs)")
                    tk = time.perf_counter()
                    try:
                        got = run_killer(k, only, state_cap(base[k.name].get("states")))
                        why = judge(k, base[k.name], got)
                    except TimeoutError:
                        raise
                    except Exception as e:  # the mutated model raised: its own transition table or an assertion
                        if _timed_out(e):  # the time limit, caught and wrapped by the check (Hypothesis: FlakyFailure)
                            raise TimeoutError("per-mutant time limit") from e
                        why = f"the model raised {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                    row["check_seconds"][k.name] = round(time.perf_counter() - tk, 3)
                    if why is not None:
                        row.update(status="killed", killer=k.name, detail=why[:300])
                        break
    except TimeoutError:
        row.update(status="timeout", detail=f"undecided after {PER_MUTANT_SECONDS} s")
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    row["split"]["checks"] = round(sum(row["check_seconds"].values()), 3)
    why_equivalent = equivalent_reason(m.name, m.diff)
    if row["status"] == "killed" and listed_reason(m.name):
        row["listed_equivalent"] = True  # the listing is wrong: a check tells it from the model
    if row["status"] == "survived" and why_equivalent:
        row.update(status="equivalent", detail=why_equivalent, rechecked=True)
    if not ks:
        reads = relevant(m, usable(base, scale))
        row["detail"] = row["detail"] or ("no check reads this module" if not reads else
                                          f"no check executes L{m.line}'s statement on the unchanged model "
                                          f"({len(reads)} read the module)")
    row["seconds"] = round(time.perf_counter() - t0, 2)
    row["cpu_seconds"] = round(time.process_time() - c0, 2)  # this process's CPU (the Kafka oracle's JVM not counted)
    return row


# --------------------------------------------------------------------------------------------- driver
def select(family: str | None = None, sample: bool = False, names: Iterable[str] | None = None,
           limit: int | None = None) -> list[SpecMutant]:
    ms = generate()
    if sample:
        wanted = set(SAMPLE)  # the dict's keys
        ms = [m for m in ms if m.name in wanted]
    if names is not None:
        wanted = set(names)
        ms = [m for m in ms if m.name in wanted]
    if family:
        ms = [m for m in ms if m.family == family]
    if limit is not None:
        # an even spread over the whole list (deterministic), not its first modules
        step = max(1, len(ms) / limit)
        ms = [ms[int(k * step)] for k in range(min(limit, len(ms)))]
    return ms


def listed_row(m: SpecMutant) -> dict[str, Any]:
    """The row of a mutant listed as equivalent (:mod:`.equivalent`) whose checks are not run again."""
    return {**asdict(m), "status": "equivalent", "killer": None, "detail": listed_reason(m.name) or "",
            "tried": [], "check_seconds": {}, "split": {"compile": 0.0, "load": 0.0, "checks": 0.0},
            "seconds": 0.0, "cpu_seconds": 0.0, "rechecked": False}


def campaign(mutants: list[SpecMutant], workers: int = 1, scale: float = 1.0,
             progress: Callable[[dict[str, Any], int, int], None] | None = None,
             recheck_equivalent: bool = False) -> dict[str, Any]:
    """Run ``mutants``; the summary per family, every row, the baseline and the time.

    A mutant listed as equivalent by name (:func:`.equivalent.listed_reason`: each one explained in
    docs/specification.md, most shown on reachable graphs by the tests) is reported as such without running its checks
    again, unless ``recheck_equivalent``: then every check that reaches it runs, and one that tells it from the model
    reports it killed with ``listed_equivalent`` set (the listing is wrong, and the campaign fails). The fault-selection
    rule (:func:`.equivalent.equivalent_reason`) is no listing: those mutants always run. Its checks are the campaign's most expensive rows (every check runs to the end).
    """
    t0 = time.perf_counter()
    workers = max(1, min(workers, os.cpu_count() or 1, max(1, len(mutants))))
    rows: list[dict[str, Any]] = [None] * len(mutants)  # type: ignore[list-item]
    done = 0
    to_run: list[int] = []
    for i, m in enumerate(mutants):
        if not recheck_equivalent and listed_reason(m.name):
            rows[i] = listed_row(m)
            done += 1
            if progress is not None:
                progress(rows[i], done, len(mutants))
        else:
            to_run.append(i)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        running = [mutants[i] for i in to_run]
        needed = [k.name for k in killers(scale) if any(k in relevant(m, [k]) for m in running)]  # only what is asked
        base = {}
        for part in [pool.submit(baseline, scale, [name]) for name in needed]:  # one check per task, every worker
            base.update(part.result())
        base_seconds = round(time.perf_counter() - t0, 1)
        ks, small = usable(base, scale), lean(base)
        futures = {pool.submit(run_one, mutants[i], small, scale,
                               [(k.name, only) for k, only in plan(mutants[i], relevant(mutants[i], ks), base)]): i
                   for i in to_run}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                rows[i] = fut.result()
            except Exception as e:  # noqa: BLE001 - a worker died: reported, never hidden
                rows[i] = {**asdict(mutants[i]), "status": "error", "killer": None,
                           "detail": f"{type(e).__name__}: {e}"[:300], "tried": [], "seconds": 0.0}
            done += 1
            if progress is not None:
                progress(rows[i], done, len(mutants))
    return {"rows": rows, "families": summarize(rows), "baseline": lean(base), "workers": workers,
            "seconds": round(time.perf_counter() - t0, 1), "baseline_seconds": base_seconds}


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    fams: dict[str, dict[str, Any]] = {}
    for r in rows:
        f = fams.setdefault(r["family"], {"mutants": 0, "killed": 0, "equivalent": 0, "survived": 0, "undecided": 0})
        f["mutants"] += 1
        key = {"killed": "killed", "equivalent": "equivalent", "survived": "survived"}.get(r["status"], "undecided")
        f[key] += 1
    for f in fams.values():
        judged = f["mutants"] - f["equivalent"]
        f["score"] = round(100.0 * f["killed"] / judged, 1) if judged else 100.0
    return dict(sorted(fams.items()))
