"""The min-cost-flow optimum oracle agrees with brute force on small groups, and its balance test sees
chains through third members that Kafka's pairwise rule (I5) misses."""
from __future__ import annotations

import itertools

from hypothesis import given

from groupspec import strategies as gs
from groupspec.assignorcheck.core import check_movability, resolved_owners, subscribed_partitions, topics_of
from groupspec.assignorcheck.optimum import balance_gap, improving_chain, moves_of, optimum


def _brute(ppt, subs):
    """(min Σ load², min moves among those) by enumerating every complete assignment."""
    parts = sorted(subscribed_partitions(ppt, subs))
    choices = [[m for m in subs if t in topics_of(subs[m])] for t, _ in parts]
    owners = resolved_owners(subs)
    best = None
    for pick in itertools.product(*choices):
        loads = {m: 0 for m in subs}
        for m in pick:
            loads[m] += 1
        ss = sum(v * v for v in loads.values())
        moves = sum(1 for tp, m in zip(parts, pick) if tp in owners and owners[tp] in subs and owners[tp] != m)
        key = (ss, moves)
        best = key if best is None or key < best else best
    return best or (0, 0)


@given(gs.group_states(max_topics=2, max_partitions=3, max_members=3, history=True, conflicts=True,
                       tricky_ids=False))
def test_optimum_matches_brute_force(state):
    ppt, subs = state
    opt = optimum(ppt, subs)
    assert (opt.sum_squares, opt.moves) == _brute(ppt, subs)


def test_uniform_owner_holds_everything():
    subs = {"a": {"topics": ["t"], "owned": [["t", p] for p in range(4)], "generation": 3},
            "b": {"topics": ["t"], "owned": [], "generation": -1}}
    opt = optimum({"t": 4}, subs)
    assert (opt.moves, opt.spread, opt.max_load) == (2, 0, 2)
    assert moves_of(subs, {"a": [("t", 0)], "b": [("t", 1), ("t", 2), ("t", 3)]}) == 3


def test_chain_through_third_member_is_found_where_pairwise_rule_passes():
    ppt = {"t0": 3, "t1": 3}
    subs = {"x": {"topics": ["t0"]}, "z": {"topics": ["t0", "t1"]}, "y": {"topics": ["t1"]}}
    out = {"x": [("t0", 0), ("t0", 1), ("t0", 2)], "z": [("t1", 0), ("t1", 1)], "y": [("t1", 2)]}
    assert check_movability(ppt, subs, out) is None  # Kafka's pairwise rule is satisfied
    best = optimum(ppt, subs)
    assert best.spread == 0
    gap = balance_gap(ppt, subs, out, best)
    assert gap is not None and "spread 2" in gap
    chain = improving_chain(ppt, subs, out)
    assert [(a, b) for _tp, a, b in chain] == [("x", "z"), ("z", "y")]
    balanced = {"x": [("t0", 0), ("t0", 1)], "z": [("t0", 2), ("t1", 0)], "y": [("t1", 1), ("t1", 2)]}
    assert balance_gap(ppt, subs, balanced, best) is None


def test_forced_moves_when_owner_unsubscribed():
    subs = {"a": {"topics": [], "owned": [["t", 0], ["t", 1]], "generation": 2},
            "b": {"topics": ["t"], "owned": [], "generation": 2}}
    opt = optimum({"t": 2}, subs)
    assert (opt.moves, opt.forced) == (2, 2)
