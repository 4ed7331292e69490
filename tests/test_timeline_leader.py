"""A counterexample's JoinGroup-response step names the leader the state has (found by a newcomer's tour: the
action's fixed words, "sends SyncGroup (the leader with the assignment)", made every member that received its
JoinGroup response read as the leader, a follower too; and on the coordinator-side variants, which have no
SyncGroup round, it named a SyncGroup that was never sent)."""
from __future__ import annotations

import subprocess
import sys
from collections import deque
from pathlib import Path

from groupspec.checker import explain
from groupspec.model import Config, GroupStatus, State, make

GROUPSPEC = str(Path(sys.executable).parent / "groupspec")


def test_a_followers_join_response_names_the_leader_in_the_printed_counterexample():
    r = subprocess.run([GROUPSPEC, "check", "--protocol", "eager-no-revoke", "--members", "2", "--partitions", "2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stderr
    steps = [line for line in r.stdout.splitlines() if "receives its JoinGroup response" in line]
    assert any(line.endswith("c1 receives its JoinGroup response as the leader and sends SyncGroup with the assignment")
               for line in steps), steps
    follower = [line for line in steps if " c2 receives" in line]
    assert follower and all(line.endswith("sends SyncGroup (a follower: the leader is c1)") for line in follower), steps
    assert "the leader with the assignment" not in r.stdout


def test_the_coordinator_side_variant_sends_no_syncgroup():
    r = subprocess.run([GROUPSPEC, "check", "--protocol", "coordinator-assigns-no-revoke", "--members", "2",
                        "--partitions", "2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stderr
    steps = [line for line in r.stdout.splitlines() if "receives its JoinGroup response" in line]
    assert steps and all("with the assignment the coordinator computed and applies it (no SyncGroup round)" in line
                         for line in steps), steps


def test_every_join_response_step_names_the_states_leader():
    """Every ReceiveJoinResponse edge of eager (3 members, crash and leave: the lowest live slot leads, so c2 and
    c3 lead too) is explained with the leader the group has when the response is of its generation."""
    proto = make("eager", Config(members=3, partitions=2, faults=frozenset({"crash", "leave"}), budget=2))
    seen = {proto.key(s): s for s in proto.init_states()}
    queue = deque(seen.values())
    leaders: set[str] = set()
    checked = 0
    while queue:
        s = queue.popleft()
        for a, t in proto.successors(s):
            k = proto.key(t)
            if k not in seen:
                seen[k] = t
                queue.append(t)
            if a.name != "ReceiveJoinResponse":
                continue
            assert isinstance(s, State)
            g, inbox = s.group, s.clients[a.member].inbox
            assert inbox is not None
            text = explain(proto, s, a, t)
            who = proto.member_name(a.member)
            if inbox.generation != g.generation:  # a stale answer: the leader it named is not in the state
                assert "leader is" not in text and "as the leader" not in text, text
                continue
            leader = proto.member_name(g.leader)
            leaders.add(leader)
            checked += 1
            if a.member == g.leader:
                assert text.startswith(f"{who} receives its JoinGroup response as the leader"), text
                if g.status != GroupStatus.STABLE:
                    assert text.endswith("sends SyncGroup with the assignment"), text
            else:
                want = f"{who} receives its JoinGroup response and sends SyncGroup (a follower: the leader is {leader})"
                assert text == want, text
    assert checked > 100 and {"c1", "c2", "c3"} <= leaders, (checked, leaders)
