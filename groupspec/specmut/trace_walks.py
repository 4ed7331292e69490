"""The model's own paths written as traces and read back by the trace checker (``groupspec.trace``).

A killer of the campaign (kind ``trace``): seeded random walks of a correct variant (as loaded now, possibly
mutated), each written as a trace by :func:`groupspec.trace.from_model.path_to_events` (what each process saw:
``joined``, ``assigned``, ``revoked``, partitions named by the model's ``partition_name``) and checked by the one
trace checker, which knows nothing of the model: a correct variant's path must be a well-formed trace on which every
property holds. What it compares is the model's account of a run with the trace format's reading of it: a model that
names two partitions alike (``t-0`` for the first partition of both topics), or writes a step no process could have
seen, gives a trace the checker rejects.

May import: ``groupspec.model``, ``groupspec.checker``, ``groupspec.trace`` (inside the functions, after a mutant is
applied).
"""
from __future__ import annotations

import random
from typing import Any

# (variant, assignor, members, partitions, topics, faults, budget, walks, steps)
TRACE_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int], ...] = (
    # issue 30, the KIP-848 family's last eleven: two topics, so that every partition name carries its topic
    ("consumer", "range", 2, 4, 2, "subscription,partitions,crash,join,leave", 2, 20, 25),
    # issue 30, the classic survivors (cprops): the classic model's partition names, two topics, a subscription change
    ("cooperative", "sticky", 2, 4, 2, "subscription,partitions,crash,join,leave", 2, 20, 25),
)
SEED = 20261128


def run_walks(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str, budget: int,
              walks: int, steps: int, seed: int = SEED) -> str | None:
    """``walks`` seeded walks of the model as loaded now, each checked as a trace; the first finding, or None."""
    from groupspec.checker import Step
    from groupspec.model import Config, make
    from groupspec.trace import check_events, path_to_events

    proto = make(variant, Config(members=members, partitions=partitions, topics=topics, budget=budget,
                                 assignor=assignor, faults=frozenset(f for f in faults.split(",") if f)))
    for w in range(walks):
        rng = random.Random(seed * 1000 + w)
        s = proto.init_states()[0]
        path = [Step(None, s)]
        for _n in range(steps):
            succ = list(proto.successors(s))
            if not succ:
                break
            a, s = succ[rng.randrange(len(succ))]
            path.append(Step(a, s))
        result = check_events(path_to_events(proto, path), source=variant)
        if not result.ok:
            for prop in result.to_dict()["groups"][0]["properties"]:
                if prop["verdict"] != "held":
                    first = prop["violations"][0]["message"] if prop["violations"] else prop["verdict"]
                    return (f"trace:{variant} walk {w} (seed {seed}): the trace checker finds {prop['id']} "
                            f"{prop['verdict']}: {first}; path {' '.join(repr(st.action) for st in path[1:])}")
            return f"trace:{variant} walk {w} (seed {seed}): the trace checker rejects the trace"
    return None


def check(job: tuple[Any, ...]) -> str | None:
    """A killer's run: the walks of one job; the first finding as its failure."""
    return run_walks(*job)
