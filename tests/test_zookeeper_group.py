"""The ZooKeeper-era group simulator (reference/history/zookeeper_group.py): the herd, claims, determinism."""
from __future__ import annotations

import pytest

from groupspec.reference.sim import ownership
from groupspec.reference.actor import Received, Send
from groupspec.reference.history import ZkConfig, ZkGroup, ZooKeeper
from groupspec.reference.sim import NetworkConfig


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


def _split_brain(lag: int) -> ZkGroup:
    """c4's ZooKeeper server lags ``lag`` ms; c5 and c6 join a second apart (the Learn chapter's story)."""
    g = ZkGroup(ZkConfig(seed=0, partitions=8, lagging=(("c4", lag),) if lag else ()))
    for i, t in enumerate((0, 700, 1400, 2100)):
        g.at(t, "start", f"c{i + 1}")
    g.at(20_000, "start", "c5")
    g.at(21_000, "start", "c6")
    g.run_until(40_000)
    return g


def test_a_lagging_server_makes_a_consumer_act_on_a_stale_view() -> None:
    g = _split_brain(3000)
    stale = [(t, who, view) for t, who, view, _share, _ok in g.attempts if view != g.view_at(t)]
    assert stale and {who for _t, who, _v in stale} == {"c4"}
    t, _who, view = stale[0]
    assert "c6" not in view and "c6" in g.view_at(t)  # it splits over a member list without c6
    # ... while another consumer picked one of the same partitions from the current view: its claim failed
    share4 = next(s for tt, w, _v, s, _ok in g.attempts if tt == t and w == "c4")
    assert any(who != "c4" and p in share4 and holder == "c4" for _t, who, p, holder, _v in g.claims)
    own = ownership(g.trace, 0, 40_000)
    assert own.double_owned == []  # owner nodes stay exclusive: the split brain is in the claims
    assert all(len(o) == 1 for o in own.final_owners.values())  # and it settles once c4 catches up


def test_without_the_lag_nobody_acts_on_a_stale_view() -> None:
    g = _split_brain(0)
    assert all(view == g.view_at(t) for t, _w, view, _s, _ok in g.attempts)
    assert g.failed_claims < _split_brain(3000).failed_claims


def _herd_run(config: ZkConfig) -> ZkGroup:
    g = ZkGroup(config)
    for i, t in enumerate((0, 700, 1400)):
        g.at(t, "start", f"c{i + 1}")
    g.at(20_000, "start", "c4")
    g.at(30_000, "crash", "c2")
    g.at(45_000, "close", "c1")
    g.run_until(70_000)
    return g


def test_its_traces_pass_the_trace_checker() -> None:
    from groupspec.trace import check_events

    g = _herd_run(ZkConfig(seed=3, partitions=8))
    r = check_events(g.trace, source="zookeeper")
    assert r.ok, r.to_dict()
    assert {e["event"] for e in g.trace} >= {"joined", "assigned", "revoked", "left"}


def test_the_trace_checker_catches_an_ensemble_that_lets_two_consumers_create_one_owner_node(monkeypatch) -> None:
    """A broken ZooKeeper: a create never fails (the owner nodes are not exclusive): two consumers that pick
    one partition from different views both own it, and the trace checker says so."""
    from groupspec.reference.history import zookeeper_group
    from groupspec.trace import check_events

    real = ZooKeeper.handle

    def handle(self, now_ms, event):
        if isinstance(event, Received) and isinstance(event.message, zookeeper_group.Create):
            for p in event.message.share:
                self.owners[p] = event.sender.name
            return [Send(event.sender, zookeeper_group.Created(()))]
        return real(self, now_ms, event)

    monkeypatch.setattr(ZooKeeper, "handle", handle)
    g = _split_brain(3000)
    r = check_events(g.trace, source="zookeeper-broken")
    assert not r.ok and "exclusive_ownership" in str(r.to_dict())


def test_the_network_is_a_parameter_of_the_run() -> None:
    """The watch notifications go over ``network.py``'s network when one is given: a lossy one loses some (the
    consumers that miss one rebalance less); the same seed replays the same run."""
    base = _herd_run(ZkConfig(seed=1, partitions=8))
    lossy = _herd_run(ZkConfig(seed=1, partitions=8, network=NetworkConfig(1, 50, loss=0.5)))
    assert lossy.notifications == base.notifications  # ZooKeeper sent as many ...
    assert len(lossy.notified) < len(base.notified)  # ... fewer arrived
    again = _herd_run(ZkConfig(seed=1, partitions=8, network=NetworkConfig(1, 50, loss=0.5)))
    assert again.trace == lossy.trace and again.attempts == lossy.attempts
