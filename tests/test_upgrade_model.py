"""The protocol vote and the eager -> cooperative upgrade (model/upgrade.py), with its broken variants."""
from __future__ import annotations

import pytest

from groupspec.checker import check
from groupspec.checker.engines import make_explorer
from groupspec.model import Config, make
from groupspec.model.core import GroupStatus as GS, Proc
from groupspec.model.properties import exclusive_ownership
from groupspec.model.upgrade import BOTH, NEW, OLD, Bounce, EagerToCooperative, cooperative_assignor, upgraded


def _proto(members: int = 2, partitions: int = 2, name: str = "eager-to-cooperative") -> EagerToCooperative:
    return make(name, Config(members=members, partitions=partitions, assignor="range"))


def _settle(proto, s, limit: int = 200):
    """Take the first enabled protocol step until the group converges (a fair scheduler of one run)."""
    for _ in range(limit):
        if proto.converged(s):
            return s
        step = next((a, t) for a, t in proto.successors(s) if type(a).fair)
        s = step[1]
        assert exclusive_ownership(proto, s) is None and cooperative_assignor(proto, s) is None
    raise AssertionError("did not converge")


def _bounce(proto, s, i):
    return proto.step(s, Bounce(i))


def test_member_protocol_is_the_highest_every_listed_assignor_supports():
    p = _proto()
    from groupspec.model.core import Client
    assert [p.member_rebalance(Client(assignors=k)) for k in (OLD, BOTH, NEW)] == ["eager", "eager", "cooperative"]
    q = _proto(name="upgrade-one-bounce")  # the broken rule: one assignor supporting it is enough
    assert [q.member_rebalance(Client(assignors=k)) for k in (OLD, BOTH, NEW)] == ["eager", "cooperative", "cooperative"]


@pytest.mark.parametrize("lists, leader, selected", [
    ((OLD, BOTH), 0, OLD),  # first bounce under way: range is every member's first candidate
    ((BOTH, BOTH), 1, OLD),  # first bounce over: both are candidates, everyone still prefers range
    ((BOTH, NEW), 0, NEW),  # second bounce: cooperative-sticky is the only candidate
    ((NEW, NEW), 0, NEW),
])
def test_vote(lists, leader, selected):
    from groupspec.model.core import Client, Group
    p = _proto()
    clients = tuple(Client(assignors=k) for k in lists)
    assert p.vote(Group(leader=leader), clients, [0, 1]) == selected


def test_two_rolling_bounces_upgrade_the_group_safely():
    """First bounce: the group keeps range; second: it switches; every state on the way is safe."""
    p = _proto(members=2, partitions=2)
    s = _settle(p, p.init_states()[0])
    assert s.group.protocol == OLD
    for i in range(2):
        s = _settle(p, _bounce(p, s, i))
        assert s.group.protocol == OLD and s.clients[i].assignors == BOTH
    for i in range(2):
        s = _settle(p, _bounce(p, s, i))
        assert s.group.protocol == NEW and s.clients[i].assignors == NEW
    assert upgraded(p, s)


def test_inconsistent_group_protocol_stops_the_consumer():
    """A consumer listing only cooperative-sticky cannot join a group whose members list only range."""
    p = _proto(members=2, partitions=2)
    s = _settle(p, p.init_states()[0])  # both in the group with [range]
    s = _bounce(p, s, 0)
    s = _settle(p, s)
    s = _bounce(p, s, 0)  # c1 now lists [cooperative-sticky] alone; c2 still [range]
    assert s.clients[0].assignors == NEW and s.clients[1].assignors == OLD
    s = _settle(p, s)
    assert s.clients[0].proc == Proc.DOWN  # INCONSISTENT_GROUP_PROTOCOL is fatal
    assert s.clients[0].assignors == NEW  # its configuration stays
    assert s.group.records[0] is None and s.group.status == GS.STABLE


def test_validation_stops_a_cooperative_leader_that_would_move_an_owned_partition():
    """upgrade-one-bounce at 2x2: the cooperative leader's validateCooperativeAssignment keeps ownership
    exclusive; without it (upgrade-unvalidated) two members own one partition."""
    _p, held = check("upgrade-one-bounce", assignor="range", members=2, partitions=2, budget=0)
    assert held.verdicts["exclusive_ownership"].held is True
    assert held.verdicts["cooperative_assignor"].held is False  # the broken rule itself is seen
    _p, broken = check("upgrade-unvalidated", assignor="range", members=2, partitions=2, budget=0)
    v = broken.verdicts["exclusive_ownership"]
    assert v.held is False and len(v.trace) - 1 == 10


def test_the_upgrade_holds_and_one_bounce_is_caught():
    _p, ok = check("eager-to-cooperative", assignor="range", members=2, partitions=3, faults=frozenset({"crash", "join"}),
                   budget=1)
    assert ok.ok and ok.engine == "python"
    _p, bad = check("upgrade-one-bounce", assignor="range", members=3, partitions=3, budget=0, max_states=40_000)
    v = bad.verdicts["exclusive_ownership"]
    assert v.held is False and v.explanation == "partition t-0 is owned by both c1 and c2" and len(v.trace) - 1 == 14


def test_the_compiled_engine_is_not_chosen():
    p = _proto()
    assert type(make_explorer(p)).__name__ == "Explorer"


def test_other_variants_keep_their_keys():
    """The new fields stay out of every other variant's key (pinned state counts stay as they were)."""
    from groupspec.model.symmetry import plain_key
    q = make("eager", Config(members=2, partitions=2))
    s = q.init_states()[0]
    assert len(plain_key(s)) == 8 and all(len(row[0]) == 9 for row in plain_key(s)[-1])
