"""The ZooKeeper-era model (model/zookeeper.py): stale views, retries that run out, the herd as a number,
and the double owner through a stale view of an expired session (expected: Kafka 0.8 has it too)."""
from __future__ import annotations

import json
from dataclasses import replace

from click.testing import CliRunner

from groupspec.checker.engines import check
from groupspec.checker.explorer import Explorer
from groupspec.model import Config, make
from groupspec.model import zookeeper as zk


def _zk(faults: set[str], members: int = 2, partitions: int = 2, budget: int = 1):
    return check("zookeeper", assignor="range", members=members, partitions=partitions, faults=frozenset(faults),
                 budget=budget, with_symmetry_factor=False, engine="python")


def test_stale_views_alone_never_double_own() -> None:
    """What the ZooKeeper design guarantees: owner nodes are atomic, so with joins, leaves and crashes (and
    stale reads of the consumer list) no partition is owned or processed twice."""
    _p, res = _zk({"join", "leave", "crash"}, members=3, partitions=3, budget=2)
    assert res.verdicts["exclusive_ownership"].held is True
    assert res.verdicts["exclusive_processing"].held is True
    assert res.verdicts["commit_fencing"].held is True


def test_a_stale_view_of_an_expired_session_double_owns() -> None:
    """The split brain: c1's session expires while it runs; it still believes it owns its partitions and
    processes them, while c2, notified, claims the freed node."""
    proto, res = _zk({"timeout"})
    v = res.verdicts["exclusive_processing"]
    assert v.held is False and "stale view" in v.explanation
    assert res.verdicts["exclusive_ownership"].held is True  # the ZooKeeper-level guarantee still holds
    names = [st.action.name for st in v.trace[1:]]
    assert "ExpireLive" in names and names[-1] in ("Rebalance", "RebalanceStale", "RetryClaims")
    s = v.trace[0].state
    for st in v.trace[1:]:  # a real run of the model
        s = proto.step(s, st.action)
        assert s == st.state


def test_retries_run_out_and_the_consumer_gives_up() -> None:
    proto, res = _zk({"join"})
    v = res.verdicts["convergence"]
    assert v.held is False and "deadlock" in v.explanation
    last = v.trace[-1].state
    assert any(c.failed for c in last.consumers)
    assert sum(1 for st in v.trace if st.action is not None and st.action.name == "RetryClaims") == zk.ZooKeeper.max_retries


def test_more_retries_only_postpone_giving_up() -> None:
    """Mutant bound: with rebalance.max.retries raised the same deadlock is reached, later."""

    class ManyRetries(zk.ZooKeeper):
        max_retries = 4

    res = Explorer(ManyRetries(Config(members=2, partitions=2, faults=frozenset({"join"}), budget=1, assignor="range"))).run()
    v = res.verdicts["convergence"]
    assert v.held is False
    assert sum(1 for st in v.trace if st.action is not None and st.action.name == "RetryClaims") == 4


def test_a_stale_read_is_possible_and_forces_another_rebalance() -> None:
    proto = make("zookeeper", Config(members=2, partitions=2, faults=frozenset({"join"}), budget=1, assignor="range"))
    seen = set()
    todo = list(proto.init_states())
    stale = None
    while todo and stale is None:
        s = todo.pop()
        for a, t in proto.successors(s):
            if a.name == "RebalanceStale":
                stale = (s, a, t)
                break
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert stale is not None
    s, a, t = stale
    c = t.consumers[a.member]
    assert c.view == s.lagging != t.registry  # it acts on a list that is already out of date
    assert any(b.name == "Rebalance" and b.member == a.member for b, _t in proto.successors(t))


def test_the_herd_is_one_watch_per_other_consumer() -> None:
    _p, res = _zk({"join", "leave", "crash"}, members=3, partitions=3, budget=2)
    fig = res.figures["watch notifications per membership change"]
    assert fig["by_group_size"] == {1: [0], 2: [1], 3: [2]}
    assert fig["changes"] > 0


def test_a_herd_miscount_is_caught() -> None:
    """Mutant: a variant whose watches only wake one consumer reports a different herd."""

    class QuietWatches(zk.ZooKeeper):
        def notifications(self, s, t):  # type: ignore[no-untyped-def]
            n = super().notifications(s, t)
            return None if n is None else (n[0], min(n[1], 1))

    res = Explorer(QuietWatches(Config(members=3, partitions=3, faults=frozenset({"join"}), budget=1, assignor="range"))).run()
    assert res.figures["watch notifications per membership change"]["by_group_size"] != {1: [0], 2: [1], 3: [2]}


def test_exclusive_processing_catches_a_double_processor() -> None:
    proto = make("zookeeper", Config(members=2, partitions=2, assignor="range"))
    s = proto.init_states()[0]
    c0, c1 = s.consumers
    bad = replace(s, consumers=(replace(c0, owned=1), replace(c1, owned=1)))
    assert zk.exclusive_processing(proto, bad) is not None
    assert zk.exclusive_processing(proto, replace(s, consumers=(replace(c0, owned=1), replace(c1, owned=2)))) is None


def test_cli_reports_the_herd() -> None:
    from groupspec.cli import cli

    r = CliRunner().invoke(cli, ["check", "--protocol", "zookeeper", "--assignor", "range", "--members", "2",
                                 "--partitions", "2", "--faults", "join", "--budget", "1", "--json"])
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.output)
    assert doc["figures"]["watch notifications per membership change"]["by_group_size"] == {"1": [0], "2": [1]}
    r = CliRunner().invoke(cli, ["check", "--protocol", "zookeeper", "--assignor", "range", "--members", "2",
                                 "--partitions", "2", "--faults", "join", "--budget", "1"])
    assert "watch notifications per membership change" in r.output and "group of 2: 1" in r.output
