"""The uniform server assignor's current target read topic by topic at once (reference/assignors/server.py,
``_current_owners``, issue 32): the owner arrays must be exactly those of marking every member's partitions member by
member (the definition, written out below), on random current targets: valid ones, a partition in two members'
lists (the later member wins), numbers past a topic's end (ignored), negative numbers, members not in the group,
topics not subscribed. The test is shown to catch a reading that lets the earlier member win."""
from __future__ import annotations

import os
import random
from typing import Any

import numpy as np
import pytest

from groupspec.reference.assignors import server
from groupspec.reference.assignors.server import UniformAssignor


def by_member(owners: dict[str, np.ndarray], index: dict[str, int], current: dict[str, dict[str, Any]]) -> None:
    for m, mine in current.items():
        k = index.get(m)
        if k is None:
            continue
        for t, parts in mine.items():
            if t in owners and len(parts):
                arr = np.asarray(parts, dtype=np.int64)
                arr = arr[arr < len(owners[t])]
                owners[t][arr] = k


def case(rng: random.Random) -> tuple[dict[str, int], dict[str, int], dict[str, dict[str, Any]]]:
    sizes = {f"t{i}": rng.randint(1, 30) for i in range(rng.randint(1, 4))}
    members = [f"m{i}" for i in range(rng.randint(1, 6))]
    index = {m: k for k, m in enumerate(members)}
    current: dict[str, dict[str, Any]] = {}
    for m in rng.sample(members + ["gone"], rng.randint(0, len(members) + 1)):
        mine: dict[str, Any] = {}
        for t in rng.sample(sorted(sizes) + ["other"], rng.randint(0, len(sizes))):
            n = sizes.get(t, 5)
            kind = rng.random()
            if kind < 0.5:
                parts: Any = rng.sample(range(n), rng.randint(0, n))
            elif kind < 0.7:
                parts = [rng.randint(0, n + 5) for _ in range(rng.randint(0, 6))]  # past the end, repeated
            elif kind < 0.8:
                parts = [rng.randint(-n, n - 1) for _ in range(rng.randint(1, 4))]  # negative numbers
            elif kind < 0.85:
                parts = range(rng.randint(0, n), n)
            elif kind < 0.9:  # a run of consecutive numbers, possibly past the end
                a = rng.randint(0, n)
                parts = list(range(a, a + rng.randint(1, 8)))
            else:
                parts = tuple(rng.sample(range(n), rng.randint(0, n)))
            mine[t] = parts
        current[m] = mine
    return sizes, index, current


def test_topic_by_topic_is_member_by_member() -> None:
    seed = int(os.environ.get("GROUPSPEC_ASSIGNOR_SEED", random.randrange(10**6)))
    print(f"uniform current target: seed {seed} (replay: GROUPSPEC_ASSIGNOR_SEED={seed})")
    rng = random.Random(seed)
    for _ in range(3000):
        sizes, index, current = case(rng)
        want = {t: np.full(n, -1, dtype=np.int32) for t, n in sizes.items()}
        got = {t: np.full(n, -1, dtype=np.int32) for t, n in sizes.items()}
        by_member(want, index, current)
        server._current_owners(got, index, current)
        assert all(np.array_equal(want[t], got[t]) for t in sizes), (sizes, index, current)


def test_the_assignor_after_a_join_at_scale_is_what_member_by_member_reading_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {f"t{i}": 600 for i in range(3)}  # over SMALL_PARTITIONS: the array path
    first = UniformAssignor().assign(counts, {f"c{i}": list(counts) for i in range(7)})
    subs = {f"c{i}": list(counts) for i in range(8)}
    got = UniformAssignor().assign(counts, subs, first)
    monkeypatch.setattr(server, "_current_owners", by_member)
    assert got == UniformAssignor().assign(counts, subs, first)


def test_a_reading_where_the_earlier_member_wins_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def earlier_wins(owners: dict[str, np.ndarray], index: dict[str, int], current: dict[str, dict[str, Any]]) -> None:
        by_member(owners, index, dict(reversed(list(current.items()))))

    rng = random.Random(3)
    cases = [case(rng) for _ in range(300)]

    def differs(reader: Any) -> bool:
        for sizes, index, current in cases:
            want = {t: np.full(n, -1, dtype=np.int32) for t, n in sizes.items()}
            got = {t: np.full(n, -1, dtype=np.int32) for t, n in sizes.items()}
            by_member(want, index, current)
            reader(got, index, current)
            if not all(np.array_equal(want[t], got[t]) for t in sizes):
                return True
        return False

    assert not differs(server._current_owners) and differs(earlier_wins)


def target_by_partition(members: list[str], topics: list[str], owners: list[np.ndarray]) -> dict[str, dict[str, list[int]]]:
    """The definition of a target from owner arrays: every member, its topics in ``topics`` order, ascending."""
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    for t, row in zip(topics, owners):
        for p, k in enumerate(row.tolist()):
            if k >= 0:
                out[members[k]].setdefault(t, []).append(p)
    return out


def test_targets_from_owner_arrays_blocky_or_scattered() -> None:
    """Both ways of :func:`server._target_of_owners` (the runs when owners change seldom, the sort otherwise) give
    the definition's target, in the same order (compared as JSON), on owner arrays in blocks, scattered, with
    nobody's partitions and empty topics."""
    import json

    seed = int(os.environ.get("GROUPSPEC_ASSIGNOR_SEED", random.randrange(10**6)))
    print(f"uniform targets from owners: seed {seed} (replay: GROUPSPEC_ASSIGNOR_SEED={seed})")
    rng = random.Random(seed)
    ways = set()
    for _ in range(1500):
        members = [f"m{i}" for i in range(rng.randint(1, 9))]
        topics = [f"t{i}" for i in range(rng.randint(1, 5))]
        owners = []
        for _t in topics:
            n = rng.choice([0, 1, 7, 40, 200])
            if rng.random() < 0.5:  # blocks
                row = np.repeat(np.asarray([rng.randint(-1, len(members) - 1) for _ in range(4)], dtype=np.int32),
                                [n // 4, n // 4, n // 4, n - 3 * (n // 4)])
            else:
                row = np.asarray([rng.randint(-1, len(members) - 1) for _ in range(n)], dtype=np.int32)
            owners.append(row)
        flat = np.concatenate(owners)
        ways.add(len(flat) > 1 and int(np.count_nonzero(flat[1:] != flat[:-1])) <= len(flat) // 16)
        got = server._target_of_owners(members, topics, owners)
        assert json.dumps(got) == json.dumps(target_by_partition(members, topics, owners)), (members, topics, owners)
    assert ways == {True, False}  # both ways were taken
