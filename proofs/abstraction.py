"""The abstraction from ``groupspec.model`` states to the relational structures of ``proofs/classic.py``.

Theory of operation
-------------------
The unbounded proofs are about a relational model; the claim that they say something about
``groupspec.model`` rests on a correspondence between the two.  :func:`abstract` makes that
correspondence executable for single states: it maps a concrete model state to a finite first-order
structure over the sorts ``Member``, ``Partition`` and ``Generation``:

* one ``Member`` element per member id in play: ``m<i>`` for the id the coordinator's record of slot i
  holds; ``z<i>`` for a stale id a process of slot i still holds (retired); ``gh<i>`` for the replaced
  old process of a static member (retired, it believes it owns its ghost partitions); ``n<i>`` for a
  running process with no member id yet (fresh);
* a record's id whose process is down, or now holds another id, is ``c_dead``;
* one ``Generation`` element per generation number that occurs, ordered by ``lt``;
* the relations read off the records, the clients and their inboxes (a SyncGroup answer is
  ``sync_ok``/``sync_resp``; a JoinGroup answer is ``join_resp``, and for coordinator-assigns also the
  share it carries; REBALANCE_IN_PROGRESS and UNKNOWN_MEMBER_ID answers have no relational counterpart:
  the relational client may rejoin or reset at any time).

:func:`check_state` then asks Z3 whether the structure satisfies every clause of the inductive
invariant and every safety property.  ``tests/test_proofs_abstraction.py`` runs it on random
reachable states of every variant: an invariant clause that some model state violates would mean the
relational model does not describe the model — the unbounded proof would be about something else.
This checks the state half of the correspondence; the step half (each model step is a sequence of
relational steps) is argued in ``proofs/classic.py``.
"""
from __future__ import annotations

from typing import Any

import z3

from groupspec.model import NO_GENERATION, GroupStatus as GS, Id, MemberStatus as MS, Proc, Reply, State, bits

from . import classic
from .epr import RelSpec

VARIANT_OF = {
    "eager": classic.Variant("eager"),
    "static": classic.Variant("static"),
    "cooperative": classic.Variant("cooperative"),
    "connect-delayed": classic.Variant("cooperative"),
    "coordinator-assigns": classic.Variant("coordinator-assigns"),
}


def abstract(proto: Any, s: State) -> dict[str, Any]:
    """The relational structure of a model state: universes and the tuples of every relation."""
    g = s.group
    K = proto.cfg.partitions
    rel: dict[str, set[tuple[Any, ...]]] = {name: set() for name in classic.RELATIONS}
    members: list[str] = []
    gens: set[int] = {g.generation}

    def client(e: str, c: Any, dead: bool = False) -> None:
        if dead:
            rel["c_dead"].add((e,))
            return
        if c.generation != NO_GENERATION:
            rel["cgen"].add((e, c.generation))
            gens.add(c.generation)
        status = {MS.PREPARING_REBALANCE: "c_joining", MS.COMPLETING_REBALANCE: "c_syncing",
                  MS.STABLE: "c_stable"}.get(c.status)
        if status:
            rel[status].add((e,))
        for p in bits(c.owned):
            rel["owned"].add((e, p))
        ib = c.inbox
        if ib is not None and ib.reply == Reply.JOIN:
            rel["join_resp"].add((e, ib.generation))
            gens.add(ib.generation)
            if proto.coordinator_assigns:
                rel["sync_ok"].add((e, ib.generation))
                for p in bits(ib.assignment):
                    rel["sync_resp"].add((e, ib.generation, p))
        elif ib is not None and ib.reply == Reply.SYNC:
            rel["sync_ok"].add((e, ib.generation))
            gens.add(ib.generation)
            for p in bits(ib.assignment):
                rel["sync_resp"].add((e, ib.generation, p))

    for i, (r, c) in enumerate(zip(g.records, s.clients)):
        if r is not None:
            e = f"m{i}"
            members.append(e)
            rel["member"].add((e,))
            if r.joined:
                rel["joined"].add((e,))
            for p in bits(r.owned):
                rel["rep"].add((e, p))
            for p in bits(r.assignment):
                rel["assign"].add((e, p))
            client(e, c, dead=(c.id != Id.CURRENT or c.proc == Proc.DOWN))
        if c.proc != Proc.DOWN and c.id == Id.STALE:
            e = f"z{i}"
            members.append(e)
            rel["retired"].add((e,))
            client(e, c)
        if c.proc != Proc.DOWN and c.id == Id.NONE:
            members.append(f"n{i}")
            client(f"n{i}", c)
        if c.ghost is not None:
            e = f"gh{i}"
            members.append(e)
            rel["retired"].add((e,))
            gen, owned = c.ghost
            if gen != NO_GENERATION:
                rel["cgen"].add((e, gen))
                gens.add(gen)
            if owned:
                rel["c_stable"].add((e,))
            for p in bits(owned):
                rel["owned"].add((e, p))
    if g.status == GS.PREPARING_REBALANCE:
        rel["preparing"].add(())
    if g.status == GS.STABLE:
        rel["stable"].add(())
    return {"Member": members or ["none"], "Partition": list(range(K)), "Generation": sorted(gens),
            "gen": g.generation, "relations": rel}


def check_state(proto: Any, s: State, spec: RelSpec | None = None) -> list[str]:
    """Clauses of the invariant (and safety properties) that the abstraction of ``s`` violates."""
    if spec is None:
        spec = classic.build(VARIANT_OF[proto.name])
    st = abstract(proto, s)
    solver = z3.Solver()
    solver.add(*spec.axiom_formulas())
    elems: dict[str, dict[Any, z3.ExprRef]] = {}
    for srt in ("Member", "Partition", "Generation"):
        es = {v: z3.Const(f"el_{srt}_{v}", spec.sorts[srt]) for v in st[srt]}
        elems[srt] = es
        if len(es) > 1:
            solver.add(z3.Distinct(*es.values()))
        x = z3.Const(f"dom_{srt}", spec.sorts[srt])
        solver.add(z3.ForAll([x], z3.Or(*[x == e for e in es.values()])))
    lt = spec.rigid("lt")
    gl = st["Generation"]
    for a in gl:
        for b in gl:
            solver.add(lt(elems["Generation"][a], elems["Generation"][b]) == z3.BoolVal(a < b))
    a = spec.state("a")
    solver.add(a.consts["gen"] == elems["Generation"][st["gen"]])
    for name, sorts in spec.relations.items():
        tuples = st["relations"][name]
        xs = [z3.Const(f"q_{name}_{k}", spec.sorts[srt]) for k, srt in enumerate(sorts)]
        options = [z3.And(*[x == elems[srt][v] for x, srt, v in zip(xs, sorts, tup)]) if xs else z3.BoolVal(True)
                   for tup in tuples]
        body = a.rels[name](*xs) == (z3.Or(*options) if options else z3.BoolVal(False))
        solver.add(z3.ForAll(xs, body) if xs else body)
    bad: list[str] = []
    for cname, clause in list(spec.invariant.items()) + list(spec.safety.items()):
        solver.push()
        solver.add(z3.Not(clause(a)))
        if solver.check() != z3.unsat:
            bad.append(cname)
        solver.pop()
    return bad
