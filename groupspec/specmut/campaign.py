"""The campaign: every mutant against the killers that read its module, in parallel worker processes.

Each worker process is reused for many mutants (the pool keeps it); per mutant it loads the mutated model
(:func:`groupspec.specmut.loader.applied`), runs the relevant killers cheapest first and stops at the
first that tells the mutant from the unchanged model (the baseline, computed once before the mutants, in
a worker too). Everything is derandomized: the same mutants die by the same checks on every run.

May import: ``.operators``, ``.loader``, ``.killers``, ``.equivalent``.
"""
from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from typing import Any, Callable, Iterable

from .equivalent import equivalent_reason
from .killers import Killer, judge, killers, run_killer, variant_modules
from .loader import applied
from .operators import SpecMutant, generate

PER_MUTANT_SECONDS = 900  # a mutant still running after this is reported as undecided ("timeout")

# The fixed sample `make test` runs (tests/test_spec_mutants.py): each mutant with the check that must kill it
# (the killers before it are run too, and must not), at least one per family and per kind of check, so a
# weakened check, or a model change that makes one of these rules unobservable, fails CI.
SAMPLE: dict[str, str] = {
    "assignors.roundrobin:negate-guard#0": "assignor:roundrobin",  # Kafka's RoundRobinAssignor's answer
    "assignors.sticky:drop-guard#7": "assignor:sticky",  # the balancing loop stops: movability (I5)
    "join_phase.JoinPhase._complete_join:off-by-one#0": "model:eager 3m×2p b1",  # no generation bump
    "classic.ClassicProtocol.successors:timer-never#0": "model:static 2m×3p b2",  # a ghost is never fenced
    "classic.ClassicProtocol.successors:negate-guard#12": "conformance:regressions:static-range",  # rebalance timer
    # a parked JoinGroup of a removed member answered FENCED_INSTANCE_ID: Kafka's coordinator says UNKNOWN_MEMBER_ID
    "join_phase.JoinPhase._remove:wrong-error#0": "kafka:eager·range 3m×3p×2t 300×40",
    "consumer.Consumer.successors:timer-never#0": "model:consumer 3m×2p b2",  # KIP-848 session timeout
    "consumer.Consumer.commit_accepted:off-by-one#0": "conformance:consumer:one-topic",  # commit at epoch + 1
    "migration.ClassicToConsumer.successors:drop-term#7": "conformance:migration",
    "migration.ClassicToConsumer.successors:timer-never#0": "model:classic-to-consumer 2m×2p b2",
    "zookeeper.ZooKeeper._claim:skip-callback#0": "model:zookeeper·range 2m×2p b2",  # claims never taken
}


def relevant(m: SpecMutant, ks: Iterable[Killer]) -> list[Killer]:
    """The killers whose variant reads ``m``'s module."""
    return [k for k in ks if (m.module in ("assignors", "core") if k.kind == "oracle"
                              else m.module in variant_modules(k.variant))]


# --------------------------------------------------------------------------------------------- worker
_STATE: dict[str, Any] = {}


def _alarm(_sig, _frame):  # noqa: ANN001
    raise TimeoutError("per-mutant time limit")


def baseline(scale: float = 1.0, only: Iterable[str] | None = None) -> dict[str, Any]:
    """Every killer (or those named in ``only``) on the unchanged model (in a worker: the pool's first task)."""
    out: dict[str, Any] = {}
    wanted = set(only) if only is not None else None
    with applied(None):
        for k in killers(scale):
            if wanted is not None and k.name not in wanted:
                continue
            t0 = time.perf_counter()
            try:
                r = run_killer(k)
            except Exception as e:  # a killer that cannot run on the unchanged model is left out
                r = {"error": f"{type(e).__name__}: {e}"[:300]}
            r["seconds"] = round(time.perf_counter() - t0, 2)
            out[k.name] = r
    return out


def usable(base: dict[str, Any], scale: float = 1.0) -> list[Killer]:
    """The killers the unchanged model passes (a conformance suite that fails on it kills nothing)."""
    return [k for k in killers(scale)
            if k.name in base and "error" not in base[k.name] and base[k.name].get("failure") is None]


def run_one(m: SpecMutant, base: dict[str, Any], scale: float = 1.0) -> dict[str, Any]:
    """One mutant: the relevant killers in order until one tells it from the baseline."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {**asdict(m), "status": "survived", "killer": None, "detail": "", "tried": []}
    ks = relevant(m, usable(base, scale))
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if old is not None:
        signal.alarm(PER_MUTANT_SECONDS)
    try:
        with applied(m):
            for k in ks:
                row["tried"].append(k.name)
                try:
                    got = run_killer(k)
                    why = judge(k, base[k.name], got)
                except TimeoutError:
                    raise
                except Exception as e:  # the mutated model raised: its own transition table or an assertion
                    why = f"the model raised {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                if why is not None:
                    row.update(status="killed", killer=k.name, detail=why[:300])
                    break
    except TimeoutError:
        row.update(status="timeout", detail=f"undecided after {PER_MUTANT_SECONDS} s")
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    why_equivalent = equivalent_reason(m.name, m.diff)
    if row["status"] == "survived" and why_equivalent:
        row.update(status="equivalent", detail=why_equivalent)
    if not ks:
        row["detail"] = row["detail"] or "no check reads this module"
    row["seconds"] = round(time.perf_counter() - t0, 2)
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


def campaign(mutants: list[SpecMutant], workers: int = 1, scale: float = 1.0,
             progress: Callable[[dict[str, Any], int, int], None] | None = None) -> dict[str, Any]:
    """Run ``mutants``; the summary per family, every row, the baseline and the time."""
    t0 = time.perf_counter()
    workers = max(1, min(workers, os.cpu_count() or 1, max(1, len(mutants))))
    rows: list[dict[str, Any]] = [None] * len(mutants)  # type: ignore[list-item]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        needed = sorted({k.name for m in mutants for k in relevant(m, killers(scale))})  # only what will be asked
        base = pool.submit(baseline, scale, needed).result()
        futures = {pool.submit(run_one, m, base, scale): k for k, m in enumerate(mutants)}
        done = 0
        for fut in as_completed(futures):
            k = futures[fut]
            try:
                rows[k] = fut.result()
            except Exception as e:  # noqa: BLE001 - a worker died: reported, never hidden
                rows[k] = {**asdict(mutants[k]), "status": "error", "killer": None,
                           "detail": f"{type(e).__name__}: {e}"[:300], "tried": [], "seconds": 0.0}
            done += 1
            if progress is not None:
                progress(rows[k], done, len(mutants))
    return {"rows": rows, "families": summarize(rows), "baseline": base, "workers": workers,
            "seconds": round(time.perf_counter() - t0, 1)}


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
