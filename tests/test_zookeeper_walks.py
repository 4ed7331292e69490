"""The ZooKeeper-era model's paths on the reference's ZooKeeper-era group (groupspec/specmut/zookeeper_walks.py)."""
from __future__ import annotations

import random

import pytest

from groupspec.reference.actor import Invoked, Received, Send
from groupspec.reference.history import ZkConfig, ZkConsumer, ZkRecord, ZooKeeper
from groupspec.reference.sim import Address
from groupspec.specmut.loader import applied
from groupspec.specmut.operators import generate
from groupspec.specmut.zookeeper_walks import ZK_WALK_JOBS, check

F = "join,leave,crash,timeout,zombie"
EXPLORED = ("zookeeper", "range", 2, 2, 1, F, 2, 0, 0)
WALKS = ("zookeeper", "range", 3, 3, 1, F, 5, 60, 40)


def test_the_unchanged_model_is_the_reference_along_every_path():
    assert EXPLORED in ZK_WALK_JOBS
    assert check(EXPLORED) is None
    assert check(WALKS) is None


@pytest.mark.parametrize("name, says", [
    # a running process "started" again: its partitions forgotten (the reference starts only a process that is down)
    ("zookeeper.ZooKeeper.successors:drop-term#5", "its process runs already"),
    # a stale read where no server lags (the last write was a no-op): the lagging server serves an older list
    ("zookeeper.ZooKeeper.successors:drop-term#0", "owner nodes"),
    # a stale read again from a server that has not caught up (its watch there cannot have fired yet)
    ("zookeeper.ZooKeeper.successors:drop-term#1", "lagging server again"),
    # a crashed consumer's session never expires: the ensemble's timer would
    ("zookeeper.ZooKeeper.successors:timer-never#0", "will expire crashed consumer"),
    # a running consumer can no longer crash: the application can crash it
    ("zookeeper.ZooKeeper.successors:negate-guard#12", "may undergo Crash"),
    # a retry although nothing is pending
    ("zookeeper.ZooKeeper.successors:drop-guard#4", "retries its claims"),
    # the herd counted for no change at all: the ensemble fires a watch per registered consumer at every change
    ("zookeeper.ZooKeeper.notifications:drop-guard#0", "watch notifications"),
])
def test_a_mutant_diverges_from_the_reference(name, says):
    m = next(x for x in generate() if x.name == name)
    with applied(m):
        why = check(EXPLORED) or check(WALKS)
    assert why is not None and says in why, why
    print(f"{name}: {why[:300]}")


def test_a_close_without_a_session_writes_nothing_and_fires_no_watch():
    """Deleting a node that does not exist changes nothing in ZooKeeper: no registry write, no watch."""
    zk = ZooKeeper(ZkConfig(), random.Random(0))
    rec = ZkRecord()
    c1, c2 = ZkConsumer("c1", ZkConfig(), rec), ZkConsumer("c2", ZkConfig(), rec)
    (reg,) = c1.handle(0, Invoked("start"))
    assert isinstance(reg, Send)
    zk.handle(10, Received(Address("c1", 0), reg.message))
    changes, history = zk.changes, list(zk.registry_history)
    close = [c for c in c2.handle(20, Invoked("close")) if isinstance(c, Send)]
    assert [type(c.message).__name__ for c in close] == ["Close"]
    assert zk.handle(20, Received(Address("c2", 0), close[0].message)) == []
    assert (zk.changes, zk.registry_history) == (changes, history)
