"""The checks that may kill a model mutant: only those that compare the model with something it was not
written with.

* ``model:<variant>`` — the model's own safety and liveness properties (``model/properties.py``: exclusive
  ownership, commit fencing, generation monotonicity, convergence), explored exhaustively by the Python
  explorer on the mutated model at small bounds with every fault that applies. The mutant dies if a
  property that holds on the unchanged model is violated, if a violation Kafka shares (``kafka_too`` of
  ``groupspec verify``, each reproduced by a reference scenario) disappears, or if the model raises (its
  own transition table, ``check_transition``, or an assertion). A changed state count or convergence
  bound alone kills nothing: that is a change detector, not a fidelity check.
* ``broken:<variant>`` — the deliberately broken variants (``model/broken.py``), each at bounds where its bug
  shows: a mutant that lets one through (the property no longer finds the violation) is killed. This is
  what a mutant of a property itself (``model/properties.py``, a variant's ``*_violation``) answers to.
* ``assignor:<name>`` — the model's assignors against Kafka's, in the reference (``groupspec.reference.
  assignors``), on a fixed sample of small groups: ``range`` and ``roundrobin`` must give Kafka's answer;
  ``sticky``, a stand-in, must pass the reference's assignor invariants (assignors.md §2: members,
  no duplicates, subscribed, complete, movability) and be stable (run on its own output, it changes nothing).
  ``assignor:sticky-claims`` holds the sticky stand-in's claim resolution to Kafka's (the reference's
  ``sticky_claims``: conflicts by generation in Kafka's member order, the multiply-claimed partitions, what each
  of Kafka's two paths keeps of them; :mod:`.sticky_claims`).
* ``conformance:<suite>`` — the reference implementation run in the simulator and checked against the
  mutated model after every event (``groupspec.conformance``: the classic and Connect state machines,
  the KIP-848 machine, the migration walks), derandomized, so the same runs every time.

Pinned state counts, figure freshness and the drift tests between the model and its own re-encodings
(the compiled engine, the Z3 encodings) are deliberately not killers: a misreading of Kafka made in the
model would be made in them alike.

May import: ``groupspec.model``, ``groupspec.checker``, ``groupspec.conformance`` — always imported
inside the functions, after :func:`groupspec.specmut.loader.applied` has put the mutant in place.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType
from typing import Any, Callable, NoReturn, cast

from .client_walks import CLIENT_WALK_JOBS
from .consumer_client_walks import CONSUMER_CLIENT_WALK_JOBS
from .connect_walks import CONNECT_WALK_JOBS
from .kafka_consumer_walks import CONSUMER_WALK_JOBS
from .kafka_runs import CLASSIC_KAFKA_RUNS
from .trace_walks import TRACE_WALK_JOBS
from .kafka_walks import WALK_JOBS
from .kafka_walks import BIASED_WALK_JOBS
from .migration_commits import MIGRATION_COMMIT_JOBS
from .migration_classic import MIGRATION_CLASSIC_JOBS
from .operators import MODEL_DIR, PACKAGE
from .zookeeper_walks import ZK_WALK_JOBS

# The explorer's jobs: small enough for seconds each on one core (Python engine), every fault that applies.
CLASSIC_FAULTS = "join,leave,crash,timeout,zombie,subscription,partitions"
F = "join,leave,crash,timeout,zombie,partitions"
TIMERS = "initial-delay,two-step-join,sync-timeout,late-expiry"  # the classic formation and timer faults
STATIC_TIMERS = "initial-delay,sync-timeout,late-expiry"
EXPLORER_JOBS: tuple[tuple[str, str, int, int, int, str, int], ...] = (
    # variant, assignor, members, partitions, topics, faults, budget (each well under a few CPU-seconds)
    ("eager", "sticky", 3, 2, 1, f"{F},{TIMERS}", 1),
    ("eager", "sticky", 2, 3, 1, f"{F},{TIMERS}", 2),
    ("eager", "range", 2, 2, 2, CLASSIC_FAULTS, 2),
    ("cooperative", "sticky", 2, 3, 1, f"{F},initial-delay,sync-timeout,late-expiry", 2),
    ("cooperative", "sticky", 2, 2, 2, CLASSIC_FAULTS, 2),
    ("static", "sticky", 2, 3, 1, f"{F},{STATIC_TIMERS}", 2),
    ("static", "range", 2, 2, 2, CLASSIC_FAULTS, 2),
    ("static-cooperative", "sticky", 2, 2, 1, F, 2),
    # a static member replaced in a STABLE group before its old id synced: the pending-sync timer must fire
    ("static", "sticky", 2, 2, 1, "join,crash,sync-timeout", 3),
    # a Connect worker's poll timeout alone: it keeps its work across the reset (the duplicate Kafka shares)
    ("connect-keep-work", "sticky", 2, 3, 1, "poll-timeout,crash,join", 2),
    ("static-leader-snapshot", "sticky", 2, 3, 1, "crash,join,partitions", 3),
    ("coordinator-assigns", "sticky", 2, 3, 1, f"{F},initial-delay,two-step-join,late-expiry", 2),
    ("eager-to-cooperative", "range", 2, 2, 1, "", 0),
    ("eager-to-cooperative", "range", 2, 2, 1, "join,leave,crash,timeout,zombie", 2),  # the rolling upgrade, perturbed
    ("connect-delayed", "sticky", 2, 2, 1, F, 2),
    ("connect-keep-work", "sticky", 2, 2, 1, F, 2),
    ("connect-keep-work", "sticky", 2, 3, 1, "timeout,leave", 1),  # a reset worker's kept work met again (poll timeout)
    ("consumer", "uniform", 3, 2, 1, F, 2),
    ("consumer", "range", 2, 3, 2, "subscription,partitions,crash", 2),
    ("consumer-static", "uniform", 2, 3, 1, "join,leave,crash,timeout,zombie", 3),
    # the requests and answers in flight (model/consumer_flight.py): lost and late answers, late commits, restarts
    ("consumer", "uniform", 2, 2, 1, "lose-answer,late-answer,late-commit,timeout", 2),
    ("consumer", "uniform", 3, 3, 1, "late-commit", 2),  # commit_fencing violated, as in Kafka (verify's kafka_too)
    ("consumer-static", "uniform", 2, 3, 1, "crash,early-restart,lose-answer,leave,join", 3),
    ("classic-to-consumer", "uniform", 2, 2, 1, "join,leave,crash,timeout,zombie", 2),
    ("classic-to-consumer-acked", "uniform", 2, 2, 1, "join,leave,crash,timeout,zombie", 2),
    ("zookeeper", "range", 2, 2, 1, "join,leave,crash,timeout,zombie", 2),
    ("zookeeper", "range", 3, 2, 1, "join,leave,crash,timeout,zombie", 2),
    # one consumer runs, the other never starts, no fault: every property holds (a predicate that finds a violation
    # where there is none, or a convergence that counts a stopped consumer against the group, is killed here)
    ("zookeeper", "range", 2, 2, 1, "join", 0),
    ("classic-to-consumer", "uniform", 3, 2, 1, "join,leave,crash,timeout,zombie", 1),
    # issue 30, the migration family's full run: one member at budget 3 is fenced (ExpireLive, then its heartbeat) and
    # rejoins at epoch 0, a step the client's epoch goes down to 0 by, as KIP-848 has it (111 states)
    ("classic-to-consumer", "uniform", 1, 2, 1, "join,leave,crash,timeout,zombie", 3),
    # issue 30, the KIP-848 family's last eleven: a member that joined and left again leaves the group epoch two ahead
    # of the member that stayed (at the same budget as the group that never saw it): a state key without the group
    # epoch merges the two and closes a cycle the protocol does not have (convergence holds, 114 states)
    ("consumer", "uniform", 2, 2, 1, "join,leave,late-commit", 2),
)
# The broken variants (model/broken.py), each at bounds where ``groupspec verify`` shows its bug: a mutant of a
# property (or of a rule a broken variant shares) that lets one of them through is killed ("no longer violated").
BROKEN_JOBS: tuple[tuple[str, str, int, int, int, str, int], ...] = (
    ("cooperative-direct-transfer", "sticky", 3, 3, 1, "crash,leave", 1),
    ("eager-no-revoke", "sticky", 2, 2, 1, "", 0),
    ("unfenced-commits", "sticky", 2, 2, 1, "zombie", 1),
    ("cooperative-flappy", "sticky", 2, 2, 1, "", 0),
    ("consumer-no-wait-release", "uniform", 2, 2, 1, "", 0),
    ("consumer-unfenced-commits", "uniform", 2, 2, 1, "zombie", 1),
    ("consumer-no-epoch-bump", "uniform", 2, 2, 1, "", 0),
    ("consumer-commit-any-epoch", "uniform", 2, 2, 1, "late-commit", 1),
    ("consumer-fenced-keeps-partitions", "uniform", 3, 1, 1, "lose-answer", 2),
    ("classic-to-consumer-no-rejoin", "uniform", 2, 2, 1, "", 1),
    # the downgrade's generation going down is the only symptom (generation_violation's kind-change exemption)
    ("classic-to-consumer-gen-drops", "uniform", 2, 2, 1, "", 2),
    # two owners in the classic group before the upgrade: a current member's commit accepted (commit_accepted)
    ("classic-to-consumer-two-owners", "uniform", 2, 2, 1, "", 2),
    ("upgrade-unvalidated", "range", 2, 2, 1, "", 0),
    ("zookeeper", "range", 2, 2, 1, "zombie", 1),
    # work held for workers that all departed (the delay never ends): convergence must not count it as converged
    ("connect-hold-outlives-group", "sticky", 2, 2, 1, "crash", 2),
    # revoked work never stopped: duplicated work outlives a round (duplicate_work_settles must still notice it)
    ("connect-ignores-revocation", "sticky", 2, 2, 1, "timeout,leave", 1),
    # a session lost under a running consumer (no pause): its commits are unfenced (commit_fencing fails, as in 0.8)
    ("zookeeper", "range", 2, 2, 1, "timeout", 1),
    # issue 30, the fifth campaign's gaps: a member that claims the generation its parked JoinGroup will open (the
    # group changed, its generation did not: generation_violation must still look at the client)
    ("eager-join-generation-ahead", "sticky", 2, 2, 1, "", 0),
    # a classic leader that never assigns the last partition: the migration's convergence must not call that converged
    ("classic-to-consumer-short-assignment", "uniform", 2, 2, 1, "leave", 1),
    # a crashed member never expired: convergence fails only if a running process can crash
    ("classic-to-consumer-crash-lingers", "uniform", 2, 2, 1, "crash", 1),
    # issue 30, the migration family's full run: the group's epoch going down at a conversion of a classic group that
    # has members, or without a change of type; a consumer member's epoch going down (generation_violation's branches)
    ("classic-to-consumer-upgrade-replaces", "uniform", 2, 2, 1, "", 1),
    ("classic-to-consumer-empty-group-reset", "uniform", 1, 2, 1, "timeout", 2),
    ("classic-to-consumer-epoch-rollback", "uniform", 2, 2, 1, "", 2),
    # a classic member expired while paused keeps its partitions until its next request tells it (UNKNOWN_MEMBER_ID):
    # with classic commits unfenced, its commit for a partition given to another is accepted
    ("classic-to-consumer-unfenced-classic-commits", "uniform", 2, 2, 1, "zombie", 1),
    # issue 30, the KIP-848 survivors of the full family run: two consumers, the second started late by the join fault;
    # the bug must still show when it starts (an instance where every consumer starts down reaches one consumer only)
    ("consumer-no-wait-release", "uniform", 2, 2, 1, "join", 1),
    # unfenced commits with answers and commits in flight, three members: the explorer's key must keep the in-flight
    # answers and commits (and no symmetry reduction there), or the unfenced commit is merged away
    ("consumer-unfenced-commits", "uniform", 3, 2, 1, "late-answer,late-commit", 1),
    # issue 30, the KIP-848 family's last eleven: a partition added to a one-member group must reach the member (the
    # no-bump variant's target changes without an epoch only then); a lost join answer retried with epoch 0 (the
    # rejoin-fenced variant is stuck only then, at budget 1); a late answer overtaken by a second heartbeat (only with
    # the late-answer fault alone)
    ("consumer-no-epoch-bump", "uniform", 1, 2, 1, "partitions", 1),
    ("consumer-rejoin-fenced", "uniform", 1, 2, 1, "lose-answer", 1),
    ("consumer-second-heartbeat", "uniform", 2, 2, 1, "late-answer", 1),
    # issue 30, the classic family's first full run: the instance asked for must be the one explored. One consumer
    # with the join fault still starts running (the one held back is never the only one), so its pause, its expiry and
    # its unfenced commit fit in a budget of one; and with as many partitions as topics the partitions fault holds no
    # topic's only partition back, so the eager member that does not revoke still meets the new owner of one
    ("unfenced-commits", "sticky", 1, 2, 1, "join,zombie", 1),
    ("eager-no-revoke", "sticky", 2, 2, 2, "partitions", 0),
    # the double ownership that exists only while the old owner has the new generation's JoinGroup answer unread
    # (live_member's answer-on-its-way branch must count that owner as live)
    ("coordinator-assigns-no-revoke", "sticky", 2, 2, 1, "", 0),
    # issue 30 (cupgrade): the only variant whose leader runs validateCooperativeAssignment (a consumer listing [range,
    # cooperative-sticky] is COOPERATIVE there; in Kafka it is EAGER). At 2 x 2 the validation is what keeps one owner per
    # partition (the model's exclusive_ownership holds); at 3 x 1 two owners come through an eager leader, who must not
    # validate (Kafka's leader validates only when it is COOPERATIVE: an eager one that did would hide the bug)
    ("upgrade-one-bounce", "range", 2, 2, 1, "", 0),
    ("upgrade-one-bounce", "range", 3, 1, 1, "", 0),
    # issue 30 (cjoin): Connect workers that never rejoin for work nobody is assigned (no scheduled rebalance): the
    # work released when the delay ends after the round that held it back stays unassigned only if that round gave
    # it to nobody (compute_target must hold it back)
    ("connect-no-scheduled-rebalance", "sticky", 2, 2, 1, "crash", 1),
    # issue 30, the classic survivors (cprops): one broken variant per branch of generation_violation (the group's
    # generation kept at a completed join phase; grown at the move to STABLE; a member's own step one generation down)
    # and one that converges but never with every started member (sometimes_all_stable)
    ("eager-join-keeps-generation", "sticky", 2, 2, 1, "", 0),
    ("eager-sync-bumps-generation", "sticky", 2, 2, 1, "", 0),
    ("eager-sync-rolls-back-generation", "sticky", 2, 2, 1, "", 0),
    ("eager-group-max-size-one", "sticky", 2, 2, 1, "", 0),
)
# Client checks added for the fifth campaign's gaps (issue 30; the jobs of client_walks.py's kind, kept here while
# that module's driver is being refactored): the static variant explored with two topics, a restart and a subscription
# change but no partitions fault, where its leader must notice nothing (Kafka's leader watches partition counts only)
GAP_CLIENT_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("static", "range", 2, 2, 2, "join,crash,subscription", 4, 0, 0),
    # issue 30 (classic2): one topic with the subscription fault: no member ever subscribes to nothing (Kafka's
    # subscribe of no topic is unsubscribe, a LeaveGroup), so the change must not drop the only topic
    ("eager", "sticky", 2, 2, 1, "join,leave,crash,subscription", 2, 0, 0),
    # issue 30 (cform): the snapshot leader explored with a partition added and restarts: a leader's client whose
    # snapshot no longer matches the metadata must find the model's leader able to notice (client_walks.missed_notice);
    # a follower's restart in a STABLE group must not renew the leader's snapshot (only a replaced leader's skips)
    ("static-leader-snapshot", "range", 2, 2, 1, "join,crash,partitions", 4, 0, 0),
)
# Kafka walks for the formation and timer rules (issue 30, cform; kafka_walks.py's kind, told apart by walks×steps):
# static members with two-step-join selected (Kafka never answers a static member MEMBER_ID_REQUIRED) and a static
# member replaced in a STABLE group while another follower has not synced (the pending-sync timer removes that
# follower too); static members that miss their poll timeout (no LeaveGroup: Kafka keeps the record); resumed members
# whose JoinGroup or SyncGroup is parked (Kafka never expires them: late-expiry's SessionExpired is sent for them), and
# those with nothing parked (Kafka's session timer removes them: the model must be able to, kafka_walks.missed_expiry)
FORMATION_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("static", "sticky", 3, 2, 1, "join,crash,sync-timeout,two-step-join", 6, 110, 25),
    ("static", "sticky", 3, 2, 1, "join,crash,sync-timeout,poll-timeout", 6, 30, 40),
    ("eager", "sticky", 3, 2, 1, "join,zombie,late-expiry", 6, 140, 40),
)
# Kafka walks added for survivors (the jobs of kafka_walks.py's kind, named alike): issue 30 (cclassic): static members
# with the leave fault, which WALK_JOBS' static jobs leave out: a static member's close sends no LeaveGroup (Kafka's
# client: maybeLeaveGroup checks isDynamicMember), so its record stays until its session runs out
GAP_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    ("static", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie", 4, 20, 20),
)
MAX_STATES = 400_000  # the unchanged model's jobs stay far below (under 20,000 states each)
# A mutant's exploration stops at GROWTH times the unchanged model's states for that job (at least STATE_FLOOR): a
# mutant that blows a state space up is judged on what was explored by then (a safety property violated there is
# violated; a liveness verdict or a violation that disappeared is not judged), instead of exploring 400,000 states
# of every job (the two such mutants of the third campaign's spread took half its CPU).
GROWTH = 20
STATE_FLOOR = 20_000


def state_cap(baseline_states: int | None) -> int:
    """Where a mutant's exploration of a job stops, given the unchanged model's state count for it."""
    if not baseline_states:
        return MAX_STATES
    return min(MAX_STATES, max(STATE_FLOOR, GROWTH * baseline_states))

# The conformance suites: (name, model variant it refines, examples, steps); derandomized.
CONFORMANCE: tuple[tuple[str, str, int, int], ...] = (
    # The schedules the randomized suites once failed on (tests/conformance_regressions.json), replayed rule
    # by rule: long, adversarial runs through pauses, expiries, failovers and late answers (cheap first).
    ("regressions:eager-range", "eager", 0, 0),
    ("regressions:eager-roundrobin", "eager", 0, 0),
    ("regressions:cooperative-sticky", "cooperative", 0, 0),
    ("regressions:static-range", "static", 0, 0),
    ("regressions:connect-delayed", "connect-delayed", 0, 0),
    ("regressions:connect-keep-work", "connect-keep-work", 0, 0),
    ("eager-range", "eager", 12, 15),
    ("cooperative-sticky", "cooperative", 12, 15),
    ("static-range", "static", 12, 15),
    ("connect-delayed", "connect-delayed", 8, 15),
    ("connect-keep-work", "connect-keep-work", 8, 15),
    ("consumer:one-topic", "consumer", 25, 25),
    ("consumer:static", "consumer-static", 25, 25),
    # two topics, subscription changes and new partitions: a partition added to a group with no member leaves the
    # group epoch alone in the reference (kills consumer.Consumer.successors:drop-guard#16)
    ("consumer:two-topics", "consumer", 25, 25),
    ("migration", "classic-to-consumer", 150, 40),  # the conformance frame's machine (issue 26): 60 walks before
)
# The migration's conformance machine on smaller groups (members, partitions, walks, steps): the last member of a
# consumer group leaves or expires and the group is left empty, which the three-member walks hardly reach (the
# reference's coordinator bumps the group epoch then, as Kafka's consumerGroupFenceMember does)
MIGRATION_SMALL: tuple[tuple[int, int, int, int], ...] = ((1, 2, 100, 30), (2, 2, 200, 30))


# The model's assignors against Kafka's (the reference's): range and roundrobin must give Kafka's answer;
# sticky, a stand-in, must pass the reference's assignor invariants (assignors.md §2) and be stable.
ORACLE_ASSIGNORS = ("range", "roundrobin", "sticky")
ORACLE_CASES = 400
# the sticky stand-in's claim resolution against Kafka's (sticky_claims.py: its own sample of small groups)
STICKY_CLAIMS = "assignor:sticky-claims"


# What each check costs on the unchanged model (seconds, measured 2026-11-28 on this 2-core machine, load ~5; a
# check not named here costs under half a second). The campaign runs a mutant's checks in tiers of cost, cheapest
# first (within a tier in the order below: the assignors, the explorer, the broken variants, the Kafka walks, the
# conformance suites), and stops at the first kill: fixed numbers, so the order, and which check kills, is the
# same on every run and machine.
COST: dict[str, float] = {
    "model:eager-to-cooperative·range 2m×2p b2": 1.26, "model:zookeeper·range 3m×2p b2": 1.14,
    "kafka:eager·range 3m×3p×2t 300×40": 5.15, "kafka:eager·sticky 3m×2p 300×40": 3.89,
    "kafka:cooperative·sticky 3m×3p 300×40": 2.07, "kafka:static·range 3m×3p×2t 300×40": 2.99,
    "kafka:static·sticky 3m×2p 300×40": 2.38, "kafka:static-cooperative·sticky 2m×3p 200×40": 1.11,
    "kafka:consumer·uniform 3m×3p 300×40": 2.22, "kafka:consumer·range 3m×4p×2t 300×40": 1.88,
    "kafka:consumer·uniform 2m×2p 100×30": 0.36,  # issue 30, the KIP-848 last eleven (wall seconds, load ~3)
    "kafka:consumer·uniform 2m×3p×2t 200×40": 0.69, "kafka:consumer-static·uniform 3m×3p 300×40": 1.43,
    "kafka:consumer-static·range 3m×4p×2t 200×40": 0.9, "conformance:regressions:eager-range": 1.8,
    "conformance:regressions:eager-roundrobin": 0.5, "conformance:regressions:cooperative-sticky": 2.13,
    "conformance:regressions:static-range": 2.34, "conformance:regressions:connect-keep-work": 1.27,
    "conformance:eager-range": 1.24, "conformance:cooperative-sticky": 2.01, "conformance:static-range": 1.28,
    "conformance:connect-delayed": 1.83, "conformance:connect-keep-work": 0.82, "conformance:consumer:one-topic": 0.58,
    "conformance:consumer:static": 0.63, "conformance:migration": 4.06,
    "conformance:consumer:two-topics": 1.2,  # 3.9 s at load 12
    # the reference classic client along the model's paths (client_walks.py; measured 2026-11-28, load ~9)
    "client:eager·range 3m×3p×2t 300×50": 0.77, "client:eager·sticky 3m×2p 300×50": 0.97,
    "client:cooperative·sticky 3m×3p×2t 300×50": 0.85, "client:static·range 3m×3p×2t 300×50": 0.82,
    "client:static-leader-snapshot·range 3m×3p×2t 300×50": 0.77, "client:static-cooperative·sticky 2m×3p×2t 300×50": 0.6,
    "client:eager·range 2m×2p×2t b2 explored": 0.4, "client:eager·sticky 2m×2p b3 explored": 1.73,
    "client:cooperative·sticky 2m×3p b2 explored": 0.44, "client:static·range 2m×2p b4 explored": 0.41,
    "client:static-leader-snapshot·range 2m×2p×2t b5 explored": 3.61,
    # an old member parked, then crashed (kafka_walks.py BIASED_WALK_JOBS; 2.2 CPU-s untraced, load ~10, 2026-11-29)
    "kafka:eager·range 3m×2p 60×30 parked-crash": 2.2,
    # the reference reconciling consumer (KIP-848) along the model's paths (consumer_client_walks.py; CPU-seconds measured
    # 2026-11-29 at load ~10, where the wall clock read about 3.5 times as much)
    "client:consumer·uniform 3m×3p 150×40": 0.24, "client:consumer·range 2m×3p×2t 150×40": 0.1,
    "client:consumer-static·uniform 3m×3p 150×40": 0.18, "client:consumer·uniform 2m×2p b2 explored": 0.91,
    "client:consumer·uniform 3m×2p b3 explored": 0.78,
    # the rolling upgrade mirrored (client_walks.py; measured 2026-11-29, load ~10)
    "client:eager-to-cooperative·range 3m×3p 300×60": 1.15, "client:eager-to-cooperative·range 2m×2p b1 explored": 0.66,
    "client:connect-keep-work·sticky 3m×3p 300×50": 1.1, "client:connect-keep-work·sticky 2m×2p b2 explored": 1.76,
    "client:connect-delayed·sticky 2m×2p b2 explored": 0.73,
}
COST["history:zookeeper 3m×2p b1 explored"] = 1.16  # zookeeper_walks.py (measured 2026-11-29, load ~8)
COST["conformance:migration 1m×2p 100×30"] = 0.71  # MIGRATION_SMALL (measured 2026-11-29, load ~8)
COST["conformance:migration 2m×2p 200×30"] = 1.87
COST["client:static·range 2m×2p×2t b4 explored"] = 1.55  # GAP_CLIENT_JOBS (measured 2026-11-29, load ~7)
COST["conformance:migration-commits 2m×2p b2"] = 0.6  # migration_commits.py (measured 2026-11-29, load ~8)
COST["conformance:migration-classic 2m×2p b2"] = 1.1  # migration_classic.py (measured 2026-11-29, load ~8)
COST["conformance:migration-classic 3m×2p b1"] = 0.3
COST[STICKY_CLAIMS] = 0.3  # sticky_claims.py, 300 groups (measured 2026-11-29, load ~7): tier 0, beside the assignors
COST["client:eager·sticky 2m×2p b2 explored"] = 0.2  # GAP_CLIENT_JOBS, one topic (measured 2026-11-29, load ~6)
COST["broken:upgrade-one-bounce 3m×1p b0"] = 6.1  # 49,215 states (measured 2026-11-29, load ~6): the last tier
COST["client:upgrade-one-bounce·range 2m×2p b0 explored"] = 0.7  # (measured 2026-11-29, load ~6)
# FORMATION_WALK_JOBS and the snapshot leader's explored client job (issue 30, cform; wall seconds at load ~13, 2026-11-29)
COST["kafka:static·sticky 3m×2p 110×25"] = 8.0
COST["kafka:static·sticky 3m×2p 30×40"] = 2.9
COST["kafka:eager·sticky 3m×2p 140×40"] = 15.7
COST["client:static-leader-snapshot·range 2m×2p b4 explored"] = 4.0
# GAP_WALK_JOBS (measured 2026-11-29, load ~11; the fixed runs of kafka_runs.py take under 0.1 s each: tier 0)
COST["kafka:static·sticky 2m×2p 20×20"] = 0.67
TIERS = (0.5, 1.5, 3.0)  # under half a second, under 1.5 s, under 3 s, longer


def tier(name: str) -> int:
    """The cost tier of a check (0: cheapest)."""
    c = COST.get(name, 0.0)
    return sum(1 for t in TIERS if c >= t)


@dataclass(frozen=True)
class Killer:
    name: str
    kind: str  # "model" | "oracle" | "kafka" | "conformance"
    variant: str  # the model variant it exercises (a mutant is tried only where its module is read)
    job: tuple[Any, ...]


def killers(scale: float = 1.0) -> list[Killer]:
    """Every killer, cheapest first: by cost tier (``COST``), within a tier the assignor oracle, the explorer's
    jobs, the broken variants, the Kafka walks, the conformance suites."""
    return sorted(_killers(scale), key=lambda k: tier(k.name))  # a stable sort: the kinds' order within a tier


def _killers(scale: float) -> list[Killer]:
    out = [Killer(f"assignor:{a}", "oracle", "eager", (a,)) for a in ORACLE_ASSIGNORS]  # cheapest: first
    out.append(Killer(STICKY_CLAIMS, "oracle", "eager", ("sticky-claims",)))
    seen: set[str] = set()
    for job in EXPLORER_JOBS:
        v, a, m, p, t, f, b = job
        name = f"model:{v}" + (f"·{a}" if a not in ("sticky", "uniform") else "") + f" {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + f" b{b}"
        if name in seen:  # the same instance with other faults: the faults tell them apart (the names key the baseline)
            name += f" {f}"
        seen.add(name)
        out.append(Killer(name, "model", v, job))
    out += [Killer(f"broken:{v} {m}m×{p}p" + (f" {f}" if f else "") + f" b{b}", "model", v, job)
            for job in BROKEN_JOBS for v, _a, m, p, _t, f, b in [job]]
    out += [Killer(f"kafka:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + f" {w}×{n}", "kafka", v, job)
            for job in WALK_JOBS + FORMATION_WALK_JOBS + GAP_WALK_JOBS for v, a, m, p, t, _f, _b, w, n in [job]]
    # walks with a bias towards a rule the even walks rarely reach (kafka_walks.py, BIASED_WALK_JOBS)
    out += [Killer(f"kafka:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + f" {w}×{n} {bias}", "kafka", v, job)
            for job in BIASED_WALK_JOBS for v, a, m, p, t, _f, _b, w, n, bias in [job]]
    # fixed runs of Kafka's classic coordinator the model must have (kafka_runs.py: a step the model lacks fails)
    out += [Killer(f"kafka-run:{n}", "kafka", job[0], (n,)) for n, job, _path in CLASSIC_KAFKA_RUNS]
    # the KIP-848 model's walks (kafka_consumer_walks.py): the same kind, told apart by the variant
    out += [Killer(f"kafka:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + f" {w}×{n}", "kafka", v, job)
            for job in CONSUMER_WALK_JOBS for v, a, m, p, t, _f, _b, w, n in [job]]
    # the reference classic client along the model's paths (client_walks.py): what a member does with an answer
    out += [Killer(f"client:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + (f" {w}×{n}" if w else f" b{b} explored"),
                   "client", v, job)
            for job in CLIENT_WALK_JOBS + GAP_CLIENT_JOBS for v, a, m, p, t, _f, b, w, n in [job]]
    # the reference reconciling consumer (KIP-848) along the model's paths (consumer_client_walks.py): told apart by the
    # variant, as the KIP-848 Kafka walks are
    out += [Killer(f"client:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + (f" {w}×{n}" if w else f" b{b} explored"),
                   "client", v, job)
            for job in CONSUMER_CLIENT_WALK_JOBS for v, a, m, p, t, _f, b, w, n in [job]]
    # the reference Connect worker along the model's paths (connect_walks.py): the same kind, told apart by the variant
    out += [Killer(f"client:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + (f" {w}×{n}" if w else f" b{b} explored"),
                   "client", v, job)
            for job in CONNECT_WALK_JOBS for v, a, m, p, t, _f, b, w, n in [job]]
    # the model's own paths written as traces and read by the trace checker (trace_walks.py; issue 30)
    out += [Killer(f"trace:{v}·{a} {m}m×{p}p" + (f"×{t}t" if t > 1 else "") + f" {w}×{n}", "trace", v, job)
            for job in TRACE_WALK_JOBS for v, a, m, p, t, _f, _b, w, n in [job]]
    # the reference's ZooKeeper-era group (its ensemble and consumers) along the model's paths (zookeeper_walks.py)
    out += [Killer(f"history:{v} {m}m×{p}p" + (f" b{b} {w}×{n}" if w else f" b{b} explored"), "history", v, job)
            for job in ZK_WALK_JOBS for v, _a, m, p, _t, _f, b, w, n in [job]]
    out += [Killer(f"conformance:migration {m}m×{p}p {w}×{n}", "conformance", "classic-to-consumer", job)
            for job in MIGRATION_SMALL for m, p, w, n in [job]]
    # the migration model's classic-group commits against the reference classic coordinator (migration_commits.py)
    out += [Killer(f"conformance:migration-commits {m}m×{p}p b{b}", "conformance", "classic-to-consumer", job)
            for job in MIGRATION_COMMIT_JOBS for m, p, b, _f in [job]]
    # the migration model's classic phase mirrored by the reference classic coordinator (migration_classic.py)
    out += [Killer(f"conformance:migration-classic {m}m×{p}p b{b}", "conformance", "classic-to-consumer", job)
            for job in MIGRATION_CLASSIC_JOBS for m, p, b, _f in [job]]
    for name, variant, examples, steps in CONFORMANCE:
        out.append(Killer(f"conformance:{name}", "conformance", variant,
                          (name, max(1, round(examples * scale)) if examples else 0, steps)))
    return out


# ------------------------------------------------------------------------------------------ relevance
@lru_cache(maxsize=None)
def _imports(module: str) -> frozenset[str]:
    tree = ast.parse((MODEL_DIR / f"{module}.py").read_text())
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            if n.module:
                out.add(n.module.split(".")[0])
            else:
                out |= {a.name for a in n.names}
    return frozenset(out)


@lru_cache(maxsize=None)
def closure(module: str) -> frozenset[str]:
    """The model modules ``module`` reads, itself included (its relative imports, transitively)."""
    seen = {module}
    todo = [module]
    while todo:
        for other in _imports(todo.pop()):
            if other not in seen and (MODEL_DIR / f"{other}.py").exists():
                seen.add(other)
                todo.append(other)
    return frozenset(seen)


_VARIANT_MODULE: dict[str, str] = {}


def variant_modules(variant: str) -> frozenset[str]:
    """The model modules a variant's class (and its bases) reads."""
    if variant not in _VARIANT_MODULE:
        import importlib

        model = importlib.import_module(PACKAGE)
        cls = model.VARIANTS[variant]
        mods = {k.__module__.rsplit(".", 1)[1] for k in cls.__mro__ if k.__module__.startswith(PACKAGE + ".")}
        _VARIANT_MODULE[variant] = ",".join(sorted(mods))
    out: set[str] = set()
    for m in _VARIANT_MODULE[variant].split(","):
        out |= closure(m)
    return frozenset(out)


# ------------------------------------------------------------------------------------------ running
def run_killer(k: Killer, only: frozenset[int] | None = None, cap: int = MAX_STATES) -> dict[str, Any]:
    """Run one killer on whatever model is loaded now: ``{"verdicts": ..., "failure": str|None}``; ``only``: of
    a classic Kafka walk job just these walks, of a recorded-schedules check just these schedules; ``cap``: where
    an exploration stops (``state_cap``)."""
    if k.kind == "model":
        return _explore(k.job, cap)
    if k.kind == "oracle" and k.name == STICKY_CLAIMS:
        from .sticky_claims import check as claims_check

        return {"failure": _within(ORACLE_SECONDS, claims_check)}
    if k.kind == "oracle":
        return {"failure": _within(ORACLE_SECONDS, lambda: _assignor_oracle(*k.job))}
    if k.kind == "kafka" and k.name.startswith("kafka-run:"):
        from .kafka_runs import check as run_check

        return {"failure": run_check(*k.job)}
    if k.kind == "kafka" and k.variant.startswith("consumer"):
        from .kafka_consumer_walks import check as consumer_check

        return {"failure": consumer_check(k.job)}
    if k.kind == "kafka":
        from .kafka_walks import check

        return {"failure": check(k.job, only)}
    if k.kind == "client" and k.variant.startswith("consumer"):
        from .consumer_client_walks import check as consumer_client_check

        return {"failure": consumer_client_check(k.job, only)}
    if k.kind == "client" and k.variant.startswith("connect"):
        from .connect_walks import check as connect_check

        return {"failure": connect_check(k.job, only)}
    if k.kind == "client":
        from .client_walks import check as client_check

        return {"failure": client_check(k.job, only)}
    if k.kind == "conformance" and k.name.startswith("conformance:migration-classic "):
        from .migration_classic import check as classic_phase_check

        return {"failure": classic_phase_check(k.job)}
    if k.kind == "conformance" and k.name.startswith("conformance:migration-commits "):
        from .migration_commits import check as commits_check

        return {"failure": commits_check(k.job)}
    if k.kind == "conformance" and k.name.startswith("conformance:migration "):  # MIGRATION_SMALL
        from groupspec.conformance import migration as small

        m, p, w, n = k.job
        return {"failure": small.run(members=m, partitions=p, walks=w, steps=n, seed=0)[0]}
    if k.kind == "trace":
        from .trace_walks import check as trace_check

        return {"failure": trace_check(k.job)}
    if k.kind == "history":
        from .zookeeper_walks import check as zookeeper_check

        return {"failure": zookeeper_check(k.job, only)}
    return {"failure": _conform(*k.job, only=only)}  # type: ignore[misc]  # (a conformance job: name, examples, steps)


ORACLE_SECONDS = 60  # the 400 small groups take about a second; Kafka's assignors return at once on each


def _within(seconds: int, fn: Callable[[], str | None]) -> str | None:
    """``fn()``, or a failure if it has not returned after ``seconds`` (an assignor that loops: Kafka's does not).

    Nested in the campaign's per-mutant alarm: that one is put back, less the time spent here."""
    import signal
    import time

    if not hasattr(signal, "SIGALRM"):
        return fn()

    class _Slow(Exception):
        pass

    def _raise(_sig: int, _frame: FrameType | None) -> NoReturn:
        raise _Slow

    outer = signal.alarm(0)  # what is left of the caller's alarm (0: none)
    t0 = time.monotonic()
    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        return fn()
    except _Slow:
        return f"the assignor has not returned after {seconds} s on a small group (Kafka's returns at once)"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        if outer:
            signal.alarm(max(1, outer - int(time.monotonic() - t0)))


def _assignor_oracle(name: str) -> str | None:
    """The model's assignor ``name`` on small groups (deterministic sample) against the reference."""
    import random

    from groupspec.model import ASSIGNORS
    from groupspec.model import Config
    from groupspec.reference.assignors import get
    from groupspec.reference.assignors.properties import check_all

    from .mirror_driver import partition_names

    rng = random.Random(20261128)
    for case in range(ORACLE_CASES):
        n, parts = rng.randint(1, 3), rng.randint(1, 5)
        topics = rng.randint(1, min(2, parts))
        cfg = Config(members=n, partitions=parts, topics=topics)
        names = [f"t{t}" for t in range(topics)]
        where = partition_names(cfg, names)  # model bit -> (topic, partition)
        existing = (1 << parts) - 1
        members, subs = [], {}
        for slot in range(n):
            tmask = rng.randint(1, (1 << topics) - 1)
            owned = rng.randint(0, existing) if name == "sticky" else 0
            gen = rng.randint(0, 2)
            members.append((slot, tmask, owned, gen, False))
            subs[f"m{slot}"] = {"topics": [names[t] for t in range(topics) if tmask >> t & 1],
                                "owned": [list(where[b]) for b in range(parts) if owned >> b & 1], "generation": gen}
        counts = {t: sum(1 for w in where if w[0] == t) for t in names}
        got = ASSIGNORS[name](cfg, members, existing)
        out = {f"m{slot}": sorted(where[b] for b in range(parts) if got.get(slot, 0) >> b & 1) for slot in range(n)}
        if name in ("range", "roundrobin"):
            want = {m: sorted(tuple(p) for p in ps) for m, ps in get(name).assign(counts, subs).items()}
            if out != want:
                return f"case {case}: model {out} != Kafka's {want} (subscriptions {subs})"
            continue
        problems = check_all(counts, subs, out, complete=True, balanced=True)
        if problems:
            return f"case {case}: {problems[0]} (subscriptions {subs}, model {out})"
        again = ASSIGNORS[name](cfg, [(s, t, got.get(s, 0), g + 1, st) for s, t, _o, g, st in members], existing)
        if again != got:
            return f"case {case}: not stable: {got} then {again}"
    return None


def _explore(job: tuple[Any, ...], cap: int = MAX_STATES) -> dict[str, Any]:
    from groupspec.checker import Explorer
    from groupspec.model import Config, make

    variant, assignor, members, partitions, topics, faults, budget = job
    cfg = Config(members=members, partitions=partitions, topics=topics, budget=budget, assignor=assignor,
                 faults=frozenset(f for f in faults.split(",") if f))
    res = Explorer(make(variant, cfg), max_states=cap).run()
    verdicts = {name: v.held for name, v in res.verdicts.items()}
    complete = getattr(res, "complete", True)
    return {"verdicts": verdicts, "complete": complete, "states": res.states}


REGRESSIONS = MODEL_DIR.parent / "tests" / "conformance_regressions.json"
# Schedules found for a survivor (python -m groupspec.specmut.hunt): each fails that mutant, passes the model.
SCHEDULES = MODEL_DIR.parent / "tests" / "spec_mutant_schedules.json"


def replay_schedule(r: dict[str, Any]) -> str | None:
    """Replay one recorded schedule rule by rule (as ``tests/test_conformance.py`` does); its failure or None."""
    import contextlib
    import io
    import re

    from groupspec.conformance import ConformanceFailure, make_machine

    machine = make_machine(r["variant"], topics=r["topics"])()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            machine.boot(seed=r["seed"])  # type: ignore[attr-defined]  # (every family's machine has its boot rule)
            for call in r["rules"]:
                rule, args = re.fullmatch(r"(\w+)\((.*)\)", call).groups()  # type: ignore[union-attr]  # (a recorded call)
                kwargs = {k: (v.strip("'") if v.startswith("'") else int(v))
                          for k, v in (a.split("=") for a in args.split(", ") if a)}
                getattr(machine, rule)(**kwargs)
            machine.teardown()
    except ConformanceFailure as e:
        return f"schedule {r['name']!r}: {str(e).splitlines()[0]}"
    return None


def _replay_regressions(variant: str, only: frozenset[int] | None = None) -> str | None:
    """Replay every recorded schedule of ``variant`` (or the ``only`` ones, counted in this order): the regressions,
    then those found for survivors. Each is its own segment of a traced run (:mod:`.reach`)."""
    import json

    from .reach import current

    rec = current()
    n = -1
    for path in (SCHEDULES, REGRESSIONS):  # the survivors' first: each was found to reach one rule
        if not path.exists():  # an installed copy without the tests: nothing to replay
            continue
        for r in json.loads(path.read_text()):
            if r["variant"] == variant:
                n += 1
                if only is not None and n not in only:
                    continue
                if rec is not None:
                    rec.segment(n)
                why = replay_schedule(r)
                if why is not None:
                    return why
    return None


def _conform(name: str, examples: int, steps: int, only: frozenset[int] | None = None) -> str | None:
    if name.startswith("regressions:"):
        return _replay_regressions(name.split(":", 1)[1], only)
    if name == "migration":
        from groupspec.conformance import migration

        why, _n = migration.run(walks=examples, steps=steps, seed=0)
        return why
    if name.startswith("consumer:"):
        from groupspec.conformance import consumer

        return consumer.run(consumer.SETUPS[name.split(":", 1)[1]], examples=examples, steps=steps)
    import contextlib
    import io

    from hypothesis import HealthCheck, Phase, settings

    from groupspec.conformance import ConformanceFailure, make_machine, run_machine

    cfg = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                   derandomize=True, phases=[Phase.generate], print_blob=False,
                   suppress_health_check=list(HealthCheck))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run_machine(make_machine(name), cfg)
    except ConformanceFailure as e:
        return str(e).splitlines()[0]
    return None


def judge(k: Killer, baseline: dict[str, Any], got: dict[str, Any]) -> str | None:
    """What ``got`` (the mutant's run) shows that ``baseline`` (the unchanged model's) does not; None if nothing."""
    if k.kind == "history":  # the reference's ZooKeeper-era group along the model's paths
        return cast("str | None", got["failure"])
    if k.kind in ("conformance", "oracle", "kafka", "client", "trace"):
        failure: str | None = got["failure"]
        return failure
    complete = got.get("complete", True)
    for prop, held in got["verdicts"].items():
        was = baseline["verdicts"].get(prop)
        if was is True and held is False:
            # found on an explored state: a violation even where the exploration stopped early (the mutant's state
            # space outgrew the job; the liveness verdicts are None then, and not judged)
            return f"{prop} violated" + ("" if complete else f" (within the first {got.get('states')} states)")
        # (held None on a complete run: the property was not checked at all, e.g. no action properties; issue 30)
        if was is False and held is not False and complete:
            why = ("the broken variant's own bug" if k.name.startswith("broken:")
                   else "Kafka's own violation, reproduced by the reference")
            return f"{prop} no longer violated ({why})"
    return None
