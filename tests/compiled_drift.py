"""The compiled kernels against the model, state by state: one check for every protocol family.

``tests/test_compiled.py`` (the classic family) and ``tests/test_compiled_consumer.py`` (KIP-848) hold a family's
kernel to the model's own successors, convergence, properties and symmetry-reduced keys with :func:`disagreements`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from groupspec.model.properties import commit_fencing, exclusive_ownership, generation_monotonic


def first_state_not_the_references(ref: Any, fast: Any, n: int, decoded_every: int = 97) -> int | None:
    """The first id below ``n`` whose state differs between the reference explorer ``ref`` and the compiled one
    ``fast`` after both ran (None when every one agrees). The compiled states are compared as rows: every
    reference state encoded against every stored row, rebuilt in one pass (``rows()``: decoding the states one
    by one replays each one's parent chain, most of such a test's time); and one state in ``decoded_every``
    also decoded and compared as a model state, so the decoder is held to the reference too."""
    rows = fast._states.rows()
    kn = fast._states.kn
    assert rows.shape[0] == n
    mine = np.empty_like(rows)
    for i in range(n):
        mine[i] = kn.encode(ref._states[i])
    differ = np.flatnonzero((mine != rows).any(axis=1))
    if len(differ):
        return int(differ[0])
    for i in range(0, n, decoded_every):
        if kn.decode(rows[i]) != ref._states[i] or fast._states[i] != ref._states[i]:
            return i
    return None


def disagreements(proto: Any, kn: Any, states: Any, limit: int = 3) -> list[str]:
    """Every way the compiled kernel and the model disagree on ``states`` (at most ``limit``)."""
    out: list[str] = []
    key_map: dict = {}
    for s in states:
        expected = list(proto.successors(s))
        got = kn.successors(s)
        if expected != got:
            out.append(f"successors differ from {s}: model {[a for a, _ in expected]}, compiled {[a for a, _ in got]}")
        if proto.converged(s) != kn.converged(s):
            out.append(f"converged differs on {s}")
        if (exclusive_ownership(proto, s) is None) != kn.exclusive_ownership_ok(s):
            out.append(f"exclusive_ownership differs on {s}")
        if (commit_fencing(proto, s) is None) != kn.commit_fencing_ok(s):
            out.append(f"commit_fencing differs on {s}")
        for _a, t in expected:
            if (generation_monotonic(proto, s, t) is None) != kn.generation_ok(s, t):
                out.append(f"generation_monotonic differs on a step from {s}")
        for s2 in [s] + [t for _a, t in expected]:
            mk, ck = proto.key(s2), kn.key(s2)
            if key_map.setdefault(mk, ck) != ck:
                out.append(f"one model key, two compiled keys: {s2}")
        if len(out) >= limit:
            break
    if not out:
        inverse: dict = {}
        for mk, ck in key_map.items():
            if inverse.setdefault(ck, mk) != mk:
                out.append("two model keys, one compiled key")
                break
    return out[:limit]


MUTANT_FAULTS = frozenset({"crash", "timeout", "zombie", "leave", "join"})


def assert_mutant_caught(proto: Any, kernel: Any, reachable: Any, switch: int, value: int, what: str) -> None:
    """The kernel agrees with the model on ``proto``'s first 3,000 reachable states until one rule switch
    (``kernel.P[switch] = value``) makes it differ; then :func:`disagreements` must say so."""
    states = reachable(proto, 3000)
    kn = kernel(proto)
    assert disagreements(proto, kn, states) == []
    kn.P[switch] = value  # the compiled encoding now differs from the model in one rule
    assert disagreements(proto, kn, states) != [], what
