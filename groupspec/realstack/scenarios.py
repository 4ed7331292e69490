"""Real-stack scenarios: schedules of what the harness does to real consumers, and when.

Names follow ``groupspec simulate`` where it has the same story (``new-consumer-joins``,
``consumer-leaves-permanently``, ``static-member-restart``, ``rolling-restart``, ``consumer-crashes``,
``subscription-change``: the simulator's versions differ in timing and, for the subscription change, in who
subscribes to what); ``slow-consumer`` is a story the simulator tells with its fault switches;
``leader-leaves-mid-rebalance`` (the leader closes before the first join phase ends) pins a Tansu finding.
Every member uses session.timeout.ms=6000, heartbeat.interval.ms=1500 and
max.poll.interval.ms=8000 (also the rebalance timeout), so a crash or an overrun is noticed within
seconds (a scenario may state its own: ``timeouts``). Times are seconds from the start of the run. ``duration_s`` is the story's length, the least
a run lasts; the run then ends once the group has converged, or at ``limit_s`` (``duration_s`` + 30 s
unless a scenario states its own), and says which (``ending.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Step", "RealScenario", "SCENARIOS", "TIMEOUTS"]

TIMEOUTS = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1500, "max_poll_interval_ms": 8000}


@dataclass(frozen=True)
class Step:
    at_s: float
    action: str  # start | leave | crash | pause | freeze | subscribe
    member: str
    arg: str = ""  # pause, freeze: seconds; subscribe: topics; start: ";"-separated: its topics (default t), "idle" (none
    #                until it subscribes), "protocol=P" (this process uses P, not the run's protocol)


@dataclass(frozen=True)
class RealScenario:
    name: str
    summary: str
    steps: tuple[Step, ...]
    duration_s: float
    default_protocol: str = "eager"
    partitions: int = 6
    extra_topics: dict[str, int] = field(default_factory=dict)  # created at the start, subscribed later
    clients: tuple[str, ...] = ()  # only these clients run it (empty: every client)
    revoke_delay_ms: int = 0  # java: each revocation callback takes this long (one that flushes or commits)
    limit: float | None = None  # the latest a run ends when the group has not converged (None: duration + 30 s)
    timeouts: dict[str, int] = field(default_factory=dict)  # client settings other than TIMEOUTS' for this story

    @property
    def client_timeouts(self) -> dict[str, int]:
        """The members' session timeout, heartbeat interval and max.poll.interval.ms in this scenario."""
        return {**TIMEOUTS, **self.timeouts}

    @property
    def limit_s(self) -> float:
        return self.limit if self.limit is not None else self.duration_s + 30.0


def _start3(stagger: float = 0.5) -> tuple[Step, ...]:
    return tuple(Step(i * stagger, "start", f"c{i + 1}") for i in range(3))


SCENARIOS: dict[str, RealScenario] = {s.name: s for s in (
    RealScenario("new-consumer-joins", "three consumers join one after another, 6 s apart",
                 (Step(0, "start", "c1"), Step(6, "start", "c2"), Step(12, "start", "c3")), 26),
    RealScenario("consumer-leaves-permanently", "c3 closes cleanly (LeaveGroup) at 10 s",
                 _start3() + (Step(10, "leave", "c3"),), 22),
    RealScenario("consumer-crashes", "c3 is killed (SIGKILL) at 10 s, or once it owns partitions if later; the coordinator notices at its "
                 "session timeout",
                 _start3() + (Step(10, "crash", "c3"),), 30),
    RealScenario("static-member-restart", "static member c3 is killed at 10 s and restarts 3 s later, within its session timeout",
                 _start3() + (Step(10, "crash", "c3"), Step(13, "start", "c3")), 28, default_protocol="static"),
    RealScenario("rolling-restart", "each member in turn closes cleanly and restarts 3 s later",
                 _start3() + tuple(s for i in range(3) for s in (Step(10 + 8 * i, "leave", f"c{i + 1}"),
                                                                 Step(13 + 8 * i, "start", f"c{i + 1}"))), 42),
    RealScenario("leader-leaves-mid-rebalance", "c1, the first to join (so the group's leader), closes cleanly at 2 s, "
                 "while the first rebalance is still under way", _start3() + (Step(2, "leave", "c1"),), 22),
    RealScenario("slow-consumer", "c2 stops polling for 14 s at 10 s (max.poll.interval.ms is 8 s)",
                 _start3() + (Step(10, "pause", "c2", "14"),), 38),
    RealScenario("subscription-change", "c3 adds topic u (2 partitions) to its subscription at 10 s",
                 _start3() + (Step(10, "subscribe", "c3", "t,u"),), 26, extra_topics={"u": 2}),
    RealScenario("pair-joins", "two consumers join 1 s apart (the short run of the tests)",
                 (Step(0, "start", "c1"), Step(1, "start", "c2")), 9, limit=30),
    # docs/specification.md, "Two owners after a missed generation" (KAFKA-8220). c3 starts on topic u only. c2 (static:
    # its close sends no LeaveGroup) closes at 8 s and is removed at its session timeout; c1 gets all of t in that
    # round, in which its JoinGroup listed 3 (its metadata is stale from then on). At 20 s c3 adds t (a rebalance at
    # once) and c1 stops polling 0.5 s later, before it hears of it, for 7.8 s: the join phase completes at its
    # rebalance timeout (8 s) without c1, kept because it is static, and c1 polls again before its own
    # max.poll.interval.ms (8 s) runs out. The window is a few hundred ms: a run on a busy machine may miss it.
    RealScenario("static-member-left-behind", "static cooperative c1 stops polling just after c3 adds t and polls "
                 "again just after the join phase completed without it (KAFKA-8220)",
                 (Step(0, "start", "c1"), Step(0.5, "start", "c2"), Step(1, "start", "c3", "u"),
                  Step(8, "leave", "c2"), Step(20, "subscribe", "c3", "t,u"), Step(20.5, "pause", "c1", "7.8")), 40,
                 default_protocol="static-cooperative", extra_topics={"u": 2}, clients=("java", "confluent-kafka")),
    # The classic-to-consumer migration (docs/migration.md), online, without faults: under the bidirectional policy
    # the first consumer-protocol member converts the classic group, the last classic member's return converts back.
    RealScenario("online-upgrade", "three cooperative-sticky members restart one by one with group.protocol=consumer",
                 _start3() + tuple(s for i in range(3) for s in (Step(10 + 8 * i, "leave", f"c{i + 1}"),
                                                                 Step(11 + 8 * i, "start", f"c{i + 1}", "protocol=consumer"))),
                 44, default_protocol="cooperative", clients=("java", "confluent-kafka")),
    # docs/migration.md, path 1: every revocation callback takes 7 s (one that commits or flushes). c3 and c4 start
    # idle (warm JVMs); c3 subscribes at 16 s, so c1 and c2 each give a partition up in a cooperative round and own
    # it until their callbacks return; meanwhile (20 s) c4 subscribes with group.protocol=consumer and converts the
    # group, which trusts the classic side's stored assignment. Named as the simulator's story.
    RealScenario("upgrade-mid-round", "c1 and c2 revoke slowly (7 s) in the round c3's join starts; c4 joins with "
                 "group.protocol=consumer meanwhile",
                 (Step(0, "start", "c1"), Step(0.5, "start", "c2"), Step(1, "start", "c3", "idle"),
                  Step(1.5, "start", "c4", "idle;protocol=consumer"), Step(16, "subscribe", "c3", "t"),
                  Step(20, "subscribe", "c4", "t")), 45, default_protocol="cooperative",
                 clients=("java",), revoke_delay_ms=7000),
    # docs/migration.md, path 2: the same slow revocation callbacks (7 s, then a commit). c3 joins with
    # group.protocol=consumer at 15 s (the classic group is converted; c1 and c2 must give partitions up and are
    # in their callbacks), leaves at 17 s (the last consumer-protocol member: the group is converted back, each
    # classic member storing its *target*), and c4 joins with group.protocol=consumer at 19 s (converted again,
    # trusting the stored targets) while c1 and c2 still own what they were giving up.
    RealScenario("downgrade-then-upgrade", "c3 (consumer protocol) joins and leaves while c1 and c2 revoke slowly "
                 "(7 s); c4 (consumer protocol) joins before they are done",
                 (Step(0, "start", "c1"), Step(0.5, "start", "c2"), Step(1, "start", "c3", "idle;protocol=consumer"),
                  Step(1.5, "start", "c4", "idle;protocol=consumer"), Step(15, "subscribe", "c3", "t"),
                  Step(17, "leave", "c3"), Step(19, "subscribe", "c4", "t")), 45, default_protocol="cooperative",
                 clients=("java",), revoke_delay_ms=7000),
    # docs/migration.md, path 3: a classic member expired while it was about to rejoin. c2 stops polling at 9.5 s for
    # 3 s, so it hears of the rebalance c1's leave starts (10 s) from its heartbeat thread but does not rejoin yet;
    # at 12 s its whole process is frozen (SIGSTOP: the heartbeat thread stops too, as in a long GC pause or a
    # suspended VM) for 10 s, so the broker expires it (session 6 s) while it lives, and c3 gets its partitions. c1
    # comes back with group.protocol=consumer at 19 s and converts the group. At 22 s c2 runs again and sends the
    # JoinGroup it owed, with its old member id. A classic group answers UNKNOWN_MEMBER_ID (c2 reports its
    # partitions lost); the consumer group creates the member again. max.poll.interval.ms is 30 s here, so that
    # c2's poll timer does not run out during the freeze (its heartbeat thread would then leave the group first).
    RealScenario("expired-while-rejoining", "c2 hears of a rebalance, then freezes (SIGSTOP) past its session timeout "
                 "while c1 comes back with group.protocol=consumer; c2 then rejoins with its old member id",
                 _start3() + (Step(9.5, "pause", "c2", "3"), Step(10, "leave", "c1"), Step(12, "freeze", "c2", "10"),
                              Step(19, "start", "c1", "protocol=consumer")), 40, default_protocol="cooperative",
                 clients=("java",), timeouts={"max_poll_interval_ms": 30000}),
    RealScenario("online-downgrade", "three group.protocol=consumer members restart one by one with cooperative-sticky",
                 _start3() + tuple(s for i in range(3) for s in (Step(10 + 8 * i, "leave", f"c{i + 1}"),
                                                                 Step(11 + 8 * i, "start", f"c{i + 1}", "protocol=cooperative"))),
                 44, default_protocol="consumer", clients=("java", "confluent-kafka")),
)}
