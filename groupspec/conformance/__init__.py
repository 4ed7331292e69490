"""Conformance: the reference implementation, run in the simulator, checked against the model.

Theory of operation
-------------------
A :class:`Harness` owns one seeded :class:`~groupspec.reference.sim.simulator.Simulator` (the reference
coordinator, consumers and network) and one model protocol object (``groupspec.model.make``). It
steps the simulator one event at a time and after **every** event it

1. computes the **abstraction** ``alpha`` of the reference's state: a model
   :class:`~groupspec.model.core.State` (see :meth:`Harness.abstract` and docs/conformance.md);
2. checks **refinement**: the pair ``(alpha(before), alpha(after))`` must be a stutter (the same
   projected state) or one to :data:`MAX_MODEL_STEPS` model steps (:func:`match`), searched breadth
   first through ``proto.successors``;
3. checks the model's **invariants** (``exclusive_ownership``, ``commit_fencing``) on ``alpha(after)``
   and its action property ``generation_monotonic`` on the pair;
4. checks the reference's own **trace** with :func:`groupspec.conformance.trace_checks.check_trace`
   (exclusive ownership among live members, commit fencing, generation monotonicity), incrementally.

:meth:`Harness.quiesce` stops perturbations, heals the network and runs protocol steps only: the
group must reach a converged abstract state, with at most as many abstract (non-stutter) steps as
the model's own convergence bound *from that very abstract state* (the explorer run on the model
with ``alpha(now)`` as its only initial state and no perturbation budget).

Linearization (the bridge to the model's "What is abstracted" list):

* The model handles a request in the step that sends it. The reference has the request in flight.
  A consumer that has run ``onJoinPrepare`` (or received its JoinGroup answer and sent SyncGroup) is
  shown by ``alpha`` **as it was before**, until the coordinator *accepts* the request (parks it, or
  answers NONE), or the client receives the answer, or abandons the request. The coordinator's
  handling of the request is then the one model step (``SendJoinGroup`` / ``ReceiveJoinResponse``).
* MEMBER_ID_REQUIRED: a member id the coordinator holds only as *pending* is shown as no member id;
  the first JoinGroup therefore changes nothing abstract (a stutter), the second is ``SendJoinGroup``.
* Parked answers (JoinGroup/SyncGroup answers and their errors) travelling in the network are the
  model's client *inbox*.
* Heartbeat, OffsetCommit, FindCoordinator and LeaveGroup answers are applied at the client when they
  arrive; a heartbeat is linearized at its answer.
* The assignor is pinned: the model's target assignment is replaced by the one the reference leader
  computed (read from its SyncGroup request); the assignor itself is checked by ``groupspec assignor``.
* Coordinator failover, failed group-metadata writes and message loss are not steps of the model:
  from such an event until the group is settled again (``STABLE`` or ``EMPTY``, no rebalance request
  in flight, a loss-free network) the refinement check is suspended (invariants and trace checks go
  on), and it resumes from the abstract state at that moment.

Kafka Connect workers (variant ``connect-delayed``): the Connect-specific parts of ``alpha`` (work items
as partitions, allocations from incremental assignments, the hold ``Group.held``/``held_for``) and the
check ``connect_hold`` live in :mod:`groupspec.conformance.connect`, called through ``Harness.connect``.

One frame for every protocol family (:mod:`.frame`): a module-level Hypothesis state machine whose
rules, abstraction function and judge come from a small per-family plug-in (:class:`Family`): the
classic protocol and its variants with the Connect workers (:mod:`.classic`, driving the
:class:`Harness`), the KIP-848 consumer protocol (:mod:`.consumer`), the migration between the two
(:mod:`.migration`).

Mutation check: :func:`mutation_table` runs each family's machine with each named fault switch of the
reference on (one table, :data:`MUTANTS`, every family) and records which check caught it.

The parts (one module each)
---------------------------
* :mod:`.refinement` — the variants, run timings, :func:`project` and :func:`match`.
* :mod:`.abstraction` — the abstraction function ``alpha``.
* :mod:`.linearization` — when a request in flight takes effect as one model step.
* :mod:`.gaps` — the known model gaps, each matched by its one shape.
* :mod:`.harness` — :class:`Harness`: stepping and checking, suspensions, convergence.
* :mod:`.connect` — Kafka Connect workers (variant ``connect-delayed``).
* :mod:`.trace_checks` — the trace checks run on the reference's own trace, incrementally.
* :mod:`.frame` — the one state machine, :class:`Family` (the plug-in), seeds and runs.
* :mod:`.classic` — the classic family's rules (and the Connect workers'), on the harness.
* :mod:`.consumer` — the next-generation protocol (KIP-848): its driver, abstraction and rules.
* :mod:`.migration` — classic members in a consumer group: its driver, abstraction and rules.
* :mod:`.mutants` — the one mutation table, every family's fault switches.

May import: ``groupspec.model``, ``groupspec.reference``, ``groupspec.checker``, ``groupspec.trace``.
Never imported by ``model/`` or ``reference/``.
"""
from __future__ import annotations

from . import consumer, migration  # the KIP-848 and migration families' own runners (``run``), by page
from .harness import Harness, replace_config
from .classic import make_machine
from .frame import ConformanceMachine, Family, pinned_constants, run_machine, simulator_seeds
from .mutants import MUTANTS, PROFILES, Mutant, family_mutants, mutation_table, run_mutant
from .refinement import (
    MAX_MODEL_STEPS,
    SESSION_MS,
    VARIANTS,
    ConformanceFailure,
    RefStep,
    Variant,
    match,
    match_path,
    project,
)
from .trace_checks import Violation, check_trace

__all__ = [
    "VARIANTS", "Variant", "Harness", "ConformanceFailure", "check_trace", "match", "match_path", "project",
    "MUTANTS", "Mutant", "PROFILES", "mutation_table", "run_mutant", "make_machine", "run_machine", "MAX_MODEL_STEPS",
    "SESSION_MS", "RefStep", "Violation", "replace_config", "pinned_constants", "simulator_seeds",
    "ConformanceMachine", "Family", "family_mutants", "consumer", "migration",
]
