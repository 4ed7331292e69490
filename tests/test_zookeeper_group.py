"""The ZooKeeper-era group simulator (reference/zookeeper_group.py): the herd, claims, determinism."""
from __future__ import annotations

import pytest

from groupspec.reference.trace import ownership
from groupspec.reference.zookeeper_group import ZkConfig, ZkGroup


def _group(n: int, seed: int = 0, partitions: int = 12) -> ZkGroup:
    g = ZkGroup(ZkConfig(seed=seed, partitions=partitions))
    for i in range(n - 1):
        g.at(i * 500, "start", f"c{i + 1}")
    g.run_until(19_999)
    return g


@pytest.mark.parametrize("n", [2, 5, 9])
def test_one_join_notifies_every_consumer(n: int) -> None:
    g = _group(n)
    before = g.notifications
    g.at(20_000, "start", f"c{n}")
    g.run_until(60_000)
    assert g.notifications - before == n  # the herd: everyone wakes for one change
    own = ownership(g.trace, 0, 60_000)
    assert own.double_owned == []  # owner nodes are exclusive
    owners = {tp: o for tp, o in own.final_owners.items()}
    assert all(len(o) == 1 for o in owners.values()), owners  # everyone got a share in the end


def test_a_crash_is_noticed_only_when_the_session_expires() -> None:
    g = _group(3)
    g.run_until(20_000)
    changes = g.changes
    g.at(20_000, "start", "c3")
    g.run_until(30_000)
    changes = g.changes
    g.at(30_000, "crash", "c1")
    g.run_until(30_000 + g.config.session_timeout_ms - 1)
    assert g.changes == changes  # its nodes are still there
    g.run_until(30_000 + g.config.session_timeout_ms + 1)
    assert g.changes == changes + 1


def test_runs_replay_exactly() -> None:
    def run() -> list[dict]:
        g = _group(6, seed=4)
        g.at(20_000, "start", "c6")
        g.at(21_000, "close", "c2")
        g.run_until(60_000)
        return g.trace

    assert run() == run()


def test_unknown_action_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown ZooKeeper-group action"):
        ZkGroup().at(0, "pause", "c1")
