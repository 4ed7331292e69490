"""Unbounded relational model of the classic JoinGroup/SyncGroup protocol, for EPR proofs.

Theory of operation
-------------------
This is the first-order abstraction of the classic consumer-group protocol (coordinator.md §1–§5)
that :mod:`groupspec.proofs.epr` checks for *any* number of members and partitions.  Sorts:

* ``Member``     — member ids.  An id is never reused: a removed/fenced id is ``retired`` and a
                   restarted process joins under a fresh id (static replacement re-keys the member
                   to a fresh id, KIP-345, [GM] ``replaceStaticMember``).
* ``Partition``  — topic-partitions.
* ``Generation`` — generation ids, a rigid strict total order ``lt`` (no arithmetic: EPR).

State (all Boolean relations, plus the constant ``gen``):

=================  ==============================================================================
coordinator        ``member(m)``, ``retired(m)``, ``joined(m)`` (JoinGroup parked in this join phase),
                   ``rep(m,p)`` (ownedPartitions reported in m's last JoinGroup, subscription v1+,
                   KIP-429), ``assign(m,p)`` (leader's assignment stored for generation ``gen``),
                   ``preparing()`` (PreparingRebalance), ``stable()`` (Stable; neither = Completing),
                   ``gen`` (generationId)
client             ``cgen(m,g)`` (the client's generation, none = -1), ``c_joining(m)``
                   (PREPARING_REBALANCE), ``c_syncing(m)`` (COMPLETING_REBALANCE), ``c_stable(m)``,
                   ``owned(m,p)`` (partitions the client may process and commit)
network            ``join_resp(m,g)`` (JoinGroup response for generation g in flight),
                   ``sync_ok(m,g)``/``sync_resp(m,g,p)`` (SyncGroup response in flight and its content)
=================  ==============================================================================

Actions (each one atomic step of one party; request handling at the coordinator is fused with the
send because a classic client has one request outstanding, responses travel separately and may be
delayed arbitrarily):

``Join(m)``            onJoinPrepare + JoinGroup: eager revokes everything first ([CC] onJoinPrepare 3),
                       cooperative keeps what it owns (minus any dropped topics) and reports it; the
                       group goes to PreparingRebalance and parks the request.
``JoinImmediate(m)``   a known member rejoins Stable/CompletingRebalance with unchanged metadata and is
                       answered at once with the current generation (coordinator.md §2.2).
``CompleteJoin(g)``    the join phase completes (all rejoined or the rebalance timeout): dynamic members
                       that did not rejoin are removed, static ones are kept (KAFKA-8220), the
                       generation becomes a strictly larger ``g``, responses go to every parked member.
``RecvJoin(m,g)``      the client adopts generation g and becomes COMPLETING_REBALANCE.
``Install``            the leader's SyncGroup: any assignment with one owner per partition, only to
                       members; cooperative adds "a partition gained by x while another member reported
                       owning it is withheld" (the model's ``compute_target``; [CSA] adjustAssignment).
``SyncReq(m)``         a member at the current generation asks for its assignment in Stable; the
                       stored assignment is sent back.
``RecvSync(m,g)``      the client applies it: owned := assignment (eager: owned was empty; cooperative:
                       revoke owned−assigned, add assigned−owned, [CC] onJoinComplete).
``Expire(m)``          session timeout / LeaveGroup / ExpireLive at the coordinator: m is removed, a
                       rebalance starts; the client is *not* told (it becomes a zombie).
``Lost(m)``            the client learns of fencing (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION on a
                       heartbeat, SyncGroup or parked JoinGroup): partitions lost, generation reset.
``Stop(m)``            the process crashes, closes or is fenced fatally: its in-memory state vanishes.
``StaticReplace(m,n)`` (static) a restarted instance joins with an empty member id: m is re-keyed to
                       the fresh id n, keeping its stored assignment; in Stable no rebalance and an
                       immediate JoinGroup response at the current generation.
``StaticRebalance(m,n)`` (static) the same replacement outside Stable: the new id waits for the join.
(coordinator-assigns) ``CompleteJoin`` also picks any legal assignment, the group is Stable at once, and
                       each JoinGroup answer carries the member's share (modelled as a SyncGroup answer
                       sent with it); there is no ``Install``/``SyncReq``.
``Commit(m,p,g)``      OffsetCommit from a STABLE client ([CC] generationIfStable): accepted iff member
                       id known and generation equal and the group is not CompletingRebalance
                       (coordinator.md §2.6).  Changes no protocol state; checked as an action property.

Not modelled here (covered by the finite encoding of model/ instead): subscriptions and topics (a
cooperative member may drop any subset of its partitions at JoinGroup, which over-approximates
dropped topics), the "assigned partition not subscribed" rejection in onJoinComplete (the model's
ChangeSubscription needs a STABLE member, so a SyncGroup answer never meets a changed subscription),
heartbeat timing, and the leader's identity (any member's SyncGroup may install the assignment — an
over-approximation).

Properties (names as in ``groupspec.model``):

* ``exclusive_ownership`` — no partition is owned by two *live* members (the model's ``live_member``:
  the coordinator knows the id the running or paused process holds, and the process is in the current
  generation or has the current generation's JoinGroup answer on its way).
* ``commit_fencing`` — an accepted commit of p comes from a live member in the current generation whose
  stored assignment contains p, and no other live member owns p.
* ``generation_monotonic`` — ``gen' ≥ gen`` on every step, ``>`` on CompleteJoin; a client's generation
  never decreases (except the reset to none); no client is ahead of the group.

* ``generation_plus_one`` / ``generation_unchanged`` — the group's generation grows by exactly one per
  completed join phase and is unchanged by every other step.  "Exactly one" in an ordered sort is "the
  successor": ``CompleteJoin`` moves ``gen`` to a generation with none strictly between (EPR: the
  universal sits in the action's guard; the property's negation is one existential witness).

Deliberately broken variants (each must yield a counterexample): ``direct_transfer`` (cooperative
assignor hands a still-owned partition to another member), ``no_revoke_before_join`` (eager client keeps
its partitions through JoinGroup), ``unfenced_commits`` (coordinator skips member/generation checks),
``generation_skip`` (a completed join phase may skip generations: fails ``generation_plus_one``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import z3

from .epr import RelSpec, State, setrel, strict_total_order, upd

And, Or, Not, Implies, ForAll, Exists = z3.And, z3.Or, z3.Not, z3.Implies, z3.ForAll, z3.Exists

PROTOCOLS = ("eager", "static", "cooperative", "static-cooperative", "coordinator-assigns")
BROKEN = ("direct_transfer", "no_revoke_before_join", "unfenced_commits", "generation_skip")


@dataclass(frozen=True)
class Variant:
    """Which protocol the relational model follows, and which (if any) deliberate bug it has."""

    protocol: str = "eager"
    broken: str | None = None

    @property
    def cooperative(self) -> bool:
        return self.protocol in ("cooperative", "static-cooperative")

    @property
    def coordinator_assigns(self) -> bool:
        """Pre-0.9: the coordinator computes the assignment and sends it with the JoinGroup answer."""
        return self.protocol == "coordinator-assigns"

    @property
    def static(self) -> bool:
        return self.protocol in ("static", "static-cooperative")

    @property
    def name(self) -> str:
        return self.protocol + (f"+{self.broken}" if self.broken else "")


RELATIONS: dict[str, tuple[str, ...]] = {
    # coordinator
    "member": ("Member",),
    "retired": ("Member",),
    "joined": ("Member",),
    "rep": ("Member", "Partition"),
    "assign": ("Member", "Partition"),
    "preparing": (),
    "stable": (),
    # client
    "cgen": ("Member", "Generation"),
    "c_joining": ("Member",),
    "c_syncing": ("Member",),
    "c_stable": ("Member",),
    "c_dead": ("Member",),
    "owned": ("Member", "Partition"),
    # network
    "join_resp": ("Member", "Generation"),
    "sync_ok": ("Member", "Generation"),
    "sync_resp": ("Member", "Generation", "Partition"),
}

CLIENT = ("cgen", "c_joining", "c_syncing", "c_stable", "c_dead", "owned")


def build(variant: Variant) -> RelSpec:
    """The relational spec (sorts, actions, invariant, properties) for one variant."""
    if variant.protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {variant.protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    if variant.broken not in (None, *BROKEN):
        raise ValueError(f"unknown broken variant {variant.broken!r}; expected one of {', '.join(BROKEN)}")
    spec = RelSpec(
        name=f"classic/{variant.name}",
        sort_names=("Member", "Partition", "Generation"),
        relations=dict(RELATIONS),
        constants={"gen": "Generation"},
        fixed={"lt": ("Generation", "Generation")},
    )
    spec.axioms.append(strict_total_order("lt", "Generation"))
    lt = spec.rigid("lt")
    x, y, m2 = spec.vars("x:Member y:Member m2:Member")
    p, q = spec.vars("p:Partition q:Partition")
    g, h = spec.vars("g:Generation h:Generation")

    def le(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        return Or(a == b, lt(a, b))

    def live(s: State, m: z3.ExprRef) -> z3.BoolRef:
        """The model's ``live_member``: the coordinator knows the id this (running or paused) process
        holds, and it is in the current generation — or behind it with the current generation's
        JoinGroup answer on its way (a static member the rebalance timeout left behind is not live)."""
        behind = z3.Exists([h], And(s.cgen(m, h), lt(h, s.gen)))
        return And(s.member(m), Not(s.c_dead(m)), Implies(behind, s.join_resp(m, s.gen)))

    def fresh(s: State, m: z3.ExprRef) -> z3.BoolRef:
        return And(Not(s.member(m)), Not(s.retired(m)))

    def no_gen(s: State, m: z3.ExprRef) -> z3.BoolRef:
        return ForAll([g], Not(s.cgen(m, g)))

    # ---------------------------------------------------------------- init
    def init(s: State) -> z3.BoolRef:
        empty = [ForAll(vs, Not(s.rels[r](*vs))) for r, vs in (
            ("member", [x]), ("retired", [x]), ("joined", [x]), ("rep", [x, p]), ("assign", [x, p]),
            ("cgen", [x, g]), ("c_joining", [x]), ("c_syncing", [x]), ("c_stable", [x]),
            ("owned", [x, p]), ("c_dead", [x]), ("join_resp", [x, g]), ("sync_ok", [x, g]), ("sync_resp", [x, g, p]))]
        return And(*empty, Not(s.preparing()), Not(s.stable()))

    spec.init = init

    # ---------------------------------------------------------------- actions
    def client_status(s: State, t: State, m: z3.ExprRef, joining: bool, syncing: bool, stable: bool) -> list[z3.BoolRef]:
        return [
            upd(spec, s, t, "c_joining", lambda a: a == m, lambda a: z3.BoolVal(joining)),
            upd(spec, s, t, "c_syncing", lambda a: a == m, lambda a: z3.BoolVal(syncing)),
            upd(spec, s, t, "c_stable", lambda a: a == m, lambda a: z3.BoolVal(stable)),
        ]

    def prepare_join(s: State, t: State, m: z3.ExprRef) -> list[z3.BoolRef]:
        """onJoinPrepare ([CC] §5.4): eager revokes everything; cooperative keeps what it owns, except
        partitions of topics it dropped (any subset may go: the model's subscriptions are abstracted)."""
        revoke_all = not variant.cooperative and variant.broken != "no_revoke_before_join"
        if revoke_all:
            return [upd(spec, s, t, "owned", lambda a, b: a == m, lambda a, b: z3.BoolVal(False))]
        return [ForAll([x, p], Implies(t.owned(x, p), s.owned(x, p))),
                ForAll([x, p], Implies(x != m, t.owned(x, p) == s.owned(x, p)))]

    def reports(s: State, t: State, m: z3.ExprRef) -> z3.BoolRef:
        """What the JoinGroup reports as owned: cooperative its owned set; eager a userData claim the
        (unconstrained) eager assignor may ignore, kept abstract."""
        if variant.cooperative:
            return upd(spec, s, t, "rep", lambda a, b: a == m, lambda a, b: t.owned(a, b))
        return ForAll([x, p], Implies(x != m, t.rep(x, p) == s.rep(x, p)))

    join_touch = ["member", "joined", "rep", "preparing", "stable", "c_joining", "c_syncing", "c_stable", "owned"]

    @spec.action("Join", "m:Member", join_touch)
    def join(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """SendJoinGroup that (re)starts a join phase: the request is parked, the group prepares."""
        (m,) = ps
        return And(
            Not(s.retired(m)), Not(s.c_joining(m)), Not(s.c_dead(m)), ForAll([g], Not(s.sync_ok(m, g))),
            *prepare_join(s, t, m), reports(s, t, m),
            upd(spec, s, t, "member", lambda a: a == m, lambda a: z3.BoolVal(True)),
            upd(spec, s, t, "joined", lambda a: a == m, lambda a: z3.BoolVal(True)),
            t.preparing(), Not(t.stable()),
            *client_status(s, t, m, True, False, False),
        )

    ji_touch = ["join_resp", "c_joining", "c_syncing", "c_stable", "owned", "rep"]
    if variant.coordinator_assigns:
        ji_touch += ["sync_ok"]

    @spec.action("JoinImmediate", "m:Member", ji_touch)
    def join_immediate(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """A known member rejoins Stable/CompletingRebalance with unchanged metadata: answered at once
        with the current generation, no rebalance (coordinator.md §2.2)."""
        (m,) = ps
        same = [ForAll([p], t.rep(m, p) == s.rep(m, p))] if variant.cooperative else []
        return And(
            s.member(m), Not(s.preparing()), Not(s.c_joining(m)), Not(s.c_dead(m)),
            ForAll([g], Not(s.sync_ok(m, g))),
            *prepare_join(s, t, m), reports(s, t, m), *same,
            upd(spec, s, t, "join_resp", lambda a, b: a == m, lambda a, b: b == s.gen),
            *client_status(s, t, m, True, False, False),
            *([upd(spec, s, t, "sync_ok", lambda a, b: a == m, lambda a, b: b == s.gen)] if variant.coordinator_assigns else []),
        )

    ca = variant.coordinator_assigns
    cj_touch = ["member", "retired", "join_resp", "joined", "assign", "preparing", "stable", "gen"]
    if ca:
        cj_touch += ["sync_ok", "sync_resp"]

    @spec.action("CompleteJoin", "g:Generation", cj_touch)
    def complete_join(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """initNextGeneration (all rejoined, or the rebalance timeout): dynamic members that did not
        rejoin are dropped, static ones kept (KAFKA-8220); parked JoinGroups are answered."""
        (gn,) = ps
        keeps: Callable[[z3.ExprRef], z3.BoolRef]
        if variant.static:
            keeps = lambda a: s.member(a)  # noqa: E731
        else:
            keeps = lambda a: And(s.member(a), s.joined(a))  # noqa: E731
        # "+1": the next generation is the least one above the current (nothing strictly between);
        # the generation_skip mutant may pick any larger one.
        succ = [] if variant.broken == "generation_skip" else [ForAll([h], Not(And(lt(s.gen, h), lt(h, gn))))]
        common = [
            s.preparing(), lt(s.gen, gn), *succ,
            setrel(spec, t, "member", keeps),
            setrel(spec, t, "retired", lambda a: Or(s.retired(a), And(s.member(a), Not(keeps(a))))),
            setrel(spec, t, "join_resp", lambda a, b: Or(s.join_resp(a, b), And(b == gn, s.joined(a)))),
            setrel(spec, t, "joined", lambda a: z3.BoolVal(False)),
            Not(t.preparing()), t.gen == gn,
        ]
        if not ca:
            return And(*common, setrel(spec, t, "assign", lambda a, b: z3.BoolVal(False)), Not(t.stable()))
        # The coordinator assigns (any legal assignment to the members it keeps) and the JoinGroup
        # answers carry each member's share: modelled as a SyncGroup answer sent along with it.
        # Stable at once with the members it keeps; a join phase that keeps nobody (the last member left
        # or was dropped) leaves the group Empty, as the model's does.
        return And(
            *common, Or(t.stable(), ForAll([x], Not(keeps(x)))),
            ForAll([x, p], Implies(t.assign(x, p), keeps(x))),
            ForAll([x, y, p], Implies(And(t.assign(x, p), t.assign(y, p)), x == y)),
            setrel(spec, t, "sync_ok", lambda a, b: Or(s.sync_ok(a, b), And(b == gn, s.joined(a)))),
            setrel(spec, t, "sync_resp", lambda a, b, c: Or(s.sync_resp(a, b, c), And(b == gn, s.joined(a), t.assign(a, c)))),
        )

    @spec.action("RecvJoin", "m:Member g:Generation", ["join_resp", "cgen", "c_joining", "c_syncing"])
    def recv_join(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        m, gn = ps
        take = s.c_joining(m)
        return And(
            s.join_resp(m, gn),
            upd(spec, s, t, "join_resp", lambda a, b: And(a == m, b == gn), lambda a, b: z3.BoolVal(False)),
            upd(spec, s, t, "cgen", lambda a, b: And(a == m, take), lambda a, b: b == gn),
            upd(spec, s, t, "c_joining", lambda a: a == m, lambda a: z3.BoolVal(False)),
            upd(spec, s, t, "c_syncing", lambda a: And(a == m, take), lambda a: z3.BoolVal(True)),
        )

    def install(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """The leader's SyncGroup stores the assignment: one owner per partition, members only;
        cooperative: a partition gained by x while another member reported owning it is withheld
        (the model's compute_target; [CSA] adjustAssignment)."""
        rules = [
            ForAll([x, p], Implies(t.assign(x, p), s.member(x))),
            ForAll([x, y, p], Implies(And(t.assign(x, p), t.assign(y, p)), x == y)),
        ]
        if variant.cooperative and variant.broken != "direct_transfer":
            rules.append(ForAll([x, y, p], Implies(And(t.assign(x, p), s.member(y), s.rep(y, p)), s.rep(x, p))))
        return And(Not(s.preparing()), Not(s.stable()), t.stable(), *rules)

    if not ca:
        spec.action("Install", "", ["assign", "stable"])(install)

    def sync_req(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        (m,) = ps
        return And(
            s.c_syncing(m), s.member(m), s.cgen(m, s.gen), s.stable(), ForAll([g], Not(s.sync_ok(m, g))),
            upd(spec, s, t, "sync_ok", lambda a, b: And(a == m, b == s.gen), lambda a, b: z3.BoolVal(True)),
            upd(spec, s, t, "sync_resp", lambda a, b, c: And(a == m, b == s.gen), lambda a, b, c: s.assign(a, c)),
        )

    if not ca:
        spec.action("SyncReq", "m:Member", ["sync_ok", "sync_resp"])(sync_req)

    def recv_sync_common(s: State, t: State, m: z3.ExprRef, gn: z3.ExprRef, apply: bool) -> list[z3.BoolRef]:
        take = And(s.c_syncing(m), s.cgen(m, gn))
        out = [
            s.sync_ok(m, gn),
            upd(spec, s, t, "sync_ok", lambda a, b: And(a == m, b == gn), lambda a, b: z3.BoolVal(False)),
            upd(spec, s, t, "sync_resp", lambda a, b, c: And(a == m, b == gn), lambda a, b, c: z3.BoolVal(False)),
            upd(spec, s, t, "c_syncing", lambda a: And(a == m, take), lambda a: z3.BoolVal(False)),
            upd(spec, s, t, "c_stable", lambda a: And(a == m, take), lambda a: z3.BoolVal(True)),
        ]
        if apply:
            out.append(upd(spec, s, t, "owned", lambda a, b: And(a == m, take), lambda a, b: s.sync_resp(a, gn, b)))
        return out

    @spec.action("RecvSync", "m:Member g:Generation", ["sync_ok", "sync_resp", "owned", "c_syncing", "c_stable"])
    def recv_sync(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """onJoinComplete: owned := assignment (cooperative revokes owned - assigned)."""
        m, gn = ps
        return And(*recv_sync_common(s, t, m, gn, True))

    @spec.action("Expire", "m:Member", ["member", "retired", "joined", "assign", "preparing", "stable"])
    def expire(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """Session expiry / LeaveGroup / ExpireLive at the coordinator; the process is not told."""
        (m,) = ps
        return And(
            s.member(m),
            upd(spec, s, t, "assign", lambda a, b: a == m, lambda a, b: z3.BoolVal(False)),
            upd(spec, s, t, "member", lambda a: a == m, lambda a: z3.BoolVal(False)),
            upd(spec, s, t, "retired", lambda a: a == m, lambda a: z3.BoolVal(True)),
            upd(spec, s, t, "joined", lambda a: a == m, lambda a: z3.BoolVal(False)),
            t.preparing(), Not(t.stable()),
        )

    @spec.action("Lost", "m:Member", ["owned", "cgen", "c_joining", "c_stable", "c_syncing"])
    def lost(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION on a heartbeat, SyncGroup or parked JoinGroup:
        resetStateAndGeneration, partitions lost."""
        (m,) = ps
        return And(
            Or(s.c_stable(m), s.c_syncing(m), And(s.c_joining(m), Not(s.member(m)), ForAll([g], Not(s.join_resp(m, g))))),
            Or(Not(s.member(m)), Not(s.cgen(m, s.gen))),
            ForAll([g], Not(s.sync_ok(m, g))),
            upd(spec, s, t, "owned", lambda a, b: a == m, lambda a, b: z3.BoolVal(False)),
            upd(spec, s, t, "cgen", lambda a, b: a == m, lambda a, b: z3.BoolVal(False)),
            *client_status(s, t, m, False, False, False),
        )

    @spec.action("Stop", "m:Member", ["owned", "cgen", "c_joining", "c_syncing", "c_stable", "c_dead"])
    def stop(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """Crash, close, or FENCED_INSTANCE_ID (fatal): the process is gone with its in-memory state."""
        (m,) = ps
        return And(
            Or(s.member(m), s.retired(m)),
            upd(spec, s, t, "owned", lambda a, b: a == m, lambda a, b: z3.BoolVal(False)),
            upd(spec, s, t, "cgen", lambda a, b: a == m, lambda a, b: z3.BoolVal(False)),
            *client_status(s, t, m, False, False, False),
            upd(spec, s, t, "c_dead", lambda a: a == m, lambda a: z3.BoolVal(True)),
        )

    if variant.static:
        @spec.action("StaticReplace", "m:Member n:Member",
                     ["member", "retired", "assign", "rep", "joined", "join_resp", "c_joining"])
        def static_replace(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
            """KIP-345 in Stable: the record moves to the fresh id n with its assignment; JoinGroup
            answered at once at the current generation; the old id m is fenced."""
            m, n = ps
            return And(
                s.member(m), fresh(s, n), s.stable(),
                upd(spec, s, t, "member", lambda a: Or(a == m, a == n), lambda a: a == n),
                upd(spec, s, t, "retired", lambda a: a == m, lambda a: z3.BoolVal(True)),
                upd(spec, s, t, "assign", lambda a, b: Or(a == m, a == n), lambda a, b: And(a == n, s.assign(m, b))),
                upd(spec, s, t, "rep", lambda a, b: Or(a == m, a == n), lambda a, b: z3.BoolVal(False)),
                upd(spec, s, t, "joined", lambda a: Or(a == m, a == n), lambda a: z3.BoolVal(False)),
                upd(spec, s, t, "join_resp", lambda a, b: a == n, lambda a, b: b == s.gen),
                upd(spec, s, t, "c_joining", lambda a: a == n, lambda a: z3.BoolVal(True)),
            )

        @spec.action("StaticRebalance", "m:Member n:Member",
                     ["member", "retired", "assign", "rep", "joined", "preparing", "stable", "c_joining"])
        def static_rebalance(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
            """KIP-345 outside Stable: the same re-keying, and the new id waits for the join phase."""
            m, n = ps
            return And(
                s.member(m), fresh(s, n), Not(s.stable()),
                upd(spec, s, t, "member", lambda a: Or(a == m, a == n), lambda a: a == n),
                upd(spec, s, t, "retired", lambda a: a == m, lambda a: z3.BoolVal(True)),
                upd(spec, s, t, "assign", lambda a, b: Or(a == m, a == n), lambda a, b: And(a == n, s.assign(m, b))),
                upd(spec, s, t, "rep", lambda a, b: Or(a == m, a == n), lambda a, b: z3.BoolVal(False)),
                upd(spec, s, t, "joined", lambda a: Or(a == m, a == n), lambda a: a == n),
                t.preparing(), Not(t.stable()),
                upd(spec, s, t, "c_joining", lambda a: a == n, lambda a: z3.BoolVal(True)),
            )

    @spec.action("Commit", "m:Member p:Partition g:Generation", [])
    def commit(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """OffsetCommit of an owned partition by a STABLE running client, with its generation."""
        m, pp, gn = ps
        return And(s.c_stable(m), Not(s.c_dead(m)), s.owned(m, pp), s.cgen(m, gn))

    def commit_accepted(s: State, m: z3.ExprRef, gn: z3.ExprRef) -> z3.BoolRef:
        not_completing = Or(s.preparing(), s.stable())
        if variant.broken == "unfenced_commits":
            return not_completing
        return And(s.member(m), gn == s.gen, not_completing)

    # ---------------------------------------------------------------- properties
    def exclusive(s: State) -> z3.BoolRef:
        return ForAll([x, y, p], Implies(And(live(s, x), live(s, y), s.owned(x, p), s.owned(y, p)), x == y))

    spec.safety["exclusive_ownership"] = exclusive
    spec.safety["generation_bounded"] = lambda s: ForAll([x, g], Implies(s.cgen(x, g), le(g, s.gen)))

    def fencing(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        m, pp, gn = ps
        return Implies(commit_accepted(s, m, gn), And(
            live(s, m), s.cgen(m, s.gen), s.assign(m, pp),
            ForAll([y], Implies(And(live(s, y), s.owned(y, pp)), y == m))))

    spec.action_props["commit_fencing"] = (("Commit",), fencing)

    def gen_mono(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        return And(le(s.gen, t.gen),
                   ForAll([x, g, h], Implies(And(s.cgen(x, g), t.cgen(x, h)), le(g, h))))

    spec.action_props["generation_monotonic"] = (tuple(a for a in spec.actions if a != "CompleteJoin"), gen_mono)
    spec.action_props["generation_bumps"] = (("CompleteJoin",), lambda s, t, ps: lt(s.gen, t.gen))

    def plus_one(s: State, t: State, ps: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """CompleteJoin: gen' is the successor of gen in the order (no generation strictly between);
        any other action: gen' = gen.  Unbounded form of the model's "+0 or +1"."""
        return And(lt(s.gen, t.gen), ForAll([h], Not(And(lt(s.gen, h), lt(h, t.gen)))))

    spec.action_props["generation_plus_one"] = (("CompleteJoin",), plus_one)
    spec.action_props["generation_unchanged"] = (tuple(a for a in spec.actions if a != "CompleteJoin"),
                                                 lambda s, t, ps: t.gen == s.gen)

    _invariant(spec, variant, live, fresh, le)
    return spec


def _invariant(spec: RelSpec, variant: Variant, live, fresh, le) -> None:  # type: ignore[no-untyped-def]
    """The supporting inductive invariant (universal clauses), found by iterating on Z3's CTIs."""
    x, y = spec.vars("x:Member y:Member")
    p = spec.var("p", "Partition")
    g, h = spec.vars("g:Generation h:Generation")
    inv = spec.invariant
    inv["member_not_retired"] = lambda s: ForAll([x], Not(And(s.member(x), s.retired(x))))
    inv["fresh_clean"] = lambda s: ForAll([x, p, g], Implies(fresh(s, x), And(
        Not(s.owned(x, p)), Not(s.cgen(x, g)), Not(s.c_joining(x)), Not(s.c_syncing(x)), Not(s.c_stable(x)),
        Not(s.c_dead(x)), Not(s.join_resp(x, g)), Not(s.sync_ok(x, g)), Not(s.sync_resp(x, g, p)), Not(s.joined(x)),
        Not(s.rep(x, p)), Not(s.assign(x, p)))))
    inv["cgen_unique"] = lambda s: ForAll([x, g, h], Implies(And(s.cgen(x, g), s.cgen(x, h)), g == h))
    inv["cgen_le_gen"] = lambda s: ForAll([x, g], Implies(s.cgen(x, g), le(g, s.gen)))
    inv["join_resp_le_gen"] = lambda s: ForAll([x, g], Implies(s.join_resp(x, g), le(g, s.gen)))
    inv["sync_ok_le_gen"] = lambda s: ForAll([x, g], Implies(s.sync_ok(x, g), le(g, s.gen)))
    inv["sync_resp_ok"] = lambda s: ForAll([x, g, p], Implies(s.sync_resp(x, g, p), s.sync_ok(x, g)))
    inv["status_exclusive"] = lambda s: ForAll([x], And(
        Not(And(s.c_joining(x), s.c_syncing(x))), Not(And(s.c_joining(x), s.c_stable(x))),
        Not(And(s.c_syncing(x), s.c_stable(x)))))
    inv["status_gen"] = lambda s: ForAll([x], Implies(Or(s.c_syncing(x), s.c_stable(x)), z3.Exists([g], s.cgen(x, g))))
    inv["unjoined_owns_nothing"] = lambda s: ForAll([x, p], Implies(s.owned(x, p), Or(
        s.c_joining(x), s.c_syncing(x), s.c_stable(x))))
    inv["not_prep_and_stable"] = lambda s: Not(And(s.preparing(), s.stable()))
    inv["assign_unique"] = lambda s: ForAll([x, y, p], Implies(And(s.assign(x, p), s.assign(y, p)), x == y))
    inv["assign_member"] = lambda s: ForAll([x, p], Implies(s.assign(x, p), s.member(x)))
    inv["joined_member"] = lambda s: ForAll([x], Implies(s.joined(x), s.member(x)))
    inv["join_resp_newer"] = lambda s: ForAll([x, g, h], Implies(And(s.join_resp(x, g), s.cgen(x, h)), le(h, g)))
    inv["completing_nobody_stable"] = lambda s: Implies(And(Not(s.preparing()), Not(s.stable())),
                                                         ForAll([x], Not(And(s.c_stable(x), s.cgen(x, s.gen)))))
    inv["sync_ok_not_completing"] = lambda s: ForAll([x], Implies(s.sync_ok(x, s.gen), Or(s.preparing(), s.stable())))
    inv["sync_resp_assigned"] = lambda s: ForAll([x, p], Implies(And(s.member(x), s.sync_resp(x, s.gen, p)), s.assign(x, p)))
    inv["join_resp_unique"] = lambda s: ForAll([x, g, h], Implies(And(s.join_resp(x, g), s.join_resp(x, h)), g == h))
    inv["sync_ok_unique"] = lambda s: ForAll([x, g, h], Implies(And(s.sync_ok(x, g), s.sync_ok(x, h)), g == h))
    inv["join_resp_client"] = lambda s: ForAll([x, g], Implies(s.join_resp(x, g), Or(s.c_joining(x), s.c_dead(x))))
    if variant.coordinator_assigns:
        inv["sync_ok_client"] = lambda s: ForAll([x, g], Implies(s.sync_ok(x, g), Or(
            And(s.c_syncing(x), s.cgen(x, g)), And(s.c_joining(x), s.join_resp(x, g)), s.c_dead(x))))
    else:
        inv["sync_ok_client"] = lambda s: ForAll([x, g], Implies(s.sync_ok(x, g), Or(
            And(s.c_syncing(x), s.cgen(x, g)), s.c_dead(x))))
    inv["joined_client"] = lambda s: ForAll([x], Implies(s.joined(x), Or(s.c_joining(x), s.c_dead(x))))
    inv["joined_no_resp"] = lambda s: ForAll([x, g], Not(And(s.joined(x), s.join_resp(x, g))))
    inv["joined_no_sync"] = lambda s: ForAll([x, g], Not(And(s.joined(x), s.sync_ok(x, g))))
    if variant.coordinator_assigns:
        inv["ca_never_completing"] = lambda s: ForAll([x], Implies(s.member(x), Or(s.preparing(), s.stable())))
    inv["dead_idle"] = lambda s: ForAll([x], Implies(s.c_dead(x), And(Not(s.c_joining(x)), Not(s.c_syncing(x)), Not(s.c_stable(x)))))
    inv["stable_owned_assigned"] = lambda s: ForAll([x, p], Implies(
        And(s.member(x), s.cgen(x, s.gen), s.c_stable(x), s.owned(x, p)), s.assign(x, p)))
    if not variant.static:
        inv["member_resp_current"] = lambda s: ForAll([x, g], Implies(
            And(s.member(x), s.c_joining(x), s.join_resp(x, g)), g == s.gen))
        inv["dynamic_members_current"] = lambda s: ForAll([x], Implies(
            And(s.member(x), Or(s.c_stable(x), s.c_syncing(x))), s.cgen(x, s.gen)))
    if variant.cooperative:
        inv["coop_owned_reported"] = lambda s: ForAll([x, p], Implies(
            And(s.member(x), Or(s.c_joining(x), s.c_syncing(x)), s.owned(x, p)), s.rep(x, p)))
        inv["coop_rep_assign"] = lambda s: ForAll([x, y, p], Implies(
            And(s.member(x), s.rep(x, p), s.assign(y, p)), x == y))
        inv["coop_rep_unique"] = lambda s: ForAll([x, y, p], Implies(
            And(s.member(x), s.member(y), s.rep(x, p), s.rep(y, p)), x == y))
    if not variant.cooperative:
        inv["eager_only_stable_owns"] = lambda s: ForAll([x, p], Implies(s.owned(x, p), s.c_stable(x)))
