"""The compiled engine on several workers (groupspec.checker.compiled.parallel) is the one-worker search.

* ``test_workers_*``: on correct and broken variants, with one, two and three expansion threads (and
  jobs small enough that many are in flight at once), the search stores the same number of states,
  takes the same edges, and gives the same verdicts, bounds and counterexamples (the same steps to the
  same states), also when stopped by ``--max-states``.
* the same for the KIP-848 consumer family and the migration (their expansion stops at a target the table
  does not hold; the driver fills it with the model and finishes the job).
* ``test_*_mutant``: the comparison catches a parallel search that merges successors in another order, and
  one that leaves a job stopped for a target unfinished.
* ``test_workers_bad_input``: bad ``workers`` values are refused with one line.
"""
from __future__ import annotations

import numpy as np
import pytest

from groupspec.checker import check
from groupspec.checker.compiled import parallel as PAR

CASES = [
    ("cooperative", 3, 3, frozenset({"crash", "timeout"}), None),
    ("eager", 3, 3, frozenset({"crash", "leave"}), None),
    ("static-cooperative", 3, 2, frozenset({"crash", "timeout"}), None),  # exclusive ownership and fencing violated
    ("cooperative-direct-transfer", 3, 3, frozenset({"crash"}), None),
    ("eager-no-revoke", 3, 3, frozenset({"crash"}), None),
    ("unfenced-commits", 3, 3, frozenset({"crash", "timeout"}), None),
    ("cooperative-flappy", 3, 3, frozenset(), None),  # a livelock: convergence violated on a cycle
    ("cooperative", 3, 4, frozenset({"crash", "timeout"}), 7000),
    ("consumer", 3, 3, frozenset({"crash", "timeout", "join"}), None),
    ("consumer-static", 3, 3, frozenset({"crash", "leave"}), None),
    ("consumer-no-wait-release", 3, 3, frozenset({"crash"}), None),  # exclusive ownership violated
    ("consumer-no-epoch-bump", 3, 3, frozenset({"join"}), None),  # convergence violated
    ("consumer", 3, 3, frozenset({"crash", "timeout", "join"}), 3000),
    ("classic-to-consumer", 3, 3, frozenset({"crash", "timeout"}), None),
    ("classic-to-consumer-sync-target", 3, 3, frozenset({"crash"}), None),
]


def outcome(protocol, members, partitions, faults, max_states, workers):
    _proto, res = check(protocol, members=members, partitions=partitions, faults=faults, max_states=max_states,
                        with_symmetry_factor=False, engine="compiled", workers=workers)
    verdicts = {}
    for name, v in sorted(res.verdicts.items()):
        trace = [(repr(s.action), s.state) for s in v.trace] if v.trace else None
        verdicts[name] = (v.held, trace)
    return res.states, res.edges, res.complete, res.convergence_bound, verdicts


@pytest.fixture
def small_jobs(monkeypatch):
    monkeypatch.setattr(PAR, "JOB_ROWS", 7)  # many jobs in flight, merged across segment and growth boundaries


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}")
def test_workers_give_the_one_worker_search(case, small_jobs):
    one = outcome(*case, workers=1)
    assert one[0] > 0
    for workers in (2, 3):
        assert outcome(*case, workers=workers) == one


def test_workers_find_the_same_counterexamples():
    one = outcome("static-cooperative", 3, 2, frozenset({"crash", "timeout"}), None, workers=1)
    two = outcome("static-cooperative", 3, 2, frozenset({"crash", "timeout"}), None, workers=2)
    broken = [name for name, (held, _t) in one[4].items() if held is False]
    assert "exclusive_ownership" in broken
    for name in broken:
        assert len(two[4][name][1]) == len(one[4][name][1])
        assert two[4][name] == one[4][name]


def test_reordered_merge_mutant_is_caught(monkeypatch):
    case = ("cooperative-direct-transfer", 3, 3, frozenset({"crash"}), None)
    one = outcome(*case, workers=1)
    real = PAR.expand

    def reversed_successors(fam, P, TM, blocks, plan, nwords, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount,
                            xctl, tk, tv, tq, table, fpq, known, ltab, sref):
        start = int(xctl[1])
        # every successor written in full (none known to be stored: ``known`` 0, a job index too small to hold
        # one), so that its row, bits and references stay its own when the order is turned round
        status = real(fam, P, TM, blocks, plan, nwords, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount,
                      xctl, tk, tv, tq, table, fpq, 0, np.full(1, -1, np.int32), sref)
        for ns in scount[lo - base: hi - base]:
            for a in (srows, sact, sfp, sfq, sbits, sref):
                a[start:start + ns] = a[start:start + ns][::-1].copy()
            start += int(ns)
        return status

    monkeypatch.setattr(PAR, "expand", reversed_successors)
    assert outcome(*case, workers=2) != one


def test_properties_left_out_for_a_successor_that_may_be_new_are_caught(monkeypatch):
    """The expansion may leave out the property bits of a successor it knows to be stored, never of one that may
    be new (``sref`` -1): a mutant that drops those too loses the violations the serial search finds."""
    case = ("static-cooperative", 3, 2, frozenset({"crash", "timeout"}), None)
    one = outcome(*case, workers=1)
    real = PAR.expand

    def careless(*args):
        status = real(*args)
        sbits, sref = args[14], args[-1]
        perhaps_new = sref == -1
        sbits[perhaps_new] &= PAR.B_GEN
        return status

    monkeypatch.setattr(PAR, "expand", careless)
    assert outcome(*case, workers=2) != one


def test_a_repeat_resolved_to_the_wrong_successor_is_caught(monkeypatch):
    """A successor the expansion found earlier in its job is resolved by the merge to that one's id (``sref``
    ``-2 - p``): a mutant that points every repeat at the job's first successor gets other edges."""
    case = ("cooperative", 3, 3, frozenset({"crash", "timeout"}), None)
    one = outcome(*case, workers=1)
    real = PAR.expand
    repeats = []

    def misdirected(*args):
        status = real(*args)
        sref = args[-1]
        repeats.append(int((sref[: int(args[16][1])] < -1).sum()))
        sref[sref < -1] = -2
        return status

    monkeypatch.setattr(PAR, "expand", misdirected)
    assert outcome(*case, workers=2) != one
    assert sum(repeats) > 0


def test_a_job_left_unfinished_for_a_target_is_caught(monkeypatch, small_jobs):
    from groupspec.checker.compiled.search import NEED_TARGET, X_ROW

    case = ("consumer", 3, 3, frozenset({"crash", "timeout", "join"}), None)
    one = outcome(*case, workers=1)
    real = PAR.expand
    stopped = []

    def forgetful(fam, P, TM, blocks, plan, nwords, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount, xctl,
                  *rest):
        status = real(fam, P, TM, blocks, plan, nwords, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount, xctl,
                      *rest)
        if status == NEED_TARGET:  # the rest of the job "has no successors"
            stopped.append(int(xctl[X_ROW]))
            scount[int(xctl[X_ROW]) - base: hi - base] = 0
            xctl[X_ROW] = hi
            return 0
        return status

    monkeypatch.setattr(PAR, "expand", forgetful)
    assert outcome(*case, workers=2) != one
    assert stopped  # the workers did ask for targets


@pytest.mark.parametrize("kwargs, text", [({"workers": 0}, "--workers must be between"),
                                          ({"workers": 2, "engine": "python"}, "compiled engine only")])
def test_workers_bad_input(kwargs, text):
    with pytest.raises(ValueError, match=text):
        check("eager", members=2, partitions=2, **kwargs)


def test_pack_plan_gives_kernel_pack_words():
    """lean.pack_words (the search's packing, by a precomputed plan) gives kernel.pack's words exactly."""
    from groupspec.checker.compiled import kernel as K
    from groupspec.checker.compiled import lean as L

    rng = np.random.default_rng(18)
    print("seed 18")
    for members, partitions, topics in ((2, 2, 1), (3, 4, 2), (5, 6, 1), (6, 12, 4)):
        widths, offsets = K.key_widths(members, partitions, topics), K.key_offsets()
        plan = L.pack_plan(widths, offsets)
        assert L.plan_words(plan) == K.key_words(widths)
        hl = K.KH
        offs = np.array([offsets[f] if f < hl else offsets[hl + (f - hl) % K.ROWLEN] for f in range(len(widths))])
        mutant = plan.copy()
        mutant[-1, 2] += 1  # the last field one bit higher
        for _ in range(50):
            kv = np.array([rng.integers(0, 1 << w) if w else rng.integers(0, 7) for w in widths]) - offs
            a = np.zeros(K.key_words(widths), np.uint64)
            b = np.zeros(L.plan_words(plan), np.uint64)
            K.pack(kv, widths, offsets, a)
            L.pack_words(kv, plan, b)
            assert np.array_equal(a, b)
            L.pack_words(kv, mutant, b)
            assert not np.array_equal(a, b) or kv[int(plan[-1, 0])] + offs[int(plan[-1, 0])] == 0


def test_needs_compiling_reads_the_parallel_search_cache(monkeypatch):
    from groupspec.checker.compiled import needs_compiling

    from groupspec.checker.compiled import search as S

    check("eager", members=2, partitions=2, engine="compiled", workers=2)  # compiles (or loads) and caches the expansion
    assert needs_compiling(2) is False  # and merge (not the one-worker loop, which two workers do not run)
    monkeypatch.setattr(PAR.expand._cache._cache_file, "_load_index", lambda: {})  # the expansion not cached
    assert needs_compiling(2) is True
    # one worker does not run it: the one-worker loop's cache alone decides
    monkeypatch.setattr(S.search._cache._cache_file, "_load_index", lambda: {"cached": 1})
    assert needs_compiling(1) is False
    monkeypatch.setattr(S.search._cache._cache_file, "_load_index", lambda: {})
    assert needs_compiling(1) is True
