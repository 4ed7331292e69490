"""The classic family's key as whole words (``groupspec.checker.compiled.classic_words``) against the key vector.

The search fingerprints ``classic_words.key_words`` where it applies (``families.key_words``); the drift tests
(``tests/test_compiled.py``) compare those keys with the model's. Here the fast words are held to
``kernel.key_vector`` packed by ``lean.pack_words`` (the path they replace, still taken with ``--forget-dead``):
on every state of the first thousands reachable, two states get equal words exactly when they get equal key
vectors; and a fast key given wrong topic blocks (partitions renamed across topics) is caught by that check.
"""
from __future__ import annotations

import numpy as np
import pytest

from groupspec.checker import Explorer
from groupspec.checker.compiled import classic_words as CW
from groupspec.checker.compiled import families as FAM
from groupspec.checker.compiled import kernel as K
from groupspec.checker.compiled import lean as L
from groupspec.checker.compiled.engine import Kernel
from groupspec.checker.compiled.layout import encode
from groupspec.model import Config, make

CASES = [
    ("cooperative", Config(members=4, partitions=6, faults=frozenset({"crash", "timeout"}), budget=2)),
    ("eager", Config(members=3, partitions=4, topics=2, faults=frozenset({"subscription", "partitions", "join"}),
                     budget=2)),
    ("static-cooperative", Config(members=3, partitions=3, faults=frozenset({"crash", "zombie", "timeout"}), budget=2)),
    ("cooperative", Config(members=3, partitions=5, topics=2, faults=frozenset({"leave", "join", "subscription"}),
                           budget=2, assignor="sticky")),
]


def _both(kn: Kernel, s, blocks: np.ndarray) -> tuple[bytes, bytes]:
    """(fast words, key vector packed by lean.pack_words) of state ``s``."""
    rows, order, cols, perm, kv, words = FAM.key_scratch(kn.fam, kn.P, kn.plan, kn.words)
    row = encode(s, kn.n)
    CW.key_words(kn.P, blocks, row, rows, order, cols, perm, words)
    fast = words[: CW.nwords(kn.P)].tobytes()
    K.key_vector(kn.P, kn.blocks, row, rows, order, cols, perm, kv)
    slow = np.zeros(L.plan_words(kn.plan), np.uint64)
    L.pack_words(kv, kn.plan, slow)
    return fast, slow.tobytes()


def _disagree(kn: Kernel, states: list, blocks: np.ndarray) -> str | None:
    fwd: dict[bytes, bytes] = {}
    back: dict[bytes, bytes] = {}
    for s in states:
        fast, slow = _both(kn, s, blocks)
        if fwd.setdefault(fast, slow) != slow:
            return f"one fast key, two key vectors: {s}"
        if back.setdefault(slow, fast) != fast:
            return f"one key vector, two fast keys: {s}"
    return None


def _reachable(proto, limit: int) -> list:
    ex = Explorer(proto, max_states=limit)
    ex.run()
    return list(ex._states)


@pytest.mark.parametrize("name,cfg", CASES, ids=[f"{n}-{c.members}x{c.partitions}-t{c.topics}" for n, c in CASES])
def test_fast_words_have_the_key_vectors_classes(name, cfg):
    proto = make(name, cfg)
    kn = Kernel(proto)
    assert CW.fits(kn.P)  # these instances take the fast path in the search
    states = _reachable(proto, 3000)
    assert len(states) == 3000
    assert _disagree(kn, states, kn.blocks) is None
    # and the search's key (engine.Kernel.key, what the drift tests compare with the model) is the fast one
    assert kn.key(states[-1]) == _both(kn, states[-1], kn.blocks)[0]


def test_forget_dead_and_oversized_instances_keep_the_key_vector():
    proto = make("cooperative", Config(members=3, partitions=3, faults=frozenset({"crash"}), budget=1))
    kn = Kernel(proto)
    assert CW.fits(kn.P)
    P = kn.P.copy()
    P[K.P_DEAD] = 1
    assert not CW.fits(P)
    P = kn.P.copy()
    P[K.P_K] = 11  # eleven partitions: six masks do not fit one word
    assert not CW.fits(P)


def test_wrong_topic_blocks_are_caught():
    """A mutant fast key that renames partitions across topics (one block for both) merges keys it must not."""
    name, cfg = CASES[3]
    proto = make(name, cfg)
    kn = Kernel(proto)
    states = _reachable(proto, 3000)
    wrong = np.array([0, cfg.partitions], np.int64)
    assert _disagree(kn, states, wrong) is not None
