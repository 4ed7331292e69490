"""Which of Kafka's algorithms a candidate is, told by a flag, its name, or its behaviour.

Theory of operation
-------------------
The kind decides which properties apply: I7 (exact equality with Range / RoundRobin) for ``range`` and
``roundrobin``, I5 and I9 for ``sticky``. A flag (``--kind``) wins, then the candidate's name; a candidate that
declares neither (a plain function called ``assign``) is run on a few fixed *probes* and its kind read from
what it does:

* **range** / **roundrobin**: its output equals the project's Range (RoundRobin) on every probe. The probes are
  Kafka's own worked examples where the two differ (assignors.md §1.4: mixed subscriptions, two topics of three
  partitions, static members ordered by instance id and before dynamic ones) plus inputs with owned
  partitions, which both ignore. An assignor that gets member order wrong is therefore not recognised (declare
  it with ``--kind``);
* **sticky**: it keeps a valid, balanced ownership unchanged (two probes whose ownership differs from what
  Range and RoundRobin would give), and when a member joins a group of two that own four partitions, exactly
  one partition leaves its owner (to the newcomer, or withheld for a round by a cooperative assignor).

Partition counts in the probes stay below 10, so a Range that sorts partitions as strings is still recognised
as a Range (and I7 then catches it on the generated inputs). The protocol is never inferred: an eager
assignor that loses a partition when a member joins looks, for one round, exactly like a cooperative one
that withholds it, and judging it as cooperative would hide the lost partition (I4). A candidate that does
not declare a protocol and behaves cooperatively on the join probe gets a note saying so; ``--kind
cooperative`` (sticky and cooperative) or ``--protocol cooperative`` declares it.
"""
from __future__ import annotations

from typing import Any, Sequence

from .core import Assignment, as_sets, owned_of
from .load import CallRunner, Candidate

State = tuple[dict[str, int], dict[str, dict[str, Any]]]


def _s(topics: list[str], owned: Sequence[tuple[str, int]] = (), gen: int = -1, inst: str | None = None) -> dict[str, Any]:
    return {"topics": topics, "owned": [list(x) for x in owned], "generation": gen, "instance_id": inst,
            "rack": None}


#: Fresh probes (Kafka's worked examples, assignors.md §1.4) on which Range and RoundRobin differ.
FRESH: list[State] = [
    ({"topic1": 3, "topic2": 2}, {"consumer1": _s(["topic1"]), "consumer2": _s(["topic1", "topic2"]),
                                  "consumer3": _s(["topic1"])}),
    ({"topic1": 3, "topic2": 3}, {"consumer1": _s(["topic1", "topic2"]), "consumer2": _s(["topic1", "topic2"])}),
    ({"topic1": 5, "topic2": 4}, {"consumer1": _s(["topic1", "topic2"], inst="instance1"),
                                  "consumer2": _s(["topic1", "topic2"], inst="instance2"),
                                  "consumer3": _s(["topic1", "topic2"], inst="instance3"),
                                  "consumer4": _s(["topic1", "topic2"])}),
    # instance ids order static members, and static members come first (MemberInfo order)
    ({"topic1": 3, "topic2": 3}, {"consumer-b": _s(["topic1", "topic2"], inst="instance1"),
                                  "consumer-a": _s(["topic1", "topic2"], inst="instance2")}),
    ({"topic1": 3, "topic2": 3}, {"consumer-b": _s(["topic1", "topic2"], inst="instance1"),
                                  "consumer-a": _s(["topic1", "topic2"])}),
    # different subscriptions: RoundRobin's circular walk and Range's per-topic split both differ from a
    # least-loaded greedy assignor, which agrees with RoundRobin wherever every member subscribes to everything
    ({"t0": 2, "t1": 2}, {"c0": _s(["t0", "t1"]), "c1": _s(["t1"])}),
]

#: Balanced, valid ownerships that differ from what Range and RoundRobin give: a sticky assignor keeps them.
KEEP: list[State] = [
    ({"t": 4}, {"a": _s(["t"], [("t", 2), ("t", 3)], 3), "b": _s(["t"], [("t", 0), ("t", 1)], 3)}),
    ({"t1": 3, "t2": 3}, {"x": _s(["t1", "t2"], [("t1", 2), ("t2", 1), ("t2", 2)], 5),
                          "y": _s(["t1", "t2"], [("t1", 0), ("t1", 1), ("t2", 0)], 5)}),
]

#: A member joins a group whose two members own everything.
JOIN: State = ({"t": 4}, {"a": _s(["t"], [("t", 0), ("t", 1)], 2), "b": _s(["t"], [("t", 2), ("t", 3)], 2),
                          "c": _s(["t"])})


def _run(cand: Candidate, runner: CallRunner, state: State) -> Assignment | None:
    return runner.run(cand, state[0], state[1]).assignment


def infer_kind(cand: Candidate, runner: CallRunner) -> tuple[str | None, str]:
    """``(kind, evidence)``: ``range``/``roundrobin``/``sticky`` or ``None``, and one line saying why."""
    from groupspec.reference.assignors import get

    outs = {}
    for i, state in enumerate(FRESH + KEEP + [JOIN]):
        out = _run(cand, runner, state)
        if out is None:
            return None, "its kind could not be inferred: it failed on a probe input"
        outs[i] = out
    states = FRESH + KEEP + [JOIN]
    for name in ("range", "roundrobin"):
        ref = get(name)
        if all(as_sets(outs[i]) == as_sets(ref.assign(*st)) for i, st in enumerate(states)):
            return name, f"behaves as Kafka's {name} on {len(states)} probe inputs"
    kept = all(as_sets(outs[len(FRESH) + j]) == {m: frozenset(owned_of(s)) for m, s in st[1].items()}
               for j, st in enumerate(KEEP))
    join = outs[len(states) - 1]
    stayed = sum(len(owned_of(s) & set(join.get(m, ()))) for m, s in JOIN[1].items())
    if kept and stayed == 3:
        return "sticky", "keeps a balanced ownership and moves exactly one partition when a member joins (probes)"
    return None, "behaves as none of Kafka's algorithms on the probe inputs"


def looks_cooperative(cand: Candidate, runner: CallRunner) -> bool:
    """On the join probe: the newcomer gets nothing and one owner gives up a partition (withheld for a round)."""
    out = _run(cand, runner, JOIN)
    if out is None:
        return False
    held = {tp for ps in out.values() for tp in ps}
    return not out.get("c") and len(held) == 3
