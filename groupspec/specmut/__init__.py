"""The mutation campaign over the specification (``groupspec verify --spec-mutants``).

Owns the mutation operators over ``model/`` (:mod:`.operators`: one-rule changes generated from the
source by AST, each with a stable name), applying one on a copy in this process (:mod:`.loader`: an
import hook, the checkout never written), the checks allowed to kill a mutant (:mod:`.killers`: the
model's own properties explored on the mutant, the model's own paths replayed on Kafka's group coordinator
(:mod:`.kafka_walks`), the sticky assignor's claim resolution against Kafka's (:mod:`.sticky_claims`), the model's own paths replayed on the reference classic client (:mod:`.client_walks`: what a
member does with an answer; the walks and explorations of every such mirror check driven by :mod:`.mirror_driver`), and the conformance suites against the reference), the
parallel campaign and its summary per family (:mod:`.campaign`), which lines of the model each check reaches
(:mod:`.reach`: a mutant is run only by the checks that execute its change) and the equivalent mutants with their
reasons (:mod:`.equivalent`).

May import: ``groupspec.model``, ``groupspec.checker``, ``groupspec.conformance``, ``groupspec.reference``
(Kafka's assignors, the oracle of the model's; all but the reference only inside functions, once a mutant
is in place), ``groupspec.oracle`` and ``groupspec.kafka`` (Kafka's own group coordinator, one process per
worker). Imported by the CLI and the tests only.
"""
from __future__ import annotations

from .campaign import SAMPLE, campaign, run_one, select
from .operators import SpecMutant, generate

__all__ = ["SAMPLE", "SpecMutant", "campaign", "generate", "run_one", "select"]
