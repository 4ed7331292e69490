"""Fixed runs of Kafka's classic group coordinator that the model must have: the direction the walks cannot check.

The Kafka walks (:mod:`.kafka_walks`) let the model lead: every step it takes is sent to Kafka's coordinator and
the two are compared. A mutant that *removes* steps (a guard narrowed, a predicate widened so that a timer no
longer fires) only takes fewer of them there, and passes. So here a run is fixed in advance, a run Kafka has: every
step of it must be a step of the (possibly mutated) model, and, sent to the Kafka oracle as the walks send it, Kafka
must answer and keep the group as the model does. A step the model lacks ("not a step of the model") or one Kafka
answers otherwise fails the run. The classic counterpart of ``KAFKA_RUNS`` in :mod:`.kafka_consumer_walks`.

May import: ``groupspec.model`` (inside the functions, after a mutant is applied), ``groupspec.oracle`` (through
:mod:`.kafka_walks`).
"""
from __future__ import annotations

from typing import Any

from .kafka_walks import REBALANCE_MS, Walk, mirrored, oracle
from .mirror_driver import follow, instance

# (name, instance: variant, assignor, members, partitions, topics, faults, budget; the steps by their names)
CLASSIC_KAFKA_RUNS: tuple[tuple[str, tuple[Any, ...], tuple[str, ...]], ...] = (
    # issue 30 (cclassic): a static member's process crashes and a new one starts, which has not joined yet (it holds
    # no member id, so it sends no heartbeat for the old one): the old member's session runs out, and the new process
    # then joins as a new member. (classic.ClassicProtocol.alive:drop-term#1 counts the new process as the member
    # alive: the old session never runs out.)
    ("static-restart-before-expiry", ("static", "sticky", 1, 2, 1, "join,crash", 2),
     ("SendJoinGroup(0)", "ReceiveJoinResponse(0)", "ReceiveSyncResponse(0)", "Crash(0)", "Start(0)",
      "SessionExpired(0)", "SendJoinGroup(0)", "ReceiveJoinResponse(0)", "ReceiveSyncResponse(0)")),
    # issue 30 (cclassic): a member resumes from a long pause (late-expiry: its session may still run out) and its
    # next heartbeat is accepted (NONE), which refreshes its session. (classic.ClassicProtocol._heartbeat:negate-guard#4
    # has that heartbeat change nothing: no such step.)
    ("resumed-member-heartbeats", ("eager", "sticky", 1, 2, 1, "zombie,late-expiry", 1),
     ("SendJoinGroup(0)", "ReceiveJoinResponse(0)", "ReceiveSyncResponse(0)", "Pause(0)", "Resume(0)", "Heartbeat(0)")),
)
RUNS = {name: (job, path) for name, job, path in CLASSIC_KAFKA_RUNS}


def run_path(job: tuple[Any, ...], path: tuple[str, ...]) -> str | None:
    """One fixed run on the model (as loaded now) and on Kafka's coordinator: None, or what went wrong (a step the
    model does not have, a step the walks would not send to Kafka, or Kafka's answers or group differing)."""
    variant, assignor, members, partitions, topics, faults, budget = job
    proto: Any = instance(variant, assignor, members, partitions, topics, faults, budget)
    kafka = oracle()
    names = [f"t{k}" for k in range(topics)]
    kafka.reset({"initial_rebalance_delay_ms": 0, "topics": {n: partitions for n in names}})
    walk = Walk(proto, kafka, names, REBALANCE_MS[0])

    def take(s: Any, a: Any, t: Any) -> str | None:
        if not mirrored(s, a, t, walk):
            return "not sent to Kafka (the walks step around it)"
        got = walk.kafka_answers(walk.kafka_step(s, a, t))
        want = walk.model_answers(s, a, t)
        return f"answers: model {want}, Kafka {got}" if got != want else walk.compare_group(t)

    return follow(proto, path, take)


def check(name: str) -> str | None:
    """A killer's run: the fixed run ``name`` (``CLASSIC_KAFKA_RUNS``); what went wrong as its failure, else None."""
    from .kafka_walks import checked

    job, path = RUNS[name]
    why = checked(lambda *_a: run_path(job, path), ())
    return None if why is None else f"kafka-run:{name}: {why}"
