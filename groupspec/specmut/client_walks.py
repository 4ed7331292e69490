"""The model's own paths replayed on the reference *client*: the client half of the reverse direction.

The Kafka walks (:mod:`.kafka_walks`) send the model's steps to Kafka's group coordinator and compare the
coordinator's answers and group; what a *member* does with an answer (which partitions it still owns after an error,
whether it forgets its member id or its generation, whether it rejoins, whether it goes fatal) the coordinator
never sees. Here the model leads again, and each member slot of the model is mirrored by a reference classic client
(``groupspec.reference.classic.Consumer``: Kafka's ``AbstractCoordinator`` + ``ConsumerCoordinator``, written
without the model): every answer the model's member receives is handed to the client as the response to the
request it has in flight, every request the model's member sends must be one the client sends, and after every step
each running member of the model must be where its client is:

* its member id held or cleared (``Id.NONE`` against an empty member id), its generation (the model's own numbers
  are the ones the mirror's answers carry), its member state (UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE,
  STABLE), fatal (FENCED_INSTANCE_ID) or not;
* the partitions it owns: the client's, except that a client whose generation or member id was reset owns none (its
  next poll reports them lost in ``onJoinPrepare`` before it fetches or commits anything);
* whether it will send a JoinGroup at its next poll: the model's member does (UNJOINED, or a rejoin requested) if
  and only if the client does (UNJOINED, ``rejoin_needed``, or a subscription changed since its last JoinGroup), a
  leader's metadata change aside (the client notices it at any poll, the model's leader in a stable group: the
  model's ``NoticeMetadata`` must find the client noticing it; and in ``static-leader-snapshot``, whose leader
  notices by its assignment snapshot as Kafka's does, a STABLE leader's client that notices must find the model's
  leader able to: ``NoticeMetadata`` among the model's next steps).

How a model step becomes the client's input: ``SendJoinGroup`` is a poll (the JoinGroup it sends must carry the
member id the model's member holds; a static member's JoinGroup that Kafka answers at once in a stable group, a
restart, must carry the topics, owned partitions and generation the model's record then holds, which Kafka's
coordinator takes from it); ``ReceiveJoinResponse`` the JoinGroup response (the leader's with every member's
subscription as that member's client sent it), then the SyncGroup the client sends; ``ReceiveSyncResponse`` the
SyncGroup response with the model's assignment; ``ReceiveError`` the error as the response to the request the
client has in flight; ``Heartbeat`` the client's heartbeat; ``Start`` a new client (its FindCoordinator answered),
``Crash`` and ``LeaveGroup`` its end, ``ChangeSubscription`` ``subscribe``, ``AddPartition`` the metadata. A
request the model's step answers at once (a JoinGroup with an id the coordinator no longer knows, the SyncGroup
after a JoinGroup response, a heartbeat) is answered as Kafka's coordinator answers it, from the group before the
step (``join_error``, ``sync_error``, ``heartbeat_error``: Kafka's own order of checks). The client's follow-up
JoinGroup, which Kafka's ``joinGroupIfNeeded`` loop sends within the same poll, waits for the model's
``SendJoinGroup`` (the model takes the two as two steps).

The rolling upgrade (``eager-to-cooperative``): each client is configured with its model member's assignor list
(``Bounce`` closes it and starts a new one with the next list); the mirror's coordinator answers a JoinGroup that
lists no protocol every member lists with INCONSISTENT_GROUP_PROTOCOL (Kafka's ``supportsProtocols``, checked before
the member id), votes at each join completion (``selectProtocol``: the model's ``Group.protocol`` must be a winner)
and gives the leader the members as they were then, with their metadata for the selected protocol (so the reference
leader's ``validateCooperativeAssignment`` judges the same assignment); where the model says the upgrade is over
(``upgraded``), every client must run ``[cooperative-sticky]`` alone, STABLE in a cooperative-sticky generation; and in
a generation of the old assignor (``range``: Kafka's answer) the leader's SyncGroup must carry the model's target. The
broken variant ``upgrade-one-bounce`` (a ``[range, cooperative-sticky]`` consumer is COOPERATIVE) is mirrored by clients
whose ``range`` declares COOPERATIVE support, a custom assignor in Kafka's terms (``stale-leader-validation`` aside).

The Connect worker: :mod:`.connect_walks` (a subclass of this mirror). Not mirrored: the coordinator-side assignment
(another client), the KIP-394 two-step join
(MEMBER_ID_REQUIRED), the leader's assignment (the model's assignors are checked against Kafka's by ``assignor:*``):
the leader's SyncGroup is sent, its content not compared (but in the upgrade's generations of the old assignor).

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``groupspec.reference`` (the
classic client and its bytes).
"""
from __future__ import annotations

from typing import Any

from groupspec.reference.classic import (
    Assignment,
    Consumer,
    ConsumerConfig,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupRequest,
    JoinGroupResponse,
    MemberState,
    SyncGroupRequest,
    SyncGroupResponse,
    decode_assignment,
    encode_assignment,
)
from groupspec.reference.errors import Error

from .mirror_driver import Divergence, Family, Job, bits, partition_names
from .mirror_driver import check as drive

# The walks: (variant, assignor, members, partitions, topics, faults, budget, walks, steps)
CLIENT_WALK_JOBS: tuple[Job, ...] = (
    ("eager", "range", 3, 3, 2, "join,leave,crash,timeout,zombie,subscription,partitions", 6, 300, 50),
    ("eager", "sticky", 3, 2, 1, "join,leave,crash,timeout,zombie,sync-timeout,late-expiry", 6, 300, 50),
    ("cooperative", "sticky", 3, 3, 2, "join,leave,crash,timeout,zombie,subscription,partitions", 6, 300, 50),
    ("static", "range", 3, 3, 2, "join,crash,timeout,zombie,subscription,partitions,sync-timeout,late-expiry", 6, 300, 50),
    ("static-leader-snapshot", "range", 3, 3, 2, "join,crash,timeout,zombie,partitions", 6, 300, 50),
    ("static-cooperative", "sticky", 2, 3, 2, "join,crash,timeout,zombie,subscription", 6, 300, 50),
    # no walks: the instance explored, every step of every state (``explore``), at small bounds
    ("eager", "range", 2, 2, 2, "join,leave,crash,timeout,zombie,subscription,partitions", 2, 0, 0),
    ("eager", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie,late-expiry", 3, 0, 0),
    ("cooperative", "sticky", 2, 3, 1, "join,leave,crash,timeout,zombie,partitions", 2, 0, 0),
    # two static members restarted (a process back while its old one's SyncGroup is parked)
    ("static", "range", 2, 2, 1, "join,crash", 4, 0, 0),
    # a subscription narrowed by a restart: the snapshot leader must not notice it (no partitions added here)
    ("static-leader-snapshot", "range", 2, 2, 2, "join,crash,subscription", 5, 0, 0),
    # the rolling upgrade: two assignor lists per member, the protocol check and the vote (range: Kafka's answer, so
    # the leader's validateCooperativeAssignment runs on what the model's leader assigns)
    ("eager-to-cooperative", "range", 3, 3, 1, "join,leave,crash,timeout,zombie", 4, 300, 60),
    ("eager-to-cooperative", "range", 2, 2, 1, "join,leave,crash,timeout,zombie", 1, 0, 0),
    # issue 30 (cupgrade): the broken variant upgrade-one-bounce, whose [range, cooperative-sticky] consumer is
    # COOPERATIVE: mirrored by clients whose range declares COOPERATIVE support too (a custom assignor, in Kafka's
    # terms), so Kafka's leader (and only the leader) runs validateCooperativeAssignment where the model's does
    ("upgrade-one-bounce", "range", 2, 2, 1, "", 0, 0, 0),
)
SEED = 20261128
FAIR_BIAS = 0.7
_COOPERATIVE_STICKY = "cooperative-sticky"
_BIG = 10**12  # session, poll and request timeouts: the model counts no time, the client's timers never fire


class _Member(Consumer):
    """The reference client, its follow-up JoinGroup held until the model's ``SendJoinGroup`` (see the module)."""

    allow_join: bool = False

    def _join_group_if_needed(self, now: int, out: list[Any]) -> None:
        if self.allow_join:
            super()._join_group_if_needed(now, out)


def _reference_assignor(variant: str, assignor: str) -> str:
    if variant.startswith("connect"):
        return "sessioned"  # a Connect worker's protocol (its assignor is the leader's IncrementalCooperativeAssignor)
    if variant in ("cooperative", "static-cooperative"):
        return "cooperative-sticky"
    return assignor  # range, sticky: Kafka's eager assignors of those names


def _claiming_cooperative(get: Any, name: str) -> Any:
    """The reference's assignors, with ``name`` (an eager-only one) declaring COOPERATIVE support too: a custom assignor
    as a Kafka user may write, and what the broken variant ``upgrade-one-bounce`` runs (a consumer listing ``[name,
    cooperative-sticky]`` is COOPERATIVE, so its leader validates the assignment; its followers never do)."""

    def made(n: str) -> Any:
        a = get(n)
        if n == name:
            a.supported_protocols = ("eager", "cooperative")
        return a

    return made


class _View(dict[str, int]):
    """One client's metadata (partitions per topic), its ``MetadataSource``: copied with the mirror (``fork``)."""

    def __call__(self) -> dict[str, int]:
        return self


_SHARED = ("proto", "cfg", "get", "names", "tp", "bit", "claims")  # what a fork shares with its parent (read only)


class _Mirror:
    """One walk: the model's members and their reference clients."""

    protocol_type = "consumer"
    snapshot_members = False  # the leader is answered with the members as the join phase completed (else: as now)
    keeps_work = False  # a member whose generation or member id was reset still owns what it ran (Connect)

    def fork(self) -> "_Mirror":
        """A copy to take one more step with (the clients, their metadata and the ids copied; the model shared)."""
        import copy

        new = object.__new__(type(self))
        own = {k: v for k, v in self.__dict__.items() if k not in _SHARED}
        new.__dict__.update({k: self.__dict__[k] for k in _SHARED})
        new.__dict__.update(copy.deepcopy(own))
        return new

    def __init__(self, proto: Any, variant: str, assignor: str) -> None:
        from groupspec.reference.assignors import get

        cfg = proto.cfg
        self.proto = proto
        self.cfg = cfg
        self.static = bool(proto.static_members)
        self.assignor = _reference_assignor(variant, assignor)
        self.get = get
        self.names = [f"t{k}" for k in range(cfg.topics)]
        self.tp = partition_names(cfg, self.names)
        self.bit = {tp: b for b, tp in enumerate(self.tp)}
        self.counts: dict[str, int] = {}  # the metadata: partitions per topic
        self.views: list[_View] = [_View() for _ in range(cfg.members)]  # what each client's metadata shows
        self.completed = 0  # the partitions when the last join phase completed (the leader assigns with those)
        self.cons: list[_Member | None] = [None] * cfg.members
        self.meta: list[bytes | None] = [None] * cfg.members  # the subscription each slot's client last sent
        self.mid: list[str] = [""] * cfg.members  # the member id the mirror's coordinator gave each slot
        self.ids = 0
        self.now = 1
        # ``static`` (not ``static-leader-snapshot``): a static leader back in a stable group was answered with
        # skipAssignment and snapshots the metadata as it is; the model's leader still notices a partition nobody
        # is assigned ("static-leader-notices"): until it assigns again, its notice is not held against it
        self.snapshots = bool(getattr(proto, "leader_snapshot", False))
        self.skipped = [False] * cfg.members
        # the rolling upgrade (``eager-to-cooperative``): each client configured with the model's assignor list;
        # the mirror's coordinator keeps each member's protocols as its last accepted JoinGroup carried them, checks a
        # joining member against them (``supportsProtocols``), votes at each join completion (``selectProtocol``) and
        # answers the leader with the members (their metadata for the selected protocol) as they were then
        self.upgrade = variant in ("eager-to-cooperative", "upgrade-one-bounce")
        self.claims = variant == "upgrade-one-bounce"  # its [old, cooperative-sticky] consumer is COOPERATIVE
        self.accepted: list[dict[str, bytes]] = [{} for _ in range(cfg.members)]
        self.selected = self.assignor
        self.protocol_of: dict[int, str] = {}  # the protocol each generation selected (a late answer carries its own)
        self.joined: dict[int, tuple[JoinGroupMember, ...]] = {}  # per generation, as the join phase completed

    # ---------------------------------------------------------------------------- values
    def set_partitions(self, existing: int) -> None:
        counts = {n: 0 for n in self.names}
        for b in range(self.cfg.partitions):
            if existing >> b & 1:
                counts[self.tp[b][0]] += 1
        self.counts.clear()
        self.counts.update(counts)
        for v in self.views:
            v.clear()
            v.update(counts)

    def counts_of(self, existing: int) -> dict[str, int]:
        counts = {n: 0 for n in self.names}
        for b in range(self.cfg.partitions):
            if existing >> b & 1:
                counts[self.tp[b][0]] += 1
        return counts

    def mask(self, parts: Any) -> int:
        return sum(1 << self.bit[(t, p)] for t, p in parts)

    def _same_metadata(self, i: int, meta: bytes, r: Any) -> None:
        """The subscription client ``i`` sent (topics, owned partitions, generation) against model record ``r``."""
        from groupspec.reference.classic import decode_subscription

        sub = decode_subscription(meta)
        sent = (sum(1 << self.names.index(n) for n in sub.topics), self.mask(sub.owned_partitions), sub.generation_id)
        if r is None or sent != (r.topics, r.owned, r.generation):
            raise Divergence(f"member {i}'s JoinGroup carries (topics, owned, generation) {sent}; the model's record "
                             f"holds {None if r is None else (r.topics, r.owned, r.generation)}")

    def topics(self, mask: int) -> tuple[str, ...]:
        return tuple(n for k, n in enumerate(self.names) if mask >> k & 1)

    def assignors_of(self, m: Any) -> tuple[str, ...]:
        """The assignors model member ``m``'s client is configured with (the upgrade: its list; else the one)."""
        return tuple(self.proto.protocols(m.assignors)) if self.upgrade else (self.assignor,)

    def new_client(self, i: int, topics: int, assignors: tuple[str, ...] | None = None) -> _Member:
        config = ConsumerConfig(group_id="g", client_id=f"c{i}", topics=self.topics(topics),
                                assignors=assignors or (self.assignor,),
                                group_instance_id=f"i{i}" if self.static else None, session_timeout_ms=_BIG,
                                heartbeat_interval_ms=1, max_poll_interval_ms=_BIG, request_timeout_ms=_BIG,
                                enable_auto_commit=False)
        getter = self.get
        if self.claims and _COOPERATIVE_STICKY in config.assignors:
            getter = _claiming_cooperative(self.get, self.assignor)
        c = _Member(f"c{i}", config, self.views[i], getter)
        sends = c.start(self.now)
        for s in sends:  # the FindCoordinator: answered at once (the coordinator is the one broker)
            if isinstance(s.request, FindCoordinatorRequest):
                c.receive(self.now, s.corr, FindCoordinatorResponse(Error.NONE, node_id=0, host="b0", port=9092))
        return c

    @staticmethod
    def inflight(c: Consumer, kind: str) -> tuple[int, Any] | None:
        for corr, f in c.inflight.items():
            if f.kind == kind:
                return corr, f
        return None

    # ---------------------------------------------------------------------------- Kafka's answers
    def join_error(self, s: Any, i: int, names: tuple[str, ...] = ()) -> Error | None:
        """The error Kafka's coordinator answers a JoinGroup from model member ``i`` (listing the protocols ``names``)
        with at once, or None."""
        from groupspec.model import Id

        c, r = s.clients[i], s.group.records[i]
        if self.upgrade:
            # ClassicGroup.supportsProtocols, checked first (before the member id): an empty group takes any list;
            # else one protocol the request lists must be listed by every member (its own old entry included)
            members = [k for k, rk in enumerate(s.group.records) if rk is not None]
            if members and not any(all(n in self.accepted[k] for k in members) for n in names):
                return Error.INCONSISTENT_GROUP_PROTOCOL
        if c.id == Id.STALE:
            # a static instance id that now maps to another member id is fenced; an unknown id otherwise
            return Error.FENCED_INSTANCE_ID if self.static and r is not None else Error.UNKNOWN_MEMBER_ID
        return None

    def sync_error(self, s: Any, i: int, generation: int) -> Error | None:
        """The error of the SyncGroup member ``i`` sends with ``generation`` (Kafka's order of checks), or None."""
        from groupspec.model import GroupStatus as GS, Id

        c, g = s.clients[i], s.group
        r = g.records[i]
        if r is None or c.id != Id.CURRENT:
            return Error.FENCED_INSTANCE_ID if self.static and r is not None and c.id == Id.STALE else Error.UNKNOWN_MEMBER_ID
        if generation != g.generation:
            return Error.ILLEGAL_GENERATION
        if g.status == GS.PREPARING_REBALANCE:
            return Error.REBALANCE_IN_PROGRESS
        return None

    def heartbeat_error(self, s: Any, i: int) -> Error:
        from groupspec.model import GroupStatus as GS, Id

        c, g = s.clients[i], s.group
        r = g.records[i]
        if c.id == Id.STALE or r is None:
            return Error.FENCED_INSTANCE_ID if self.static and r is not None else Error.UNKNOWN_MEMBER_ID
        if c.generation != g.generation:
            return Error.ILLEGAL_GENERATION
        if g.status == GS.PREPARING_REBALANCE:
            return Error.REBALANCE_IN_PROGRESS
        return Error.NONE

    # ---------------------------------------------------------------------------- driving
    def _need(self, i: int) -> _Member:
        c = self.cons[i]
        if c is None:
            raise Divergence(f"member {i} acts in the model but has no running client")
        return c

    def _answer(self, c: _Member, kind: str, resp: Any, what: str) -> list[Any]:
        got = self.inflight(c, kind)
        if got is None:
            raise Divergence(f"the model's member {c.name[1:]} receives {what}; its client has no {kind} request waiting "
                             f"(state {c.state.name}, requests {sorted(f.kind for f in c.inflight.values())})")
        out: list[Any] = c.receive(self.now, got[0], resp)
        return out

    def _join_response(self, s: Any, i: int, generation: int, skip: bool = False) -> JoinGroupResponse:
        g = s.group
        leader = g.leader == i
        self.skipped[i] = skip and not self.snapshots if leader else False
        members: tuple[JoinGroupMember, ...] = ()
        if leader and (self.upgrade or self.snapshot_members):
            members = self.joined.get(generation, ())  # as they were when the join phase completed
        elif leader:
            members = tuple(JoinGroupMember(self.mid[k], f"i{k}" if self.static else None, meta)
                            for k, r in enumerate(g.records)
                            if r is not None and (meta := self.meta[k]) is not None)
        lead = self.mid[g.leader] if g.leader >= 0 else ""
        return JoinGroupResponse(Error.NONE, generation_id=generation, protocol_type=self.protocol_type,
                                 protocol_name=self.protocol_of.get(generation, self.selected), leader=lead or self.mid[i], member_id=self.mid[i],
                                 members=members, skip_assignment=skip and leader)

    def _sync_after_join(self, s: Any, t: Any, i: int, generation: int) -> None:
        """The SyncGroup the client sent on its JoinGroup response: answered at once if Kafka answers it at once."""
        c = self._need(i)
        if c.fatal is not None:
            return  # the leader's assignment failed its validation: no SyncGroup (the model's leader must stop too)
        err = self.sync_error(s, i, generation)
        if err is not None:
            self._answer(c, "sync", SyncGroupResponse(err), f"SyncGroup {err.name}")

    def step(self, s: Any, a: Any, t: Any) -> None:
        from groupspec.model import Id, Reply

        self.now += 1
        kind = type(a).__name__
        i = a.member
        if t.group.generation != s.group.generation:
            self.completed = t.group.partitions
        if kind == "AddPartition":
            self.set_partitions(t.group.partitions)
        elif kind == "Start":
            self.cons[i] = self.new_client(i, t.clients[i].topics, self.assignors_of(t.clients[i]))
            self.meta[i] = None
        elif kind == "Bounce":  # the rolling upgrade: closed (LeaveGroup), started again with the next list
            c = self.cons[i]
            if c is not None:
                c.close(self.now)
            self.cons[i] = self.new_client(i, t.clients[i].topics, self.assignors_of(t.clients[i]))
            self.meta[i] = None
        elif kind == "Crash":
            c = self.cons[i]
            if c is not None:
                c.crash(self.now)
            self.cons[i] = None
        elif kind == "LeaveGroup":
            c = self.cons[i]
            if c is not None:
                c.close(self.now)
            self.cons[i] = None
        elif kind == "ChangeSubscription":
            if not t.clients[i].topics:  # Kafka's subscribe([]) is unsubscribe(): LeaveGroup, then poll throws
                raise Divergence(f"the model's member {i} subscribes to no topic and stays a member; Kafka's consumer "
                                 "unsubscribes (it leaves the group and polls no more)")
            self._need(i).subscribe(self.now, self.topics(t.clients[i].topics))
        elif kind == "SendJoinGroup":
            c = self._need(i)
            c.allow_join = True
            try:
                sends = c.poll(self.now)
            finally:
                c.allow_join = False
            joins = [x for x in sends if isinstance(x.request, JoinGroupRequest)]
            if not joins:
                raise Divergence(f"the model's member {i} sends JoinGroup; its client sends none at its poll (state "
                                 f"{c.state.name}, rejoin needed {c.rejoin_needed}, requests "
                                 f"{sorted(f.kind for f in c.inflight.values())})")
            req = joins[0].request
            assert isinstance(req, JoinGroupRequest)  # (the list holds JoinGroups only)
            held = s.clients[i].id != Id.NONE
            if held != bool(req.member_id):
                raise Divergence(f"the model's member {i} sends JoinGroup {'with' if held else 'without'} a member id; "
                                 f"its client's carries {req.member_id!r}")
            if self.upgrade:
                self.meta[i] = None
            else:
                self.meta[i] = dict(req.protocols)[self.assignor]
            err = self.join_error(s, i, tuple(n for n, _m in req.protocols))
            if err is not None:
                self._answer(c, "join", JoinGroupResponse(err), f"JoinGroup {err.name}")
            else:
                self.accepted[i] = dict(req.protocols)
                if not req.member_id:
                    self.ids += 1
                    self.mid[i] = f"m{i}-{self.ids}"
                g, r = s.group, s.group.records[i]
                if self.static and s.clients[i].id == Id.NONE and r is not None and g.status.name == "STABLE":
                    # KIP-345: a known instance id rejoins a stable group: answered at once, and its SyncGroup with
                    # the stored assignment. Kafka's coordinator replaces the member's metadata with this JoinGroup's
                    # (updateStaticMemberThenRebalanceOrCompleteJoin): the model's record must hold what the client sent
                    self._same_metadata(i, dict(req.protocols)[self.assignor], t.group.records[i])
                    # (KIP-814, JoinGroup v9: the static leader is told to skip the assignment)
                    self._answer(c, "join", self._join_response(s, i, g.generation, skip=True), "its JoinGroup response")
                    self._answer(c, "sync", self._sync_response(r.assignment), "its SyncGroup response")
        elif kind == "ReceiveJoinResponse":
            c = self._need(i)
            ib = s.clients[i].inbox
            if s.group.leader == i:
                # the model's leader assigned with the partitions there were when the join phase completed (its
                # target); a partition added since is one its client's metadata had not seen yet when it assigned
                self.views[i].update(self.counts_of(self.completed))
            sends = self._answer(c, "join", self._join_response(s, i, ib.generation), "its JoinGroup response")
            self.views[i].update(self.counts)
            if self.upgrade:
                self.check_leader_assignment(s, i, ib.generation, sends)
            self._sync_after_join(s, t, i, ib.generation)
        elif kind == "ReceiveSyncResponse":
            c = self._need(i)
            ib = s.clients[i].inbox
            self._answer(c, "sync", self._sync_response(ib.assignment, ib.generation, i), "its SyncGroup response")
        elif kind == "ReceiveError":
            c = self._need(i)
            reply = s.clients[i].inbox.reply
            err = {Reply.REBALANCE_IN_PROGRESS: Error.REBALANCE_IN_PROGRESS, Reply.UNKNOWN_MEMBER_ID: Error.UNKNOWN_MEMBER_ID,
                   Reply.FENCED_INSTANCE_ID: Error.FENCED_INSTANCE_ID}[reply]
            if self.inflight(c, "join") is not None:
                self._answer(c, "join", JoinGroupResponse(err), f"{err.name} for its JoinGroup")
            else:
                self._answer(c, "sync", SyncGroupResponse(err), f"{err.name} for its SyncGroup")
        elif kind == "Heartbeat":
            c = self._need(i)
            sends = c.tick(self.now)
            beats = [x for x in sends if isinstance(x.request, HeartbeatRequest)]
            if not beats:
                raise Divergence(f"the model's member {i} heartbeats; its client sends none (state {c.state.name})")
            c.receive(self.now, beats[0].corr, HeartbeatResponse(self.heartbeat_error(s, i)))
        elif kind == "NoticeMetadata":
            self.notice(i)
        if t.group.generation != s.group.generation:
            self.completion(t)
        self.compare_all(s, t, kind, i)
        if self.snapshots:
            self.missed_notice(t)

    def missed_notice(self, t: Any) -> None:
        """The converse of ``notice`` (``static-leader-snapshot``): a leader's client that, STABLE in a stable group,
        sees its assignment snapshot no longer match the metadata (``rejoinNeededOrPending``) will rejoin at its next
        poll; the model's leader must be able to notice it then (``NoticeMetadata``)."""
        from groupspec.model import GroupStatus as GS, Id, MemberStatus as MS, Proc
        from groupspec.model import actions as A

        k = t.group.leader
        if k < 0 or t.group.status != GS.STABLE or "partitions" not in self.cfg.faults:
            return
        m, c = t.clients[k], self.cons[k]
        if c is None or c.fatal is not None or c.state is not MemberState.STABLE or m.proc != Proc.UP \
                or m.id != Id.CURRENT or m.status != MS.STABLE or m.rejoin or m.inbox is not None \
                or t.group.records[k] is None or self.wants_join(c) or not self.wants_join(c, metadata=True):
            return
        if not any(isinstance(a, A.NoticeMetadata) and a.member == k for a, _u in self.proto.successors(t)):
            raise Divergence(f"the leader {k}'s client sees its assignment snapshot {c.assignment_snapshot} no longer "
                             f"match the metadata {self.counts} and will rejoin; the model's leader cannot notice it")

    def completion(self, t: Any) -> None:
        """A join phase completed (``t``'s generation is new): the upgrade's vote."""
        if self.upgrade:
            self.vote(t)

    def notice(self, i: int) -> None:
        """The model's member notices a metadata change and will rejoin: its client must see one."""
        c = self._need(i)
        # (only where the static variant's rule can notice: its leader notices metadata with the partitions fault alone)
        if not self.wants_join(c, metadata=True) and self.skipped[i] and "partitions" in self.cfg.faults:
            c.rejoin_needed = True  # "static-leader-notices": the model's leader notices; its client is told to
        if not self.wants_join(c, metadata=True):
            raise Divergence(f"the model's member {i} notices a metadata change and rejoins; its client sees none "
                             f"(it assigned with {c.assignment_snapshot}, the metadata is {self.counts})")

    def compare_all(self, s: Any, t: Any, kind: str, i: int) -> None:
        """After the step: a fatal client's member is down, a stopped member's client too, the others compared."""
        from groupspec.model import Proc

        for k, m in enumerate(t.clients):
            c = self.cons[k]
            if c is not None and c.fatal is not None:
                if m.proc != Proc.DOWN:
                    raise Divergence(f"member {k}'s client is fatal ({c.fatal}); the model's member runs on")
                self.cons[k] = None
                continue
            if k == i and kind in ("SendJoinGroup", "ReceiveJoinResponse", "ReceiveError", "Heartbeat") \
                    and m.proc == Proc.DOWN and s.clients[k].proc != Proc.DOWN:
                raise Divergence(f"the model's member {k} stops (fenced); its client runs on (state {c.state.name if c else '-'})")
            if m.proc == Proc.DOWN or c is None:
                continue
            why = self.compare(k, m, c)
            if why is not None:
                raise Divergence(f"member {k}: {why}")
        if self.upgrade:
            self.check_upgraded(t)

    # ---------------------------------------------------------------------------- the rolling upgrade
    def vote(self, t: Any) -> None:
        """A join phase completed: Kafka's ``selectProtocol`` over the members' protocols (the candidates every member
        lists, each member's first candidate its vote, most votes wins; a tie is hash order in Kafka: any of the tied
        names) must allow the model's ``Group.protocol``; the leader's JoinGroup response is fixed now."""
        members = [k for k, r in enumerate(t.group.records) if r is not None]
        if not members:
            return
        lists = [list(self.accepted[k]) for k in members]
        candidates = set(lists[0]).intersection(*lists[1:])
        if not candidates:
            raise Divergence(f"a join phase completed with members {members} that share no protocol ({lists})")
        votes: dict[str, int] = {}
        for names in lists:
            choice = next(n for n in names if n in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        model = self.proto.protocols(t.group.protocol)[0]  # the selected assignor: [old] or [cooperative-sticky]
        if votes.get(model, 0) != max(votes.values()):
            raise Divergence(f"generation {t.group.generation}: the model's group selects {model}; Kafka's vote "
                             f"({votes}, the members listing {lists}) does not")
        self.selected = self.protocol_of[t.group.generation] = model
        self.joined[t.group.generation] = tuple(JoinGroupMember(self.mid[k], None, self.accepted[k][model])
                                                for k in members)

    def check_leader_assignment(self, s: Any, i: int, generation: int, sends: list[Any]) -> None:
        """The upgrade's leader answered for the group's current generation, whose selected assignor is the old one
        (``range``, ``roundrobin``: the reference's is Kafka's answer): the SyncGroup its client sends carries the
        model's target, member by member (issue 30, cupgrade: which assignor the vote's outcome runs)."""
        g = s.group
        if (g.leader != i or generation != g.generation or g.target is None or self.assignor not in ("range", "roundrobin")
                or self.protocol_of.get(generation) != self.assignor):
            return
        syncs = [x.request for x in sends if isinstance(x.request, SyncGroupRequest)]
        if not syncs:
            return  # no SyncGroup (a fatal leader): compare_all holds the model's leader to it
        slot: dict[str, Any] = {self.mid[k]: k for k, r in enumerate(g.records) if r is not None}
        sent = {slot.get(mid, mid): self.mask(decode_assignment(blob).partitions) for mid, blob in syncs[0].assignments}
        want = {k: g.target[k] for k in slot.values()}
        if sent != want:
            raise Divergence(f"generation {generation} ({self.assignor}): the model's leader {i} assigns "
                             f"{ {k: bits(m) for k, m in sorted(want.items())} }; Kafka's leader "
                             f"{ {k: bits(m) for k, m in sorted(sent.items())} }")

    def check_upgraded(self, t: Any) -> None:
        """Where the model says the upgrade is over (``upgraded``), every member's client runs with
        ``[cooperative-sticky]`` alone, STABLE in a generation whose protocol is ``cooperative-sticky``, and will not
        rejoin."""
        from groupspec.model import upgraded

        if not upgraded(self.proto, t):
            return
        for k, c in enumerate(self.cons):
            why = None
            if c is None or c.fatal is not None:
                why = "is not running"
            elif c.config.assignors != (_COOPERATIVE_STICKY,):
                why = f"runs with {list(c.config.assignors)}"
            elif c.state is not MemberState.STABLE or c.generation.protocol_name != _COOPERATIVE_STICKY:
                why = f"is {c.state.name} with protocol {c.generation.protocol_name}"
            elif self.wants_join(c):
                why = "will rejoin at its next poll"
            if why is not None:
                raise Divergence(f"the model says the upgrade is over; member {k}'s client {why}")

    def _sync_response(self, mask: int, generation: int | None = None, i: int = -1) -> SyncGroupResponse:
        parts = tuple(self.tp[b] for b in range(self.cfg.partitions) if mask >> b & 1)
        name = self.protocol_of.get(generation, self.selected) if generation is not None else self.selected
        return SyncGroupResponse(Error.NONE, encode_assignment(Assignment(parts)), protocol_type="consumer",
                                 protocol_name=name)

    def wants_join(self, c: Consumer, metadata: bool = False) -> bool:
        """The client sends a JoinGroup at its next poll (with ``metadata``: a leader's metadata change counts)."""
        if c.state is MemberState.UNJOINED or c.rejoin_needed:
            return True
        if c.joined_topics is not None and c.joined_topics != tuple(sorted(c.config.topics)):
            return True
        if metadata and c.assignment_snapshot is not None:
            topics = set(c.config.topics) | set(c.group_topics or ())
            return bool(c.assignment_snapshot != tuple(sorted((t, self.counts.get(t, 0)) for t in topics)))
        return False

    def compare(self, k: int, m: Any, c: Consumer) -> str | None:
        from groupspec.model import NO_GENERATION, Id, MemberStatus as MS

        gen = c.generation
        joining = self.inflight(c, "join")
        # a JoinGroup without an id learns its id from the answer (the model's coordinator made it at once)
        if (m.id == Id.NONE) != (gen.member_id == "") and not (joining and not joining[1].request.member_id):
            return (f"the model's member {'holds no' if m.id == Id.NONE else 'holds a'} member id; its client's is "
                    f"{gen.member_id!r}")
        if m.generation != gen.generation_id:
            return f"the model's member is in generation {m.generation}; its client in {gen.generation_id}"
        if m.status.name != c.state.name:
            return f"the model's member is {m.status.name}; its client {c.state.name}"
        reset = (gen.generation_id == NO_GENERATION or gen.member_id == "") and not self.keeps_work
        owned = 0 if reset else self.mask(c.owned)
        if m.owned != owned:
            lost = " (its generation reset: it reports them lost at its next poll)" if reset and c.owned else ""
            return f"the model's member owns {bits(m.owned)}; its client {bits(owned)}{lost}"
        if self.inflight(c, "join") is None and self.inflight(c, "sync") is None:
            model = m.status != MS.PREPARING_REBALANCE and (m.status == MS.UNJOINED or m.rejoin)
            if model and not self.wants_join(c, metadata=True):
                return "the model's member will rejoin at its next poll; its client will not"
            if not model and self.wants_join(c):
                return (f"its client will rejoin at its next poll (rejoin needed {c.rejoin_needed}, state "
                        f"{c.state.name}); the model's member will not")
        return None


Mirror = _Mirror  # what another family's mirror extends (connect_walks.py)
FOREVER = _BIG


def mirrored(s: Any, a: Any) -> bool:
    """Whether the walks take step ``a`` (``ABSTRACTIONS``: the steps the mirror steps around)."""
    if type(a).__name__ == "ChangeSubscription":
        return not s.clients[a.member].rejoin  # "subscription-back"
    return True


def _stale_validation(proto: Any, s: Any, a: Any) -> bool:
    """``stale-leader-validation``: a COOPERATIVE leader of ``upgrade-one-bounce`` reads the JoinGroup answer of a
    generation the group has left (its target is gone; Kafka's leader validates what the answer lists)."""
    from groupspec.model import GroupStatus as GS

    if type(a).__name__ != "ReceiveJoinResponse" or a.member != s.group.leader:
        return False
    g, c = s.group, s.clients[a.member]
    if proto.member_rebalance(c) != "cooperative":
        return False
    return not (g.status == GS.COMPLETING_REBALANCE and g.target is not None and c.inbox.generation == g.generation)


# What the model deliberately does differently from the reference client, and the walks do not take.
ABSTRACTIONS = {
    "subscription-back":
        "a subscription changed and changed back before the member's next poll: the model's member still rejoins, "
        "Kafka's does not (ConsumerCoordinator.rejoinNeededOrPending compares the subscription with the one it "
        "last joined with); one rebalance more in the model, nothing less: the walks change a subscription only "
        "when no rejoin is pending",
    "stale-leader-validation":
        "upgrade-one-bounce only (a COOPERATIVE leader in a generation of the old assignor exists nowhere else): its "
        "leader reading the JoinGroup answer of a generation the group has already left (a member left or joined "
        "since) validates nothing in the model, which keeps no target of a generation left behind; Kafka's leader "
        "validates what the answer lists and may throw. The walks do not take that step",
    "static-leader-notices":
        "the static variant's leader notices any partition nobody is assigned; Kafka's static leader back in a stable "
        "group with skipAssignment snapshots the metadata as it is and does not (static-leader-snapshot models that, "
        "and is walked without this allowance): in the static variant such a leader's client is made to notice when "
        "the model's does (until it assigns again), in an instance with the partitions fault only: without it the "
        "static variant's leader notices nothing, as Kafka's",
}


class ClientFamily(Family[_Mirror]):
    """A classic job's walks: each member of the model mirrored by a reference client (``mirror_class``; Connect's
    workers: :mod:`.connect_walks`); the model's page made once for all the walks."""

    seed, fair_bias, limit = SEED, FAIR_BIAS, 50_000
    mirror_class: type[_Mirror] = _Mirror

    def __init__(self, variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str,
                 budget: int) -> None:
        super().__init__(variant, assignor, members, partitions, topics, faults, budget)
        self.label = f"client:{variant}"
        self.proto = self.make()

    def start(self) -> tuple[Any, Any, _Mirror]:
        from groupspec.model import Proc

        proto = self.proto
        s0 = proto.init_states()[0]
        mirror = self.mirror_class(proto, self.variant, self.assignor)
        mirror.set_partitions(s0.group.partitions)
        for k, c in enumerate(s0.clients):
            if c.proc == Proc.UP:
                mirror.cons[k] = mirror.new_client(k, c.topics, mirror.assignors_of(c))
        return proto, s0, mirror

    def successors(self, proto: Any, s: Any) -> list[tuple[Any, Any]]:
        return [(a, t) for a, t in proto.successors(s) if mirrored(s, a)
                and not (self.variant == "upgrade-one-bounce" and _stale_validation(proto, s, a))]


def check(job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run: the walks of one job (or those in ``only``), or (no walks) its instance explored, every step of
    every state; a divergence as its failure, else None."""
    return drive(ClientFamily, job, only)
