"""The assignor checker catches each deliberately broken assignor (a mutant) with the right property,
and passes correct ones (positive controls). Mutants are small form-1 assignors defined here."""
from __future__ import annotations

from typing import Any

import pytest

from groupspec import check_assignor
from groupspec.assignorcheck.check import AssignorCheckFailed, assert_assignor
from groupspec.assignorcheck.core import member_order, owned_of, topics_of
from groupspec.assignorcheck.load import LoadError, candidate_from_object

N = 40  # examples per property in these tests (enough to find every mutant quickly)


# ------------------------------------------------------------------------------ correct base assignors


def _parts(ppt: dict[str, int], subs: dict[str, dict]) -> list[tuple[str, int]]:
    topics = {t for s in subs.values() for t in topics_of(s)}
    return [(t, p) for t in sorted(topics) if t in ppt for p in range(max(0, ppt[t]))]


def base_eager(ppt: dict[str, int], subs: dict[str, dict]) -> dict[str, list[tuple[str, int]]]:
    """Correct: each partition to the least-loaded subscriber (ties by Kafka's member order)."""
    order = member_order(subs)
    rank = {m: i for i, m in enumerate(order)}
    out: dict[str, list[tuple[str, int]]] = {m: [] for m in subs}
    for t, p in _parts(ppt, subs):
        who = min((m for m in order if t in topics_of(subs[m])), key=lambda m: (len(out[m]), rank[m]))
        out[who].append((t, p))
    return out


def _others_claim(subs: dict[str, dict], m: str, tp: tuple[str, int]) -> bool:
    return any(tp in owned_of(s) for o, s in subs.items() if o != m)


class BaseCoop:
    """Correct cooperative wrapper: withhold every partition another member still claims."""

    protocol = "cooperative"
    name = "base-coop"

    def assign(self, ppt: dict[str, int], subs: dict[str, dict]) -> dict[str, list[tuple[str, int]]]:
        target = base_eager(ppt, subs)
        return {m: [tp for tp in ps if not _others_claim(subs, m, tp)] for m, ps in target.items()}


# ------------------------------------------------------------------------------------------- mutants


def dup_mutant(ppt, subs):
    out = base_eager(ppt, subs)
    ms = [m for m in out if out[m]]
    if ms and len(out) > 1:
        other = next(m for m in out if m != ms[0])
        out[other].append(out[ms[0]][0])
    return out


def missing_member_mutant(ppt, subs):
    out = base_eager(ppt, subs)
    out.pop(sorted(out)[-1], None)
    return out


def unsubscribed_mutant(ppt, subs):
    out = base_eager(ppt, subs)
    for m in sorted(subs):
        for t in sorted(ppt):
            if ppt[t] > 0 and t not in topics_of(subs[m]):
                for o in out:
                    if (t, 0) in out[o]:
                        out[o].remove((t, 0))
                out[m].append((t, 0))
                return out
    return out


def incomplete_mutant(ppt, subs):
    out = base_eager(ppt, subs)
    biggest = max(out, key=lambda m: len(out[m]), default=None)
    if biggest is not None and out[biggest]:
        out[biggest].pop()
    return out


def greedy_sticky(ppt, subs):
    """Named sticky, but gives everything to the first subscriber: unbalanced (I5)."""
    order = member_order(subs)
    out = {m: [] for m in subs}
    for t, p in _parts(ppt, subs):
        out[next(m for m in order if t in topics_of(subs[m]))].append((t, p))
    return out


greedy_sticky.name = "greedy-sticky"  # type: ignore[attr-defined]


class DirectTransfer:
    """Declares cooperative but reassigns eagerly: partitions move directly between members (I6)."""

    protocol = "cooperative"
    name = "direct-transfer"

    def assign(self, ppt, subs):
        return base_eager(ppt, subs)


class StaleClaimant(BaseCoop):
    """Hands a contested partition to its *lowest*-generation claimant (I6′ catches it, I6 does not)."""

    name = "stale-claimant"

    def assign(self, ppt, subs):
        out = super().assign(ppt, subs)
        claimants: dict[tuple[str, int], list[tuple[int, str]]] = {}
        for m, s in subs.items():
            for tp in owned_of(s):
                claimants.setdefault(tp, []).append((s.get("generation", -1), m))
        for tp, cs in claimants.items():
            if len(cs) < 2 or tp[0] not in ppt or not 0 <= tp[1] < ppt[tp[0]]:
                continue
            low_gen, low = min(cs)
            if tp[0] in topics_of(subs[low]) and low_gen < max(cs)[0]:
                for m in out:
                    if tp in out[m]:
                        out[m].remove(tp)
                out[low].append(tp)
        return out


class StaleGivesAway(BaseCoop):
    """A member whose generation is behind the group's loses its partitions *directly* to others in the same
    round; reached on the failure paths of I8f (a lost SyncGroup answer leaves one member a generation behind)."""

    name = "stale-gives-away"

    def assign(self, ppt, subs):
        top = max([s.get("generation", -1) for s in subs.values()] + [-1])
        fresh = {m: (dict(s, owned=[]) if -1 < s.get("generation", -1) < top else s) for m, s in subs.items()}
        return super().assign(ppt, fresh)


class NeverSettles:
    """Cooperative that revokes one partition from every holder in every round (I8)."""

    protocol = "cooperative"
    name = "never-settles"

    def assign(self, ppt, subs):
        out: dict[str, list] = {}
        held: set = set()
        for m, s in subs.items():
            mine = sorted(tp for tp in owned_of(s) if tp[0] in topics_of(s) and tp[0] in ppt and 0 <= tp[1] < ppt[tp[0]])
            out[m] = mine[1:]
            held |= set(mine)
        for t, p in _parts(ppt, subs):
            if (t, p) not in held:
                m = next(m for m in member_order(subs) if t in topics_of(subs[m]))
                out[m].append((t, p))
        return out


def wrong_range(ppt, subs):
    """Named range, but orders members by member id only (ignores static members' instance ids)."""
    out = {m: [] for m in subs}
    for t in sorted({t for s in subs.values() for t in topics_of(s)}):
        if ppt.get(t, 0) <= 0:
            continue
        ms = sorted(m for m in subs if t in topics_of(subs[m]))
        q, r = divmod(ppt[t], len(ms))
        start = 0
        for i, m in enumerate(ms):
            n = q + (i < r)
            out[m] += [(t, p) for p in range(start, start + n)]
            start += n
    return out


wrong_range.name = "range"  # type: ignore[attr-defined]


def swapping_sticky(ppt, subs):
    """Named sticky: keeps ownership, then swaps one partition of a topic between two members (I9)."""
    out = base_eager(ppt, subs)
    holder = {tp: m for m, ps in out.items() for tp in ps}
    owners = {tp: m for m, s in subs.items() for tp in owned_of(s)
              if tp in holder and tp[0] in topics_of(s)}
    for tp, m in owners.items():  # keep what members owned (balance is not this mutant's point)
        out[holder[tp]].remove(tp)
        out[m].append(tp)
        holder[tp] = m
    by_topic: dict[str, list[tuple[str, tuple[str, int]]]] = {}
    for m in sorted(out):
        for tp in sorted(out[m]):
            if owners.get(tp) == m:
                by_topic.setdefault(tp[0], []).append((m, tp))
    for t, held in sorted(by_topic.items()):
        for (a, pa) in held:
            for (b, pb) in held:
                if a < b:
                    out[a].remove(pa); out[b].remove(pb)
                    out[a].append(pb); out[b].append(pa)
                    return out
    return out


swapping_sticky.name = "swapping-sticky"  # type: ignore[attr-defined]


def order_dependent(ppt, subs):
    """Round robin over members in the input's dict order (I10)."""
    members = list(subs)
    out = {m: [] for m in members}
    i = 0
    for t, p in _parts(ppt, subs):
        while t not in topics_of(subs[members[i % len(members)]]):
            i += 1
        out[members[i % len(members)]].append((t, p))
        i += 1
    return out


def crashing(ppt, subs):
    if any(not s["topics"] for s in subs.values()):
        raise ValueError("empty subscription")
    return base_eager(ppt, subs)


def hanging(ppt, subs):
    if any(not s["topics"] for s in subs.values()):
        while True:
            pass
    return base_eager(ppt, subs)


def malformed(ppt, subs):
    out = base_eager(ppt, subs)
    if any(t not in ppt for s in subs.values() for t in s["topics"]):
        return [(m, ps) for m, ps in out.items()]
    return out


def late_bloomer(ppt, subs):
    """Correct until members have been through three generations, then drops a partition (churn only)."""
    out = base_eager(ppt, subs)
    if max([s.get("generation", -1) for s in subs.values()] + [-1]) >= 3:
        return incomplete_mutant(ppt, subs)
    return out


# --------------------------------------------------------------------------------------------- tests


def _check(cand: Any, props: list[str] | None = None, **kw: Any):
    kw.setdefault("examples", N)
    kw.setdefault("seed", 7)
    kw.setdefault("quality", False)
    return check_assignor(cand, properties=props, **kw)


def test_positive_control_eager_holds_everything():
    # every property but the scale tier: this control is O(partitions x members) on purpose (a simple correct
    # algorithm), which S1 rightly reports at 500 members x 20,000 partitions
    rep = _check(base_eager, scale=None)
    assert rep.ok, [(p.id, p.counterexample) for p in rep.violations]
    assert {p.id for p in rep.properties if p.verdict == "held"} >= {"I1", "I2", "I3", "I4", "I10", "I11", "C1"}
    assert rep["I7"].verdict == "not applicable"


def test_positive_control_cooperative_holds_everything():
    # every property but the scale tier: this control is O(partitions x members) on purpose (a simple correct
    # algorithm), which S1 rightly reports at 500 members x 20,000 partitions
    rep = _check(BaseCoop(), scale=None)
    assert rep.ok, [(p.id, p.counterexample) for p in rep.violations]
    for pid in ("I4", "I6", "I6'", "I8"):
        assert rep[pid].verdict == "held"


@pytest.mark.parametrize("mutant, pid", [
    (dup_mutant, "I2"),
    (missing_member_mutant, "I1"),
    (unsubscribed_mutant, "I3"),
    (incomplete_mutant, "I4"),
    (greedy_sticky, "I5"),
    (DirectTransfer(), "I6"),
    (StaleClaimant(), "I6'"),
    (wrong_range, "I7"),
    (NeverSettles(), "I8"),
    (StaleGivesAway(), "I8f"),
    (swapping_sticky, "I9"),
    (order_dependent, "I10"),
    (crashing, "I11"),
    (malformed, "I11"),
])
def test_mutant_is_caught(mutant, pid):
    rep = _check(mutant, [pid])
    prop = rep[pid]
    assert prop.verdict == "violated", prop
    cx = prop.counterexample
    assert cx["explanation"] and cx["input"]["subscriptions"] is not None
    assert not rep.ok and rep.exit_code == 1


def test_stale_claimant_passes_kafkas_I6_but_not_I6_prime():
    rep = _check(StaleClaimant(), ["I6", "I6'"], examples=80)
    assert rep["I6"].verdict == "held"
    assert rep["I6'"].verdict == "violated"
    assert "stale claimant" in rep["I6'"].counterexample["explanation"]


def test_counterexample_is_shrunk_and_output_shown():
    rep = _check(incomplete_mutant, ["I4"])
    cx = rep["I4"].counterexample
    assert len(cx["input"]["subscriptions"]) == 1
    assert cx["input"]["partitions_per_topic"] == {"t0": 1}
    assert cx["output"] == {m: [] for m in cx["input"]["subscriptions"]}


def test_crash_reported_by_I11_other_properties_go_on():
    rep = _check(crashing, ["I11", "I1", "I2"])
    assert rep["I11"].verdict == "violated"
    assert "raised ValueError: empty subscription" in rep["I11"].counterexample["explanation"]
    assert rep["I1"].verdict == "held" and rep["I2"].verdict == "held"


def test_hang_is_cut_off_and_reported():
    rep = _check(hanging, ["I11", "I1", "I4"], call_timeout=0.2)
    assert rep["I11"].verdict == "violated"
    assert rep["I11"].counterexample["failure"] == "timeout"
    assert rep["I1"].verdict in ("held", "not applicable")
    # a hanging input is cut off once and never called again; past the hang budget (3) new inputs get a
    # shorter limit, so the time lost stays bounded: far fewer cut-offs than calls, and still judged (I1)
    assert 1 <= rep.hangs < rep.calls


def test_churn_finds_multi_round_bug():
    # late_bloomer only breaks once members report generation >= 3, which churn reaches by feeding output back.
    rep = _check(late_bloomer, ["C1"])
    assert rep["C1"].verdict == "violated"
    cx = rep["C1"].counterexample
    assert cx["explanation"].startswith("I4")
    assert sum(s.startswith("rebalance") for s in cx["steps"]) >= 3
    assert all(s["generation"] >= 3 for s in cx["input"]["subscriptions"].values() if s["owned"])


def test_same_seed_same_report():
    a = _check(order_dependent, ["I10", "I4"], seed=11).to_json()
    b = _check(order_dependent, ["I10", "I4"], seed=11).to_json()
    a.pop("mean_call_ms"), b.pop("mean_call_ms")  # the only timing figure in the report
    assert a == b
    assert a["properties"][1]["verdict"] == "violated"


def test_assert_assignor_raises_with_explanation():
    with pytest.raises(AssignorCheckFailed, match="I2"):
        assert_assignor(dup_mutant, examples=N, seed=1, properties=["I2"], quality=False)


def test_candidate_forms_and_load_errors():
    c = candidate_from_object(BaseCoop())
    assert (c.protocol, c.name) == ("cooperative", "base-coop")
    assert candidate_from_object(greedy_sticky).kind == "sticky"
    assert candidate_from_object(wrong_range).kind == "range"
    with pytest.raises(LoadError):
        candidate_from_object(42)
    with pytest.raises(LoadError):
        candidate_from_object("nosuch:thing")
    with pytest.raises(LoadError):
        candidate_from_object("notabuiltin")


def test_mutating_candidate_cannot_corrupt_checker():
    def mutator(ppt, subs):
        out = base_eager(ppt, subs)
        ppt.clear()
        for s in subs.values():
            s["topics"].clear()
        return out

    rep = _check(mutator, ["I4", "I10"])
    assert rep.ok


# ------------------------------------------------------------------------------ verdicts that do not mislead


def always_raises(ppt, subs):
    raise RuntimeError("not implemented")


def test_churn_is_not_applicable_when_no_call_succeeded():
    rep = check_assignor(always_raises, examples=20, seed=1, properties=["I11", "C1"], quality=False)
    assert rep["I11"].verdict == "violated"
    assert rep["C1"].verdict == "not applicable"
    assert "failed on all" in rep["C1"].note
    assert rep.failed_calls == rep.calls > 0


def test_movement_is_phrased_so_that_worse_reads_as_worse():
    from groupspec.assignorcheck.churn import movement_phrase

    assert "worse than optimal" in movement_phrase(34, 18) and "16 more than the 18" in movement_phrase(34, 18)
    assert "balance stayed below the best" in movement_phrase(34, 118)
    assert "exactly the fewest" in movement_phrase(7, 7)


def first_topic_only(ppt, subs):
    """Order-dependent: each member gets the partitions of the first topic in its list (I10)."""
    out = {m: [] for m in subs}
    taken = set()
    for m in sorted(subs):
        t = (subs[m]["topics"] or [None])[0]
        if t in ppt and t not in taken:
            taken.add(t)
            out[m] = [(t, p) for p in range(ppt[t])]
    return out


def test_order_explanation_names_what_was_reversed():
    rep = check_assignor(first_topic_only, examples=60, seed=1, properties=["I10"], quality=False)
    cx = rep["I10"].counterexample
    members = len(cx["input"]["subscriptions"])
    expected = "the only member's topics" if members == 1 else "the order of the members"
    assert expected in cx["explanation"], cx

