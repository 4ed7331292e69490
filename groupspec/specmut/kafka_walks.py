"""The model's own paths replayed on Apache Kafka's group coordinator (the Kafka oracle): the reverse direction.

Refinement (``groupspec.conformance``) checks that every step the *reference* takes is a step of the model; a
model that allows *more* than Kafka (a guard dropped, a conjunct left out) passes it. Here the model leads: a
seeded random walk over the (possibly mutated) model of a classic variant, and every step it takes is sent to
Kafka's own coordinator (``groupspec.oracle``, the pinned release's ``GroupCoordinatorShard`` on a virtual clock)
as the requests and the passing of time that step stands for. After every step the two are compared through
the model's abstraction:

* the group: its status, its generation, which member slots it has a record for, the leader's slot;
* the answers: every answer the step delivers (a parked JoinGroup or SyncGroup completed, a REBALANCE_IN_PROGRESS
  or UNKNOWN_MEMBER_ID to a parked request, the error of the request the acting member sent) must be the answer
  Kafka delivers to that member's connection, with the same generation or assignment.

How a model step becomes Kafka's input (member slot ``i`` is connection ``c<i>.<process>``, static slot ``i`` is
``group.instance.id`` ``i<i>``): ``SendJoinGroup`` is a JoinGroup (v3 for dynamic members: no MEMBER_ID_REQUIRED,
which the model leaves out by default; v5 for static ones) carrying the subscription, owned partitions and
generation the model records; ``ReceiveJoinResponse`` the SyncGroup that follows (the leader's with the model's
assignment); ``Heartbeat`` a Heartbeat; ``LeaveGroup`` a LeaveGroup from a dynamic member that holds an id;
``SessionExpired`` / ``ExpireLive`` time running out for that member alone (every other member's session is
refreshed first); ``RebalanceTimeout`` / ``RebalanceTimeoutOvertakes`` time running out for the join phase
(every member's session kept alive meanwhile). Steps that happen in a client only (a pause, a crash, a start, an
answer received, a subscription changed) send nothing; the group must be as it was. A member's session,
rebalance and initial-delay settings: 10 s, 400 s (past the 5-minute new-member join timeout), 0 ms (the first join phase completes at the next
millisecond, as the model's completes with its first JoinGroup).

``SyncTimeout`` / ``PendingSyncExpired`` are the pending-sync timer running out (every session kept alive);
``PendingExpired`` a pending member id's session running out (``two-step-join``: dynamic members then join with
JoinGroup v4, answered MEMBER_ID_REQUIRED, and the walks run with ``initial-delay`` too: Kafka always has an initial
delayed join, which does not wait for a pending id); ``InitialDelayExpired`` the initial delayed join (3 s, with
``initial-delay``) running out, however often Kafka stretched it; ``PollTimeoutLeave`` the poll timeout's
``maybeLeaveGroup``: a dynamic member that holds an id sends LeaveGroup (its answer never read), a static one sends
nothing, and the process resets (no answer to a request from before is read). A late-expiry ``SessionExpired`` of a
running member whose SyncGroup is parked is sent too (the model never takes it: Kafka must not expire the member);
and a resumed member whose session was not refreshed (``Client.woke``) and none of whose requests Kafka holds parked
must be one the model can expire (``missed_expiry``: Kafka's session timer would remove it). What is not sent: Connect's delay, the
coordinator-side assignment.

Since the walks keep every session alive through each long wait, a ``SessionExpired`` of a *running* member (the
``late-expiry`` story: it resumed from a pause and its session ran out before anything restarted it) is also held to
what Kafka did since the resume (``late_expiry``): if Kafka completed a join phase with that member meanwhile, which
restarts every member's session timer (coordinator.md §3.4), the model's expiry is a divergence.

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``groupspec.oracle``,
``groupspec.reference`` (the consumer protocol's bytes).
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # (the model is imported inside the functions: after a mutant is applied)
    from groupspec.model import State, actions
    from groupspec.oracle import KafkaOracle

from .mirror_driver import Divergence as Divergence  # (raised by the walks: the KIP-848 walks and the tests catch it here)
from .mirror_driver import Job, instance, partition_names, seeded

SESSION_MS = 10_000
# The rebalance timeout: even walks 120 s (the join phase's timer fires before any new member's join timeout), odd
# walks 400 s (a new member's join timeout can fire first). A long wait is taken only if no other timer of Kafka's
# would fire on the way (``mirrored``).
REBALANCE_MS = (120_000, 400_000)
MARGIN_MS = 2_000
INITIAL_DELAY_MS = 3_000  # group.initial.rebalance.delay.ms with the fault initial-delay (0 without)
NEW_MEMBER_MS = 300_000  # Kafka's CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS (5 minutes, not configurable)

# The walks: (variant, assignor, members, partitions, topics, faults, budget, walks, steps)
WALK_JOBS: tuple[Job, ...] = (
    ("eager", "range", 3, 3, 2, "join,leave,crash,timeout,zombie,subscription,partitions", 6, 300, 40),
    ("eager", "sticky", 3, 2, 1, "join,leave,crash,timeout,zombie,initial-delay,two-step-join,sync-timeout,late-expiry",
     6, 300, 40),
    ("cooperative", "sticky", 3, 3, 1, "join,leave,crash,timeout,zombie,partitions", 6, 300, 40),
    ("static", "range", 3, 3, 2, "join,crash,timeout,zombie,subscription,partitions", 6, 300, 40),
    ("static", "sticky", 3, 2, 1, "join,crash,timeout,zombie,sync-timeout,late-expiry", 6, 300, 40),
    ("static-cooperative", "sticky", 2, 3, 1, "join,crash,timeout,zombie", 6, 200, 40),
)

# Walks with a bias (the tenth field names it, ``BIASES``): a rule the even walks rarely reach. ``parked-crash``: an
# *old* member (one Kafka completed a join phase with) whose JoinGroup is parked and whose process then crashes or
# pauses; Kafka keeps such a member (``hasSatisfiedHeartbeat``: awaiting its join) however long its session has run
# out, until the join phase's timer. 1,000 even walks of a crash-and-join job never reached it.
BIASED_WALK_JOBS: tuple[tuple[str, str, int, int, int, str, int, int, int, str], ...] = (
    ("eager", "range", 3, 2, 1, "join,crash", 6, 60, 30, "parked-crash"),
)
PARKED_CRASH_BIAS = 0.8  # how often a favoured step is taken when one is offered


def _parked_crash(s: Any, succ: list[tuple[Any, Any]], rng: random.Random, walk: "_Walk") -> list[tuple[Any, Any]]:
    """The favoured steps, taken with probability ``PARKED_CRASH_BIAS`` when one is offered: a crash or pause of an
    old member whose JoinGroup is parked, or a session running out; in a join phase, the steps that park the old
    members' JoinGroups (heartbeats answered REBALANCE_IN_PROGRESS, JoinGroups); in a stable group of two or more, a
    new member's start and JoinGroup (a rebalance the old members must rejoin), else a follower's leave; elsewhere the steps towards a stable
    group (starts, JoinGroups, answers read)."""
    from groupspec.model import GroupStatus as GS
    from groupspec.model import Id
    from groupspec.model import actions as A

    g = s.group

    def old_parked(i: int) -> bool:
        r = g.records[i]
        return g.status == GS.PREPARING_REBALANCE and r is not None and r.joined and not walk.parked_new(s, i)

    fav: list[tuple[Any, Any]] = [(a, t) for a, t in succ
                                  if isinstance(a, (A.Crash, A.Pause)) and old_parked(a.member) or isinstance(a, A.SessionExpired)]
    if not fav and g.status == GS.PREPARING_REBALANCE:
        fav = [(a, t) for a, t in succ if isinstance(a, (A.SendJoinGroup, A.Heartbeat, A.ReceiveError))
               and g.records[a.member] is not None and not g.records[a.member].joined]
    elif not fav and g.status == GS.STABLE and sum(r is not None for r in g.records) >= 2:
        fav = ([(a, t) for a, t in succ if isinstance(a, A.Start) or isinstance(a, A.SendJoinGroup)
                and s.clients[a.member].id == Id.NONE]
               or [(a, t) for a, t in succ if isinstance(a, A.LeaveGroup) and a.member != g.leader])
    elif not fav:
        fav = [(a, t) for a, t in succ if isinstance(a, (A.Start, A.SendJoinGroup, A.ReceiveJoinResponse,
                                                         A.ReceiveSyncResponse, A.ReceiveError, A.Heartbeat))]
    return fav if fav and rng.random() < PARKED_CRASH_BIAS else succ


BIASES = {"parked-crash": _parked_crash}

_ORACLE: dict[str, Any] = {}


def oracle() -> KafkaOracle:
    """One Kafka oracle process per worker process, started on first use and reused for every mutant."""
    from groupspec.oracle import KafkaOracle

    o = _ORACLE.get("o")
    if o is None or o._proc.poll() is not None:  # noqa: SLF001 - restarted if it died
        o = _ORACLE["o"] = KafkaOracle()
    return o


class _Walk:
    """One walk: the model's states, Kafka's coordinator, and the member ids Kafka handed out."""

    # proto: a classic page (it reads static_members, two_step, initial_delay: not on the Spec interface)
    def __init__(self, proto: Any, kafka: KafkaOracle, topic_names: list[str], rebalance_ms: int) -> None:
        self.p = proto
        self.rebalance_ms = rebalance_ms
        self.completed_at = 0  # when Kafka's group last completed a join phase (its pending-sync timer's start)
        self.prep_at = 0  # when Kafka's group last entered PreparingRebalance (its join timer's start)
        self.joined_at: dict[str, int] = {}  # when each member id first appeared in Kafka's group
        self.k = kafka
        self.cfg = proto.cfg
        self.topics = topic_names
        self.static = bool(proto.static_members)
        self.now = 0
        self.ids: list[str | None] = [None] * self.cfg.members  # the member id each process holds (Kafka's)
        self.slot_of: dict[str, int] = {}  # every member id Kafka handed out -> slot
        self.proc_no = [0] * self.cfg.members  # a new process on a slot gets a new connection
        self.leader_said: list[str | None] = [None] * self.cfg.members  # the leader in its last JoinGroup answer
        self.kstate: dict[str, Any] = {}
        self.settled: set[str] = set()  # the members of Kafka's last completed join phase (not new)
        self.where = partition_names(self.cfg, topic_names)
        self.bit_of = {w: b for b, w in enumerate(self.where)}
        # late-expiry: each slot whose process resumed from a pause -> the generation of the first join phase Kafka
        # completed with it since (None: none yet); see ``late_expiry``
        self.resumed: dict[int, int | None] = {}
        self.parked: dict[str, str] = {}  # connection -> its JoinGroup or SyncGroup Kafka has not answered yet

    # ------------------------------------------------------------------ Kafka side
    def conn(self, i: int) -> str:
        return f"c{i}.{self.proc_no[i]}"

    def send(self, op: dict[str, Any]) -> list[dict[str, Any]]:
        self.now += 1
        ans = self.k.send({"at": self.now, "group_id": "g", **op})
        if op["op"] in ("JoinGroup", "SyncGroup"):
            self.parked[op["conn"]] = op["op"]
        for r in ans["responses"]:
            if self.parked.get(r["conn"]) == r["request"]:
                del self.parked[r["conn"]]
        if ans["state"].get("generation") != self.kstate.get("generation"):
            self.completed_at = self.now  # the pending-sync timer starts
            self.settled = set(ans["state"].get("members", []))  # a join phase completed: nobody is new now
        if ans["state"].get("state") == "PreparingRebalance" and self.kstate.get("state") != "PreparingRebalance":
            self.prep_at = self.now
        for mid in ans["state"].get("members", []):
            self.joined_at.setdefault(mid, self.now)
        self.kstate = ans["state"]
        if op["op"] == "JoinGroup":  # an id Kafka made for this JoinGroup, parked: the sender's (as the model says)
            slot = int(op["conn"][1:].split(".")[0])
            for mid in self.kstate.get("members", []):
                if mid not in self.slot_of:
                    self.slot_of[mid] = slot
                    self.ids[slot] = mid
        responses: list[dict[str, Any]] = ans["responses"]
        return responses

    def tick(self, ms: int = 1) -> list[dict[str, Any]]:
        self.now += ms - 1
        return self.send({"op": "advance"})

    def _mask(self, parts: Any) -> int:
        m = 0
        for tp in parts:
            m |= 1 << self.bit_of[(tp[0], tp[1])]
        return m

    def _tps(self, mask: int) -> list[tuple[str, int]]:
        return [self.where[b] for b in range(self.cfg.partitions) if mask >> b & 1]

    def _subscription(self, topics: int, owned: int, generation: int) -> str:
        from groupspec.reference.classic import Subscription, encode_subscription

        names = tuple(self.topics[t] for t in range(self.cfg.topics) if topics >> t & 1)
        return encode_subscription(Subscription(topics=names, owned_partitions=tuple(self._tps(owned)),
                                                generation_id=generation)).hex()

    def _assignment(self, mask: int) -> str:
        from groupspec.reference.classic import Assignment, encode_assignment

        return encode_assignment(Assignment(partitions=tuple(self._tps(mask)))).hex()

    def _who(self, i: int) -> dict[str, Any]:
        return {"member_id": self.ids[i] or "", "instance_id": f"i{i}" if self.static else None,
                "conn": self.conn(i)}

    def parked_new(self, s: State, i: int) -> bool:
        """Member ``i``'s JoinGroup is parked and Kafka has not completed a join phase with it yet (``isNew``)."""
        from groupspec.model import GroupStatus as GS

        r = s.group.records[i]
        mid = self.kafka_id(i)
        return (r is not None and r.joined and s.group.status == GS.PREPARING_REBALANCE
                and mid is not None and mid not in self.settled)

    def deadlines(self, but: str | None = None) -> list[int]:
        """When Kafka's join-phase timers would fire: the join timer, every parked new member's join timeout."""
        if self.kstate.get("state") != "PreparingRebalance":
            return []
        out = [self.prep_at + self.rebalance_ms]
        for m in self.kstate.get("members", []):
            if m not in self.settled and m != but:
                out.append(self.joined_at.get(m, self.now) + NEW_MEMBER_MS)
        return out

    def kafka_id(self, i: int) -> str | None:
        """The member id Kafka's group has for slot ``i`` (whatever the slot's process now holds)."""
        return next((m for m in self.kstate.get("members", []) if self.slot_of.get(m) == i), None)

    def keep_alive(self, but: int | None = None) -> None:
        """Every member Kafka has (but slot ``but``) heartbeats: its session is refreshed (answers not compared)."""
        gen = self.kstate.get("generation", 0)
        for mid in list(self.kstate.get("members", [])):
            slot = self.slot_of.get(mid)
            if slot is None or slot == but:
                continue
            self.send({"op": "Heartbeat", "member_id": mid, "generation": gen, "conn": "keepalive",
                       "instance_id": f"i{slot}" if self.static else None, "version": 4})

    # ------------------------------------------------------------------ one model step on Kafka
    def kafka_step(self, s: State, a: actions.Action, t: State) -> list[dict[str, Any]]:
        """Send what action ``a`` (from ``s`` to ``t``) stands for; Kafka's answers to live connections."""
        from groupspec.model import actions as A
        from groupspec.model import Id, MemberStatus as MS, Proc

        i = a.member
        out: list[dict[str, Any]] = []
        c: Any = s.clients[i] if i >= 0 else None  # (None: a group-wide step, which reads no client)
        if isinstance(a, A.SendJoinGroup):
            r = t.group.records[i]
            meta = (r.topics, r.owned, r.generation) if r is not None else (c.topics, 0, c.generation)
            out += self.send({"op": "JoinGroup", **self._who(i), "protocol_type": "consumer",
                              "protocols": [[self.p.assignor_name, self._subscription(*meta)]],
                              "session_timeout_ms": SESSION_MS, "rebalance_timeout_ms": self.rebalance_ms,
                              "version": 5 if self.static else 4 if self.p.two_step else 3})
            out += self.tick()  # the initial delayed join (0 ms) completes at the next millisecond
            c2 = t.clients[i]
            if self.static and c2.status == MS.STABLE and c2.inbox is None and c.status != MS.STABLE \
                    and any(r["conn"] == self.conn(i) and r["request"] == "JoinGroup" and r["error"] == "NONE"
                            for r in out):
                # a static member's restart in a stable group: JoinGroup answered at once, then SyncGroup (one
                # model step: the stored assignment comes back)
                self.ids[i] = next(r["member_id"] for r in out if r["conn"] == self.conn(i))
                out += self.send({"op": "SyncGroup", **self._who(i), "generation": t.group.generation,
                                  "protocol_type": "consumer", "protocol_name": self.p.assignor_name,
                                  "assignments": [], "version": 5})
        elif isinstance(a, A.ReceiveJoinResponse):
            g = s.group
            assignments = []
            if self.leader_said[i] is not None and self.leader_said[i] == self.ids[i] and g.target is not None:
                for mid in self.kstate.get("members", []):  # the members its JoinGroup answer listed
                    k = self.slot_of.get(mid)
                    if k is not None:
                        assignments.append([mid, self._assignment(g.target[k])])
            out += self.send({"op": "SyncGroup", **self._who(i), "generation": c.inbox.generation,
                              "protocol_type": "consumer", "protocol_name": self.p.assignor_name,
                              "assignments": assignments, "version": 5 if self.static else 3})
            out += self.tick()
        elif isinstance(a, A.Heartbeat):
            out += self.send({"op": "Heartbeat", **self._who(i), "generation": c.generation,
                              "version": 3 if self.static else 2})
        elif isinstance(a, A.LeaveGroup):
            if not self.static and c.id in (Id.CURRENT, Id.STALE, Id.PENDING) and self.ids[i]:
                out += self.send({"op": "LeaveGroup", "conn": self.conn(i), "version": 3,
                                  "members": [[self.ids[i], None]]})
        elif isinstance(a, A.PollTimeoutLeave):
            # maybeLeaveGroup at the poll timeout: a dynamic member that holds an id sends LeaveGroup (best effort,
            # its answer never read), a static one sends nothing; the process then resets and runs on
            if not self.static and self.ids[i]:
                out += self.send({"op": "LeaveGroup", "conn": self.conn(i), "version": 3,
                                  "members": [[self.ids[i], None]]})
        elif isinstance(a, (A.ExpireLive, A.SessionExpired)) and self.parked_new(s, i):
            # a new member whose JoinGroup is parked: Kafka's new-member join timeout (5 minutes) removes it
            # (answered UNKNOWN_MEMBER_ID); every other member kept alive meanwhile
            mid = self.kafka_id(i)
            for _ in range(NEW_MEMBER_MS // (SESSION_MS // 2) + 2):
                if mid not in self.kstate.get("members", []):
                    break
                self.keep_alive(but=i)
                out += self.tick(SESSION_MS // 2)
            self.keep_alive()
        elif isinstance(a, A.InitialDelayExpired):
            # the initial delayed join runs out (Kafka stretches it while new members keep arriving)
            for _ in range(self.rebalance_ms // INITIAL_DELAY_MS + 2):
                if self.kstate.get("state") != "PreparingRebalance":
                    break
                self.keep_alive()
                out += self.tick(INITIAL_DELAY_MS)
            self.keep_alive()
        elif isinstance(a, (A.SyncTimeout, A.PendingSyncExpired)):
            # the pending-sync timer (the rebalance timeout after the join phase completed) runs out
            gen = self.kstate.get("generation")
            for _ in range(self.rebalance_ms // (SESSION_MS // 2) + 2):
                if self.kstate.get("state") not in ("CompletingRebalance", "Stable") \
                        or self.kstate.get("generation") != gen:
                    break
                self.keep_alive()
                out += self.tick(SESSION_MS // 2)
            self.keep_alive()
        elif isinstance(a, (A.SessionExpired, A.ExpireLive, A.PendingExpired)):
            # Every session was refreshed less than half a session ago (each long wait ends with every member
            # refreshed), member i's at t0 at the latest. Half a session on, the others are refreshed again; i's
            # session then runs out before theirs.
            t0 = self.now
            self.keep_alive(but=i)
            out += self.tick(SESSION_MS // 2)
            self.keep_alive(but=i)
            out += self.tick(t0 + SESSION_MS + 100 - self.now)
        elif isinstance(a, (A.RebalanceTimeout, A.RebalanceTimeoutOvertakes)):
            for _ in range(self.rebalance_ms // (SESSION_MS // 2) + 2):
                if self.kstate.get("state") != "PreparingRebalance":
                    break
                self.keep_alive()
                out += self.tick(SESSION_MS // 2)
            self.keep_alive()
        live = {self.conn(k) for k in range(self.cfg.members)}  # (before a new process takes the slot)
        self_conn = self.conn(i) if i >= 0 else None
        self.left_with = self.ids[i] if i >= 0 else None
        # the client's side: a new process on the slot, or an id the model says it dropped
        if i >= 0:
            c2 = t.clients[i]
            if isinstance(a, (A.Crash, A.LeaveGroup, A.PollTimeoutLeave)) or (c.proc != Proc.DOWN and c2.proc == Proc.DOWN) \
                    or isinstance(a, A.Start):  # (a poll-timeout reset reads no answer to a request sent before it)
                self.proc_no[i] += 1
                self.ids[i] = None
            elif c2.id == Id.NONE:
                self.ids[i] = None
        if isinstance(a, A.LeaveGroup):  # the closing process reads only its LeaveGroup's answer
            out = [r for r in out if r["conn"] != self_conn or r["request"] == "LeaveGroup"]
        if isinstance(a, A.PollTimeoutLeave):  # the reset process reads no answer of this step (nor its LeaveGroup's)
            out = [r for r in out if r["conn"] != self_conn]
        return [r for r in out if r["conn"] in live]

    # ------------------------------------------------------------------ comparing
    def kafka_answers(self, responses: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for r in responses:
            slot = int(r["conn"][1:].split(".")[0])
            kind = r["request"]
            if kind == "JoinGroup" and r["error"] == "MEMBER_ID_REQUIRED":
                self.ids[slot] = r["member_id"]
                self.slot_of[r["member_id"]] = slot
                out.append((slot, "ERR", r["error"]))
            elif kind == "JoinGroup" and r["error"] == "NONE":
                self.ids[slot] = r["member_id"]
                self.slot_of[r["member_id"]] = slot
                self.leader_said[slot] = r.get("leader")
                out.append((slot, "JOIN", r["generation"]))
            elif kind == "SyncGroup" and r["error"] == "NONE":
                from groupspec.reference.classic import decode_assignment

                raw = bytes.fromhex(r.get("assignment") or "")
                parts = decode_assignment(raw).partitions if raw else ()
                out.append((slot, "SYNC", self._mask(parts)))
            elif kind == "LeaveGroup":
                errs = [m["error"] for m in r.get("members", [])] or [r["error"]]
                e = next((x for x in errs if x != "NONE"), r["error"])
                out.append((slot, "OK") if e == "NONE" else (slot, "ERR", e))
            elif r["error"] == "NONE":
                out.append((slot, "OK"))
            else:
                out.append((slot, "ERR", r["error"]))
        return sorted(out)

    def model_answers(self, s: State, a: actions.Action, t: State) -> list[tuple[Any, ...]]:
        """The answers the model's step delivers: every inbox that changed, and the acting member's own answer."""
        from groupspec.model import actions as A
        from groupspec.model import NO_GENERATION, GroupStatus as GS, Id, MemberStatus as MS, Proc, Reply

        out: list[tuple[Any, ...]] = []
        for k, (c, c2) in enumerate(zip(s.clients, t.clients)):
            ib = c2.inbox
            if ib is None or ib is c.inbox:
                continue
            if ib.reply == Reply.JOIN:
                out.append((k, "JOIN", ib.generation))
            elif ib.reply == Reply.SYNC:
                out.append((k, "SYNC", ib.assignment))
            else:
                out.append((k, "ERR", {Reply.REBALANCE_IN_PROGRESS: "REBALANCE_IN_PROGRESS",
                                       Reply.UNKNOWN_MEMBER_ID: "UNKNOWN_MEMBER_ID",
                                       Reply.FENCED_INSTANCE_ID: "FENCED_INSTANCE_ID"}[ib.reply]))
        i = a.member
        if isinstance(a, (A.SendJoinGroup, A.ReceiveJoinResponse, A.Heartbeat)):
            c, c2 = s.clients[i], t.clients[i]
            if c2.inbox is not None and c2.inbox != c.inbox:
                pass  # answered (or parked and completed at once): listed above
            elif isinstance(a, A.SendJoinGroup) and self.static and c2.status == MS.STABLE \
                    and c.status != MS.STABLE and c2.proc == Proc.UP:
                out += [(i, "JOIN", t.group.generation), (i, "SYNC", t.group.records[i].assignment)]  # type: ignore[union-attr]  # (STABLE: it has its record)
            elif c2.proc == Proc.DOWN:
                out.append((i, "ERR", "FENCED_INSTANCE_ID"))
            elif c2.id == Id.PENDING and c.id == Id.NONE:
                out.append((i, "ERR", "MEMBER_ID_REQUIRED"))
            elif c2.id == Id.NONE and c.id != Id.NONE:
                out.append((i, "ERR", "UNKNOWN_MEMBER_ID"))
            elif c2.generation == NO_GENERATION and c.generation != NO_GENERATION \
                    and not isinstance(a, A.SendJoinGroup) or \
                    isinstance(a, A.ReceiveJoinResponse) and c2.generation == NO_GENERATION:
                out.append((i, "ERR", "ILLEGAL_GENERATION"))
            elif isinstance(a, A.Heartbeat) and c2.rejoin and not c.rejoin:
                out.append((i, "ERR", "REBALANCE_IN_PROGRESS"))
            elif isinstance(a, A.ReceiveJoinResponse) and c2.rejoin and c2.status == MS.COMPLETING_REBALANCE:
                out.append((i, "ERR", "REBALANCE_IN_PROGRESS"))
            elif isinstance(a, A.Heartbeat):  # accepted (late-expiry: the session refreshed)
                out.append((i, "ERR", "REBALANCE_IN_PROGRESS") if t.group.status == GS.PREPARING_REBALANCE
                           else (i, "OK"))
            # else: parked (a JoinGroup until the phase completes, a follower's SyncGroup until the leader's)
        elif isinstance(a, A.LeaveGroup) and not self.static and s.clients[i].id in (Id.CURRENT, Id.STALE, Id.PENDING) \
                and self.left_with:
            removed = (s.group.records[i] is not None and s.clients[i].id == Id.CURRENT and t.group.records[i] is None
                       or s.clients[i].id == Id.PENDING and s.group.pending >> i & 1 and not t.group.pending >> i & 1)
            out.append((i, "OK") if removed else (i, "ERR", "UNKNOWN_MEMBER_ID"))
        return sorted(out)

    def compare_group(self, t: State) -> str | None:
        g = t.group
        ks = self.kstate
        names = {0: "Empty", 1: "PreparingRebalance", 2: "CompletingRebalance", 3: "Stable", 4: "Dead"}
        want_state = names[int(g.status)]
        got_state = ks.get("state") if ks.get("type") == "classic" else "Empty"
        if got_state != want_state:
            return f"group state: model {want_state}, Kafka {got_state}"
        if ks.get("type") != "classic":
            return None if not any(r is not None for r in g.records) else "Kafka has no group, the model has members"
        if ks["generation"] != g.generation:
            return f"generation: model {g.generation}, Kafka {ks['generation']}"
        kmembers = sorted(self.slot_of.get(m, -1) for m in ks["members"])
        mmembers = [k for k, r in enumerate(g.records) if r is not None]
        if kmembers != mmembers:
            return f"members (slots): model {mmembers}, Kafka {kmembers}"
        kpending = sorted(self.slot_of.get(m, -1) for m in ks.get("pending", []))
        mpending = [k for k in range(self.cfg.members) if g.pending >> k & 1]
        if kpending != mpending:
            return f"pending member ids (slots): model {mpending}, Kafka {kpending}"
        kleader = self.slot_of.get(ks.get("leader") or "", -1)
        if mmembers and kleader != g.leader:
            return f"leader (slot): model {g.leader}, Kafka {kleader}"
        return None


def missed_expiry(proto: Any, t: State, walk: "_Walk") -> str | None:
    """``late-expiry``: a member resumed from a pause whose session was not refreshed since (``Client.woke``) and
    none of whose requests Kafka holds parked is one Kafka's session timer removes (``hasSatisfiedHeartbeat``: only
    a member awaiting its join or sync answer is kept): the model must be able to expire it there."""
    from groupspec.model import Id, Proc
    from groupspec.model import actions as A

    for k, c in enumerate(t.clients):
        if c.woke and c.proc == Proc.UP and c.id == Id.CURRENT and t.group.records[k] is not None \
                and walk.conn(k) not in walk.parked \
                and not any(isinstance(a, A.SessionExpired) and a.member == k for a, _u in proto.successors(t)):
            return (f"member {k} resumed from a pause, its session not refreshed since, and Kafka holds no request "
                    "of it parked: Kafka's session timer removes it; the model cannot expire it")
    return None


Walk = _Walk  # one walk's state, also driven step by step by the fixed runs of kafka_runs.py


def mirrored(s: State, a: actions.Action, t: State, walk: "_Walk") -> bool:
    """Whether the walk may take ``a`` from ``s`` (to ``t``): every step but those ABSTRACTIONS name."""
    from groupspec.model import GroupStatus as GS
    from groupspec.model import Id, Proc
    from groupspec.model import actions as A

    if t.group.status == GS.PREPARING_REBALANCE and t.group.pending and not any(r is not None for r in t.group.records):
        return False  # "pending-only": not explained yet (ABSTRACTIONS)

    long_wait = (A.SessionExpired, A.ExpireLive, A.PendingExpired, A.RebalanceTimeout, A.RebalanceTimeoutOvertakes,
                 A.SyncTimeout, A.PendingSyncExpired)
    if s.group.forming and isinstance(a, long_wait):
        return False  # Kafka's initial delayed join would run out on the way (the model counts no time)
    if s.group.pending and isinstance(a, long_wait) and not (isinstance(a, A.PendingExpired)
                                                            and s.group.pending == 1 << a.member):
        return False  # every pending member id's session would run out on the way (no request refreshes one)
    if isinstance(a, (A.SessionExpired, A.ExpireLive)) and walk.parked_new(s, a.member):
        # Kafka's new-member join timeout: it must be the first of the join phase's timers to fire
        mid = walk.kafka_id(a.member)
        mine = walk.joined_at.get(mid, walk.now) + NEW_MEMBER_MS  # type: ignore[arg-type]  # (None: not there)
        return all(d > mine + MARGIN_MS for d in walk.deadlines(but=mid))
    if isinstance(a, (A.RebalanceTimeout, A.RebalanceTimeoutOvertakes)):
        join = walk.prep_at + walk.rebalance_ms  # the join timer must fire before any new member's timeout
        return all(d > join + MARGIN_MS for d in walk.deadlines() if d != join)
    if isinstance(a, long_wait) and any(d < walk.now + SESSION_MS + MARGIN_MS for d in walk.deadlines()):
        return False  # a join-phase timer of Kafka's would fire within the wait
    if isinstance(a, long_wait) and not isinstance(a, (A.SyncTimeout, A.PendingSyncExpired)) \
            and s.group.status in (GS.COMPLETING_REBALANCE, GS.STABLE) \
            and (s.group.stale_sync or any(r is not None and not r.synced for r in s.group.records)) \
            and walk.completed_at + walk.rebalance_ms < walk.now + SESSION_MS + MARGIN_MS:
        return False  # the pending-sync timer would fire within the wait
    if isinstance(a, (A.SessionExpired, A.ExpireLive)):
        r = s.group.records[a.member]
        c = s.clients[a.member]
        running = isinstance(a, A.SessionExpired) and c.proc == Proc.UP and c.id == Id.CURRENT
        if r is not None and (r.awaiting_sync and not running or isinstance(a, A.ExpireLive) and r.joined
                              and s.group.status == GS.PREPARING_REBALANCE):
            return False  # (a SessionExpired of a parked JoinGroup, or of a running process's parked SyncGroup, is
            # sent: Kafka must not expire it; the model expires a parked SyncGroup's member only once its process died)
    return True


def late_expiry(walk: "_Walk", s: State, a: actions.Action, gen: Any) -> str | None:
    """``late-expiry``: the model may expire a running member's session only while nothing restarted it since the
    member resumed from its pause; Kafka restarts every member's session timer when a join phase completes
    (``completeClassicGroupJoin``, coordinator.md §3.4), and a running member then heartbeats long before it runs
    out. ``gen``: Kafka's generation before the step (the step was sent already)."""
    from groupspec.model import Id, Proc
    from groupspec.model import actions as A

    i = a.member
    if isinstance(a, A.SessionExpired) and walk.resumed.get(i) is not None \
            and s.clients[i].proc == Proc.UP and s.clients[i].id == Id.CURRENT:
        return (f"the model expires the session of c{i}, running since it resumed from a pause, but Kafka completed a "
                f"join phase with it since (generation {walk.resumed[i]}), which restarts every member's session timer")
    if isinstance(a, A.Resume):
        walk.resumed[i] = None
    elif i >= 0 and isinstance(a, (A.Pause, A.Crash, A.Start, A.LeaveGroup)):
        walk.resumed.pop(i, None)  # (another pause, or another process)
    if walk.kstate.get("generation") != gen:
        members = set(walk.kstate.get("members", []))
        for k, done in walk.resumed.items():
            if done is None and walk.ids[k] in members:
                walk.resumed[k] = walk.kstate.get("generation")
    return None


def leader_choice(s: State, t: State, walk: _Walk) -> bool:
    """The model chose a new leader in this step and so did Kafka, another one it could choose: at a completed join
    phase a member that had joined; when the leader was removed, any member left."""
    kleader = walk.slot_of.get(walk.kstate.get("leader") or "", -1)
    g0, g1 = s.group, t.group
    if g1.leader == g0.leader or kleader < 0 or g1.records[kleader] is None:
        return False
    if g1.generation == g0.generation + 1:
        return g0.records[kleader] is not None and g0.records[kleader].joined  # type: ignore[union-attr]  # (tested)
    return g0.records[g0.leader] is not None and g1.records[g0.leader] is None


# The model's abstractions the walks step around (docs/specification.md, "The model against Kafka's coordinator").
ABSTRACTIONS = {
    "expiry-while-parked":
        "the model may expire a member whose JoinGroup or follower's SyncGroup is parked (ExpireLive, and "
        "SessionExpired of a parked SyncGroup whose process died); Kafka's hasSatisfiedHeartbeat keeps such a "
        "member alive (a new member only until the 5-minute new-member join timeout) and removes it later, by the "
        "rebalance or pending-sync timer or once its request is answered: the same removal, a step later",
    "leader-choice":
        "when the leader did not rejoin, the model elects the lowest slot that did, Kafka the first joined member "
        "in its member map's order (random member ids): both are a joined member; when the leader is removed, the "
        "model elects the lowest slot left, Kafka the first in that order; the walk ends there",
    "pending-only":
        "NOT EXPLAINED YET (two-step-join only): when the last member leaves a join phase while a pending member id "
        "is outstanding, the model completes the phase with that id at once when it joins; Kafka 4.3.1 ends in a "
        "new join phase one generation higher (an empty generation completed first, then a join from Empty with "
        "the initial delay); the walks do not enter that state until this is resolved in the model",
    "time":
        "the model counts no time: a step that waits a session or longer (an expiry, a timer) is taken only when no "
        "other timer would run out on the way in Kafka (no initial delayed join running, no other pending member "
        "id, whose session no request can refresh)",
}


def run_walks(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str, budget: int,
              walks: int, steps: int, seed: int = 20261128, only: frozenset[int] | None = None,
              bias: str = "") -> str | None:
    """``walks`` seeded random walks of the model (whatever ``groupspec.model`` is loaded now) on Kafka; the first
    difference as one paragraph, or None. ``only``: just these walks (each is seeded on its own: the campaign sends a
    mutant along the walks that reach its change, :mod:`.reach`); ``bias``: a name in ``BIASES`` (the steps it
    favours are taken more often)."""
    from .reach import current

    # a classic page (initial_delay: not on the Spec interface)
    proto: Any = instance(variant, assignor, members, partitions, topics, faults, budget)
    kafka = oracle()
    names = [f"t{k}" for k in range(topics)]
    rec = current()  # a traced baseline: each walk's lines recorded on their own (``seeded``)
    for w, rng in seeded(walks, seed, only):
        kafka.reset({"initial_rebalance_delay_ms": INITIAL_DELAY_MS if proto.initial_delay else 0, "topics": {n: partitions for n in names}})
        walk = _Walk(proto, kafka, names, REBALANCE_MS[w % 2])
        s = proto.init_states()[0]
        path: list[str] = []
        for _n in range(steps):
            succ = [(a, t) for a, t in proto.successors(s) if mirrored(s, a, t, walk)]
            if not succ:
                break
            if bias:
                succ = BIASES[bias](s, succ, rng, walk)
            a, t = succ[rng.randrange(len(succ))]
            path.append(repr(a))
            gen = walk.kstate.get("generation")
            got = walk.kafka_answers(walk.kafka_step(s, a, t))
            want = walk.model_answers(s, a, t)
            why = late_expiry(walk, s, a, gen)
            if why is None and got != want:
                why = f"answers: model {want}, Kafka {got}"
            elif why is None:
                why = walk.compare_group(t) or missed_expiry(proto, t, walk)
            if why is not None and why.startswith("leader") and leader_choice(s, t, walk):
                if rec is not None:
                    rec.not_fixed()  # on another run Kafka may choose the model's leader and the walk go on
                break  # Kafka chose another of the joined members: a free choice (ABSTRACTIONS); this walk ends
            if why is not None:
                raise Divergence(f"kafka:{variant} walk {w} (seed {seed}) step {len(path)} {path[-1]}: {why}; "
                                 f"path {' '.join(path)}")
            s = t
    return None


def check(job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run: the walks of one job (or those in ``only``); a divergence (or the model raising) as its
    failure, else None."""
    return checked(lambda *a: run_walks(*a[:9], only=only, bias=a[9] if len(a) > 9 else ""), job)  # type: ignore[misc]  # (a job: run_walks' nine positionals, then the bias if any)


def checked(run: Callable[..., str | None], job: tuple[Any, ...]) -> str | None:
    """``run(*job)`` on the shared oracle, a divergence as its failure (every family's walks go through here).

    A check interrupted mid-request (the campaign's per-mutant time limit) may leave an answer in the oracle's pipe:
    the next check then starts a fresh oracle process."""
    o = _ORACLE.get("o")
    if o is not None and _ORACLE.get("busy"):
        o.close()
        del _ORACLE["o"]
    _ORACLE["busy"] = True
    try:
        why = run(*job)
    except Divergence as e:
        why = str(e)
    except (TimeoutError, KeyboardInterrupt):
        raise  # still busy: the next check restarts the oracle
    except Exception:
        _ORACLE["busy"] = False  # the model raised between two requests: the oracle is in step
        raise
    _ORACLE["busy"] = False
    return why
