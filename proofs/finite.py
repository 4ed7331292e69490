"""The finite-instance transition relation of ``groupspec.model``'s classic protocol, in Z3.

Theory of operation
-------------------
On a finite instance (``Config``: members, partitions, topics, faults, budget) a state of
:mod:`groupspec.model.core` is a fixed-size record: the group (status, generation, leader, one
:class:`~groupspec.model.core.Record` per member slot, the target, partitions, held work), one
:class:`~groupspec.model.core.Client` per slot, and the perturbation budget.  :class:`SState` is the
same record with a Z3 term in every field: Booleans for flags, integers for statuses and generations,
bit-vectors of width K (partitions) or T (topics) for sets.  ``None`` (no record, no inbox, no
ghost, no target) is a ``present`` flag with every other field at its default, so that equal states
have equal encodings.

:class:`Encoding` mirrors :mod:`groupspec.model.classic` function by function (``_join``,
``_sync``, ``_remove``, ``_complete_join``, ``compute_target``, ...): where the Python code branches on
the state, the mirror computes both branches and merges them with ``If`` (:func:`ite`).  The result
is, for every action instance ``a`` (action class × member slot), a guard ``enabled_a(s)`` and a
next-state term ``step_a(s)``: the model's ``successors`` as one formula.

The assignor is the one part that is not translated: it is an uninterpreted function of exactly the
arguments the model passes it (every slot's presence, subscription, reported owned partitions,
generation, static flag, and the existing partitions).  Each application is recorded; a checker pins
the applications it needs to the model's own assignor (:meth:`Encoding.pin_assignor`), either at once
when the arguments are concrete (drift test), or lazily — counterexample-guided — when a Z3 answer
used an assignment the model would not compute (:mod:`groupspec.proofs.bmc`).  Every trace returned
to the user is therefore replayed by ``groupspec.model`` itself.

What is covered: the ``eager``, ``static``, ``cooperative``, ``connect-delayed`` and
``coordinator-assigns`` variants and their broken versions (all subclasses of ``ClassicProtocol``),
with every fault.  The ZooKeeper-era variant has its own state shape and is not encoded.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, TypeAlias, TypeVar, cast

import z3

from groupspec.model import actions as A
from groupspec.model.classic import ClassicProtocol
from groupspec.model.core import (
    NO_GENERATION,
    Client,
    Group,
    GroupStatus as GS,
    Id,
    Inbox,
    MemberStatus as MS,
    Proc,
    Record,
    Reply,
    State,
    TIMING_FAULTS,
)

BoolT: TypeAlias = z3.BoolRef
_T = TypeVar("_T")
Expr = Any


# --------------------------------------------------------------------------------------------------
# Symbolic records
# --------------------------------------------------------------------------------------------------
@dataclass
class SRecord:
    present: Expr
    static: Expr
    joined: Expr
    awaiting_sync: Expr
    synced: Expr
    topics: Expr
    owned: Expr
    generation: Expr
    assignment: Expr


@dataclass
class SInbox:
    present: Expr
    reply: Expr
    generation: Expr
    assignment: Expr


@dataclass
class SClient:
    proc: Expr
    status: Expr
    id: Expr
    generation: Expr
    owned: Expr
    topics: Expr
    rejoin: Expr
    inbox: SInbox
    ghost_present: Expr
    ghost_gen: Expr
    ghost_owned: Expr


@dataclass
class SGroup:
    status: Expr
    generation: Expr
    leader: Expr
    records: tuple[SRecord, ...]
    target_present: Expr
    target: tuple[Expr, ...]
    partitions: Expr
    held: Expr
    held_for: Expr


@dataclass
class SState:
    group: SGroup
    clients: tuple[SClient, ...]
    budget: Expr


def ite(c: Expr, a: _T, b: _T) -> _T:
    """Field-wise ``If(c, a, b)`` over symbolic records, tuples and terms (of one shape: the result has it)."""
    if a is b:
        return a
    if not (z3.is_true(c) or z3.is_false(c)):
        c = z3.simplify(c)
    return cast(_T, _ite_plain(c, a, b))


def _ite_plain(c: Expr, a: Any, b: Any) -> Any:
    if a is b:
        return a
    if isinstance(a, tuple):
        return tuple(_ite_plain(c, x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return type(a)(**{f.name: _ite_plain(c, getattr(a, f.name), getattr(b, f.name)) for f in fields(a)})
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    return z3.If(c, a, b)



def eq(a: Any, b: Any) -> list[BoolT]:
    """Field-wise equality constraints."""
    if isinstance(a, tuple):
        return [e for x, y in zip(a, b) for e in eq(x, y)]
    if hasattr(a, "__dataclass_fields__"):
        return [e for f in fields(a) for e in eq(getattr(a, f.name), getattr(b, f.name))]
    return [a == b]


def leaves(a: Any) -> list[Expr]:
    if isinstance(a, tuple):
        return [e for x in a for e in leaves(x)]
    if hasattr(a, "__dataclass_fields__"):
        return [e for f in fields(a) for e in leaves(getattr(a, f.name))]
    return [a]


def _set(tup: tuple[_T, ...], i: int, v: _T) -> tuple[_T, ...]:
    return tup[:i] + (v,) + tup[i + 1:]


def _sel(items: tuple[Any, ...], idx: Expr, default: Any) -> Any:
    """``items[idx]`` for a symbolic index (``default`` if out of range)."""
    out = default
    for k in range(len(items) - 1, -1, -1):
        out = ite(idx == k, items[k], out)
    return out


# --------------------------------------------------------------------------------------------------
# The encoding
# --------------------------------------------------------------------------------------------------
class Encoding:
    """Symbolic ``successors`` for one protocol object of ``groupspec.model`` (a ``ClassicProtocol``)."""

    def __init__(self, proto: ClassicProtocol) -> None:
        if not isinstance(proto, ClassicProtocol):
            raise TypeError(f"{type(proto).__name__} is not a classic-protocol variant; it has no finite encoding")
        timing = sorted(TIMING_FAULTS & set(proto.cfg.faults))
        if timing:
            # model/formation.py's steps are not encoded (docs/proofs.md): refuse rather than prove less
            raise ValueError(f"the finite encoding does not encode the fault {timing[0]!r} (model/formation.py)")
        self.proto = proto
        self.cfg = proto.cfg
        self.n = proto.cfg.members
        self.K = proto.cfg.partitions
        self.T = proto.cfg.topics
        self.full = (1 << self.K) - 1
        self.asg_apps: list[tuple[list[Expr], Expr, list[Expr]]] = []  # (args, existing, results per slot)
        self._asg_fns: dict[int, z3.FuncDeclRef] | None = None
        self._uid = 0
        self.instances = self._instances()

    # -- constants ---------------------------------------------------------------------------------
    def P(self, v: int) -> Expr:
        return z3.BitVecVal(v & self.full, self.K)

    def Tm(self, v: int) -> Expr:
        return z3.BitVecVal(v & ((1 << self.T) - 1), self.T)

    def no_record(self) -> SRecord:
        F = z3.BoolVal(False)
        return SRecord(F, F, F, F, F, self.Tm(0), self.P(0), z3.IntVal(NO_GENERATION), self.P(0))

    def no_inbox(self) -> SInbox:
        return SInbox(z3.BoolVal(False), z3.IntVal(0), z3.IntVal(NO_GENERATION), self.P(0))

    def inbox(self, reply: Reply, gen: Expr = None, assignment: Expr = None) -> SInbox:
        return SInbox(z3.BoolVal(True), z3.IntVal(int(reply)),
                      gen if gen is not None else z3.IntVal(NO_GENERATION),
                      assignment if assignment is not None else self.P(0))

    def down_client(self, c: SClient) -> SClient:
        """``Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost)``."""
        return SClient(z3.IntVal(int(Proc.DOWN)), z3.IntVal(int(MS.UNJOINED)), z3.IntVal(int(Id.NONE)),
                       z3.IntVal(NO_GENERATION), self.P(0), c.topics, z3.BoolVal(False), self.no_inbox(),
                       c.ghost_present, c.ghost_gen, c.ghost_owned)

    # -- concrete <-> symbolic ---------------------------------------------------------------------
    def encode(self, s: State) -> SState:
        def rec(r: Record | None) -> SRecord:
            if r is None:
                return self.no_record()
            B = z3.BoolVal
            return SRecord(B(True), B(r.static), B(r.joined), B(r.awaiting_sync), B(r.synced), self.Tm(r.topics),
                           self.P(r.owned), z3.IntVal(r.generation), self.P(r.assignment))

        def cli(c: Client) -> SClient:
            ib = self.no_inbox() if c.inbox is None else self.inbox(
                c.inbox.reply, z3.IntVal(c.inbox.generation), self.P(c.inbox.assignment))
            ghost = c.ghost
            return SClient(z3.IntVal(int(c.proc)), z3.IntVal(int(c.status)), z3.IntVal(int(c.id)),
                           z3.IntVal(c.generation), self.P(c.owned), self.Tm(c.topics), z3.BoolVal(c.rejoin), ib,
                           z3.BoolVal(ghost is not None), z3.IntVal(NO_GENERATION if ghost is None else ghost[0]),
                           self.P(0 if ghost is None else ghost[1]))

        g = s.group
        tgt = g.target
        grp = SGroup(z3.IntVal(int(g.status)), z3.IntVal(g.generation), z3.IntVal(g.leader),
                     tuple(rec(r) for r in g.records), z3.BoolVal(tgt is not None),
                     tuple(self.P(tgt[i] if tgt is not None else 0) for i in range(self.n)),
                     self.P(g.partitions), self.P(g.held), z3.IntVal(g.held_for))
        return SState(grp, tuple(cli(c) for c in s.clients), z3.IntVal(s.budget))

    def fresh(self, tag: str) -> SState:
        """A state of fresh Z3 variables, with the range constraints in ``self.ranges(s)``."""
        def I(n: str) -> Expr:
            return z3.Int(f"{tag}.{n}")

        def Bo(n: str) -> Expr:
            return z3.Bool(f"{tag}.{n}")

        def Pv(n: str) -> Expr:
            return z3.BitVec(f"{tag}.{n}", self.K)

        def Tv(n: str) -> Expr:
            return z3.BitVec(f"{tag}.{n}", self.T)

        recs = tuple(SRecord(Bo(f"r{i}.present"), Bo(f"r{i}.static"), Bo(f"r{i}.joined"), Bo(f"r{i}.awaiting"),
                             Bo(f"r{i}.synced"), Tv(f"r{i}.topics"), Pv(f"r{i}.owned"), I(f"r{i}.gen"),
                             Pv(f"r{i}.assignment")) for i in range(self.n))
        clis = tuple(SClient(I(f"c{i}.proc"), I(f"c{i}.status"), I(f"c{i}.id"), I(f"c{i}.gen"), Pv(f"c{i}.owned"),
                             Tv(f"c{i}.topics"), Bo(f"c{i}.rejoin"),
                             SInbox(Bo(f"c{i}.ib.present"), I(f"c{i}.ib.reply"), I(f"c{i}.ib.gen"),
                                    Pv(f"c{i}.ib.assignment")),
                             Bo(f"c{i}.ghost"), I(f"c{i}.ghost.gen"), Pv(f"c{i}.ghost.owned")) for i in range(self.n))
        grp = SGroup(I("g.status"), I("g.gen"), I("g.leader"), recs, Bo("g.target.present"),
                     tuple(Pv(f"g.target{i}") for i in range(self.n)), Pv("g.partitions"), Pv("g.held"),
                     I("g.held_for"))
        return SState(grp, clis, I("budget"))

    def ranges(self, s: SState) -> list[BoolT]:
        """Type constraints: enumerations in range, absent parts at their defaults."""
        out: list[BoolT] = []
        g = s.group
        out += [g.status >= 0, g.status <= 4, g.leader >= -1, g.leader < self.n, g.held_for >= -1,
                g.held_for < self.n, s.budget >= 0, g.generation >= 0]
        for r in g.records:
            d = self.no_record()
            out.append(z3.Implies(z3.Not(r.present), z3.And(*[a == b for a, b in zip(leaves(r)[1:], leaves(d)[1:])])))
            out.append(r.generation >= NO_GENERATION)
        out.append(z3.Implies(z3.Not(g.target_present), z3.And(*[t == self.P(0) for t in g.target])))
        for c in s.clients:
            out += [c.proc >= 0, c.proc <= 2, c.status >= 0, c.status <= 3, c.id >= 0, c.id <= 2,
                    c.generation >= NO_GENERATION, c.inbox.reply >= 0, c.inbox.reply <= 5]
            di = self.no_inbox()
            out.append(z3.Implies(z3.Not(c.inbox.present), z3.And(*eq(c.inbox, di))))
            out.append(z3.Implies(c.inbox.present, c.inbox.reply >= 1))
            out.append(z3.Implies(z3.Not(c.ghost_present), z3.And(c.ghost_gen == NO_GENERATION, c.ghost_owned == self.P(0))))
        return out

    def decode(self, m: z3.ModelRef, s: SState) -> State:
        def v(e: Expr) -> Any:
            r = m.eval(e, model_completion=True)
            if z3.is_bool(r):
                return z3.is_true(r)
            return r.as_long() if not z3.is_bv_value(r) else r.as_long()

        def iv(e: Expr) -> int:
            r = m.eval(e, model_completion=True)
            n: int = r.as_long()
            return n

        recs: list[Record | None] = []
        for r in s.group.records:
            if not v(r.present):
                recs.append(None)
                continue
            recs.append(Record(static=v(r.static), joined=v(r.joined), awaiting_sync=v(r.awaiting_sync),
                               synced=v(r.synced), topics=v(r.topics), owned=v(r.owned), generation=iv(r.generation),
                               assignment=v(r.assignment)))
        g = s.group
        target = tuple(v(t) for t in g.target) if v(g.target_present) else None
        grp = Group(status=GS(iv(g.status)), generation=iv(g.generation), leader=iv(g.leader), records=tuple(recs),
                    target=target, partitions=v(g.partitions), held=v(g.held), held_for=iv(g.held_for))
        clis = []
        for c in s.clients:
            ib = None
            if v(c.inbox.present):
                ib = Inbox(Reply(iv(c.inbox.reply)), iv(c.inbox.generation), v(c.inbox.assignment))
            ghost = (iv(c.ghost_gen), v(c.ghost_owned)) if v(c.ghost_present) else None
            clis.append(Client(proc=Proc(iv(c.proc)), status=MS(iv(c.status)), id=Id(iv(c.id)),
                               generation=iv(c.generation), owned=v(c.owned), topics=v(c.topics),
                               rejoin=v(c.rejoin), inbox=ib, ghost=ghost))
        return State(group=grp, clients=tuple(clis), budget=iv(s.budget))

    # -- helpers mirroring the model -------------------------------------------------------------
    def subscribed(self, topics: Expr, existing: Expr) -> Expr:
        m = self.P(0)
        for t, tm in enumerate(self.cfg.topic_masks):
            bit = z3.Extract(t, t, topics) == 1
            m = m | z3.If(bit, self.P(tm), self.P(0))
        return m & existing

    def alive(self, s: SState, i: int) -> BoolT:
        c = s.clients[i]
        return z3.And(c.proc == int(Proc.UP), c.id == int(Id.CURRENT), s.group.records[i].present)

    def live_member(self, s: SState, i: int) -> BoolT:
        """The model's ``live_member``: a member of the current generation (paused or not)."""
        c = s.clients[i]
        g = s.group
        behind = z3.And(c.generation > NO_GENERATION, c.generation < g.generation)
        answered = z3.And(c.inbox.present, c.inbox.reply == int(Reply.JOIN), c.inbox.generation == g.generation)
        return z3.And(c.proc != int(Proc.DOWN), c.id == int(Id.CURRENT), g.records[i].present,
                      z3.Implies(behind, answered))

    def _first_present(self, records: tuple[SRecord, ...], extra: Any = None) -> Expr:
        out: Expr = z3.IntVal(-1)
        for k in range(self.n - 1, -1, -1):
            cond = records[k].present if extra is None else z3.And(records[k].present, extra(records[k]))
            out = z3.If(cond, z3.IntVal(k), out)
        return out

    def _prepare_rebalance(self, g: SGroup, clients: tuple[SClient, ...]) -> tuple[SGroup, tuple[SClient, ...]]:
        records = list(g.records)
        cl = list(clients)
        for i, r in enumerate(records):
            notify = z3.And(r.present, r.awaiting_sync, cl[i].id == int(Id.CURRENT), cl[i].proc != int(Proc.DOWN))
            cl[i] = ite(notify, replace(cl[i], inbox=self.inbox(Reply.REBALANCE_IN_PROGRESS)), cl[i])
            keep = z3.If(g.status == int(GS.STABLE), r.assignment, self.P(0))
            nr = replace(r, joined=z3.BoolVal(False), awaiting_sync=z3.BoolVal(False), synced=z3.BoolVal(False),
                         assignment=keep)
            records[i] = ite(r.present, nr, r)
        g2 = replace(g, status=z3.IntVal(int(GS.PREPARING_REBALANCE)), records=tuple(records),
                     target_present=z3.BoolVal(False), target=tuple(self.P(0) for _ in range(self.n)))
        return g2, tuple(cl)

    def _hold(self, g: SGroup, cond: BoolT, i: int, work: Expr) -> SGroup:
        """ClassicProtocol._hold under ``cond``: add ``work`` of departed member ``i`` to the held work."""
        return replace(g, held=z3.If(cond, g.held | work, g.held),
                       held_for=z3.If(z3.And(cond, g.held == 0), z3.IntVal(i), g.held_for))

    def _remove(self, g: SGroup, clients: tuple[SClient, ...], i: int) -> tuple[SGroup, tuple[SClient, ...]]:
        r = g.records[i]
        if self.proto.delayed:
            hold = z3.And(r.assignment != 0,
                          z3.Or(g.status == int(GS.STABLE), g.status == int(GS.PREPARING_REBALANCE)))
            g = self._hold(g, hold, i, r.assignment)
        c = clients[i]
        parked = z3.And(z3.Or(z3.And(r.joined, g.status == int(GS.PREPARING_REBALANCE)), r.awaiting_sync),
                        c.proc != int(Proc.DOWN))
        stale = replace(c, id=z3.IntVal(int(Id.STALE)))
        told = replace(stale, inbox=self.inbox(Reply.UNKNOWN_MEMBER_ID))
        clients = _set(clients, i, ite(c.id == int(Id.CURRENT), ite(parked, told, stale), c))
        records = _set(g.records, i, self.no_record())
        leader = z3.If(g.leader == i, self._first_present(records), g.leader)
        g = replace(g, records=records, leader=leader)
        pg, pc = self._prepare_rebalance(g, clients)
        cond = z3.Or(g.status == int(GS.STABLE), g.status == int(GS.COMPLETING_REBALANCE))
        g, clients = ite(cond, pg, g), ite(cond, pc, clients)
        return self._maybe_complete_join(g, clients)

    def _maybe_complete_join(self, g: SGroup, clients: tuple[SClient, ...]) -> tuple[SGroup, tuple[SClient, ...]]:
        cond = z3.And(g.status == int(GS.PREPARING_REBALANCE),
                      *[z3.Or(z3.Not(r.present), r.joined) for r in g.records])
        cg, cc = self._complete_join(g, clients)
        return ite(cond, cg, g), ite(cond, cc, clients)

    def _complete_join(self, g: SGroup, clients: tuple[SClient, ...]) -> tuple[SGroup, tuple[SClient, ...]]:
        proto = self.proto
        records = list(g.records)
        cl = list(clients)
        for i, r in enumerate(records):
            drop = z3.And(r.present, z3.Not(r.joined), z3.Not(r.static))
            records[i] = ite(drop, self.no_record(), r)
            cl[i] = ite(z3.And(drop, cl[i].id == int(Id.CURRENT)), replace(cl[i], id=z3.IntVal(int(Id.STALE))), cl[i])
            if proto.delayed:
                g = self._hold(g, z3.And(drop, r.assignment != 0), i, r.assignment)
        gen = g.generation + 1
        any_present = z3.Or(*[r.present for r in records])
        empty_g = replace(g, status=z3.IntVal(int(GS.EMPTY)), generation=gen, leader=z3.IntVal(-1),
                          records=tuple(records), target_present=z3.BoolVal(False),
                          target=tuple(self.P(0) for _ in range(self.n)), held=self.P(0), held_for=z3.IntVal(-1))
        cur = _sel(tuple(records), g.leader, self.no_record())
        keep_leader = z3.And(g.leader >= 0, cur.present, cur.joined)
        leader = z3.If(keep_leader, g.leader, self._first_present(tuple(records), lambda r: r.joined))
        g1 = replace(g, records=tuple(records), leader=leader, generation=gen)
        target = self.compute_target(g1)
        for i in range(self.n):
            r = records[i]
            answer = z3.And(r.present, r.joined, cl[i].id == int(Id.CURRENT), cl[i].proc != int(Proc.DOWN))
            ib = self.inbox(Reply.JOIN, gen, target[i] if proto.coordinator_assigns else self.P(0))
            cl[i] = ite(answer, replace(cl[i], inbox=ib), cl[i])
            nr = replace(r, joined=z3.BoolVal(False), awaiting_sync=z3.BoolVal(False), synced=z3.BoolVal(False),
                         assignment=target[i] if proto.coordinator_assigns else self.P(0))
            records[i] = ite(r.present, nr, r)
        status = GS.STABLE if proto.coordinator_assigns else GS.COMPLETING_REBALANCE
        g2 = replace(g1, status=z3.IntVal(int(status)), records=tuple(records), target_present=z3.BoolVal(True),
                     target=tuple(target))
        return ite(any_present, g2, empty_g), ite(any_present, tuple(cl), tuple(cl))

    # -- the assignor (uninterpreted, pinned to the model's) ---------------------------------------
    def _asg(self) -> dict[int, z3.FuncDeclRef]:
        if self._asg_fns is None:
            dom: list[z3.SortRef] = []
            for _ in range(self.n):
                dom += [z3.BoolSort(), z3.BitVecSort(self.T), z3.BitVecSort(self.K), z3.IntSort(), z3.BoolSort()]
            dom.append(z3.BitVecSort(self.K))
            self._asg_fns = {i: z3.Function(f"assignor_{i}", *dom, z3.BitVecSort(self.K)) for i in range(self.n)}
        return self._asg_fns

    def assignor_call(self, present: list[Expr], topics: list[Expr], owned: list[Expr], gens: list[Expr],
                      static: list[Expr], existing: Expr) -> tuple[list[Expr], list[BoolT]]:
        """Symbolic ``assignor(cfg, meta, existing)``: one result per slot (0 where not present).
        The application is recorded in ``asg_apps`` so a checker can pin it to the model's assignor.
        (The second element, side conditions, is empty: nothing is assumed about the answers.)"""
        args: list[Expr] = []
        for i in range(self.n):
            args += [present[i], topics[i], owned[i], gens[i], static[i]]
        args.append(existing)
        fns = self._asg()
        results = [z3.If(present[i], fns[i](*args), self.P(0)) for i in range(self.n)]
        self.asg_apps.append((args, existing, results))
        return results, []

    def pin_assignor(self, model: z3.ModelRef | None, app: tuple[list[Expr], Expr, list[Expr]]) -> list[BoolT]:
        """The model's own assignor on the concrete arguments of one application (evaluated in
        ``model`` if they are symbolic): ground equations for the uninterpreted functions."""
        args, _existing, _results = app

        def val(e: Expr) -> Any:
            r = model.eval(e, model_completion=True) if model is not None else z3.simplify(e)
            if z3.is_true(r):
                return True
            if z3.is_false(r):
                return False
            return r.as_long()

        vals = [val(a) for a in args]
        meta = []
        for i in range(self.n):
            pres, topics, owned, gen, static = vals[5 * i: 5 * i + 5]
            if pres:
                meta.append((i, topics, owned, gen, static))
        existing = vals[-1]
        result = self.proto.assignor(self.cfg, meta, existing)
        fns = self._asg()
        cargs: list[Expr] = []
        for i in range(self.n):
            pres, topics, owned, gen, static = vals[5 * i: 5 * i + 5]
            cargs += [z3.BoolVal(pres), self.Tm(topics), self.P(owned), z3.IntVal(gen), z3.BoolVal(static)]
        cargs.append(self.P(existing))
        return [fns[i](*cargs) == self.P(result[i]) for i, *_ in meta]

    def compute_target(self, g: SGroup) -> list[Expr]:
        proto, cfg = self.proto, self.cfg
        records = g.records
        existing = g.partitions
        held_back = g.held if proto.delayed else self.P(0)
        present = [r.present for r in records]
        claims = [r.owned & ~held_back for r in records]
        results, _side = self.assignor_call(present, [r.topics for r in records], claims,
                                            [r.generation for r in records], [r.static for r in records],
                                            existing & ~held_back)
        result = list(results)
        if proto.rebalance == "cooperative" and proto.withhold_transfers:
            gaining = self.P(0)
            losing = self.P(0)
            for i in range(self.n):
                owned = records[i].owned
                gaining = gaining | z3.If(present[i], result[i] & ~owned, self.P(0))
                losing = losing | z3.If(present[i], owned & ~result[i], self.P(0))
            moving = gaining & losing
            for i in range(self.n):
                result[i] = z3.If(present[i], result[i] & ~(moving & ~records[i].owned), result[i])
        return [z3.If(present[i], result[i], self.P(0)) for i in range(self.n)]

    # -- requests ----------------------------------------------------------------------------------
    def _join(self, s: SState, i: int) -> SState:
        proto, cfg = self.proto, self.cfg
        g = s.group
        c = s.clients[i]
        sub = self.subscribed(c.topics, g.partitions)
        lost = z3.Or(c.generation == NO_GENERATION, c.id == int(Id.NONE))
        if proto.rebalance == "eager":
            kept = self.P(0) if proto.revoke_before_join else c.owned
        else:
            kept = c.owned & sub
        owned = z3.If(lost, self.P(0), kept)
        previous = z3.If(lost, self.P(0), c.owned)
        c = replace(c, owned=owned, status=z3.IntVal(int(MS.PREPARING_REBALANCE)), rejoin=z3.BoolVal(False))
        reported_owned = owned if proto.rebalance == "cooperative" else previous
        reported_gen = c.generation
        r = g.records[i]
        # stale id
        unknown_c = replace(c, id=z3.IntVal(int(Id.NONE)), generation=z3.IntVal(NO_GENERATION), owned=self.P(0),
                            status=z3.IntVal(int(MS.UNJOINED)))
        if proto.static_members:
            # FENCED_INSTANCE_ID while the instance id maps to another member; UNKNOWN_MEMBER_ID once expired
            stale_c = ite(r.present, self.down_client(c), unknown_c)
        else:
            stale_c = unknown_c
        stale = SState(g, _set(s.clients, i, stale_c), s.budget)
        meta = (c.topics, reported_owned, reported_gen)
        # static replacement
        if proto.static_members:
            srep = self._static_replace(s, i, c, meta)
            is_srep = z3.And(c.id == int(Id.NONE), r.present)
        new = c.id == int(Id.NONE)
        F = z3.BoolVal(False)
        fresh_rec = SRecord(z3.BoolVal(True), z3.BoolVal(proto.static_members), F, F, F, self.Tm(0), self.P(0),
                            z3.IntVal(NO_GENERATION), self.P(0))
        r1 = ite(new, fresh_rec, r)
        c1 = replace(c, id=z3.If(new, z3.IntVal(int(Id.CURRENT)), c.id))
        same = z3.And(r1.topics == meta[0], r1.owned == meta[1], r1.generation == meta[2], z3.Not(new))
        r2 = replace(r1, topics=meta[0], owned=meta[1], generation=meta[2])
        g1 = replace(g, records=_set(g.records, i, r2))
        clients1 = _set(s.clients, i, c1)
        # by status
        st = g1.status
        g_empty = replace(g1, status=z3.IntVal(int(GS.PREPARING_REBALANCE)))
        immediate = z3.And(same, z3.Or(st == int(GS.COMPLETING_REBALANCE), g1.leader != i))
        imm_state = SState(g1, _set(clients1, i, replace(c1, inbox=self.inbox(Reply.JOIN, g1.generation))), s.budget)
        pg, pc = self._prepare_rebalance(g1, clients1)
        in_sc = z3.Or(st == int(GS.STABLE), st == int(GS.COMPLETING_REBALANCE))
        g2 = ite(st == int(GS.EMPTY), g_empty, ite(in_sc, pg, g1))
        clients2 = ite(in_sc, pc, clients1)
        g3 = replace(g2, leader=z3.If(g2.leader < 0, z3.IntVal(i), g2.leader))
        g3 = replace(g3, records=_set(g3.records, i, replace(g3.records[i], joined=z3.BoolVal(True))))
        g4, clients4 = self._maybe_complete_join(g3, clients2)
        normal = SState(g4, clients4, s.budget)
        out = ite(z3.And(in_sc, immediate), imm_state, normal)
        if proto.static_members:
            out = ite(is_srep, srep, out)
        return ite(c.id == int(Id.STALE), stale, out)

    def _static_replace(self, s: SState, i: int, c: SClient, meta: tuple[Expr, Expr, Expr]) -> SState:
        g = s.group
        r = g.records[i]
        c = replace(c, id=z3.IntVal(int(Id.CURRENT)))
        r = replace(r, topics=meta[0], owned=meta[1], generation=meta[2])
        # STABLE: no rebalance
        outside = (r.assignment & ~self.subscribed(c.topics, g.partitions | r.assignment)) != self.P(0)
        st_client = replace(c, generation=g.generation, status=z3.IntVal(int(MS.STABLE)),
                            owned=z3.If(outside, self.P(0), r.assignment), rejoin=z3.Or(c.rejoin, outside))
        st_g = replace(g, records=_set(g.records, i, replace(r, synced=z3.BoolVal(True))))
        stable_state = SState(st_g, _set(s.clients, i, st_client), s.budget)
        clients = _set(s.clients, i, c)
        g1 = replace(g, records=_set(g.records, i, replace(r, awaiting_sync=z3.BoolVal(False))))
        pg, pc = self._prepare_rebalance(g1, clients)
        comp = g1.status == int(GS.COMPLETING_REBALANCE)
        g2, clients2 = ite(comp, pg, g1), ite(comp, pc, clients)
        g2 = replace(g2, records=_set(g2.records, i, replace(g2.records[i], joined=z3.BoolVal(True))))
        g3, clients3 = self._maybe_complete_join(g2, clients2)
        other = SState(g3, clients3, s.budget)
        return ite(g.status == int(GS.STABLE), stable_state, other)

    def _sync(self, s: SState, i: int, clients: tuple[SClient, ...]) -> SState:
        g = s.group
        c = clients[i]
        r = g.records[i]
        reset_c = replace(c, id=z3.IntVal(int(Id.NONE)), generation=z3.IntVal(NO_GENERATION), owned=self.P(0),
                          status=z3.IntVal(int(MS.UNJOINED)))
        s_unknown = SState(g, _set(clients, i, reset_c), s.budget)
        illegal_c = replace(c, generation=z3.IntVal(NO_GENERATION), owned=self.P(0), status=z3.IntVal(int(MS.UNJOINED)))
        s_illegal = SState(g, _set(clients, i, illegal_c), s.budget)
        s_prep = SState(g, _set(clients, i, replace(c, rejoin=z3.BoolVal(True))), s.budget)
        s_stable = SState(replace(g, records=_set(g.records, i, replace(r, synced=z3.BoolVal(True)))),
                          _set(clients, i, replace(c, inbox=self.inbox(Reply.SYNC, g.generation, r.assignment))),
                          s.budget)
        s_follower = SState(replace(g, records=_set(g.records, i, replace(r, awaiting_sync=z3.BoolVal(True),
                                                                          synced=z3.BoolVal(True)))), clients, s.budget)
        # the leader's SyncGroup
        records = list(g.records)
        cl = list(clients)
        for k, rk in enumerate(records):
            parked = z3.And(rk.present, z3.Or(rk.awaiting_sync, z3.BoolVal(k == i)))
            answer = z3.And(parked, cl[k].id == int(Id.CURRENT), cl[k].proc != int(Proc.DOWN))
            cl[k] = ite(answer, replace(cl[k], inbox=self.inbox(Reply.SYNC, g.generation, g.target[k])), cl[k])
            nr = replace(rk, assignment=g.target[k], awaiting_sync=z3.BoolVal(False),
                         synced=z3.Or(rk.synced, z3.BoolVal(k == i)))
            records[k] = ite(rk.present, nr, rk)
        s_leader = SState(replace(g, status=z3.IntVal(int(GS.STABLE)), records=tuple(records)), tuple(cl), s.budget)
        completing = ite(g.leader != i, s_follower, s_leader)
        by_status = ite(g.status == int(GS.PREPARING_REBALANCE), s_prep,
                        ite(g.status == int(GS.STABLE), s_stable, completing))
        return ite(z3.Or(z3.Not(r.present), c.id != int(Id.CURRENT)), s_unknown,
                   ite(c.generation != g.generation, s_illegal, by_status))

    # -- client-side handlers ----------------------------------------------------------------------
    def _receive_join(self, s: SState, i: int) -> SState:
        c = s.clients[i]
        ib = c.inbox
        if self.proto.coordinator_assigns:
            c2 = replace(c, inbox=self.no_inbox(), generation=ib.generation, status=z3.IntVal(int(MS.STABLE)),
                         owned=ib.assignment)
            return SState(s.group, _set(s.clients, i, c2), s.budget)
        c2 = replace(c, inbox=self.no_inbox(), generation=ib.generation,
                     status=z3.IntVal(int(MS.COMPLETING_REBALANCE)))
        return self._sync(s, i, _set(s.clients, i, c2))

    def _receive_sync(self, s: SState, i: int) -> SState:
        c = s.clients[i]
        a = c.inbox.assignment
        sub = self.subscribed(c.topics, s.group.partitions | a)
        base = replace(c, inbox=self.no_inbox(), status=z3.IntVal(int(MS.STABLE)))
        reject = replace(base, rejoin=z3.BoolVal(True))
        if self.proto.rebalance == "cooperative":
            revoked = c.owned & ~a
            apply = replace(base, owned=a, rejoin=z3.Or(c.rejoin, revoked != 0))
        else:
            apply = replace(base, owned=a)
        return SState(s.group, _set(s.clients, i, ite((a & ~sub) != 0, reject, apply)), s.budget)

    def _receive_error(self, s: SState, i: int) -> SState:
        c = s.clients[i]
        rep = c.inbox.reply
        rip = replace(c, inbox=self.no_inbox(), rejoin=z3.BoolVal(True))
        unk = replace(c, inbox=self.no_inbox(), id=z3.IntVal(int(Id.NONE)), generation=z3.IntVal(NO_GENERATION),
                      owned=self.P(0), status=z3.IntVal(int(MS.UNJOINED)))
        fenced = self.down_client(c)
        c2 = ite(rep == int(Reply.REBALANCE_IN_PROGRESS), rip, ite(rep == int(Reply.UNKNOWN_MEMBER_ID), unk, fenced))
        return SState(s.group, _set(s.clients, i, c2), s.budget)

    def _heartbeat(self, s: SState, i: int) -> tuple[BoolT, SState]:
        g = s.group
        c = s.clients[i]
        r = g.records[i]
        reset = replace(c, id=z3.IntVal(int(Id.NONE)), generation=z3.IntVal(NO_GENERATION), owned=self.P(0),
                        status=z3.IntVal(int(MS.UNJOINED)), rejoin=z3.BoolVal(False))
        if self.proto.static_members:
            unknown = ite(r.present, self.down_client(c), reset)
        else:
            unknown = reset
        illegal = replace(c, generation=z3.IntVal(NO_GENERATION), owned=self.P(0),
                          status=z3.IntVal(int(MS.UNJOINED)), rejoin=z3.BoolVal(False))
        rip = replace(c, rejoin=z3.BoolVal(True))
        is_unknown = z3.Or(c.id == int(Id.STALE), z3.Not(r.present))
        is_illegal = c.generation != g.generation
        is_rip = z3.And(g.status == int(GS.PREPARING_REBALANCE), c.status == int(MS.STABLE), z3.Not(c.rejoin))
        some = z3.Or(is_unknown, is_illegal, is_rip)
        c2 = ite(is_unknown, unknown, ite(is_illegal, illegal, rip))
        return some, SState(g, _set(s.clients, i, c2), s.budget)

    def _expire(self, s: SState, i: int) -> SState:
        g, cl = self._remove(s.group, s.clients, i)
        return SState(g, cl, s.budget)

    def _release_held(self, s: SState) -> SState:
        return SState(replace(s.group, held=self.P(0), held_for=z3.IntVal(-1)), s.clients, s.budget)

    def _unassigned_new(self, s: SState) -> BoolT:
        g = s.group
        assigned = self.P(0)
        wanted = self.P(0)
        for r in g.records:
            assigned = assigned | z3.If(r.present, r.assignment | r.owned, self.P(0))
            wanted = wanted | z3.If(r.present, self.subscribed(r.topics, g.partitions), self.P(0))
        return (wanted & ~assigned & ~g.held) != 0

    def _spend(self, s: SState) -> SState:
        return replace(s, budget=s.budget - 1)

    # -- the transition relation -------------------------------------------------------------------
    def _instances(self) -> list[A.Action]:
        """Every action instance of the instance, in the model's order (per slot, then global)."""
        out: list[A.Action] = []
        per_slot = (A.ReceiveJoinResponse, A.ReceiveSyncResponse, A.ReceiveError, A.SendJoinGroup, A.Heartbeat,
                    A.NoticeMetadata, A.Resume, A.GhostFenced, A.SessionExpired, A.Start, A.LeaveGroup, A.Pause,
                    A.ChangeSubscription, A.Crash, A.ExpireLive)
        for i in range(self.n):
            out += [cls(i) for cls in per_slot]
        out += [A.RebalanceTimeout(), A.RebalanceTimeoutOvertakes(), A.DelayExpired(), A.AddPartition()]
        return out

    def transitions(self, s: SState) -> list[tuple[A.Action, BoolT, SState]]:
        """(action instance, enabled guard, successor) for every action instance."""
        proto, cfg = self.proto, self.cfg
        faults = cfg.faults
        g = s.group
        perturb = s.budget > 0
        out: list[tuple[A.Action, BoolT, SState]] = []
        F = z3.BoolVal(False)
        for i in range(self.n):
            c = s.clients[i]
            r = g.records[i]
            up = c.proc == int(Proc.UP)
            ib = c.inbox
            idle = z3.And(up, z3.Not(ib.present))
            out.append((A.ReceiveJoinResponse(i), z3.And(up, ib.present, ib.reply == int(Reply.JOIN)),
                        self._receive_join(s, i)))
            out.append((A.ReceiveSyncResponse(i), z3.And(up, ib.present, ib.reply == int(Reply.SYNC)),
                        self._receive_sync(s, i)))
            out.append((A.ReceiveError(i), z3.And(up, ib.present, ib.reply != int(Reply.JOIN),
                                                  ib.reply != int(Reply.SYNC)), self._receive_error(s, i)))
            want_join = z3.And(c.status != int(MS.PREPARING_REBALANCE),
                               z3.Or(c.status == int(MS.UNJOINED), c.rejoin))
            out.append((A.SendJoinGroup(i), z3.And(idle, want_join), self._join(s, i)))
            hb_some, hb = self._heartbeat(s, i)
            hb_on = z3.And(idle, z3.Or(c.status == int(MS.STABLE), c.status == int(MS.COMPLETING_REBALANCE)),
                           c.id != int(Id.NONE), hb_some)
            out.append((A.Heartbeat(i), hb_on, hb))
            if "partitions" in faults or proto.delayed:
                who = z3.BoolVal(True) if proto.delayed else g.leader == i
                nm = z3.And(idle, who, c.status == int(MS.STABLE), z3.Not(c.rejoin),
                            g.status == int(GS.STABLE), self.alive(s, i), self._unassigned_new(s))
                out.append((A.NoticeMetadata(i), nm, SState(g, _set(s.clients, i, replace(c, rejoin=z3.BoolVal(True))),
                                                             s.budget)))
            else:
                out.append((A.NoticeMetadata(i), F, s))
            out.append((A.Resume(i), c.proc == int(Proc.PAUSED),
                        SState(g, _set(s.clients, i, replace(c, proc=z3.IntVal(int(Proc.UP)))), s.budget)))
            no_ghost = replace(c, ghost_present=z3.BoolVal(False), ghost_gen=z3.IntVal(NO_GENERATION),
                               ghost_owned=self.P(0))
            out.append((A.GhostFenced(i), c.ghost_present, SState(g, _set(s.clients, i, no_ghost), s.budget)))
            exp_on = z3.And(r.present, z3.Not(self.alive(s, i)),
                            z3.Not(z3.And(g.status == int(GS.PREPARING_REBALANCE), r.joined)))
            out.append((A.SessionExpired(i), exp_on, self._expire(s, i)))
            out += self._perturbations(s, i, perturb)
        # global
        if True:
            recs = g.records
            any_joined = z3.Or(*[z3.And(r.present, r.joined) for r in recs])
            any_dead = z3.Or(*[z3.And(r.present, z3.Not(r.joined), z3.Not(self.alive(s, k))) for k, r in enumerate(recs)])
            # free only when nobody who has not rejoined can; overtaking a running member is the budgeted
            # RebalanceTimeoutOvertakes perturbation (the timeout fault), as in model/classic.py
            any_live = z3.Or(*[z3.And(r.present, z3.Not(r.joined), self.alive(s, k)) for k, r in enumerate(recs)])
            prep = g.status == int(GS.PREPARING_REBALANCE)
            g2, cl2 = self._complete_join(g, s.clients)
            out.append((A.RebalanceTimeout(), z3.And(prep, any_joined, any_dead, z3.Not(any_live)),
                        SState(g2, cl2, s.budget)))
            if "timeout" in faults:
                out.append((A.RebalanceTimeoutOvertakes(), z3.And(perturb, prep, any_joined, any_live),
                            self._spend(SState(g2, cl2, s.budget))))
            else:
                out.append((A.RebalanceTimeoutOvertakes(), F, s))
        if proto.delayed:
            out.append((A.DelayExpired(), g.held != 0, self._release_held(s)))
        else:
            out.append((A.DelayExpired(), F, s))
        if "partitions" in faults:
            missing = ~g.partitions & self.P(self.full)
            p = missing & -missing
            out.append((A.AddPartition(), z3.And(perturb, g.partitions != self.P(self.full)),
                        self._spend(SState(replace(g, partitions=g.partitions | p), s.clients, s.budget))))
        else:
            out.append((A.AddPartition(), F, s))
        return out

    def _perturbations(self, s: SState, i: int, perturb: BoolT) -> list[tuple[A.Action, BoolT, SState]]:
        proto, cfg = self.proto, self.cfg
        faults = cfg.faults
        g = s.group
        c = s.clients[i]
        r = g.records[i]
        F = z3.BoolVal(False)
        up = c.proc == int(Proc.UP)
        out: list[tuple[A.Action, BoolT, SState]] = []
        # Start
        if "join" in faults:
            down_ok = z3.And(c.proc == int(Proc.DOWN), z3.Or(z3.Not(r.present), z3.BoolVal(proto.static_members)))
            paused_ok = z3.And(c.proc == int(Proc.PAUSED), z3.BoolVal(proto.static_members and "zombie" in faults),
                               z3.Not(c.ghost_present))
            paused = c.proc == int(Proc.PAUSED)
            gp = z3.Or(c.ghost_present, paused)
            gg = z3.If(paused, c.generation, c.ghost_gen)
            go = z3.If(paused, c.owned, c.ghost_owned)
            topics = z3.If(c.topics == 0, self.Tm(cfg.all_topics), c.topics)
            fresh = SClient(z3.IntVal(int(Proc.UP)), z3.IntVal(int(MS.UNJOINED)), z3.IntVal(int(Id.NONE)),
                            z3.IntVal(NO_GENERATION), self.P(0), topics, z3.BoolVal(False), self.no_inbox(), gp, gg, go)
            out.append((A.Start(i), z3.And(perturb, z3.Or(down_ok, paused_ok)),
                        self._spend(SState(g, _set(s.clients, i, fresh), s.budget))))
        else:
            out.append((A.Start(i), F, s))
        # LeaveGroup
        if "leave" in faults:
            down = self.down_client(c)
            clients = _set(s.clients, i, down)
            rm = z3.And(c.id == int(Id.CURRENT), r.present, z3.BoolVal(not proto.static_members))
            g2, cl2 = self._remove(g, clients, i)
            g3, cl3 = ite(rm, g2, g), ite(rm, cl2, clients)
            cl3 = _set(cl3, i, down)
            out.append((A.LeaveGroup(i), z3.And(perturb, up), self._spend(SState(g3, cl3, s.budget))))
        else:
            out.append((A.LeaveGroup(i), F, s))
        # Pause
        if "zombie" in faults:
            out.append((A.Pause(i), z3.And(perturb, up, c.id == int(Id.CURRENT)),
                        self._spend(SState(g, _set(s.clients, i, replace(c, proc=z3.IntVal(int(Proc.PAUSED)))),
                                           s.budget))))
        else:
            out.append((A.Pause(i), F, s))
        # ChangeSubscription
        if "subscription" in faults and cfg.topics > 1:
            last = self.Tm(1 << (cfg.topics - 1))
            c2 = replace(c, topics=c.topics ^ last, rejoin=z3.BoolVal(True))
            out.append((A.ChangeSubscription(i), z3.And(perturb, up, c.status == int(MS.STABLE),
                                                        c.id == int(Id.CURRENT)),
                        self._spend(SState(g, _set(s.clients, i, c2), s.budget))))
        else:
            out.append((A.ChangeSubscription(i), F, s))
        # Crash
        if "crash" in faults:
            out.append((A.Crash(i), z3.And(perturb, c.proc != int(Proc.DOWN)),
                        self._spend(SState(g, _set(s.clients, i, self.down_client(c)), s.budget))))
        else:
            out.append((A.Crash(i), F, s))
        # ExpireLive
        if "timeout" in faults:
            g2, cl2 = self._remove(g, s.clients, i)
            out.append((A.ExpireLive(i), z3.And(perturb, r.present, self.alive(s, i)),
                        self._spend(SState(g2, cl2, s.budget))))
        else:
            out.append((A.ExpireLive(i), F, s))
        return out

    # -- properties (mirrors of groupspec.model.properties) ----------------------------------------
    def exclusive_ownership(self, s: SState) -> BoolT:
        cs = []
        for i in range(self.n):
            for j in range(i + 1, self.n):
                cs.append(z3.Not(z3.And(self.live_member(s, i), self.live_member(s, j),
                                        (s.clients[i].owned & s.clients[j].owned) != 0)))
        return z3.And(*cs) if cs else z3.BoolVal(True)

    def commit_accepted(self, s: SState, i: int, ghost: bool) -> BoolT:
        g = s.group
        if not self.proto.fence_commits:
            return g.status != int(GS.DEAD)
        if ghost:
            return z3.BoolVal(False)
        c = s.clients[i]
        return z3.And(g.status != int(GS.DEAD), c.id == int(Id.CURRENT), g.records[i].present,
                      c.generation == g.generation,
                      z3.Or(g.status == int(GS.STABLE), g.status == int(GS.PREPARING_REBALANCE)))

    def commit_fencing(self, s: SState) -> BoolT:
        g = s.group
        bad = []
        for i in range(self.n):
            c = s.clients[i]
            r = g.records[i]
            for ghost in (False, True):
                if ghost:
                    committing = z3.And(c.ghost_present, c.ghost_owned != 0)
                    owned = c.ghost_owned
                else:
                    committing = z3.And(c.proc == int(Proc.UP), c.status == int(MS.STABLE), c.owned != 0)
                    owned = c.owned
                wrong = [z3.BoolVal(ghost), z3.Not(self.live_member(s, i)), c.generation != g.generation,
                         (owned & ~r.assignment) != 0]
                for k in range(self.n):
                    if k != i:
                        wrong.append(z3.And(self.live_member(s, k), (s.clients[k].owned & owned) != 0))
                bad.append(z3.And(committing, self.commit_accepted(s, i, ghost), z3.Or(*wrong)))
        return z3.Not(z3.Or(*bad))

    def generation_monotonic(self, s: SState, t: SState) -> BoolT:
        g, h = s.group, t.group
        d = h.generation - g.generation
        completed_to = [h.status == int(GS.COMPLETING_REBALANCE), h.status == int(GS.EMPTY)]
        if self.proto.coordinator_assigns:
            completed_to.append(h.status == int(GS.STABLE))
        conds = [z3.Or(d == 0, d == 1), z3.Implies(d == 1, z3.Or(*completed_to)),
                 z3.Not(z3.And(d == 0, h.status != g.status,
                               z3.Or(h.status == int(GS.COMPLETING_REBALANCE), h.status == int(GS.EMPTY)),
                               g.status != int(GS.DEAD)))]
        for a, b in zip(s.clients, t.clients):
            conds.append(z3.Not(z3.And(b.generation != NO_GENERATION, b.generation < a.generation)))
            conds.append(b.generation <= h.generation)
        return z3.And(*conds)

    def safety(self) -> dict[str, Any]:
        return {"exclusive_ownership": self.exclusive_ownership, "commit_fencing": self.commit_fencing}

    # -- convergence (mirror of ClassicProtocol.converged) -----------------------------------------
    def converged(self, s: SState) -> BoolT:
        g = s.group
        conds = [g.status == int(GS.STABLE), g.held == 0]
        assigned = self.P(0)
        wanted = self.P(0)
        for i in range(self.n):
            c = s.clients[i]
            r = g.records[i]
            conds.append(c.proc != int(Proc.PAUSED))
            conds.append(z3.Not(c.ghost_present))
            conds.append(z3.Not(z3.And(c.proc == int(Proc.UP), z3.Or(c.id != int(Id.CURRENT), z3.Not(r.present)))))
            sub = self.subscribed(c.topics, g.partitions)
            member_ok = z3.And(self.alive(s, i), c.status == int(MS.STABLE), z3.Not(c.inbox.present),
                               z3.Not(c.rejoin), c.generation == g.generation, c.owned == r.assignment,
                               (r.assignment & ~sub) == 0)
            conds.append(z3.Implies(r.present, member_ok))
        # disjointness, in slot order as the model accumulates
        acc = self.P(0)
        for i in range(self.n):
            r = g.records[i]
            conds.append(z3.Implies(r.present, (r.assignment & acc) == 0))
            acc = acc | z3.If(r.present, r.assignment, self.P(0))
            wanted = wanted | z3.If(r.present, self.subscribed(s.clients[i].topics, g.partitions), self.P(0))
        assigned = acc
        conds.append(assigned == wanted)
        again, _ = self.assignor_call([r.present for r in g.records], [c.topics for c in s.clients],
                                      [r.assignment for r in g.records], [g.generation] * self.n,
                                      [r.static for r in g.records], g.partitions)
        for i in range(self.n):
            conds.append(z3.Implies(g.records[i].present, again[i] == g.records[i].assignment))
        everyone_gone = z3.And(g.status == int(GS.EMPTY),
                               *[z3.And(c.proc == int(Proc.DOWN), z3.Not(c.ghost_present)) for c in s.clients])
        gone_ok = z3.And(g.held == 0, *[z3.Not(r.present) for r in g.records])
        return z3.If(everyone_gone, gone_ok, z3.And(*conds))

