"""The KIP-848 model's own paths replayed on Apache Kafka's group coordinator (the consumer half of the Kafka walks).

As :mod:`.kafka_walks` does for the classic variants: a seeded random walk over the (possibly mutated) model of
``consumer`` / ``consumer-static`` (``model/consumer.py``), every step sent to Kafka's coordinator (the oracle,
``groupspec.oracle``) as the ConsumerGroupHeartbeat or the passing of time it stands for, and the two compared
after every step:

* the answer to every heartbeat the step sends: its error, and when there is none the member epoch and the
  assignment (the model's ``Consumer.handle``);
* the group: its group epoch, which member slots it has a record for, each member's state
  (STABLE / UNREVOKED_PARTITIONS / UNRELEASED_PARTITIONS), epoch, assigned and pending-revocation partitions, and
  (when Kafka has computed it: ``target-computed-later``) the assignment epoch and each member's target.

Epochs are compared through the documented renaming ``epoch-origin`` (a positive model epoch ``e`` is Kafka's
``e + 1``; docs/conformance.md, "Decisions on the open corners"); a static member that left (epoch -2) is compared
as Kafka stores it (``static-left-epoch``: Kafka's epoch -2, the model's ``left`` flag).

How a model step becomes Kafka's input (slot ``i``'s process ``n`` is member id ``m<i>-<n>``, static slot ``i`` is
``group.instance.id`` ``i<i>``): ``ConsumerGroupHeartbeat`` a full heartbeat (the client's epoch, subscription and
owned partitions, the rebalance timeout); ``LeaveGroup`` a heartbeat with epoch -1 (-2 static); ``SessionExpired``,
``ExpireLive`` and ``RebalanceTimeoutFence`` time running out for that member alone: every other member whose
heartbeat is a no-op in the model heartbeats just before (its answer compared with the model's), and the step is
taken only if every other member's session outlives the wait. With the in-flight faults, ``LoseHeartbeatAnswer``
and ``DelayHeartbeatAnswer`` send the same full heartbeat (only the answer's delivery differs), and
``DeliverOffsetCommit`` an OffsetCommit (v9) with the epoch and partitions it was sent with (its answer against the
model's ``commit_answer``). Steps in a client only (``RevokePartitions``, a pause, a resume, a crash, a start, a
subscription change, a late answer received, an OffsetCommit sent, an early restart) send nothing: the group must
be as it was.

Stepped around (``ABSTRACTIONS``): the model's rebalance-timeout fence, the revocation Kafka skips, the
assignor's free choice, the metadata change, the time the model does not count.

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``groupspec.oracle``.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Callable, TypeAlias

if TYPE_CHECKING:  # (the model is imported inside the functions: after a mutant is applied)
    from groupspec.model import actions, consumer as model_consumer

    KState: TypeAlias = model_consumer.ConsumerState  # the KIP-848 page's state
    from groupspec.oracle import KafkaOracle

from .kafka_walks import checked, oracle
from .mirror_driver import Divergence, Job, follow, instance, partition_names

SESSION_MS = 10_000
# The rebalance timeout the members send: longer than any walk lasts, so Kafka's rebalance timer never fires
# (``rebalance-timeout-fence``).
REBALANCE_MS = 3_600_000

# Every other member's session must outlive a wait by this much: the requests of the steps up to the next wait
# (one millisecond each, a few hundred at most) must not run it out either.
MARGIN_MS = 1_000

# The walks: (variant, assignor, members, partitions, topics, faults, budget, walks, steps)
CONSUMER_WALK_JOBS: tuple[Job, ...] = (
    ("consumer", "uniform", 3, 3, 1, "join,leave,crash,timeout,zombie", 6, 300, 40),
    ("consumer", "range", 3, 4, 2, "join,leave,crash,timeout,zombie,subscription", 6, 300, 40),
    ("consumer", "uniform", 2, 3, 2, "join,leave,crash,timeout,zombie,subscription", 6, 200, 40),
    # subscription changes alone: a member changing its subscription while it still owns partitions pending
    # revocation (Kafka drops the unsubscribed topics' partitions at once) is met in most walks
    ("consumer", "range", 2, 4, 2, "join,subscription", 6, 300, 40),
    ("consumer-static", "uniform", 3, 3, 1, "join,leave,crash,timeout,zombie", 6, 300, 40),
    ("consumer-static", "range", 3, 4, 2, "join,leave,crash,timeout,zombie,subscription", 6, 200, 40),
    # requests and answers in flight (model/consumer_flight.py): a lost or late heartbeat answer is the same request
    # to Kafka, a late OffsetCommit is sent when the model delivers it; the client's epoch then differs from its
    # member's, and the previous-epoch tolerance, FENCED_MEMBER_EPOCH, the epoch-0 rejoin of a fenced member and
    # STALE_MEMBER_EPOCH are met
    # (a killer's name is its variant, assignor, bounds, walks and steps, not its faults: these differ from the jobs
    # above in their walks or steps so that every name is one job)
    ("consumer", "uniform", 3, 3, 1, "join,leave,crash,timeout,lose-answer,late-answer,late-commit", 6, 400, 40),
    # lost answers alone: a client two answers behind its member (the previous epoch Kafka keeps) in most walks
    ("consumer", "uniform", 3, 3, 1, "join,lose-answer", 6, 300, 30),
    ("consumer", "range", 3, 4, 2, "join,crash,subscription,lose-answer,late-answer,late-commit", 6, 400, 40),
    ("consumer-static", "uniform", 3, 3, 1, "join,leave,crash,timeout,lose-answer,late-answer,late-commit,early-restart",
     6, 400, 40),
    # issue 30, the KIP-848 family's last eleven: a dynamic member's process that crashes and comes back is a new
    # member to Kafka (its client makes up a new member id; the old member lingers until its session runs out), so
    # early-restart selected without static members must add no step; and a one-topic consumer's subscription
    # change must not leave it a member subscribed to nothing (Kafka's client turns subscribe([]) into unsubscribe)
    ("consumer", "uniform", 2, 2, 1, "join,crash,subscription,early-restart", 4, 100, 30),
)

# The model's abstractions and Kafka's choices the walks step around (docs/oracle.md, "The model's walks").
ABSTRACTIONS = {
    "epoch-origin":
        "mapped, not stepped around: Kafka's first group epoch is 2 where the model's is 1; a positive model epoch "
        "e is compared with Kafka's e + 1 (docs/conformance.md)",
    "static-left-epoch":
        "mapped: a static member that left with epoch -2 is stored by Kafka with epoch -2, by the model with its "
        "last epoch and `left`; Kafka's -2 is what the model's `left` must show",
    "target-computed-later":
        "mapped: after a removal Kafka bumps the group epoch and computes the target at the next heartbeat; the "
        "assignment epoch and targets are compared only when Kafka's assignment epoch is its group epoch",
    "static-takeover-previous-epoch":
        "mapped: a static member's new process that takes over its departed member (epoch -2) gets epoch 0 and "
        "previous epoch 0 in Kafka before it is reconciled; the model reconciles from the departed member's epochs. "
        "That member's previous epoch is not compared until its epoch moves again (no request can carry the old "
        "epochs: the new process knows only 0 and its first answer's)",
    "revocation-already-done":
        "stepped around: a heartbeat that in the model enters UNREVOKED_PARTITIONS although the request already "
        "reports none of the partitions to revoke (a static member taking over its record with nothing owned) is "
        "not taken; Kafka moves such a member to the new epoch in that heartbeat (docs/conformance.md keeps the "
        "model's two steps deliberately)",
    "assignor-choice":
        "the walk ends: where the uniform assignor has several balanced targets, Kafka's UniformAssignor may pick "
        "another one (same sizes per member, same partitions in all); what follows depends on the choice",
    "rebalance-timeout-fence":
        "mapped: the model's RebalanceTimeoutFence (a paused member that has not revoked) removes the member as its "
        "session expiry does; on Kafka the session runs out (the rebalance timeout sent is an hour, longer than "
        "any walk), the same removal",
    "time":
        "the model counts no time: an expiry is taken only when every other member either heartbeats a no-op "
        "just before it or has a session that outlives the wait; a member whose heartbeat would change something "
        "and whose session would run out on the way blocks the step",
    "metadata":
        "not walked: the oracle has no metadata change (the `partitions` fault)",
}


class _Walk:
    compare_previous = True  # compare each member's previous epoch with Kafka's (the tests switch it off to see the
    # old previous-epoch rule caught by the answers alone)

    # proto: a KIP-848 page (it reads the page's own fields, not on the Spec interface)
    def __init__(self, proto: Any, kafka: KafkaOracle, topic_names: list[str]) -> None:
        self.p = proto
        self.k = kafka
        self.cfg = proto.cfg
        self.topics = topic_names
        self.static = bool(proto.static_members)
        self.now = 0
        self.proc_no = [0] * self.cfg.members
        self.slot_of: dict[str, int] = {}
        self.last_hb: dict[str, int] = {}  # member id -> when Kafka last heard from it (its session's start)
        self.took_over: dict[int, int] = {}  # static slot -> its member's epoch when its new process took it over
        self.kstate: dict[str, Any] = {}
        self.where = partition_names(self.cfg, topic_names)
        self.bit_of = {w: b for b, w in enumerate(self.where)}

    def mid(self, i: int) -> str:
        return f"m{i}-{self.proc_no[i]}"

    def mask(self, parts: Any) -> int:
        m = 0
        for tp in parts or ():
            m |= 1 << self.bit_of[(tp[0], tp[1])]
        return m

    def tps(self, mask: int) -> list[list[Any]]:
        return [list(self.where[b]) for b in range(self.cfg.partitions) if mask >> b & 1]

    def send(self, op: dict[str, Any], at: int | None = None) -> list[dict[str, Any]]:
        self.now = max(self.now + 1, at or 0)
        ans = self.k.send({"at": self.now, "group_id": "g", "state_group": "g", **op})
        self.kstate = ans["state"]
        responses: list[dict[str, Any]] = ans["responses"]
        return responses

    def heartbeat(self, i: int, epoch: int, owned: int, topics: int, at: int | None = None) -> dict[str, Any]:
        """One full ConsumerGroupHeartbeat from slot ``i``'s process; Kafka's answer."""
        mid = self.mid(i)
        self.slot_of[mid] = i
        kepoch = epoch + 1 if epoch > 0 else epoch  # epoch-origin
        names = [self.topics[t] for t in range(self.cfg.topics) if topics >> t & 1]
        out = self.send({"op": "ConsumerGroupHeartbeat", "conn": mid, "member_id": mid, "member_epoch": kepoch,
                         "instance_id": f"i{i}" if self.static else None, "rebalance_timeout_ms": REBALANCE_MS,
                         "subscribed_topic_names": names, "subscribed_topic_regex": None, "server_assignor": None,
                         "owned": self.tps(owned)}, at)
        r = next(x for x in out if x["conn"] == mid and x["request"] == "ConsumerGroupHeartbeat")
        if epoch >= 0 and r["error"] == "NONE":
            # a static member's leave (-2) does not restart its session: it runs out from the last one; nor does a
            # heartbeat Kafka refuses (FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID)
            self.last_hb[mid] = self.now
        return r

    def commit(self, i: int, epoch: int, parts: int) -> tuple[Any, ...]:
        """One OffsetCommit (v9) from slot ``i``'s process with the model's ``epoch`` for ``parts``; Kafka's answer as
        the model words it: ``("OK",)`` if every partition is accepted, else the errors it gave."""
        mid = self.mid(i)
        kepoch = epoch + 1 if epoch > 0 else epoch  # epoch-origin
        out = self.send({"op": "OffsetCommit", "conn": mid, "version": 9, "member_id": mid,
                         "instance_id": f"i{i}" if self.static else None, "generation": kepoch,
                         "offsets": [[*tp, 1] for tp in self.tps(parts)]})
        r = next(x for x in out if x["conn"] == mid and x["request"] == "OffsetCommit")
        errors = sorted(set(r["error"].split("+")) - {"NONE"})
        return tuple(errors) if errors else ("OK",)

    def answer(self, r: dict[str, Any]) -> tuple[Any, ...]:
        if r["error"] != "NONE":
            return (r["error"],)
        e = r["member_epoch"]
        return ("OK", e - 1 if e > 0 else e, self.mask(r.get("assignment")))

    # ------------------------------------------------------------------ the model's view
    def model_answer(self, s: KState, i: int) -> tuple[Any, ...]:
        _g, ans = self.p.handle(s, i)
        return tuple(ans)

    def noop(self, s: KState, j: int) -> bool:
        from groupspec.model import Proc

        c = s.clients[j]
        return c.proc == Proc.UP and c.epoch > 0 and c.answer is None and self.p.heartbeat(s, j) == s

    def kafka_members(self) -> dict[str, Any]:
        return self.kstate.get("members", {}) if self.kstate.get("type") == "consumer" else {}

    def kafka_id(self, i: int) -> str | None:
        return next((m for m in self.kafka_members() if self.slot_of.get(m) == i), None)

    def wait_ok(self, s: KState, i: int) -> bool:
        """Whether member ``i``'s session can run out on Kafka with no other member's running out on the way."""
        mid = self.kafka_id(i)
        if mid is None:
            return False
        deadline = self.last_hb[mid] + SESSION_MS
        if deadline - 10 <= self.now + 1:
            return False  # no room for the keep-alive heartbeats before it
        for other in self.kafka_members():
            if other == mid:
                continue
            j = self.slot_of.get(other, -1)
            if (j >= 0 and other == self.mid(j) and self.noop(s, j)
                    and self.last_hb.get(other, 0) + SESSION_MS > deadline + MARGIN_MS):
                continue  # kept alive just before the wait (its session must last until then)
            if self.last_hb.get(other, 0) + SESSION_MS <= deadline + MARGIN_MS:
                return False
        return True

    # ------------------------------------------------------------------ one model step on Kafka
    def step(self, s: KState, a: actions.Action, t: KState) -> str | None:
        """Send what ``a`` stands for; the first difference in the answers, or None."""
        from groupspec.model import actions as A
        from groupspec.model import consumer as mc
        from groupspec.model import consumer_flight as mf

        STATIC_LEAVE_EPOCH, LEAVE_EPOCH = mc.STATIC_LEAVE_EPOCH, mc.LEAVE_EPOCH
        ConsumerGroupHeartbeat, RebalanceTimeoutFence = mc.ConsumerGroupHeartbeat, mc.RebalanceTimeoutFence

        i = a.member
        if isinstance(a, (ConsumerGroupHeartbeat, mf.LoseHeartbeatAnswer, mf.DelayHeartbeatAnswer)):
            # a lost or late answer: the same request, handled at once; only its delivery to the client differs
            c = s.clients[i]
            r0, r1 = s.group.members[i], t.group.members[i]
            if self.static and c.epoch == 0 and r0 is not None and r0.left and r1 is not None:
                self.took_over[i] = r1.epoch  # static-takeover-previous-epoch
            want = self.model_answer(s, i)
            got = self.answer(self.heartbeat(i, c.epoch, c.owned, c.topics))
            if got != want:
                return f"answer to m{i}: model {want}, Kafka {got}"
        elif isinstance(a, mf.DeliverOffsetCommit):
            # the late OffsetCommit reaches the coordinator now (it was sent with the epoch the client had then)
            epoch, parts = s.clients[i].commit  # type: ignore[misc]  # (a commit in flight: it is there)
            want = (self.p.commit_answer(s, i, epoch, parts),)
            got = self.commit(i, epoch, parts)
            if got != want:
                return f"answer to m{i}'s OffsetCommit (epoch {epoch}, {self.tps(parts)}): model {want}, Kafka {got}"
        elif isinstance(a, A.LeaveGroup):
            c = s.clients[i]
            ep = STATIC_LEAVE_EPOCH if self.static else LEAVE_EPOCH
            r = self.heartbeat(i, ep, 0, c.topics)
            if r["error"] != "NONE" or r["member_epoch"] != ep:
                return f"answer to m{i}'s leave: model (OK, {ep}), Kafka ({r['error']}, {r['member_epoch']})"
        elif isinstance(a, (A.SessionExpired, A.ExpireLive, RebalanceTimeoutFence)):
            mid = self.kafka_id(i)
            deadline = self.last_hb[mid] + SESSION_MS  # type: ignore[index]  # (a member the coordinator has: its id)
            first = True
            for j in range(self.cfg.members):
                if j != i and self.kafka_id(j) == self.mid(j) and self.noop(s, j):
                    c = s.clients[j]
                    want = self.model_answer(s, j)
                    got = self.answer(self.heartbeat(j, c.epoch, c.owned, c.topics,
                                                     at=deadline - 10 if first else None))
                    first = False
                    if got != want:
                        return f"answer to m{j}'s keep-alive heartbeat: model {want}, Kafka {got}"
            self.send({"op": "advance"}, at=deadline + 1)
        if i >= 0:  # the client side: a new process on the slot
            if isinstance(a, (A.Crash, A.LeaveGroup)):
                self.proc_no[i] += 1
        return None

    # ------------------------------------------------------------------ comparing the group
    def compare_group(self, t: KState) -> str | None:
        g = t.group
        ks = self.kstate
        if ks.get("type") != "consumer":
            if g.epoch == 0 and not any(m is not None for m in g.members):
                return None
            return f"Kafka has no consumer group; the model's group epoch is {g.epoch}"
        sh: Callable[[int], int] = lambda e: e + 1 if e > 0 else e  # noqa: E731 - epoch-origin
        if ks["group_epoch"] != sh(g.epoch):
            return f"group epoch: model {g.epoch} (Kafka's {sh(g.epoch)}), Kafka {ks['group_epoch']}"
        kmem = {self.slot_of.get(m, -1): v for m, v in ks["members"].items()}
        mmem = {k: r for k, r in enumerate(g.members) if r is not None}
        if sorted(kmem) != sorted(mmem):
            return f"members (slots): model {sorted(mmem)}, Kafka {sorted(kmem)}"
        for k in list(self.took_over):
            if k not in mmem or mmem[k].left or mmem[k].epoch != self.took_over[k]:
                del self.took_over[k]  # its epoch moved (or it is gone): its previous epoch is compared again
        for k, r in mmem.items():
            v = kmem[k]
            want: tuple[Any, ...] = (r.state.name, -2 if r.left else sh(r.epoch), r.assigned, r.revoking)
            got: tuple[Any, ...] = (v["state"], v["epoch"], self.mask(v["assigned"]), self.mask(v["revoking"]))
            if r.left:  # static-left-epoch: Kafka's state of a departed member is not the model's to say
                want, got = want[1:], got[1:]
            if want != got:
                return f"member m{k} (state, epoch, assigned, revoking): model {want}, Kafka {got}"
            if (self.compare_previous and not r.left and k not in self.took_over
                    and sh(r.previous_epoch) != v["previous_epoch"]):
                return (f"member m{k}'s previous epoch: model {r.previous_epoch} (Kafka's {sh(r.previous_epoch)}), "
                        f"Kafka {v['previous_epoch']}")
        return None

    def compare_target(self, t: KState) -> str | None:
        """The assignment epoch and targets, when Kafka has computed them (``target-computed-later``)."""
        g = t.group
        ks = self.kstate
        if ks.get("type") != "consumer" or ks["assignment_epoch"] != ks["group_epoch"]:
            return None
        sh = g.target_epoch + 1 if g.target_epoch > 0 else g.target_epoch
        if ks["assignment_epoch"] != sh:
            return f"assignment epoch: model {g.target_epoch} (Kafka's {sh}), Kafka {ks['assignment_epoch']}"
        for m, v in ks["members"].items():
            k = self.slot_of.get(m, -1)
            if k >= 0 and g.members[k] is not None and self.mask(v["target"]) != g.target[k]:
                return f"target of m{k}: model {self.tps(g.target[k])}, Kafka {v['target']}"
        return None

    def choice(self, t: KState) -> bool:
        """Both targets balanced over the same partitions (``assignor-choice``): Kafka picked another one."""
        if self.p.assignor_name != "uniform":
            return False
        g = t.group
        mt = [bin(g.target[k]).count("1") for k, r in enumerate(g.members) if r is not None]
        kt = [len(v["target"]) for v in self.kafka_members().values()]
        whole = 0
        for k, r in enumerate(g.members):
            if r is not None:
                whole |= g.target[k]
        kwhole = 0
        for v in self.kafka_members().values():
            kwhole |= self.mask(v["target"])
        return (bool(mt) and sorted(mt) == sorted(kt) and max(mt) - min(mt) <= 1 and whole == kwhole)


def mirrored(s: KState, a: actions.Action, t: KState, walk: _Walk) -> str | None:
    """None if the walk may take ``a``; else the abstraction that steps it around."""
    from groupspec.model import actions as A
    from groupspec.model import consumer as mc
    from groupspec.model import consumer_flight as mf

    MemberState, RebalanceTimeoutFence = mc.MemberState, mc.RebalanceTimeoutFence

    if isinstance(a, (A.SessionExpired, A.ExpireLive, RebalanceTimeoutFence)):
        return None if walk.wait_ok(s, a.member) else "time"
    if isinstance(a, A.AddPartition):
        return "metadata"
    if isinstance(a, (mc.ConsumerGroupHeartbeat, mf.LoseHeartbeatAnswer, mf.DelayHeartbeatAnswer)):
        i = a.member
        r0, r1 = s.group.members[i], t.group.members[i]
        c = s.clients[i]
        if r1 is not None and r1.state == MemberState.UNREVOKED_PARTITIONS and not r1.revoking & c.owned \
                and (r0 is None or r0.left or r0.state != MemberState.UNREVOKED_PARTITIONS):
            return "revocation-already-done"
    return None


def fixed_rule(s: KState, a: actions.Action, t: KState, walk: _Walk) -> str | None:
    """The model difference these walks found and the model then fixed that step ``a`` exercises (counted as
    ``checked <name>``), or None: a static leave while partitions are pending revocation, a subscription change
    that drops partitions of a member still revoking, a reconciliation that keeps the member's epoch (Kafka's
    previous epoch becomes the epoch), an epoch-0 rejoin of a member Kafka kept with another subscription."""
    from groupspec.model import actions as A
    from groupspec.model import consumer as mc
    from groupspec.model import consumer_flight as mf

    r0 = s.group.members[a.member] if a.member >= 0 else None
    if isinstance(a, A.LeaveGroup) and walk.static and r0 is not None and r0.revoking:
        return "static-leave-revoking"
    r1 = t.group.members[a.member] if a.member >= 0 else None
    if not isinstance(a, (mc.ConsumerGroupHeartbeat, mf.LoseHeartbeatAnswer, mf.DelayHeartbeatAnswer)):
        return None
    c = s.clients[a.member]
    if (r0 is not None and r1 is not None and r0.topics != c.topics and r1.revoking & ~r0.revoking
            and r0.state == mc.MemberState.UNREVOKED_PARTITIONS):
        return "subscription-drops-at-once"
    if r0 is not None and not r0.left and c.epoch == 0 and r0.topics != c.topics:
        return "rejoin-subscription"
    if (r0 is not None and r1 is not None and not r0.left and r1.epoch == r0.epoch
            and r0.previous_epoch != r0.epoch and r1.previous_epoch == r0.epoch):
        return "previous-epoch-on-reconcile"
    return None


def seen(s: KState, a: actions.Action, proto: Any) -> str | None:
    """What step ``a`` meets that only requests and answers in flight reach (counted as ``seen <what>``): a
    heartbeat answered with an error, one accepted with the previous epoch, a late commit's answer."""
    from groupspec.model import consumer as mc
    from groupspec.model import consumer_flight as mf

    i = a.member
    if isinstance(a, mf.DeliverOffsetCommit):
        return f"commit {proto.commit_answer(s, i, *s.clients[i].commit)}"  # type: ignore[misc]  # (in flight: there)
    if not isinstance(a, (mc.ConsumerGroupHeartbeat, mf.LoseHeartbeatAnswer, mf.DelayHeartbeatAnswer)):
        return None
    c, r = s.clients[i], s.group.members[i]
    ans = proto.handle(s, i)[1][0]
    if ans != "OK":
        return f"heartbeat {ans}"
    if r is not None and c.epoch > 0 and c.epoch != r.epoch:
        return "heartbeat with the previous epoch"
    if r is not None and not r.left and c.epoch == 0:
        return "heartbeat with epoch 0 from a member kept"
    return None


def _fresh_walk(proto: Any, kafka: Any, names: list[str]) -> "_Walk":
    """Kafka's coordinator reset to an empty group on ``proto``'s topics (named ``names``), with the model's
    session and heartbeat intervals and its assignor, and a walk over it."""
    cfg = proto.cfg
    per_topic = {n: sum(1 for b in range(cfg.partitions) if cfg.topic_of[b] == k) for k, n in enumerate(names)}
    kafka.reset({"topics": per_topic, "consumer_session_timeout_ms": SESSION_MS,
                 "consumer_min_session_timeout_ms": SESSION_MS, "consumer_heartbeat_interval_ms": 1000,
                 "consumer_min_heartbeat_interval_ms": 1000, "consumer_assignors": [proto.assignor_name],
                 "consumer_assignment_interval_ms": 0, "consumer_assignor_offload": False})
    return _Walk(proto, kafka, names)


def run_walks(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str, budget: int,
              walks: int, steps: int, seed: int = 20261128, stats: dict[str, int] | None = None) -> str | None:
    """``walks`` seeded random walks of the KIP-848 model (as loaded now) on Kafka; raises :class:`Divergence`
    at the first difference. ``stats`` counts the steps taken and every abstraction stepped around."""
    proto = instance(variant, assignor, members, partitions, topics, faults, budget)
    kafka = oracle()
    names = [f"t{k}" for k in range(topics)]
    stats = stats if stats is not None else {}
    for w in range(walks):
        rng = random.Random(seed * 1000 + w)
        walk = _fresh_walk(proto, kafka, names)
        s = proto.init_states()[0]
        path: list[str] = []
        for _n in range(steps):
            succ = []
            for a, t in proto.successors(s):
                why = mirrored(s, a, t, walk)
                if why is None:
                    succ.append((a, t))
                else:
                    stats[why] = stats.get(why, 0) + 1
            if not succ:
                break
            a, t = succ[rng.randrange(len(succ))]
            path.append(repr(a))
            stats["steps"] = stats.get("steps", 0) + 1
            fixed = fixed_rule(s, a, t, walk)
            if fixed is not None:
                stats[f"checked {fixed}"] = stats.get(f"checked {fixed}", 0) + 1
            met = seen(s, a, proto) if proto.in_flight else None
            if met is not None:
                stats[f"seen {met}"] = stats.get(f"seen {met}", 0) + 1
            why = walk.step(s, a, t)
            target = walk.compare_target(t)
            if target is not None and target.startswith("target") and walk.choice(t):
                stats["assignor-choice"] = stats.get("assignor-choice", 0) + 1
                break  # Kafka's assignor chose another balanced target: a free choice; this walk ends
            why = why or target or walk.compare_group(t)
            if why is not None:
                raise Divergence(f"kafka:{variant}·{assignor} walk {w} (seed {seed}) step {len(path)} {path[-1]}: "
                                 f"{why}; path {' '.join(path)}")
            s = t
        stats["walks"] = stats.get("walks", 0) + 1
    return None


def check(job: tuple[Any, ...]) -> str | None:
    """A killer's run (as :func:`.kafka_walks.check`): the walks of one job; a divergence as its failure."""
    return checked(run_walks, job)


# Fixed Kafka runs the model must have (issue 30, docs/specification.md "KIP-848: the faults at epoch 0"): a run is a
# path of the model's action names; every step must be a step of the model (as loaded now) and Kafka's coordinator
# must answer and keep the group as the model does. A rule that leaves out runs Kafka has fails here, where the
# walks above (which follow the model) cannot see it.
# (name, (variant, assignor, members, partitions, topics, faults, budget), path)
KAFKA_RUNS: tuple[tuple[str, tuple[Any, ...], tuple[str, ...]], ...] = (
    # the join is handled, its answer is on its way, the session runs out (client at epoch 0), the answer arrives,
    # the next heartbeat is UNKNOWN_MEMBER_ID (the member is gone), the one after joins again
    ("expiry-at-epoch-0", ("consumer", "uniform", 1, 2, 1, "late-answer,timeout", 2),
     ("DelayHeartbeatAnswer(0)", "ExpireLive(0)", "ReceiveHeartbeatAnswer(0)", "ConsumerGroupHeartbeat(0)",
      "ConsumerGroupHeartbeat(0)")),
    # the same with the process stalled (client at epoch 0) instead: its member's session runs out while it is paused
    ("pause-at-epoch-0", ("consumer", "uniform", 1, 2, 1, "late-answer,zombie", 2),
     ("DelayHeartbeatAnswer(0)", "Pause(0)", "SessionExpired(0)", "Resume(0)", "ReceiveHeartbeatAnswer(0)",
      "ConsumerGroupHeartbeat(0)", "ConsumerGroupHeartbeat(0)")),
)


def run_path(job: tuple[Any, ...], path: tuple[str, ...]) -> str | None:
    """One fixed run on the model (as loaded now) and on Kafka's coordinator: None, or what went wrong (a step the
    model does not have, a step the walks cannot send to Kafka, or Kafka's answer or group differing)."""
    variant, assignor, members, partitions, topics, faults, budget = job
    proto = instance(variant, assignor, members, partitions, topics, faults, budget)
    kafka = oracle()
    walk = _fresh_walk(proto, kafka, [f"t{k}" for k in range(topics)])

    def take(s: Any, a: Any, t: Any) -> str | None:
        why = mirrored(s, a, t, walk)
        if why is not None:
            return f"not sent to Kafka ({why})"
        return walk.step(s, a, t) or walk.compare_group(t)

    return follow(proto, path, take)
