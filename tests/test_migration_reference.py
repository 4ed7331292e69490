"""The reference migration (reference/migration/mixed_group.py) driven from the reference classic coordinator.

The classic group is run by ``reference.classic.coordinator.GroupCoordinator`` with real JoinGroup/SyncGroup
requests; its snapshot is converted as Kafka converts it. The reference reproduces, independently of the
model, the first path of docs/migration.md: a follower that has not applied its SyncGroup answer still
owns a partition that the conversion treats as free.
"""
from __future__ import annotations

import pytest

from groupspec.reference.consumer import HeartbeatRequest as CGHeartbeat
from groupspec.reference.classic import (
    Assignment, Subscription, decode_assignment, encode_assignment, encode_subscription,
)
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator
from groupspec.reference.errors import Error
from groupspec.reference.classic import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest
from groupspec.reference.migration import MigrationRefused, MixedConsumerGroup
from groupspec.reference.sim import NetworkConfig
from groupspec.trace import check_trace, violations_of

G = "g"
TOPICS = {"t": 3}


def protocols(owned=()):
    return (("cooperative-sticky", encode_subscription(Subscription(topics=("t",), owned_partitions=tuple(owned)))),)


class Classic:
    """Drives the reference classic coordinator: one connection per member name."""

    def __init__(self):
        self.c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
        self.now = 0
        self.ids: dict[str, str] = {}
        self.answers: dict[str, object] = {}

    def _run(self, who, req):
        self.now += 1
        for out in self.c.handle(self.now, who, req):
            self.answers[out.destination] = out.response

    def join(self, who, owned=()):
        mid = self.ids.get(who, "")
        self._run(who, JoinGroupRequest(G, mid, "consumer", protocols(owned)))
        a = self.answers.get(who)
        if a is not None and a.error is Error.MEMBER_ID_REQUIRED:
            self.ids[who] = a.member_id
            self.answers.pop(who)
            self._run(who, JoinGroupRequest(G, a.member_id, "consumer", protocols(owned)))

    def sync(self, who, generation, assignments=()):
        self._run(who, SyncGroupRequest(G, self.ids[who], generation,
                                        tuple((self.ids[w], encode_assignment(Assignment(tuple(("t", p) for p in ps))))
                                              for w, ps in assignments)))


def stable_pair():
    """c1 (leader) owns t-0, c3 owns t-1 and t-2, generation 1, both synced."""
    k = Classic()
    k.join("c1")  # alone: its join phase completes at once
    k.join("c3")  # a new member: a new join phase, which completes when c1 rejoins
    k.join("c1")
    gen = k.answers["c1"].generation_id
    assert k.answers["c3"].generation_id == gen and k.answers["c1"].is_leader
    k.sync("c1", gen, [("c1", [0]), ("c3", [1, 2])])
    k.sync("c3", gen)
    assert k.c.group(G).status.name == "STABLE"
    return k, gen


def test_upgrade_from_a_stable_classic_group_keeps_generation_and_assignments():
    k, gen = stable_pair()
    mixed = MixedConsumerGroup.upgrade(k.c.group(G), TOPICS)
    view = mixed.owned_view()
    assert mixed.group.group_epoch == gen and mixed.group.assignment_epoch == gen
    assert view[k.ids["c3"]] == {"protocol": "classic", "state": "stable", "epoch": gen, "assigned": [("t", 1), ("t", 2)], "revoking": []}
    # a consumer-protocol member joins: group epoch + 1; it waits for partitions the classic members hold
    ans = mixed.consumer_heartbeat(CGHeartbeat("c4", 0, subscribed_topic_names=["t"]), now=10)
    assert ans.error is Error.NONE and ans.member_epoch == gen + 1
    # c3's heartbeat (generation = member epoch) is told to rejoin; its JoinGroup is answered at once
    assert mixed.heartbeat(HeartbeatRequest(G, k.ids["c3"], gen)).error is Error.REBALANCE_IN_PROGRESS
    j = mixed.join_group(JoinGroupRequest(G, k.ids["c3"], "consumer", protocols([("t", 1), ("t", 2)])))
    assert j.error is Error.NONE and j.leader == "" and j.generation_id == gen  # still revoking
    s = mixed.sync_group(SyncGroupRequest(G, k.ids["c3"], gen))
    kept = [p for _t, p in decode_assignment(s.assignment).partitions]
    assert s.error is Error.NONE and len(kept) == 1  # revokes one, then rejoins
    j = mixed.join_group(JoinGroupRequest(G, k.ids["c3"], "consumer", protocols([("t", kept[0])])))
    assert j.generation_id == gen + 1
    assert mixed.offset_commit(k.ids["c3"], gen, {("t", kept[0]): 5}) is Error.ILLEGAL_GENERATION
    assert mixed.offset_commit(k.ids["c3"], gen + 1, {("t", kept[0]): 5}) is Error.NONE


def test_upgrade_refused_while_a_member_has_no_assignment():
    """A member added in the current join phase stores empty bytes: GROUP_ID_NOT_FOUND."""
    k, _gen = stable_pair()
    k.join("c2")  # a new member: the classic group rebalances, c2 has no stored assignment
    with pytest.raises(MigrationRefused) as e:
        MixedConsumerGroup.upgrade(k.c.group(G), TOPICS)
    assert e.value.error is Error.GROUP_ID_NOT_FOUND


def test_upgrade_gives_away_a_partition_a_follower_still_owns():
    """docs/migration.md, path 1, on the reference: c2 joins, the leader (c1) syncs a cooperative round
    in which c3 must give t-2 up (withheld from everybody); before c3 has its SyncGroup answer, c4's
    first heartbeat converts the group, and t-2 is free for the consumer group: c4 (or c2) is given it."""
    k, gen = stable_pair()
    k.join("c2")
    k.join("c1", owned=[("t", 0)])
    k.join("c3", owned=[("t", 1), ("t", 2)])
    gen2 = k.answers["c1"].generation_id
    assert gen2 == gen + 1 and k.answers["c1"].is_leader
    # The leader's cooperative assignment: c3 keeps t-1; t-2 moves to c2 in a follow-up round.
    k.sync("c1", gen2, [("c1", [0]), ("c2", []), ("c3", [1])])
    view = k.c.group(G)
    assert view.status.name == "STABLE"  # c3 has not sent SyncGroup: it still owns t-2
    mixed = MixedConsumerGroup.upgrade(view, TOPICS)
    assert ("t", 2) not in mixed.group.holder
    mixed.consumer_heartbeat(CGHeartbeat("c4", 0, subscribed_topic_names=["t"]), now=10)
    j = mixed.join_group(JoinGroupRequest(G, k.ids["c2"], "consumer", protocols()))
    given = mixed.group.holder.get(("t", 2))
    assert given in ("c4", k.ids["c2"]), mixed.owned_view()
    assert j.error is Error.NONE
    # ... while c3, which has not processed its SyncGroup answer, still owns t-2 and commits it:
    assert mixed.offset_commit(k.ids["c3"], gen2, {("t", 2): 7}) is Error.NONE


def test_downgrade_when_the_last_consumer_member_leaves():
    k, gen = stable_pair()
    mixed = MixedConsumerGroup.upgrade(k.c.group(G), TOPICS)
    a = mixed.consumer_heartbeat(CGHeartbeat("c4", 0, subscribed_topic_names=["t"]), now=10)
    epoch = a.member_epoch
    mixed.consumer_heartbeat(CGHeartbeat("c4", -1), now=20)
    seed = mixed.downgraded
    assert seed is not None and seed.generation == epoch
    assert set(seed.assignments) == {k.ids["c1"], k.ids["c3"]}
    assert mixed.consumer_heartbeat(CGHeartbeat("c4", 0, subscribed_topic_names=["t"])).error is Error.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize("policy", ["downgrade", "disabled"])
def test_policy_without_upgrades_refuses(policy):
    k, _gen = stable_pair()
    with pytest.raises(MigrationRefused):
        MixedConsumerGroup.upgrade(k.c.group(G), TOPICS, policy=policy)


def _new_classic_member(mixed, who="c2"):
    """A classic member joining the converted group: its target includes partitions still held."""
    a = mixed.join_group(JoinGroupRequest(G, "", "consumer", protocols(), client_id=who))
    j = mixed.join_group(JoinGroupRequest(G, a.member_id, "consumer", protocols(), client_id=who))
    return a.member_id, j.generation_id


@pytest.mark.parametrize("faults", [frozenset(), frozenset({"sync_gives_target"})])
def test_sync_gives_target_mutant_hands_out_held_partitions(faults):
    k, _gen = stable_pair()
    mixed = MixedConsumerGroup.upgrade(k.c.group(G), TOPICS, faults=faults)
    c2, gen = _new_classic_member(mixed)
    got = set(decode_assignment(mixed.sync_group(SyncGroupRequest(G, c2, gen)).assignment).partitions)
    held = {tp for tp, holder in mixed.group.holder.items() if holder != c2}
    assert mixed.group.target[c2] & held  # its target waits for a release
    if faults:
        assert got & held
    else:
        assert not got & held and got == mixed.group.members[c2].assigned


@pytest.mark.parametrize("faults,expect", [(frozenset(), Error.REBALANCE_IN_PROGRESS),
                                           (frozenset({"no_rejoin_signal"}), Error.NONE)])
def test_no_rejoin_signal_mutant(faults, expect):
    k, gen = stable_pair()
    mixed = MixedConsumerGroup.upgrade(k.c.group(G), TOPICS, faults=faults)
    mixed.consumer_heartbeat(CGHeartbeat("c4", 0, subscribed_topic_names=["t"]), now=10)
    assert mixed.heartbeat(HeartbeatRequest(G, k.ids["c3"], gen)).error is expect


# ------------------------------------------------------------------ the simulator: groupspec simulate --protocol classic-to-consumer
def test_online_upgrade_scenario_holds_and_ends_as_a_consumer_group():
    from groupspec.reference.sim import run_migration_scenario

    r = run_migration_scenario("online-upgrade", 3, 6, seed=0)
    assert check_trace(r.trace) == [] and r.group_type == "consumer" and r.group_epoch == 8
    assert sorted(p for ps in r.assignment.values() for p in ps) == list(range(6))
    assert any("converts the classic group" in e for e in r.events)
    assert run_migration_scenario("online-upgrade", 3, 6, seed=0).events == r.events  # same seed, same run


def test_upgrade_mid_round_scenario_reproduces_kafkas_double_ownership():
    from groupspec.reference.sim import run_migration_scenario

    r = run_migration_scenario("upgrade-mid-round", 3, 6, seed=0)
    found = check_trace(r.trace)  # judged by the one trace checker on the simulation's trace
    assert [(v.check, v.ts_ms, v.members, v.partition) for v in found] == [
        ("exclusive_ownership", 12800, ("c2", "c4"), ("t", 4))]


def test_the_classic_members_are_the_reference_classic_client():
    """No second classic client: the classic members are ``classic.Consumer`` (their member events are the trace's
    classic lines), and its fault switches apply: a client that ignores what it owns is caught by the checker."""
    from groupspec.reference.classic import Consumer
    from groupspec.reference.sim import migration_sim, run_migration_scenario

    sim = migration_sim.MigrationSimulation(3, 6, seed=0)
    sim.pending = []
    sim.start_classic("c1")
    assert isinstance(sim.procs["c1"].consumer, Consumer)
    r = run_migration_scenario("online-upgrade", 3, 6, seed=0)
    classic_lines = [e for e in r.trace if e.get("protocol") == "cooperative"]
    assert {e["event"] for e in classic_lines} >= {"joined", "assigned", "commit", "left"}
    assert [v.check for v in violations_of(run_migration_scenario("upgrade-mid-round", 3, 6, seed=0).trace)] == [
        "exclusive_ownership"]
    mutant = violations_of(run_migration_scenario("upgrade-mid-round", 3, 6, seed=0, faults=frozenset({"ignore_owned"})).trace)
    assert ("exclusive_ownership", ("c2", "c1")) in {(v.check, v.members) for v in mutant}
    for faults in (frozenset(), frozenset({"same_round_transfer"})):
        assert violations_of(run_migration_scenario("online-upgrade", 3, 6, seed=0, faults=faults).trace) == []


def test_simulate_cli_classic_to_consumer():
    from click.testing import CliRunner

    from groupspec.cli import cli

    ok = CliRunner().invoke(cli, ["simulate", "online-upgrade", "--protocol", "classic-to-consumer"])
    assert ok.exit_code == 0 and "no violation" in ok.output
    kafka = CliRunner().invoke(cli, ["simulate", "upgrade-mid-round", "--protocol", "classic-to-consumer"])
    assert kafka.exit_code == 0 and "as in Kafka" in kafka.output
    from groupspec.cli._common import UserError

    bad = CliRunner().invoke(cli, ["simulate", "nope", "--protocol", "classic-to-consumer"])
    assert isinstance(bad.exception, UserError) and "unknown scenario 'nope'" in str(bad.exception)


@pytest.mark.parametrize("net", [NetworkConfig(1, 200), NetworkConfig(1, 50, loss=0.1),
                                 NetworkConfig(1, 200, duplicate=0.3, reorder=0.3)])
def test_the_network_is_a_parameter_of_the_migration_simulation(net):
    """Requests and answers through the seeded network, as in the classic and KIP-848 simulations: the same seed
    gives the same run, a different one from the step-answered run; the upgrade holds and ends as a consumer
    group. With delays only it also ends with every partition assigned; a lost or duplicated heartbeat answer can
    leave a KIP-848 member short of its assignment (the reference consumer does not send a full heartbeat after
    a failed one, as Kafka's client does), so there only safety is asserted."""
    from groupspec.reference.sim import run_migration_scenario

    for seed in (0, 1):
        r = run_migration_scenario("online-upgrade", 3, 6, seed=seed, network=net)
        assert violations_of(r.trace) == [] and r.group_type == "consumer"
        if not (net.loss or net.duplicate):
            assert sorted(p for ps in r.assignment.values() for p in ps) == list(range(6))
        assert run_migration_scenario("online-upgrade", 3, 6, seed=seed, network=net).trace == r.trace
        assert r.trace != run_migration_scenario("online-upgrade", 3, 6, seed=seed).trace


def test_the_trace_checker_still_catches_the_mutant_over_a_network():
    """Over the default network (1-5 ms) the story still reproduces Kafka's double ownership at seed 0, and the
    classic client that ignores what it owns adds double ownerships the correct client never has."""
    from groupspec.reference.sim import run_migration_scenario

    net = NetworkConfig()
    kafka = {(v.check, v.members) for v in violations_of(run_migration_scenario("upgrade-mid-round", 3, 6, seed=0, network=net).trace)}
    assert kafka == {("exclusive_ownership", ("c2", "c4"))}
    for seed in (1, 2):
        fine = violations_of(run_migration_scenario("upgrade-mid-round", 3, 6, seed=seed, network=net).trace)
        bad = violations_of(run_migration_scenario("upgrade-mid-round", 3, 6, seed=seed, network=net,
                                                   faults=frozenset({"ignore_owned"})).trace)
        assert fine == [] and "exclusive_ownership" in {v.check for v in bad}


def test_simulate_cli_takes_the_network_options_for_the_migration():
    from click.testing import CliRunner

    from groupspec.cli import cli

    out = CliRunner().invoke(cli, ["simulate", "online-upgrade", "--protocol", "classic-to-consumer", "--loss", "0.1",
                                   "--delay", "1-50"])
    assert out.exit_code == 0, out.output
    assert "network 1-50 ms, loss 0.1" in out.output and "--delay 1-50 --loss 0.1" in out.output
    assert "no violation" in out.output


@pytest.mark.parametrize("user_data, refused", [(None, False), (b"", False), (b"\x00\x01", True)])
def test_upgrade_refused_when_an_assignment_carries_user_data(user_data, refused):
    """Kafka 4.3.1's ConsumerGroup.fromClassicGroup refuses a group whose stored assignments carry userData ("userData
    from a custom assignor would be lost", GROUP_ID_NOT_FOUND): the real broker refused librdkafka's cooperative-sticky
    consumers that way (docs/findings.md, finding 10). Empty or absent userData converts as before."""
    k = Classic()
    k.join("c1")
    k.join("c3")
    k.join("c1")
    gen = k.answers["c1"].generation_id
    k._run("c1", SyncGroupRequest(G, k.ids["c1"], gen, (
        (k.ids["c1"], encode_assignment(Assignment((("t", 0), ("t", 1), ("t", 2)), user_data))),
        (k.ids["c3"], encode_assignment(Assignment(()))))))
    k.sync("c3", gen)
    assert k.c.group(G).status.name == "STABLE"
    if refused:
        with pytest.raises(MigrationRefused) as e:
            MixedConsumerGroup.upgrade(k.c.group(G), TOPICS)
        assert e.value.error is Error.GROUP_ID_NOT_FOUND and "userData" in str(e.value)
    else:
        mixed = MixedConsumerGroup.upgrade(k.c.group(G), TOPICS)
        assert mixed.group.members[k.ids["c1"]].assigned == {("t", 0), ("t", 1), ("t", 2)}
