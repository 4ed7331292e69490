"""The sticky assignor's claims (issue 30; docs/specification.md, "The sticky assignor's claims").

* the model's claim resolution (``model/assignors.py``: ``resolve_claims``, ``kept_claims``) on Kafka's worked examples:
  assignors.md's "generation 5, then 5, then 7" and the claim rows of its AbstractStickyAssignorTest (AST) table,
  each also against the reference's (``groupspec.reference.assignors.sticky_claims``, written from Kafka's source);
* ``assignor:sticky-claims`` passes on the unchanged model and fails on every mutant of the claim rule;
* the campaign kills by that check the mutants of the rules the six survivors of ``assignor:sticky`` changed (their
  names since the rule became its own function).
"""
from __future__ import annotations

import pytest

from groupspec.model import Config, kept_claims, resolve_claims
from groupspec.reference.assignors import sticky_claims
from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline
from groupspec.specmut.killers import STICKY_CLAIMS
from groupspec.specmut.loader import applied
from groupspec.specmut.sticky_claims import check


def _bits(*ps: int) -> int:
    return sum(1 << p for p in ps)


def _reference(cfg: Config, members, names=None):  # noqa: ANN001, ANN202
    """The reference's resolution of the same group (member ids chosen so Kafka walks them in slot order)."""
    from groupspec.reference.assignors import java_hashmap_order

    ids = names or [chr(ord("a") + s) for s, *_ in members]
    assert java_hashmap_order(ids) == list(range(len(ids)))
    tnames = [f"t{t}" for t in range(cfg.topics)]
    where = [(tnames[cfg.topic_of[b]], sum(1 for x in range(b) if cfg.topic_of[x] == cfg.topic_of[b]))
             for b in range(cfg.partitions)]
    subs = {}
    for (slot, tmask, owned, gen, _st), mid in zip(members, ids):
        subs[mid] = {"topics": [tnames[t] for t in range(cfg.topics) if tmask >> t & 1],
                     "owned": [list(where[b]) for b in range(cfg.partitions) if owned >> b & 1]}
        if gen >= 0:
            subs[mid]["generation"] = gen
    got = sticky_claims({t: sum(1 for w in where if w[0] == t) for t in tnames}, subs)

    def mask(tps) -> int:  # noqa: ANN001
        return sum(1 << where.index(tp) for tp in tps)

    return ({s: mask(got.owned[mid]) for (s, *_), mid in zip(members, ids)}, mask(got.multiply_claimed),
            {s: mask(got.valid[mid]) for (s, *_), mid in zip(members, ids)}, got.path)


def _both(cfg: Config, members):  # noqa: ANN001, ANN202
    """The model's (kept, multiply claimed, what the sticky assignor starts from), after checking the reference agrees."""
    existing = (1 << cfg.partitions) - 1
    everything = 0
    for _s, tmask, *_ in members:
        everything |= cfg.subscribed_partitions(tmask, existing)
    kept, multi = resolve_claims(members, everything)
    valid = kept_claims(cfg, members, existing)
    ref_kept, ref_multi, ref_valid, _path = _reference(cfg, members)
    assert (kept, multi, valid) == (ref_kept, ref_multi, ref_valid)
    return kept, multi, valid


def test_generation_5_then_5_then_7_the_mark_strips_the_winner_on_the_constrained_path_only():
    # assignors.md: "generation 5, then 5, then 7: the first two create a multiply-claimed mark, which later also strips
    # the generation-7 winner" (Kafka 4.3.1's ConstrainedAssignmentBuilder.assignOwnedPartitions removes every
    # multiply-claimed partition from every member's owned partitions; GeneralAssignmentBuilder is not given the set)
    cfg = Config(members=3, partitions=3, topics=1)
    same = [(0, 1, _bits(0), 5, False), (1, 1, _bits(0), 5, False), (2, 1, _bits(0, 1), 7, False)]
    kept, multi, valid = _both(cfg, same)
    assert kept == {0: 0, 1: 0, 2: _bits(0, 1)} and multi == _bits(0)  # the generation-7 member took it over...
    assert valid == {0: 0, 1: 0, 2: _bits(1)}  # ...and the mark strips it (constrained path)
    cfg2 = Config(members=3, partitions=4, topics=2)  # t0: partitions 0, 1; t1: 2, 3
    mixed = [(0, 3, _bits(0), 5, False), (1, 1, _bits(0), 5, False), (2, 1, _bits(0, 1), 7, False)]
    kept, multi, valid = _both(cfg2, mixed)
    assert multi == _bits(0) and valid == {0: 0, 1: 0, 2: _bits(0, 1)}  # general path: the winner keeps it
    # the order matters: 7 first, then 5 and 5 (both lower): nothing is marked and the generation-7 member keeps it
    kept, multi, valid = _both(cfg, [(0, 1, _bits(0, 1), 7, False), (1, 1, _bits(0), 5, False), (2, 1, _bits(0), 5, False)])
    assert multi == 0 and valid == {0: _bits(0, 1), 1: 0, 2: 0}


def test_kafkas_own_assignor_strips_the_winner_on_the_constrained_path_only():
    # The pinned kafka-clients 4.3.1 jar's CooperativeStickyAssignor (one JVM, groupspec.kafka.assignors) on the 5, 5, 7
    # example: a and b claim t-0 at generation 5, c claims t-0 and t-1 at generation 7 (walked a, b, c).
    from groupspec.kafka.assignors import JavaAssignors
    from groupspec.reference.assignors import get

    def group(a_topics: list[str]) -> dict:
        return {"a": {"topics": a_topics, "owned": [["t", 0]], "generation": 5},
                "b": {"topics": ["t"], "owned": [["t", 0]], "generation": 5},
                "c": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 7}}

    with JavaAssignors(heap="256m") as java:
        constrained = java.assign("cooperative-sticky", {"t": 3}, group(["t"]))
        general = java.assign("cooperative-sticky", {"t": 3, "u": 1}, group(["t", "u"]))
    assert constrained["c"] == [("t", 1)]  # at quota 1 c keeps t-1: t-0 was stripped from its owned partitions
    assert ("t", 0) in general["c"]  # the general path lets it keep t-0
    for parts, a_topics, kafka in (({"t": 3}, ["t"], constrained), ({"t": 3, "u": 1}, ["t", "u"], general)):
        assert get("cooperative-sticky").assign(parts, group(a_topics)) == kafka


def test_the_claim_rows_of_assignors_md_ast_table():
    # testPartitionsTransferringOwnership…ClaimedByMultipleConsumersInSameGeneration: topic:3; c1 [0,1], c2 [0,2], c3 []
    cfg = Config(members=3, partitions=3, topics=1)
    kept, multi, valid = _both(cfg, [(0, 1, _bits(0, 1), 1, False), (1, 1, _bits(0, 2), 1, False), (2, 1, 0, 1, False)])
    assert multi == _bits(0) and valid == {0: _bits(1), 1: _bits(2), 2: 0}
    # testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration: topic:3, topic2:3; both claim [t-0,t-2,t2-1] at
    # generations 10 and 9 (or -1 instead of 9): the generation-10 member keeps them, either walk order
    cfg = Config(members=2, partitions=6, topics=2)  # t0: 0..2, t1: 3..5
    claim = _bits(0, 2, 4)
    for other in (9, -1):
        for order in ((0, 1), (1, 0)):
            gens = {0: 10, 1: other}
            kept, multi, valid = _both(cfg, [(s, 3, claim, gens[o], False) for s, o in enumerate(order)])
            winner = order.index(0)
            assert multi == 0 and valid == {winner: claim, 1 - winner: 0}
    # testEnsurePartitionsAssignedToHighestGeneration (KAFKA-14639): 3 topics x 3; c1 gen 10 [t-0,t2-0,t3-0], c2 gen 9
    # [t-1,t2-1,t3-1], c3 gen 8 [t2-1,t3-0,t3-2]: per partition, the highest generation keeps it
    cfg = Config(members=3, partitions=9, topics=3)  # t0: 0..2, t1: 3..5, t2: 6..8
    kept, multi, valid = _both(cfg, [(0, 7, _bits(0, 3, 6), 10, False), (1, 7, _bits(1, 4, 7), 9, False),
                                     (2, 7, _bits(4, 6, 8), 8, False)])
    assert multi == 0 and valid == {0: _bits(0, 3, 6), 1: _bits(1, 4, 7), 2: _bits(8)}
    # testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration: c1 gen 10 [t-0,t2-1,t-1], c2 gen 8
    # [t-0,t2-1,t2-2]
    cfg = Config(members=2, partitions=6, topics=2)
    kept, multi, valid = _both(cfg, [(0, 3, _bits(0, 4, 1), 10, False), (1, 3, _bits(0, 4, 5), 8, False)])
    assert multi == 0 and valid == {0: _bits(0, 1, 4), 1: _bits(5)}


# The six mutants of the claim rule that survived the campaign (assignor:sticky keeps the reference's invariants and
# stability on them), old name -> the mutants of the same rule since it is its own function.
SIX = {
    "assignors.sticky:drop-guard#1": ["assignors.resolve_claims:drop-guard#0"],  # every claimant taken as the first
    "assignors.sticky:negate-guard#2": ["assignors.resolve_claims:negate-guard#1"],  # a higher generation ignored
    "assignors.sticky:drop-guard#2": ["assignors.resolve_claims:drop-guard#1"],  # any later claimant takes over
    "assignors.sticky:negate-guard#3": ["assignors.resolve_claims:negate-guard#2"],  # the same generation not marked
    "assignors.sticky:drop-guard#3": ["assignors.resolve_claims:drop-guard#2"],  # a lower generation marks it too
    # the mark no longer stripped the partition (L65); that rule is now kept_claims's guard on the mark, path-aware
    "assignors.sticky:drop-term#0": ["assignors.kept_claims:negate-guard#0", "assignors.kept_claims:drop-guard#0",
                                     "assignors.kept_claims:drop-term#0", "assignors.kept_claims:drop-term#1"],
}


def _mutant(name: str):  # noqa: ANN202
    return next(m for m in generate() if m.name == name)


def test_the_check_passes_on_the_unchanged_model():
    with applied(None):
        assert check() is None


@pytest.mark.parametrize("name", [m.name for m in generate() if m.name.split(":")[0] in
                                  ("assignors.resolve_claims", "assignors.kept_claims")])
def test_the_check_fails_on_every_mutant_of_the_claim_rule(name: str):
    with applied(_mutant(name)):
        why = check()
    assert why is not None and "seed" in why, name


def test_the_campaign_kills_the_six_by_the_new_check():
    base = baseline(only=[STICKY_CLAIMS], trace=False)
    assert base[STICKY_CLAIMS].get("failure") is None and "error" not in base[STICKY_CLAIMS]
    for name in (n for now in SIX.values() for n in now):
        row = run_one(_mutant(name), base)
        assert row["status"] == "killed" and row["killer"] == STICKY_CLAIMS, row
