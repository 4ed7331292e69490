"""The deterministic simulator and its scenarios: determinism, the cooperative two-round story,
eager stop-the-world, the two-bounce upgrade, fault injection, and mutants caught."""
from __future__ import annotations

import random
from typing import Any

import pytest

from groupspec.reference.sim import Network, NetworkConfig, ScenarioOptions, member_config, run_scenario
from groupspec.reference.sim import SimConfig, Simulator, dumps_jsonl, ownership, read_trace, write_trace
from groupspec.trace import check_events

import os

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"

ALL = {("t", p) for p in range(6)}
NOISY = NetworkConfig(1, 20, 0.0, 0.05, 0.1)


def _window(trace: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    return [e for e in trace if e["ts_ms"] >= start and e["event"] in ("assigned", "revoked", "lost")]


def _parts(e: dict[str, Any]) -> set[tuple[str, int]]:
    return {(t, p) for t, p in e["partitions"]}


# ------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("net", [NetworkConfig(), NetworkConfig(1, 30, 0.02, 0.05, 0.1)])
def test_same_seed_same_bytes(net: NetworkConfig) -> None:
    runs = []
    for _ in range(2):
        r = run_scenario("rolling-restart", ScenarioOptions(protocol="cooperative", seed=7, network=net, failover_at_ms=30000))
        runs.append((dumps_jsonl(r.sim.trace), dumps_jsonl(r.sim.transcript()), r.timeline, r.totals))
    assert runs[0] == runs[1]


def test_different_seed_changes_a_jittery_run() -> None:
    a = run_scenario("new-consumer-joins", ScenarioOptions(seed=1, network=NetworkConfig(1, 30)))
    b = run_scenario("new-consumer-joins", ScenarioOptions(seed=2, network=NetworkConfig(1, 30)))
    assert dumps_jsonl(a.sim.trace) != dumps_jsonl(b.sim.trace)


def test_step_api_and_snapshot_each_step() -> None:
    sim = Simulator(SimConfig(seed=3))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, "cooperative", None))
    records = sim.run_until(10000)
    assert records and all(a.time_ms <= b.time_ms for a, b in zip(records, records[1:]))
    assert sim.now == 10000
    snap = sim.snapshot()
    assert snap["group"]["state"] == "Stable" and snap["group"]["generation"] == 1
    owned = [tuple(tp) for m in snap["members"].values() for tp in m["owned"]]
    assert sorted(owned) == sorted(ALL)
    # every step's trace lines are exactly the new tail of the trace
    assert sum(len(r.trace) for r in records) == len(sim.trace) - 1  # minus the initial topic line
    rec = sim.step()
    assert rec is not None and rec.time_ms > 10000


def test_group_outline_is_what_the_group_view_says() -> None:
    # the simulator's group log reads the coordinator's outline of the group; after every step of a run with joins,
    # a crash, a close and a failover, every broker's outline is the status, generation, protocol, leader and member
    # ids of its full view
    sim = Simulator(SimConfig(seed=5))
    for i, n in enumerate(("c3", "c1", "c2")):  # joined out of name order: the members' order is the group's
        sim.at(i * 700, "start", n, config=member_config(n, "eager", None))
    sim.at(12000, "crash", "c1")
    sim.at(20000, "failover", None)
    sim.at(30000, "close", "c3")
    outlines = set()
    while sim.now < 60000 and sim.step() is not None:
        for b in sim.brokers.values():
            view, outline = b.group(sim.config.group_id), b.group_outline(sim.config.group_id)
            assert outline == (None if view is None else
                               (view.status, view.generation, view.protocol_name, view.leader, view.member_ids))
            outlines.add(outline)
    assert len(outlines) >= 6 and None in outlines  # many group states seen, and a broker without the group


def test_unknown_action_rejected() -> None:
    with pytest.raises(ValueError, match="unknown simulator action"):
        Simulator().at(0, "explode")


# ------------------------------------------------------------------------- new-consumer-joins


def test_cooperative_join_takes_two_rounds_and_pauses_only_moved_partitions() -> None:
    r = run_scenario("new-consumer-joins", ScenarioOptions(protocol="cooperative"))
    before = [e for e in r.sim.trace if e["event"] == "assigned" and e["ts_ms"] < 20000]
    owned_before = {e["member"]: _parts(e) for e in before}
    assert {m: len(p) for m, p in owned_before.items()} == {"c1": 3, "c2": 3}
    evs = _window(r.sim.trace, 20000)
    revoked = [e for e in evs if e["event"] == "revoked"]
    # round 1: one partition revoked from each of c1 and c2, nothing handed out yet
    assert sorted(e["member"] for e in revoked) == ["c1", "c2"]
    assert all(len(e["partitions"]) == 1 for e in revoked)
    gen1 = revoked[0]["generation"]
    assert all(e["generation"] == gen1 for e in revoked)
    moved = set().union(*(_parts(e) for e in revoked))
    assert not any(_parts(e) for e in evs if e["event"] == "assigned" and e["generation"] == gen1)
    # round 2: both go to c3
    c3 = [e for e in evs if e["member"] == "c3" and e["event"] == "assigned" and e["partitions"]]
    assert len(c3) == 1 and _parts(c3[0]) == moved and c3[0]["generation"] == gen1 + 1
    # the other partitions were never paused
    for tp, ms in r.ownership.unowned_ms.items():
        assert (ms > 0) == (tp in moved), tp
    assert r.totals["rebalances"] == 2 and r.totals["partitions_revoked"] == 2 and r.totals["partitions_paused"] == 2
    assert r.totals["double_owned_instants"] == 0


def test_eager_join_revokes_every_partition() -> None:
    e = run_scenario("new-consumer-joins", ScenarioOptions(protocol="eager"))
    c = run_scenario("new-consumer-joins", ScenarioOptions(protocol="cooperative"))
    revoked = set().union(*(_parts(x) for x in _window(e.sim.trace, 20000) if x["event"] == "revoked"))
    assert revoked == ALL
    assert e.totals["partitions_revoked"] == 6 and e.totals["partitions_paused"] == 6
    assert c.totals["partitions_revoked"] < e.totals["partitions_revoked"]
    assert c.totals["partitions_paused"] < e.totals["partitions_paused"]
    assert e.totals["rebalances"] == 1


def test_stop_the_world_waits_for_the_paused_member() -> None:
    e = run_scenario("eager-stop-the-world", ScenarioOptions())
    c = run_scenario("eager-stop-the-world", ScenarioOptions(protocol="cooperative"))
    assert e.totals["partitions_paused"] == 6
    # the eager group cannot finish before c1 wakes up (19.5 s + 8 s): the others wait with nothing
    first_new = min(x["ts_ms"] for x in _window(e.sim.trace, 20000) if x["event"] == "assigned")
    assert first_new >= 27500
    assert c.totals["partition_seconds_without_owner"] < e.totals["partition_seconds_without_owner"]


# ------------------------------------------------------------------------- other scenarios


def test_static_restart_within_session_timeout_causes_no_rebalance() -> None:
    r = run_scenario("static-member-restart", ScenarioOptions())
    assert r.totals["rebalances"] == 0 and r.totals["partitions_moved"] == 0
    assert r.totals["partitions_revoked"] == 0
    # the restarted member gets its old partitions back, in the same generation
    c3 = [e for e in r.sim.trace if e.get("member") == "c3" and e["event"] == "assigned"]
    assert _parts(c3[-1]) == _parts(c3[0]) and c3[-1]["generation"] == c3[0]["generation"]
    assert c3[-1]["member_id"] != c3[0]["member_id"] and c3[-1]["instance_id"] == "c3-instance"


def test_dynamic_bounce_rebalances_twice_static_not_at_all() -> None:
    d = run_scenario("consumer-bounces", ScenarioOptions(protocol="eager"))
    s = run_scenario("consumer-bounces", ScenarioOptions(protocol="static"))
    assert d.totals["rebalances"] == 2
    assert s.totals["rebalances"] == 0


def test_leaving_member_partitions_are_reassigned() -> None:
    for protocol in ("eager", "cooperative", "static"):
        r = run_scenario("consumer-leaves-permanently", ScenarioOptions(protocol=protocol))
        owners = r.ownership.final_owners
        assert all(len(v) == 1 and v[0] in ("c1", "c2") for v in owners.values()), (protocol, owners)


@pytest.mark.parametrize("seed", range(4))
def test_upgrade_never_gives_a_partition_to_two_members(seed: int) -> None:
    net = NOISY if seed % 2 else NetworkConfig()
    r = run_scenario("upgrade-eager-to-cooperative", ScenarioOptions(seed=seed, network=net))
    assert r.ownership.double_owned == []
    assert all(len(v) == 1 for v in r.ownership.final_owners.values())
    protocols = [g["protocol"] for g in r.generations]
    assert protocols[0] == "range" and protocols[-1] == "cooperative-sticky"
    last = {e["member"]: e["protocol"] for e in r.sim.trace if e["event"] == "assigned"}
    assert set(last.values()) == {"cooperative"}


def test_rolling_restart_converges_for_every_protocol() -> None:
    for protocol in ("eager", "cooperative", "static"):
        r = run_scenario("rolling-restart", ScenarioOptions(protocol=protocol, seed=5))
        assert r.ownership.double_owned == []
        assert sorted(len(v) for v in r.ownership.final_owners.values()) == [1] * 6


# ------------------------------------------------------------------------- mutants


def _any_seed(scenario: str, protocol: str | None, fault: str, check: Any, seeds: int = 5) -> bool:
    return any(
        check(run_scenario(scenario, ScenarioOptions(protocol=protocol, seed=s, faults=frozenset({fault}))))
        for s in range(seeds)
    )


def _double(r: Any) -> bool:
    return bool(r.ownership.double_owned)


@pytest.mark.parametrize(
    "scenario, protocol, fault",
    [
        ("new-consumer-joins", "cooperative", "same_round_transfer"),
        ("new-consumer-joins", "eager", "skip_revoke_before_join"),
        ("new-consumer-joins", "cooperative", "ignore_owned"),
    ],
)
def test_mutants_give_a_partition_to_two_members(scenario: str, protocol: str, fault: str) -> None:
    assert _any_seed(scenario, protocol, fault, _double)
    # and the unmutated run with the same seeds never does
    assert not any(_double(run_scenario(scenario, ScenarioOptions(protocol=protocol, seed=s))) for s in range(5))


def test_mutant_no_rejoin_after_revoke_leaves_partitions_unowned() -> None:
    r = run_scenario("new-consumer-joins", ScenarioOptions(protocol="cooperative", faults=frozenset({"no_rejoin_after_revoke"})))
    assert sum(1 for v in r.ownership.final_owners.values() if not v) == 2


# ------------------------------------------------------------------------- fault injection


def _random_run(seed: int) -> tuple[Simulator, int]:
    r = random.Random(seed)
    protocol = r.choice(["eager", "cooperative", "static"])
    net = NetworkConfig(1, r.choice([5, 50]), r.choice([0.0, 0.01, 0.05]), 0.0, 0.0)
    sim = Simulator(SimConfig(seed=seed, network=net))
    names = ["c1", "c2", "c3", "c4"]
    for i, n in enumerate(names):
        sim.at(i * 500, "start", n, config=member_config(n, protocol, None))
    t = 10000
    for _ in range(6):
        t += r.randint(1000, 8000)
        act = r.choice(["close", "crash", "restart", "pause", "failover", "store_fails", "start"])
        n = r.choice(names)
        if act == "pause":
            sim.at(t, "pause", n, duration_ms=r.choice([2000, 15000]))
        elif act in ("failover", "store_fails"):
            sim.at(t, act)
        else:
            sim.at(t, act, n, **({"config": member_config(n, protocol, None)} if act == "start" else {}))
    sim.at(t + 20000, "network", config=NetworkConfig())
    for n in names:
        sim.at(t + 20000, "start", n, config=member_config(n, protocol, None))
    end = t + 200000
    sim.run_quietly_until(end)
    return sim, end


@pytest.mark.parametrize("seed", range(40 if DEEP else 12))
def test_random_faults_converge_after_the_network_heals(seed: int) -> None:
    """Crashes, restarts, GC pauses, coordinator failover, failed writes, lossy network: once the
    faults stop, every partition has exactly one live owner and every member is STABLE; any
    instant of double ownership involved a member that was then fenced (a zombie)."""
    sim, end = _random_run(seed)
    snap = sim.snapshot()
    live = {n: m for n, m in snap["members"].items() if m["alive"] and m["fatal"] is None}
    assert all(m["state"] == "STABLE" and not m["rejoin_needed"] for m in live.values()), snap["members"]
    own = ownership(sim.trace, 0, end)
    assert all(len(v) == 1 and v[0] in live for v in own.final_owners.values()), own.final_owners
    assert check_events(sim.trace).to_dict()["groups"][0]["properties"][0]["verdict"] == "held", own.double_owned
    assert snap["group"]["state"] == "Stable"


def test_failover_during_rebalance_is_survived() -> None:
    r = run_scenario("new-consumer-joins", ScenarioOptions(protocol="cooperative", failover_at_ms=20300))
    assert any(g["at"] >= 20300 for g in r.generations)
    assert all(len(v) == 1 for v in r.ownership.final_owners.values())
    assert any("failover" in text for _, text in r.timeline)
    nodes = {line["node"] for line in r.sim.transcript()}
    assert nodes == {1, 2}


def test_long_gc_pause_gets_member_fenced_and_partitions_lost() -> None:
    sim = Simulator(SimConfig(seed=1))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, "cooperative", None))
    sim.at(15000, "pause", "c2", duration_ms=20000)
    sim.run_quietly_until(60000)
    c2 = [e for e in sim.trace if e.get("member") == "c2" and e["ts_ms"] >= 15000]
    kinds = [e["event"] for e in c2 if e["event"] != "commit"]
    assert kinds[:2] == ["fenced", "lost"], kinds
    assert all(len(v) == 1 for v in ownership(sim.trace, 0, 60000).final_owners.values())


def test_metadata_write_failure_is_retried() -> None:
    sim = Simulator(SimConfig(seed=2))
    sim.at(0, "store_fails", error="NOT_ENOUGH_REPLICAS")
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, "eager", None))
    sim.run_quietly_until(30000)
    assert sim.snapshot()["group"]["generation"] >= 2
    assert all(len(v) == 1 for v in ownership(sim.trace, 0, 30000).final_owners.values())


# ------------------------------------------------------------------------- trace files


def test_trace_lines_follow_the_contract(tmp_path: Any) -> None:
    r = run_scenario("static-member-restart", ScenarioOptions(seed=4))
    for e in r.sim.trace:
        assert isinstance(e["ts_ms"], int) and "event" in e
        if e["event"] == "topic":
            assert e["topic"] == "t" and e["partitions"] == 6
            continue
        assert e["member"] in {"c1", "c2", "c3"} and e["group"] == "g"
        assert e["event"] in {"joined", "assigned", "revoked", "lost", "left", "fenced", "commit"}
        assert e["protocol"] in ("eager", "cooperative")
        assert e["instance_id"] == f"{e['member']}-instance"
        if e["event"] == "commit":
            assert isinstance(e["accepted"], bool) and all(len(p) == 3 for p in e["partitions"])
    for name in ("t.jsonl", "t.jsonl.gz"):
        write_trace(tmp_path / name, r.sim.trace)
        assert read_trace(tmp_path / name) == r.sim.trace
    assert (tmp_path / "t.jsonl").read_text() == dumps_jsonl(r.sim.trace)


@pytest.mark.parametrize(
    "scenario, protocol, fault, failover",
    [
        ("consumer-leaves-permanently", "cooperative", "heartbeat_none_in_prepare", None),
        ("rolling-restart", "static", "lose_assignment_on_failover", 30000),
    ],
)
def test_coordinator_mutants_are_caught(scenario: str, protocol: str, fault: str, failover: int | None) -> None:
    """Partitions left without an owner, or a member that fails (e.g. an empty assignment is an
    IllegalStateException in the client)."""

    def broken(faults: frozenset[str]) -> bool:
        r = run_scenario(scenario, ScenarioOptions(protocol=protocol, faults=faults, failover_at_ms=failover))
        fatal = any(p.consumer.fatal for p in r.sim.procs.values())
        return fatal or any(len(v) != 1 for v in r.ownership.final_owners.values())

    assert broken(frozenset({fault}))
    assert not broken(frozenset())


# ------------------------------------------------------------------------- the network model


def test_network_fifo_per_connection_without_reorder() -> None:
    net = Network(NetworkConfig(1, 50), random.Random(0))
    times = [net.send(i, "a", "b", 0, i, i, False)[0].deliver_at for i in range(200)]
    assert times == sorted(times) and len(set(times)) > 1


def test_network_loss_duplicate_reorder_rates() -> None:
    net = Network(NetworkConfig(1, 50, loss=0.2, duplicate=0.3, reorder=0.5), random.Random(1))
    copies = [net.send(i, "a", "b", 0, i, i, False) for i in range(4000)]
    assert 600 < net.lost < 1000 and sum(1 for c in copies if not c) == net.lost
    assert 800 < net.duplicated < 1200 and sum(1 for c in copies if len(c) == 2) == net.duplicated
    assert all(c[1].copy == 1 for c in copies if len(c) == 2)
    order = [e.deliver_at for c in copies for e in c[:1]]
    assert order != sorted(order) and net.reordered > 0


def test_network_config_validated() -> None:
    with pytest.raises(ValueError, match="delay range"):
        NetworkConfig(5, 1)
    with pytest.raises(ValueError, match="duplicate probability"):
        NetworkConfig(duplicate=-0.1)


def test_stale_connection_replies_are_dropped() -> None:
    # the coordinator moves while requests are parked: their answers travel on connections the
    # members have already dropped
    opts = ScenarioOptions(protocol="eager", seed=3, failover_at_ms=20300, network=NetworkConfig(5, 40))
    r = run_scenario("new-consumer-joins", opts)
    assert r.sim.network.dropped_stale >= 1
    assert all(len(v) == 1 for v in r.ownership.final_owners.values())


def _exclusive_held(trace) -> bool:
    props = check_events(trace).to_dict()["groups"][0]["properties"]
    return next(p for p in props if p["id"] == "exclusive_ownership")["verdict"] == "held"


def test_zombie_explanation_rejects_a_mutant_overlap() -> None:
    """The trace checker accepts the GC-pause zombie's overlap but not one made by a broken member."""
    sim = Simulator(SimConfig(seed=1))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, "eager", None))
    sim.at(15000, "pause", "c2", duration_ms=20000)
    sim.run_quietly_until(60000)
    zombie = ownership(sim.trace, 0, 60000)
    assert zombie.double_owned and _exclusive_held(sim.trace)
    for seed in range(5):
        r = run_scenario("new-consumer-joins", ScenarioOptions(protocol="eager", seed=seed,
                                                               faults=frozenset({"skip_revoke_before_join"})))
        if r.ownership.double_owned:
            assert not _exclusive_held(r.sim.trace)
            break
    else:
        raise AssertionError("the mutant never produced an overlap")


def test_transcript_names_members_and_decodes_assignments() -> None:
    r = run_scenario("consumer-bounces", ScenarioOptions())
    lines = [x for x in r.sim.transcript() if "to" in x]
    first_leader = next(x for x in lines if x["request"] == "JoinGroup" and x["error"] == "NONE" and x["members"])
    assert first_leader["leader"] == "c1" and first_leader["members"] == ["c1", "c2", "c3"]
    syncs = [x for x in lines if x["request"] == "SyncGroup" and x["error"] == "NONE"]
    assert {tuple(map(tuple, x["assignment"])) for x in syncs[:3]} == {(("t", 0), ("t", 1)), (("t", 2), ("t", 3)), (("t", 4), ("t", 5))}
    leave = next(x for x in lines if x["request"] == "LeaveGroup")
    assert leave["to"] == "c3" and leave["members"] == [{"member": "c3", "error": "NONE"}]
    names = r.sim.snapshot()["group"]["names"]
    assert sorted(names.values()) == ["c1", "c2", "c3"]


@pytest.mark.deep
@pytest.mark.parametrize("protocol", ["eager", "cooperative", "static"])
def test_deep_every_scenario_many_seeds(protocol: str) -> None:
    """Every scenario, 20 seeds, a jittery reordering network: no partition ever has two owners
    (no member is paused past its session timeout here, so there are no zombies) and every run ends
    with each partition owned exactly once."""
    from groupspec.reference.sim import SCENARIOS

    for name, sc in SCENARIOS.items():
        if sc.finding or sc.default_protocol == "connect":
            continue  # Kafka's own overlaps (tests/test_fidelity_scenarios.py); Connect workers run only `connect`
        for seed in range(20):
            opts = ScenarioOptions(protocol=protocol, seed=seed, network=NetworkConfig(1, 30, 0.0, 0.0, 0.1))
            r = run_scenario(name, opts)
            assert r.ownership.double_owned == [], (name, seed)
            assert all(len(v) == 1 for v in r.ownership.final_owners.values()), (name, seed)


def test_partitions_added_leader_rebalances() -> None:
    """ConsumerCoordinator.rejoinNeededOrPending: the leader's assignment snapshot no longer matches
    the metadata, so it rejoins; the new partitions get owners; cooperative revokes nothing."""
    for protocol, revoked in (("cooperative", 0), ("eager", 6)):
        r = run_scenario("partitions-added", ScenarioOptions(protocol=protocol))
        assert len(r.ownership.final_owners) == 9
        assert all(len(v) == 1 for v in r.ownership.final_owners.values())
        assert r.totals["partitions_revoked"] == revoked and r.totals["rebalances"] == 1
        assert {"ts_ms": 20000, "group": "g", "event": "topic", "topic": "t", "partitions": 9} in r.sim.trace


def test_every_message_duplicated_still_converges_for_dynamic_members() -> None:
    """Regression: replies are matched to their own request (sender identity carries the
    correlation id), so a duplicated JoinGroup parked twice does not steal a later answer."""
    for protocol in ("eager", "cooperative"):
        r = run_scenario("rolling-restart", ScenarioOptions(protocol=protocol, network=NetworkConfig(1, 20, 0.0, 1.0)))
        assert r.sim.network.duplicated > 100
        assert r.ownership.double_owned == []
        assert sorted(len(v) for v in r.ownership.final_owners.values()) == [1] * 6


@pytest.mark.parametrize("protocol", ["cooperative", "static"])
def test_poll_timeout_dynamic_member_leaves_static_member_does_not(protocol: str) -> None:
    """§5.8: the application does not poll for longer than max.poll.interval.ms (60 s) while its
    heartbeat thread runs. Dynamic: LeaveGroup, the others take its partitions, and on the next
    poll it reports them lost and rejoins. Static: no LeaveGroup, it rejoins with its instance id."""
    sim = Simulator(SimConfig(seed=2))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, protocol, None))
    sim.at(10000, "stall", "c2", duration_ms=70000)
    sim.run_quietly_until(100000)
    leaves = [x for x in sim.transcript() if x.get("from") == "c2" and x["request"] == "LeaveGroup"]
    c2 = [e for e in sim.trace if e.get("member") == "c2" and e["event"] in ("lost", "revoked", "assigned")]
    c1 = [e for e in sim.trace if e.get("member") == "c1" and e["event"] == "assigned" and 69500 < e["ts_ms"] < 80000]
    if protocol == "cooperative":
        assert len(leaves) == 1 and 69500 <= leaves[0]["at"] <= 71000  # last poll + 60 s
        assert c1 and len(c1[-1]["partitions"]) == 3  # c1 took everything while c2 was out
    else:
        assert leaves == []
    lost = [e for e in c2 if e["event"] == "lost"]
    assert lost and lost[0]["ts_ms"] >= 80000  # reported at the first poll after the stall
    assert all(len(v) == 1 for v in ownership(sim.trace, 0, 100000).final_owners.values())


@pytest.mark.parametrize("lookup", ["heartbeat thread", "poll only"])
def test_busy_member_finds_a_moved_coordinator_from_its_heartbeat_thread(lookup: str, monkeypatch: Any) -> None:
    """Kafka's heartbeat thread looks the coordinator up itself (``HeartbeatThread.run``:
    ``lookupCoordinator``): c2's application thread is busy for 40 s (no poll, under its 60 s poll timeout)
    when the coordinator moves; its heartbeats are refused NOT_COORDINATOR, it finds the new coordinator
    and keeps its session, so the group never drops it. With the lookup left to poll (this reference before
    connect-keep-work's ``--hypothesis-seed=58``) its session expires and c1 takes its partitions."""
    from groupspec.reference.classic import Consumer

    if lookup == "poll only":
        monkeypatch.setattr(Consumer, "_heartbeat_lookup_ms", lambda self: 10**12)
    sim = Simulator(SimConfig(seed=2))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=member_config(n, "cooperative", None))
    sim.at(10000, "stall", "c2", duration_ms=40000)
    sim.at(11000, "failover", None)
    sim.run_quietly_until(45000)
    c2 = sim.procs["c2"].consumer
    finds = [x for x in sim.transcript() if x.get("from") == "c2" and x["request"] == "FindCoordinator"
             and 11000 < x["at"] < 45000]
    members = {m.member_id for m in sim.brokers[sim.leader]._groups["g"].members.values()}
    if lookup == "heartbeat thread":
        assert finds and c2.coordinator_node == sim.leader
        assert c2.member_id in members and len(c2.owned) > 0
    else:
        assert not finds and c2.member_id not in members  # expired while its poll loop was busy


# ------------------------------------------------------------------------- application calls


def _two_topic_group(protocol: str) -> Simulator:
    from dataclasses import replace as _replace

    sim = Simulator(SimConfig(seed=3, topics=(("t", 3), ("u", 3))))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=_replace(member_config(n, protocol, None), topics=("t", "u")))
    return sim


@pytest.mark.parametrize("protocol", ["eager", "cooperative"])
def test_subscription_change_rebalances_and_moves_the_dropped_topic(protocol: str) -> None:
    sim = _two_topic_group(protocol)
    sim.at(20000, "subscribe", "c1", topics=("t",))
    sim.run_quietly_until(60000)
    late = [e for e in sim.trace if e["ts_ms"] >= 20000 and e.get("member") == "c1"]
    revoked = set().union(set(), *(_parts(e) for e in late if e["event"] == "revoked"))
    if protocol == "cooperative":
        # only the partitions of the dropped topic are given up
        assert revoked and all(t == "u" for t, _p in revoked), revoked
    else:
        assert any(t == "t" for t, _p in revoked)
    owners = ownership(sim.trace, 0, 60000).final_owners
    assert {tp for tp, who in owners.items() if "c1" in who} <= {("t", p) for p in range(3)}
    assert {("u", p) for p in range(3)} <= {tp for tp, who in owners.items() if who == {"c2"} or who == ["c2"] or "c2" in who}
    assert all(len(v) == 1 for v in owners.values())
    assert sim.procs["c1"].consumer.joined_topics == ("t",)


def test_subscription_unchanged_does_not_rebalance() -> None:
    sim = _two_topic_group("cooperative")
    sim.run_quietly_until(20000)
    gen = sim.procs["c1"].consumer.generation.generation_id
    sim.at(20000, "subscribe", "c1", topics=("u", "t"))  # the same topics, another order
    sim.run_quietly_until(40000)
    assert sim.procs["c1"].consumer.generation.generation_id == gen


@pytest.mark.parametrize("faults", [frozenset(), frozenset({"accept_stale_commit"})])
def test_commit_after_a_missed_rebalance_is_fenced_by_generation(faults: frozenset[str]) -> None:
    """A static member pauses past the rebalance timeout while the group rebalances without it (it is
    kept: static members are not removed for missing a rebalance) and commits as it resumes: its
    generation is stale, so the commit is refused with ILLEGAL_GENERATION - unless the coordinator's
    generation check is switched off (the ``accept_stale_commit`` mutant)."""
    from dataclasses import replace as _replace

    def cfg(n: str) -> Any:  # rebalance timeout (6 s) below the session timeout (10 s)
        return _replace(member_config(n, "static", None), max_poll_interval_ms=6000, heartbeat_interval_ms=1000)

    sim = Simulator(SimConfig(seed=5, coordinator_faults=faults))
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 100, "start", n, config=cfg(n))
    sim.run_quietly_until(20000)
    sim.at(20000, "pause", "c1", duration_ms=8000)  # past the rebalance timeout, within the session timeout
    sim.at(20000, "commit", "c1")  # the application's commitAsync, made as the pause ends
    sim.at(20000, "start", "c3", config=cfg("c3"))
    sim.run_quietly_until(40000)
    # the answer to the commit sent at 28 s with generation 1 (the group is at 2 by then); the
    # member's own onJoinPrepare commit, made after it noticed, fails locally (CommitFailedException)
    c1 = [e for e in sim.trace if e.get("member") == "c1" and e["event"] == "commit" and e["ts_ms"] >= 28000
          and e.get("error") != "CommitFailedException"]
    assert c1, [e for e in sim.trace if e.get("member") == "c1"][-5:]
    first = c1[0]
    assert sim.procs["c2"].consumer.generation.generation_id >= 2
    if faults:
        assert first["accepted"] is True
    else:
        assert first["accepted"] is False and first["error"] == "ILLEGAL_GENERATION"


def test_one_clock_runs_fixed_step_simulations_in_order():
    """The one clock (reference/sim/virtual_clock.py) as the KIP-848 and migration simulations use it: at each
    step time the scenario's events due then, in their order, then the step; events at other times never run;
    the clock ends one step past the last step."""
    from groupspec.reference.sim import VirtualClock

    class Steps(VirtualClock):
        def __init__(self) -> None:
            self._reset_clock()
            self.seen: list[tuple[int, str]] = []

        def step(self) -> None:
            self.seen.append((self.now, "step"))

    s = Steps()
    events = {0: [lambda: s.seen.append((s.now, "a")), lambda: s.seen.append((s.now, "b"))],
              200: [lambda: s.seen.append((s.now, "c"))], 150: [lambda: s.seen.append((s.now, "never"))],
              900: [lambda: s.seen.append((s.now, "after the end"))]}
    s.run_in_steps(300, events, 100)
    assert s.seen == [(0, "a"), (0, "b"), (0, "step"), (100, "step"), (200, "c"), (200, "step"), (300, "step")]
    assert s.now == 400 and not s.pending()
