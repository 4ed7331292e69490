"""`groupspec verify`, the main job: every correct variant must hold, every broken one must be caught.

The model section explores each protocol variant at its default bounds (chosen so the whole job stays
under five minutes on an idle 2-core machine), each correct variant also with every fault that applies
to it in one search (:data:`EVERY_FAULT_JOBS`), and each deliberately broken variant at bounds where its
bug shows. A correct variant passes when every property holds; a broken variant passes when the
checker finds the violation it was built to exhibit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from groupspec.checker import check


@dataclass(frozen=True)
class ModelJob:
    protocol: str
    assignor: str
    members: int
    partitions: int
    topics: int
    faults: str
    budget: int
    expect: str = ""  # the property a broken variant must violate ("" for correct variants)
    note: str = ""
    # A correct variant's properties that Kafka itself violates on these bounds (each reproduced by a
    # reference scenario named in ``note``): exactly these must be violated, every other one must hold.
    kafka_too: str = ""
    # A broken variant's row may stop the breadth-first search early: its violation is then found among the
    # states within the shortest counterexample's depth (the verdict is the same, the search cheaper).
    max_states: int | None = None

    @property
    def bounds(self) -> str:
        t = f"×{self.topics}t" if self.topics > 1 else ""
        return f"{self.members}m×{self.partitions}p{t} {self.faults or 'no faults'} b{self.budget}"


ALL_FAULTS = "join,leave,crash,timeout,zombie,subscription,partitions"
# The classic protocol's group formation and timers (model/formation.py): the Python explorer runs them.
TIMING = "initial-delay,two-step-join,sync-timeout,late-expiry,poll-timeout"
# KIP-848's requests and answers in flight (model/consumer_flight.py; early-restart is consumer-static's only).
FLIGHT = "lose-answer,late-answer,late-commit"


def applicable_faults(protocol: str) -> frozenset[str]:
    """The faults that apply to a variant: its page says (``Spec.applicable_faults``, model/spec.py)."""
    from groupspec.model import VARIANTS

    faults: frozenset[str] = VARIANTS[protocol].applicable_faults()
    return faults


EVERY_FAULT_JOBS: tuple[ModelJob, ...] = (
    ModelJob("eager", "sticky", 4, 4, 2, ALL_FAULTS, 2),
    ModelJob("eager", "range", 4, 4, 2, ALL_FAULTS, 2),
    ModelJob("eager", "roundrobin", 4, 4, 2, ALL_FAULTS, 2),
    ModelJob("static", "sticky", 3, 4, 2, ALL_FAULTS, 2),  # at 4 members: more than 80 CPU-s
    ModelJob("static", "range", 3, 4, 2, ALL_FAULTS, 2),
    ModelJob("cooperative", "sticky", 4, 4, 2, ALL_FAULTS, 2),
    ModelJob("static-cooperative", "sticky", 3, 4, 2, ALL_FAULTS, 2,
             kafka_too="exclusive_ownership,commit_fencing", note="simulate static-member-left-behind"),
    ModelJob("connect-delayed", "sticky", 4, 4, 1, "join,leave,crash,timeout,zombie,partitions", 2),
    ModelJob("coordinator-assigns", "sticky", 4, 4, 2, ALL_FAULTS, 2),
    ModelJob("zookeeper", "range", 3, 3, 1, "join,leave,crash,timeout,zombie", 2,
             kafka_too="commit_fencing,exclusive_processing,convergence",
             note="historical: unfenced offsets, a consumer acting on a stale view of its expired session, "
                  "retries that run out"),
    ModelJob("connect-keep-work", "sticky", 3, 3, 1, "join,leave,crash,timeout,zombie,partitions", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="a reset worker keeps running its work (gap 11)"),
    ModelJob("classic-to-consumer", "uniform", 3, 3, 1, "join,leave,crash,timeout,zombie", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="model only (Kafka's source): docs/migration.md"),
    ModelJob("classic-to-consumer-acked", "uniform", 3, 3, 1, "join,leave,crash,timeout,zombie", 2),
    ModelJob("consumer", "uniform", 3, 4, 2, ALL_FAULTS, 2),
    ModelJob("consumer", "range", 3, 4, 2, ALL_FAULTS, 2),
    ModelJob("consumer-static", "uniform", 3, 4, 2, ALL_FAULTS, 2),
    # ... and with the requests and answers in flight too (compiled since issue 29; 40,248 and 41,713 states): the
    # late OffsetCommit at the member's own epoch is accepted, as in Kafka 4.3.1's source (the late-commit row below)
    ModelJob("consumer", "uniform", 3, 4, 2, f"{ALL_FAULTS},{FLIGHT}", 2, kafka_too="commit_fencing",
             note="model only (Kafka 4.3.1's source): a late commit at the member's own epoch, docs/consumer-protocol.md"),
    ModelJob("consumer-static", "uniform", 3, 4, 2, f"{ALL_FAULTS},{FLIGHT},early-restart", 2, kafka_too="commit_fencing",
             note="model only (Kafka 4.3.1's source): a late commit at the member's own epoch, docs/consumer-protocol.md"),
    ModelJob("eager-to-cooperative", "range", 2, 3, 2, ALL_FAULTS, 2),  # 15,364 states
    ModelJob("static-leader-snapshot", "sticky", 2, 3, 2, ALL_FAULTS, 3, kafka_too="convergence",
             note="a static leader back with skipAssignment never notices a partition added while it was down"),
    # The classic variants with their formation and timer faults too (TIMING): the Python explorer, so at
    # smaller bounds (60.5 CPU-s together, measured); the rows above keep the compiled engine's larger bounds.
    ModelJob("eager", "sticky", 3, 4, 2, f"{ALL_FAULTS},{TIMING}", 2),
    ModelJob("eager", "range", 3, 3, 2, f"{ALL_FAULTS},{TIMING}", 2),
    ModelJob("static", "sticky", 3, 3, 2, f"{ALL_FAULTS},initial-delay,sync-timeout,late-expiry,poll-timeout", 2),
    ModelJob("cooperative", "sticky", 3, 4, 2, f"{ALL_FAULTS},{TIMING}", 2),
    ModelJob("static-cooperative", "sticky", 3, 3, 2, f"{ALL_FAULTS},initial-delay,sync-timeout,late-expiry,poll-timeout", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="simulate static-member-left-behind"),
    ModelJob("connect-delayed", "sticky", 3, 3, 1, f"join,leave,crash,timeout,zombie,partitions,{TIMING}", 2),
    ModelJob("connect-keep-work", "sticky", 3, 3, 1, f"join,leave,crash,timeout,zombie,partitions,{TIMING}", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="a reset worker keeps running its work (gap 11)"),
    ModelJob("coordinator-assigns", "sticky", 3, 4, 2,
             f"{ALL_FAULTS},initial-delay,two-step-join,late-expiry,poll-timeout", 2),
)

MODEL_JOBS: tuple[ModelJob, ...] = (
    ModelJob("eager", "sticky", 3, 3, 1, "crash,leave,zombie", 2),
    ModelJob("eager", "range", 3, 3, 1, "crash,leave", 2),
    ModelJob("static", "sticky", 3, 2, 1, "join,crash,zombie", 2),
    ModelJob("static", "range", 3, 3, 1, "join,crash", 2),
    ModelJob("cooperative", "sticky", 3, 4, 1, "crash,timeout,zombie,leave", 2),
    ModelJob("cooperative", "sticky", 2, 4, 2, "subscription,partitions,crash", 2),
    ModelJob("cooperative", "sticky", 4, 6, 1, "crash,timeout", 2),  # 4.1 M states: the compiled engine's size
    ModelJob("static", "sticky", 2, 3, 2, "subscription,crash,join", 3),  # the narrower-subscription restart
    ModelJob("static", "sticky", 3, 3, 1, "join,crash,timeout,leave,zombie", 2),
    ModelJob("static-cooperative", "sticky", 3, 4, 2, "join,subscription,partitions", 2),
    # 4 x 6: 105,679 states; with crash, timeout and zombie at budget 1: 841,055 states, ~7 CPU-s (budget 2
    # is groupspec check's job: docs/specification.md)
    ModelJob("static-cooperative", "sticky", 4, 6, 2, "join,subscription,partitions", 2),
    ModelJob("static-cooperative", "sticky", 4, 6, 1, "crash,timeout,zombie", 1,
             kafka_too="exclusive_ownership,commit_fencing", note="simulate static-member-left-behind"),
    ModelJob("static-cooperative", "sticky", 3, 4, 1, "crash,timeout,join", 2,
             kafka_too="exclusive_ownership,commit_fencing,convergence",
             note="simulate static-member-left-behind, static-restart-in-cooperative-round"),
    ModelJob("static-cooperative", "sticky", 3, 3, 1, "crash,timeout,zombie", 2,  # 685,676 states
             kafka_too="exclusive_ownership,commit_fencing", note="simulate static-member-left-behind"),
    ModelJob("connect-delayed", "sticky", 3, 3, 1, "join,crash,leave", 2),
    ModelJob("coordinator-assigns", "sticky", 3, 3, 1, "crash,leave,timeout", 2),
    ModelJob("connect-keep-work", "sticky", 3, 3, 1, "join,crash,timeout", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="a reset worker keeps running its work (gap 11)"),
    ModelJob("zookeeper", "range", 3, 3, 1, "join,leave,crash", 2, kafka_too="convergence",
             note="rebalance.max.retries run out: a consumer gives up until the next change"),
    ModelJob("zookeeper", "range", 2, 2, 1, "timeout", 1, kafka_too="commit_fencing,exclusive_processing,convergence",
             note="split brain: a consumer acts on a stale view of its own expired session"),
    ModelJob("consumer", "uniform", 3, 3, 1, "crash,timeout,zombie", 2),
    ModelJob("consumer", "range", 3, 3, 1, "join,leave,crash", 2),
    ModelJob("consumer-static", "uniform", 3, 3, 1, "join,leave,crash,zombie", 2),
    # KIP-848 with requests and answers in flight (model/consumer_flight.py; compiled since issue 29): epochs apart,
    # FENCED_MEMBER_EPOCH (issue 29's Done-when instance, 562,516 states), UNRELEASED_INSTANCE_ID, late answers.
    ModelJob("consumer", "uniform", 3, 3, 1, "crash,timeout,zombie,lose-answer", 2),
    ModelJob("consumer", "uniform", 2, 2, 1, "lose-answer,late-answer,late-commit,timeout", 3),
    ModelJob("consumer-static", "uniform", 3, 3, 1, "crash,early-restart,lose-answer,leave,join", 2),
    # A late OffsetCommit at the member's own epoch for a partition it released within that epoch is accepted:
    # CurrentAssignmentBuilder keeps the epoch after an acknowledged revocation that leads to another one, and
    # ConsumerGroup.validateOffsetCommit accepts the member's epoch for every partition (4.3.1's source).
    ModelJob("consumer", "uniform", 3, 3, 1, "late-commit", 2, kafka_too="commit_fencing",  # 9,220 states
             note="model only (Kafka 4.3.1's source): a late commit at the member's own epoch, docs/consumer-protocol.md"),
    ModelJob("classic-to-consumer", "uniform", 3, 3, 1, "crash,timeout,zombie", 2,
             kafka_too="exclusive_ownership,commit_fencing", note="model only (Kafka's source): docs/migration.md"),
    ModelJob("classic-to-consumer-acked", "uniform", 3, 3, 1, "crash,timeout,zombie", 2),
    ModelJob("classic-to-consumer-acked", "uniform", 3, 3, 1, "join,leave,crash", 3),
    # Two rolling bounces, in any order, with the protocol vote (68,638 states; the Python engine).
    ModelJob("eager-to-cooperative", "range", 3, 3, 1, "", 0),
    ModelJob("static-leader-snapshot", "sticky", 2, 3, 1, "crash,join,partitions", 3, kafka_too="convergence",
             note="a static leader back with skipAssignment never notices a partition added while it was down"),
    # Every correct variant with every fault that applies to it, in one search each (ALL_FAULTS; Connect
    # workers have no topic subscription to change; ZooKeeper's model has no topic changes).
    *EVERY_FAULT_JOBS,
    # Broken on purpose: each must be caught.
    ModelJob("cooperative-direct-transfer", "sticky", 3, 3, 1, "crash,leave", 1, "exclusive_ownership"),
    ModelJob("eager-no-revoke", "sticky", 2, 2, 1, "", 0, "exclusive_ownership"),
    ModelJob("unfenced-commits", "sticky", 2, 2, 1, "zombie", 1, "commit_fencing"),
    ModelJob("cooperative-flappy", "sticky", 2, 2, 1, "", 0, "convergence"),
    ModelJob("consumer-no-wait-release", "uniform", 2, 2, 1, "", 0, "exclusive_ownership"),
    ModelJob("consumer-unfenced-commits", "uniform", 2, 2, 1, "zombie", 1, "commit_fencing"),
    ModelJob("consumer-no-epoch-bump", "uniform", 2, 2, 1, "", 0, "convergence"),
    ModelJob("consumer-commit-any-epoch", "uniform", 2, 2, 1, "late-commit", 1, "commit_fencing",
             note="a late OffsetCommit accepted after its partition moved on (KIP-1082: same member id)"),
    ModelJob("consumer-fenced-keeps-partitions", "uniform", 3, 1, 1, "lose-answer", 2, "convergence",
             note="a fenced client that keeps its epoch is fenced forever"),
    ModelJob("classic-to-consumer-sync-target", "uniform", 3, 3, 1, "", 2, "exclusive_ownership"),
    ModelJob("classic-to-consumer-no-rejoin", "uniform", 2, 2, 1, "", 1, "convergence"),
    ModelJob("classic-to-consumer-gen-drops", "uniform", 2, 2, 1, "", 2, "generation_monotonic"),
    ModelJob("classic-to-consumer-two-owners", "uniform", 2, 2, 1, "", 2, "commit_fencing"),
    ModelJob("upgrade-one-bounce", "range", 3, 3, 1, "", 0, "exclusive_ownership",
             note="an eager leader does not validate: two owners in 14 steps", max_states=40_000),
    ModelJob("upgrade-unvalidated", "range", 2, 2, 1, "", 0, "exclusive_ownership",
             note="at 2x2 only validateCooperativeAssignment keeps upgrade-one-bounce exclusive"),
    ModelJob("zookeeper", "range", 2, 2, 1, "zombie", 1, "commit_fencing",
             note="historical: ZooKeeper offsets had no fencing"),
)


@dataclass
class ModelRow:
    job: ModelJob
    states: int
    seconds: float
    verdicts: dict[str, bool | None]
    bound: int | None
    passed: bool
    detail: str
    trace_steps: int | None
    engine: str = "python"


# How long the slowest rows took in one run of ``groupspec verify`` (wall seconds in a worker, 2026-11-28, load
# average 8-10 on the 2-core machine), keyed by (protocol, assignor, members, partitions, topics, number of faults,
# budget). Only the order of verify's one pool depends on them: the longest work first, so that no long row starts
# last while the other core idles. A row not listed is expected to take DEFAULT_SECONDS.
SECONDS_SEEN: dict[tuple[str, str, int, int, int, int, int], float] = {
    ("cooperative", "sticky", 4, 6, 1, 2, 2): 170,
    ("eager-to-cooperative", "range", 3, 3, 1, 0, 0): 56,
    ("connect-keep-work", "sticky", 3, 3, 1, 10, 2): 45,
    ("eager", "range", 3, 3, 2, 11, 2): 44,
    ("connect-keep-work", "sticky", 3, 3, 1, 3, 2): 41,
    ("connect-keep-work", "sticky", 3, 3, 1, 6, 2): 35,
    ("eager", "roundrobin", 4, 4, 2, 7, 2): 33,
    ("eager", "range", 4, 4, 2, 7, 2): 31,
    ("cooperative", "sticky", 3, 4, 2, 11, 2): 30,
    ("connect-delayed", "sticky", 3, 3, 1, 10, 2): 29,
    ("connect-delayed", "sticky", 4, 4, 1, 6, 2): 28,
    ("static-cooperative", "sticky", 4, 6, 1, 3, 1): 28,
    ("static-cooperative", "sticky", 3, 3, 2, 10, 2): 25,
    ("upgrade-one-bounce", "range", 3, 3, 1, 0, 0): 22,
    ("eager", "sticky", 3, 4, 2, 11, 2): 21,
    ("static-cooperative", "sticky", 3, 3, 1, 3, 2): 21,
    ("static", "sticky", 3, 3, 2, 10, 2): 17,
    ("cooperative", "sticky", 4, 4, 2, 7, 2): 14,
    ("consumer", "uniform", 3, 3, 1, 4, 2): 11,
    ("static-leader-snapshot", "sticky", 2, 3, 2, 7, 3): 11,
    ("eager-to-cooperative", "range", 2, 3, 2, 7, 2): 11,
    ("eager", "sticky", 4, 4, 2, 7, 2): 9,
}
DEFAULT_SECONDS = 5.0
# The same for the proofs' tasks (by kind: ``groupspec.proofs.plan``) and the mutation check's rows (by switch).
PROOF_SECONDS = {"cdrift": 32.0, "drift": 14.0, "bmc": 12.0, "ranking": 6.0, "lasso": 5.0, "epr": 2.0, "mutant": 2.0,
                 "consumer": 2.0}
MUTANT_SECONDS = {"forget_pending_member": 41.0, "no_rebalance_timeout": 8.0, "accept_stale_commit": 5.0}


def expected_seconds(job: ModelJob) -> float:
    """:data:`SECONDS_SEEN` for ``job`` (the order of verify's pool only)."""
    faults = len([f for f in job.faults.split(",") if f])
    key = (job.protocol, job.assignor, job.members, job.partitions, job.topics, faults, job.budget)
    return SECONDS_SEEN.get(key, DEFAULT_SECONDS)


def run_model_job(job: ModelJob, progress: Callable[[int, int], None] | None = None) -> ModelRow:
    _proto, res = check(
        job.protocol, assignor=job.assignor, members=job.members, partitions=job.partitions, topics=job.topics,
        faults=frozenset(f for f in job.faults.split(",") if f), budget=job.budget, progress=progress, with_symmetry_factor=False,
        max_states=job.max_states,
    )
    verdicts = {name: v.held for name, v in res.verdicts.items()}
    steps = None
    if job.expect:
        v = res.verdicts.get(job.expect)
        passed = v is not None and v.held is False
        steps = len(v.trace) - 1 if (v is not None and v.trace) else None
        detail = (f"caught: {v.explanation if v is not None else ''}" if passed else f"NOT caught: {job.expect} {'held' if v and v.held else 'undecided'}")
    elif job.kafka_too:
        want = set(job.kafka_too.split(","))
        failed = [name for name, held in verdicts.items() if held is False]
        undecided = [name for name, held in verdicts.items() if held is None
                     and (name != "generation_monotonic" or _proto.has_generations)]  # n/a
        passed = set(failed) == want and not undecided
        detail = (f"violated as in Kafka: {', '.join(sorted(want))}; the rest hold" if passed
                  else f"expected exactly {', '.join(sorted(want))} violated, got {', '.join(sorted(failed)) or 'none'}"
                  + (f" (undecided: {', '.join(undecided)})" if undecided else ""))
    else:
        failed = [name for name, held in verdicts.items() if held is False]
        passed = not failed
        detail = "all properties hold" if passed else "violated: " + ", ".join(failed)
    return ModelRow(job, res.states, res.seconds, verdicts, res.convergence_bound, passed, detail, steps, res.engine)


def run_model_section(progress_for: Callable[[ModelJob], Callable[[int, int], None] | None] | None = None) -> list[ModelRow]:
    return [run_model_job(job, progress_for(job) if progress_for else None) for job in MODEL_JOBS]


def rows_json(rows: list[ModelRow]) -> list[dict[str, Any]]:
    return [
        {
            "protocol": r.job.protocol, "assignor": r.job.assignor, "bounds": r.job.bounds,
            "kind": "broken" if r.job.expect else "correct", "expect_violation": r.job.expect or None,
            "kafka_too": r.job.kafka_too.split(",") if r.job.kafka_too else [],
            "states": r.states, "seconds": round(r.seconds, 2), "engine": r.engine, "verdicts": r.verdicts,
            "convergence_bound": r.bound, "passed": r.passed, "detail": r.detail,
            "counterexample_steps": r.trace_steps,
        }
        for r in rows
    ]
