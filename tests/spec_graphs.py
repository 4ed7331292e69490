"""What the survivor tests of the mutation campaign share (tests/test_spec_mutants_*.py): a mutant by name, a small
instance of a variant, and its reachable states in breadth-first order, so the unchanged and a mutated model are
walked the same way."""
from __future__ import annotations

from collections import deque
from typing import Any, Iterator

from groupspec.specmut import SpecMutant, generate


def mutant(name: str) -> SpecMutant:
    return next(m for m in generate() if m.name == name)


def instance(variant: str, members: int, partitions: int, topics: int, faults: str, budget: int, *,
             assignor: str) -> Any:
    """``variant`` on a small instance, with ``assignor`` on one topic and range on several (read from
    ``groupspec.model`` at the call, so inside ``applied(...)`` it is the mutated model)."""
    from groupspec.model import Config, make

    return make(variant, Config(members=members, partitions=partitions, topics=topics, budget=budget,
                                assignor=assignor if topics == 1 else "range",
                                faults=frozenset(f for f in faults.split(",") if f)))


def reachable(proto: Any) -> Iterator[Any]:
    """Every state reachable from ``proto``'s initial states, breadth first, each once (by its text)."""
    seen = {repr(s) for s in proto.init_states()}
    todo = deque(proto.init_states())
    while todo:
        s = todo.popleft()
        yield s
        for _a, t in proto.successors(s):
            if repr(t) not in seen:
                seen.add(repr(t))
                todo.append(t)
