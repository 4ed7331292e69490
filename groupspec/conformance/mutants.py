"""The mutation table: each fault switch of the reference, caught by a conformance suite.

May import: ``.machine``, ``.refinement``.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Iterable


from .refinement import ConformanceFailure
from .machine import make_machine, run_machine



# --------------------------------------------------------------------------------------------------
# The mutation table
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """A named fault switch of the reference, and the variant whose conformance suite must catch it."""

    switch: str
    owner: str  # "coordinator" | "consumer"
    variant: str
    bug: str


MUTANTS: tuple[Mutant, ...] = (
    Mutant("accept_stale_commit", "coordinator", "static-range", "OffsetCommit skips the generation check"),
    Mutant("no_static_fence", "coordinator", "static-range", "a replaced static member id stays a member, never fenced"),
    Mutant("no_generation_bump", "coordinator", "eager-range", "join completion keeps the generation"),
    Mutant("keep_missed_member", "coordinator", "eager-range", "dynamic members that missed the rebalance timeout stay"),
    Mutant("forget_pending_member", "coordinator", "eager-range", "pending member ids do not hold back join completion"),
    Mutant("lose_assignment_on_failover", "coordinator", "eager-range", "loaded members have empty assignments"),
    Mutant("heartbeat_none_in_prepare", "coordinator", "eager-range", "Heartbeat answers NONE in PreparingRebalance"),
    Mutant("double_count_rejoin", "coordinator", "eager-range", "a JoinGroup re-sent while parked counts twice"),
    Mutant("skip_revoke_before_join", "consumer", "eager-range", "an eager member keeps its partitions across JoinGroup"),
    Mutant("same_round_transfer", "consumer", "cooperative-sticky", "the leader moves partitions in one round"),
    Mutant("ignore_owned", "consumer", "cooperative-sticky", "the leader ignores owned partitions"),
    Mutant("no_rejoin_after_revoke", "consumer", "cooperative-sticky", "a cooperative member does not rejoin after revoking"),
    Mutant("drop_connect_delay", "consumer", "connect-delayed",
           "the Connect leader reassigns a departed worker's work at once, without the delay"),
)

PROFILES = {"ci": (200, 25), "deep": (2000, 60), "dev": (30, 15)}  # (max examples, rules per example)


def run_mutant(m: Mutant, profile: str = "ci") -> dict[str, Any]:
    """Run ``m.variant``'s conformance state machine with the switch on, until something fails."""
    from hypothesis import HealthCheck, Phase, settings

    max_examples, steps = PROFILES[profile]
    counter = [0]
    machine = make_machine(
        m.variant,
        consumer_faults=(m.switch,) if m.switch and m.owner == "consumer" else (),
        coordinator_faults=(m.switch,) if m.switch and m.owner == "coordinator" else (),
        counter=counter,
        paired=bool(m.switch),
        slow_starts=bool(m.switch),
    )
    cfg = settings(
        max_examples=max_examples, stateful_step_count=steps, deadline=None, database=None,
        derandomize=True, phases=[Phase.generate], print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    started = time.perf_counter()
    row: dict[str, Any] = {"mutant": m.switch, "switch owner": m.owner, "variant": m.variant, "bug": m.bug,
                           "caught": False, "check": None, "examples": None, "seed": None}
    import io

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_machine(machine, cfg)
    except ConformanceFailure as e:
        row.update(caught=True, check=e.check, examples=counter[0], seed=_sim_seed(str(e)))
        row["detail"] = str(e).splitlines()[0]
    except Exception as e:  # any other failure of the reference (a crash) also counts, named as such
        row.update(caught=True, check=f"crash:{type(e).__name__}", examples=counter[0], detail=str(e)[:200])
    row["seconds"] = round(time.perf_counter() - started, 2)
    if not row["caught"]:
        row["examples"] = counter[0]
    return row


def _sim_seed(text: str) -> int | None:
    mark = "simulator seed "
    k = text.find(mark)
    if k < 0:
        return None
    digits = ""
    for ch in text[k + len(mark):]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def mutation_table(profile: str = "ci", mutants: Iterable[Mutant] = MUTANTS) -> list[dict[str, Any]]:
    """One row per mutant: keys ``mutant``, ``switch owner``, ``caught``, ``check`` (refinement, a model
    invariant's name, ``trace:<check>`` or ``quiesce``), ``examples`` (Hypothesis examples run until
    caught), ``seed`` (the simulator seed of the failing example; Hypothesis runs derandomized, so the
    table is the same on every run), plus ``variant``, ``bug``, ``seconds``."""
    return [run_mutant(m, profile) for m in mutants]

