"""The one mutation table: each fault switch of the reference, caught by its family's conformance machine.

Every row is a :class:`Mutant`: the switch, who owns it (the coordinator or the client), the protocol
family and variant whose machine must catch it, the bug it plants. :func:`run_mutant` runs that
family's machine (:mod:`.frame`) with the switch on, derandomized (the same examples on every run):

* ``classic``: the profile's examples (``PROFILES``), paired with the correct reference on the same
  schedule (an example the correct reference fails is rejected); the row names the check that caught it,
  after how many examples, and the failing example's simulator seed;
* ``consumer``: 400 examples of 40 rules on the ``one-topic`` setup;
* ``migration``: 300 examples of 60 rules, Hypothesis seed 0.

May import: ``.frame`` and the family modules.
"""
from __future__ import annotations

import contextlib
import io
import time
from dataclasses import dataclass
from typing import Any, Iterable

from .frame import derandomized, run_machine
from .refinement import ConformanceFailure


@dataclass(frozen=True)
class Mutant:
    """A named fault switch of the reference, and the variant whose conformance suite must catch it."""

    switch: str
    owner: str  # "coordinator" | "consumer"
    variant: str
    bug: str
    family: str = "classic"  # "classic" | "consumer" | "migration"


MUTANTS: tuple[Mutant, ...] = (
    # the classic protocol and Kafka Connect (groupspec.conformance.classic)
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
    # the next-generation protocol, KIP-848 (groupspec.conformance.consumer)
    *(Mutant(s, o, "consumer", b, "consumer") for s, o, b in (
        ("no_wait_release", "coordinator", "a partition is given before its previous owner acknowledged revoking it"),
        ("no_epoch_bump", "coordinator", "a new target keeps the old assignment epoch"),
        ("unfenced_commits", "coordinator", "OffsetCommit skips the member id and member epoch checks"),
        ("early_epoch", "coordinator", "a revoking member gets the new epoch before it acknowledged"),
        ("keep_removed_holding", "coordinator", "a removed member's partitions keep their partition epoch"),
        ("no_rebalance_timeout", "coordinator", "a member that does not revoke in time is not fenced"),
        ("accept_unknown_member", "coordinator", "a heartbeat from an unknown member id with epoch > 0 is accepted"),
        ("keep_on_fence", "consumer", "a fenced member keeps its partitions (no onPartitionsLost)"),
        ("no_ack_revocation", "consumer", "the member never reports its owned partitions after revoking"),
    )),
    # the migration between the two (groupspec.conformance.migration)
    Mutant("sync_gives_target", "coordinator", "classic-to-consumer",
           "a classic member's SyncGroup answers its target, not its assigned partitions", "migration"),
    Mutant("no_rejoin_signal", "coordinator", "classic-to-consumer",
           "a classic member's Heartbeat never answers REBALANCE_IN_PROGRESS", "migration"),
)

PROFILES = {"ci": (200, 25), "deep": (2000, 60), "dev": (30, 15)}  # classic: (max examples, rules per example)
CONSUMER_EXAMPLES, CONSUMER_STEPS = 400, 40
MIGRATION_EXAMPLES, MIGRATION_STEPS, MIGRATION_SEED = 300, 60, 0


def family_mutants(family: str) -> tuple[Mutant, ...]:
    return tuple(m for m in MUTANTS if m.family == family)


def run_mutant(m: Mutant, profile: str = "ci") -> dict[str, Any]:
    """One row of the table: ``m.variant``'s machine with the switch on, until something fails."""
    started = time.perf_counter()
    row: dict[str, Any] = {"mutant": m.switch, "switch owner": m.owner, "variant": m.variant, "bug": m.bug,
                           "caught": False, "check": None, "examples": None, "seed": None}
    if m.family == "classic":
        row.update(_classic(m, profile))
    else:
        if m.family == "consumer":
            from .consumer import SETUPS, run

            why = run(SETUPS["one-topic"], m.switch, examples=CONSUMER_EXAMPLES, steps=CONSUMER_STEPS)
            row.update(examples=CONSUMER_EXAMPLES, seed="derandomized")
        else:
            from .migration import run as run_migration

            why, _n = run_migration(mutant=m.switch, walks=MIGRATION_EXAMPLES, steps=MIGRATION_STEPS,
                                    seed=MIGRATION_SEED)
            row.update(examples=MIGRATION_EXAMPLES, seed=MIGRATION_SEED)
        row.update(caught=why is not None, check=f"conformance ({m.family})" if why else "", detail=why or "")
    row["seconds"] = round(time.perf_counter() - started, 2)
    return row


def _classic(m: Mutant, profile: str) -> dict[str, Any]:
    from .classic import make_machine

    max_examples, steps = PROFILES[profile]
    counter = [0]
    machine = make_machine(
        m.variant,
        consumer_faults=(m.switch,) if m.switch and m.owner == "consumer" else (),
        coordinator_faults=(m.switch,) if m.switch and m.owner == "coordinator" else (),
        counter=counter, paired=bool(m.switch), slow_starts=bool(m.switch),
    )
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_machine(machine, derandomized(max_examples, steps))
    except ConformanceFailure as e:
        return {"caught": True, "check": e.check, "examples": counter[0], "seed": _sim_seed(str(e)),
                "detail": str(e).splitlines()[0]}
    except Exception as e:  # any other failure of the reference (a crash) also counts, named as such
        return {"caught": True, "check": f"crash:{type(e).__name__}", "examples": counter[0],
                "detail": str(e)[:200]}
    return {"examples": counter[0]}


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
    invariant's name, ``trace:<check>``, ``quiesce``, ``conformance (consumer)``, ``conformance
    (migration)``), ``examples`` (classic: Hypothesis examples run until caught; the others: the budget),
    ``seed`` (classic: the simulator seed of the failing example), plus ``variant``, ``bug``, ``seconds``.
    Every run is derandomized (or seeded), so the table is the same on every run."""
    return [run_mutant(m, profile) for m in mutants]
