"""Unbounded safety of the next-generation protocol (KIP-848) with Z3: exclusivity, commit fencing, epochs.

Theory of operation
-------------------
A relational abstraction of :mod:`groupspec.model.consumer` over two uninterpreted sorts, members
and partitions (so the proofs hold for *any* number of each), in the style of
:mod:`groupspec.proofs.classic`:

* coordinator: ``present(m)`` (the member exists), ``mepoch(m)``, ``assigned(m, p)``,
  ``revoking(m, p)`` (pending revocation), the assignment epoch ``tepoch`` and the target
  ``target(m, p)``; a partition is *held* by ``m`` when assigned to it or pending revocation
  (its partition epoch is ``m``'s);
* client: ``up(m)``, ``paused(m)``, its epoch ``cep(m)`` (0 while joining) and ``owns(m, p)``.

Actions over-approximate the model's steps (every model step is one of them, so a safety property
proved here holds in the model): ``Bump`` (a new assignment epoch with an *arbitrary* new target),
``Join``, ``Remove`` (leave, session or rebalance timeout, fencing: the client is untouched and may
be a zombie), ``HeartbeatRevoke`` (the target takes something away from a member with no unacknowledged
revocation: ``UNREVOKED_PARTITIONS``),
``HeartbeatAdvance`` (the member acknowledged its revocations and moves to the assignment epoch,
getting the target partitions **no other member holds**; the client may take any of them),
``HeartbeatAck`` (an acknowledged revocation releases the partitions pending revocation),
``HeartbeatDropUnsubscribed`` (a changed subscription moves assigned partitions to pending revocation),
``StaticLeave`` (epoch -2: the record is kept with its assignment and nothing pending revocation),
``HeartbeatUnknown`` (``UNKNOWN_MEMBER_ID``: lose everything, epoch 0), ``Revoke`` (the client
gives up any partitions), ``Crash``, ``Pause``, ``Resume``, ``Start`` (also beside a record the
coordinator keeps: a static member that left with epoch -2 comes back). The coordinator's previous
epoch ``pepoch(m)`` is kept as ``CurrentAssignmentBuilder`` keeps it (set to the member epoch at every
reconciliation, also when the epoch stays: ``ConsumerGroupMember.Builder.updateMemberEpoch``).

The encoding is tied to ``model/consumer.py`` by :mod:`~groupspec.proofs.consumer_drift`: sampled
model states satisfy the invariant, sampled model steps are runs of these actions, and the
encoding's ``accepted`` is the model's ``commit_accepted``.

The inductive invariant (each clause proved preserved by each action, and implied by the initial
state), then the properties from it:

1. a partition is held by at most one member;
2. a member that is not present holds nothing;
3. a present member's client with a non-zero epoch has exactly the member epoch;
4. what such a client owns, its member holds;
5. a client at epoch 0 owns nothing;
6. before the first assignment epoch there is no target and nothing is held;
7. epochs are never negative, and a member's epoch never exceeds the assignment epoch.

**Exclusive ownership** (two live members never own one partition), **commit fencing** (an accepted
commit — present member, epoch equal to the member epoch — is for a partition the member holds and
no other live member owns) and **epochs monotone** (``tepoch`` and every present member's epoch
never decrease) follow. The broken variants ``consumer-no-wait-release`` (the advance ignores
other holders) and ``consumer-unfenced-commits`` (every commit accepted) must fail.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import z3


@dataclass
class Obligation:
    label: str
    ok: bool
    seconds: float
    counterexample: str = ""
    kind: str = ""  # init | consecution | safety | action-property | non-vacuity
    clause: str = ""
    action: str = ""

    def row(self) -> dict[str, object]:
        """The report's form of one obligation (``groupspec.proofs.report.invariant_rows``)."""
        verdict = ("witnessed" if self.ok else "FAILED") if self.kind == "non-vacuity" else ("proved" if self.ok else "FAILED")
        return {"label": self.label, "kind": self.kind, "clause": self.clause, "action": self.action, "ok": self.ok,
                "verdict": verdict, "seconds": self.seconds, "cti_text": self.counterexample}


class Vocabulary:
    def __init__(self, suffix: str, M: z3.SortRef, P: z3.SortRef) -> None:
        B, I = z3.BoolSort(), z3.IntSort()
        f: Callable[..., z3.FuncDeclRef] = lambda name, *sig: z3.Function(name + suffix, *sig)  # noqa: E731
        self.present = f("present", M, B)
        self.up = f("up", M, B)
        self.paused = f("paused", M, B)
        self.cep = f("cep", M, I)
        self.mepoch = f("mepoch", M, I)
        self.pepoch = f("pepoch", M, I)  # the member's previous epoch (ConsumerGroupMember.previousMemberEpoch)
        self.assigned = f("assigned", M, P, B)
        self.revoking = f("revoking", M, P, B)
        self.owns = f("owns", M, P, B)
        self.target = f("target", M, P, B)
        self.since = f("since", M, P, I)  # a held partition's assignment epoch (ConsumerGroupMember.assignmentEpoch)
        self.tepoch = z3.Int("tepoch" + suffix)

    def held(self, m: z3.ExprRef, p: z3.ExprRef) -> z3.BoolRef:
        return z3.Or(self.assigned(m, p), self.revoking(m, p))

    def live(self, m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(self.present(m), z3.Or(self.up(m), self.paused(m)), self.cep(m) > 0)


class ConsumerSpec:
    def __init__(self, bug: str | None = None) -> None:
        self.bug = bug
        self.M = z3.DeclareSort("Member")
        self.P = z3.DeclareSort("Partition")
        self.s = Vocabulary("", self.M, self.P)
        self.t = Vocabulary("'", self.M, self.P)
        self.m, self.n, self.x = z3.Consts("m n x", self.M)
        self.p, self.q = z3.Consts("p q", self.P)

    # -- frames -------------------------------------------------------------------------------------
    def _same_member(self, x: z3.ExprRef, fields: tuple[str, ...] = ("present", "up", "paused", "cep", "mepoch", "pepoch")
                     ) -> list[z3.BoolRef]:
        s, t = self._pre, self._post
        return [getattr(t, f)(x) == getattr(s, f)(x) for f in fields]

    def _same_rel(self, x: z3.ExprRef, fields: tuple[str, ...] = ("assigned", "revoking", "owns", "since")) -> list[z3.BoolRef]:
        s, t, q = self._pre, self._post, self.q
        return [z3.ForAll([q], getattr(t, f)(x, q) == getattr(s, f)(x, q)) for f in fields]

    def _others_unchanged(self, m: z3.ExprRef) -> z3.BoolRef:
        x = self.x
        return z3.ForAll([x], z3.Implies(x != m, z3.And(*self._same_member(x), *self._same_rel(x))))

    def _target_same(self) -> list[z3.BoolRef]:
        s, t, x, q = self._pre, self._post, self.x, self.q
        return [t.tepoch == s.tepoch, z3.ForAll([x, q], t.target(x, q) == s.target(x, q))]

    # -- actions ------------------------------------------------------------------------------------
    def actions(self, pre: Vocabulary | None = None, post: Vocabulary | None = None, m: z3.ExprRef | None = None) -> dict[str, z3.BoolRef]:
        """Every action as a formula over ``pre`` and ``post`` (default: the two vocabularies of the
        proof), with parameter ``m`` (the member that acts; a fresh constant per step in a run)."""
        s = self._pre = pre if pre is not None else self.s
        t = self._post = post if post is not None else self.t
        m = m if m is not None else self.m
        n, p, x, q = self.n, self.p, self.x, self.q
        acts: dict[str, z3.BoolRef] = {}
        everyone_same = z3.ForAll([x], z3.And(*self._same_member(x), *self._same_rel(x)))
        acts["Bump"] = z3.And(t.tepoch == s.tepoch + 1, everyone_same)  # target': arbitrary
        acts["Join"] = z3.And(
            z3.Not(s.present(m)), s.up(m), s.cep(m) == 0,
            t.present(m), t.mepoch(m) == 0, t.pepoch(m) == 0, t.cep(m) == 0, t.up(m) == s.up(m), t.paused(m) == s.paused(m),
            z3.ForAll([q], z3.And(z3.Not(t.assigned(m, q)), z3.Not(t.revoking(m, q)), t.owns(m, q) == s.owns(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["Remove"] = z3.And(
            s.present(m), z3.Not(t.present(m)), *self._same_member(m, ("up", "paused", "cep", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.assigned(m, q)), z3.Not(t.revoking(m, q)), t.owns(m, q) == s.owns(m, q))),
            self._others_unchanged(m), *self._target_same())
        # The epoch check (throwIfConsumerGroupMemberEpochIsInvalid): the member's epoch, 0, or the previous
        # epoch with nothing owned outside the assignment (a client that missed an answer: lose-answer).
        tolerated = z3.And(s.cep(m) == s.pepoch(m), z3.ForAll([q], z3.Implies(s.owns(m, q), s.assigned(m, q))))
        hb = [s.present(m), s.up(m), z3.Or(s.cep(m) == s.mepoch(m), s.cep(m) == 0, tolerated)]
        # Every reconciliation sets the previous epoch to the member's epoch, also when the epoch stays
        # (ConsumerGroupMember.Builder.updateMemberEpoch in each outcome of CurrentAssignmentBuilder).
        reconciled = (*self._same_member(m, ("present", "up", "paused", "cep", "mepoch")), t.pepoch(m) == s.mepoch(m))
        acts["HeartbeatRevoke"] = z3.And(
            *hb, z3.Exists([q], z3.And(s.held(m, q), z3.Not(s.target(m, q)))),
            z3.ForAll([q], z3.Not(z3.And(s.owns(m, q), s.revoking(m, q)))),  # earlier revocations acknowledged
            *reconciled,
            z3.ForAll([q], z3.And(
                t.assigned(m, q) == z3.And(s.assigned(m, q), s.target(m, q)),
                t.revoking(m, q) == z3.And(s.held(m, q), z3.Not(s.target(m, q))),
                t.owns(m, q) == s.owns(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["HeartbeatAck"] = z3.And(  # the revocation acknowledged: the partitions are released
            *hb, z3.ForAll([q], z3.Not(z3.And(s.owns(m, q), s.revoking(m, q)))),
            *self._same_member(m),
            z3.ForAll([q], z3.And(z3.Not(t.revoking(m, q)), t.assigned(m, q) == s.assigned(m, q),
                                  t.owns(m, q) == s.owns(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["HeartbeatDropUnsubscribed"] = z3.And(  # a changed subscription while revoking: dropped topics'
            # partitions move from assigned to pending revocation (CurrentAssignmentBuilder.updateCurrentAssignment)
            *hb, *reconciled,
            z3.ForAll([q], z3.And(
                z3.Implies(t.assigned(m, q), s.assigned(m, q)),
                t.revoking(m, q) == z3.Or(s.revoking(m, q), z3.And(s.assigned(m, q), z3.Not(t.assigned(m, q)))),
                t.owns(m, q) == s.owns(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["StaticLeave"] = z3.And(  # epoch -2 (consumerGroupStaticMemberGroupLeave): the record kept with its
            # assignment, nothing pending revocation, assignment epochs 0; the process stops
            s.present(m), s.up(m), t.present(m), z3.Not(t.up(m)), z3.Not(t.paused(m)), t.cep(m) == 0,
            *self._same_member(m, ("mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.owns(m, q)), t.assigned(m, q) == s.assigned(m, q), z3.Not(t.revoking(m, q)),
                                  t.since(m, q) == 0)),
            self._others_unchanged(m), *self._target_same())
        if self.bug == "no_wait_release":
            free: Callable[[z3.ExprRef], z3.BoolRef] = lambda q: z3.BoolVal(True)  # noqa: E731  BUG: partition epochs ignored
        else:
            free = lambda q: z3.ForAll([n], z3.Implies(n != m, z3.Not(s.held(n, q))))  # noqa: E731
        acts["HeartbeatAdvance"] = z3.And(
            *hb,
            z3.ForAll([q], z3.Not(z3.And(s.owns(m, q), s.revoking(m, q)))),  # revocations acknowledged
            z3.ForAll([q], z3.Implies(s.assigned(m, q), s.target(m, q))),
            t.present(m), t.up(m) == s.up(m), t.paused(m) == s.paused(m),
            t.mepoch(m) == s.tepoch,
            t.pepoch(m) == s.mepoch(m),
            z3.ForAll([q], z3.And(
                z3.Not(t.revoking(m, q)),
                t.assigned(m, q) == z3.Or(s.assigned(m, q), z3.And(s.target(m, q), free(q))),
                t.since(m, q) == z3.If(s.assigned(m, q), s.since(m, q), z3.If(t.assigned(m, q), s.tepoch, 0)))),
            z3.Or(  # the answer applied, or lost (lose-answer) / on its way (late-answer)
                z3.And(t.cep(m) == s.tepoch, z3.ForAll([q], z3.And(
                    z3.Implies(t.owns(m, q), z3.Or(s.owns(m, q), t.assigned(m, q))),
                    z3.Implies(s.owns(m, q), t.owns(m, q))))),
                z3.And(t.cep(m) == s.cep(m), z3.ForAll([q], t.owns(m, q) == s.owns(m, q)))),
            self._others_unchanged(m), *self._target_same())
        acts["HeartbeatUnknown"] = z3.And(
            z3.Not(s.present(m)), s.up(m), s.cep(m) > 0,
            t.cep(m) == 0, *self._same_member(m, ("present", "up", "paused", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.owns(m, q)), t.assigned(m, q) == s.assigned(m, q),
                                  t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["HeartbeatFenced"] = z3.And(  # FENCED_MEMBER_EPOCH: the record is kept, the client loses everything
            s.present(m), s.up(m), s.cep(m) != 0, s.cep(m) != s.mepoch(m), z3.Not(tolerated),
            t.cep(m) == 0, *self._same_member(m, ("present", "up", "paused", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.owns(m, q)), t.assigned(m, q) == s.assigned(m, q),
                                  t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["ClientApply"] = z3.And(  # an answer (late, or after a tolerated previous epoch) applied
            s.present(m), s.up(m), t.cep(m) == s.mepoch(m),
            *self._same_member(m, ("present", "up", "paused", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Implies(s.owns(m, q), t.owns(m, q)),
                                  z3.Implies(t.owns(m, q), z3.Or(s.owns(m, q), s.assigned(m, q))),
                                  t.assigned(m, q) == s.assigned(m, q), t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["ClientApplyStale"] = z3.And(  # a late answer arriving after the member was removed
            z3.Not(s.present(m)), s.up(m), t.cep(m) > 0,
            *self._same_member(m, ("present", "up", "paused", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(t.assigned(m, q) == s.assigned(m, q), t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["Revoke"] = z3.And(
            s.up(m), *self._same_member(m),
            z3.ForAll([q], z3.And(z3.Implies(t.owns(m, q), s.owns(m, q)),
                                  t.assigned(m, q) == s.assigned(m, q), t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["Crash"] = z3.And(
            z3.Or(s.up(m), s.paused(m)), z3.Not(t.up(m)), z3.Not(t.paused(m)), t.cep(m) == 0,
            *self._same_member(m, ("present", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.owns(m, q)), t.assigned(m, q) == s.assigned(m, q),
                                  t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        acts["Pause"] = z3.And(
            s.up(m), z3.Not(t.up(m)), t.paused(m), *self._same_member(m, ("present", "cep", "mepoch", "pepoch")),
            *self._same_rel(m), self._others_unchanged(m), *self._target_same())
        acts["Resume"] = z3.And(
            s.paused(m), t.up(m), z3.Not(t.paused(m)), *self._same_member(m, ("present", "cep", "mepoch", "pepoch")),
            *self._same_rel(m), self._others_unchanged(m), *self._target_same())
        acts["Start"] = z3.And(  # a static member's process may start while its member is kept (epoch -2)
            z3.Not(s.up(m)), z3.Not(s.paused(m)), t.up(m), z3.Not(t.paused(m)), t.cep(m) == 0,
            *self._same_member(m, ("present", "mepoch", "pepoch")),
            z3.ForAll([q], z3.And(z3.Not(t.owns(m, q)), t.assigned(m, q) == s.assigned(m, q),
                                  t.revoking(m, q) == s.revoking(m, q))),
            self._others_unchanged(m), *self._target_same())
        same_since = z3.ForAll([q], t.since(m, q) == s.since(m, q))
        return {name: (a if name in ("HeartbeatAdvance", "StaticLeave") else z3.And(a, same_since))
                for name, a in acts.items()}

    def stutter(self, pre: Vocabulary, post: Vocabulary) -> z3.BoolRef:
        """No change at all (a step of the model that the encoding does not see, e.g. a subscription's client side)."""
        self._pre, self._post = pre, post
        x = self.x
        return z3.And(z3.ForAll([x], z3.And(*self._same_member(x), *self._same_rel(x))), *self._target_same())

    # -- invariant and properties -------------------------------------------------------------------
    def clauses(self, v: Vocabulary) -> dict[str, z3.BoolRef]:
        m, n, p = self.m, self.n, self.p
        return {
            "one holder per partition": z3.ForAll([m, n, p], z3.Implies(z3.And(m != n, v.held(m, p)), z3.Not(v.held(n, p)))),
            "absent members hold nothing": z3.ForAll([m, p], z3.Implies(z3.Not(v.present(m)), z3.Not(v.held(m, p)))),
            "client epoch at most the member epoch": z3.ForAll([m], z3.Implies(z3.And(v.present(m), v.cep(m) != 0), v.cep(m) <= v.mepoch(m))),
            "a member at epoch 0 holds nothing": z3.ForAll([m, p], z3.Implies(z3.And(v.present(m), v.mepoch(m) == 0), z3.Not(v.held(m, p)))),
            "owned partitions are held": z3.ForAll([m, p], z3.Implies(z3.And(v.present(m), v.cep(m) != 0, v.owns(m, p)), v.held(m, p))),
            "joining clients own nothing": z3.ForAll([m, p], z3.Implies(v.cep(m) == 0, z3.Not(v.owns(m, p)))),
            "nothing before the first epoch": z3.Implies(v.tepoch == 0, z3.ForAll([m, p], z3.And(z3.Not(v.target(m, p)), z3.Not(v.held(m, p))))),
            "epochs in range": z3.And(v.tepoch >= 0, z3.ForAll([m], z3.And(v.cep(m) >= 0, v.mepoch(m) >= 0, v.mepoch(m) <= v.tepoch))),
        }

    def init(self) -> z3.BoolRef:
        s, m, p = self.s, self.m, self.p
        return z3.And(s.tepoch == 0, z3.ForAll([m], z3.And(z3.Not(s.present(m)), z3.Not(s.paused(m)), s.cep(m) == 0, s.mepoch(m) == 0)),
                      z3.ForAll([m, p], z3.And(z3.Not(s.assigned(m, p)), z3.Not(s.revoking(m, p)), z3.Not(s.owns(m, p)),
                                                z3.Not(s.target(m, p)))))

    def accepted(self, v: Vocabulary, m: z3.ExprRef) -> z3.BoolRef:
        """The coordinator accepts an OffsetCommit from ``m``'s client (``Consumer.commit_accepted``)."""
        q = self.q
        return self.accepts_commit(v, m, v.cep(m), lambda p: v.owns(m, p), z3.ForAll)

    def accepts_commit(self, v: Vocabulary, m: z3.ExprRef, epoch: z3.ArithRef, parts: Callable[..., z3.BoolRef],
                       forall: Callable[..., z3.BoolRef] | None = None) -> z3.BoolRef:
        """``ConsumerGroup.validateOffsetCommit`` for a commit of ``parts`` (a predicate) with ``epoch``: a present
        member, its epoch, or (KIP-1251, 4.3.1) an older one for partitions held since no later than it."""
        if self.bug == "unfenced_commits":
            return z3.BoolVal(True)
        q = self.q
        older = z3.ForAll([q], z3.Implies(parts(q), z3.And(v.held(m, q), v.since(m, q) <= epoch)))
        return z3.And(v.present(m), z3.Or(epoch == v.mepoch(m), z3.And(epoch < v.mepoch(m), older)))

    def properties(self, v: Vocabulary | None = None) -> dict[str, z3.BoolRef]:
        s = v if v is not None else self.s
        m, n, p = self.m, self.n, self.p
        accepted: Callable[[z3.ExprRef], z3.BoolRef] = lambda m: self.accepted(s, m)  # noqa: E731
        return {
            "exclusive_ownership": z3.ForAll([m, n, p], z3.Implies(
                z3.And(m != n, s.live(m), s.live(n), s.owns(m, p)), z3.Not(s.owns(n, p)))),
            "commit_fencing (a commit sent now)": z3.ForAll([m, n, p], z3.Implies(
                z3.And(s.up(m), s.owns(m, p), accepted(m)),
                z3.And(s.present(m), s.held(m, p), z3.Implies(z3.And(n != m, s.live(n)), z3.Not(s.owns(n, p)))))),
        }

    def monotone(self) -> z3.BoolRef:
        s, t, m = self.s, self.t, self.m
        return z3.And(t.tepoch >= s.tepoch, z3.ForAll([m], z3.Implies(z3.And(s.present(m), t.present(m)), t.mepoch(m) >= s.mepoch(m))))


def _check(label: str, assumptions: list[z3.BoolRef], goal: z3.BoolRef, timeout_ms: int = 60_000, **kw: str) -> Obligation:
    t0 = time.perf_counter()
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*assumptions)
    solver.add(z3.Not(goal))
    r = solver.check()
    cex = ""
    if r == z3.sat:
        cex = str(solver.model())[:2000]
    return Obligation(label, r == z3.unsat, time.perf_counter() - t0, cex, **kw)


def check_all(bug: str | None = None, spec: ConsumerSpec | None = None) -> list[Obligation]:
    """Every obligation: init, preservation (action x clause), properties, monotone epochs, non-vacuity."""
    spec = spec or ConsumerSpec(bug)
    inv_s = spec.clauses(spec.s)
    inv_t = spec.clauses(spec.t)
    inv = list(inv_s.values())
    out = [_check(f"init implies {name}", [spec.init()], c, kind="init", clause=name) for name, c in inv_s.items()]
    acts = spec.actions()
    for aname, act in acts.items():
        for cname, c in inv_t.items():
            out.append(_check(f"{aname} preserves {cname}", inv + [act], c, kind="consecution", clause=cname, action=aname))
        out.append(_check(f"{aname} satisfies epochs monotone", inv + [act], spec.monotone(), kind="action-property",
                          clause="epochs monotone", action=aname))
    for pname, prop in spec.properties().items():
        out.append(_check(f"invariant implies {pname}", inv, prop, kind="safety", clause=pname))
    for aname, act in acts.items():  # non-vacuity: every action can happen
        t0 = time.perf_counter()
        solver = z3.Solver()
        solver.add(*inv, act)
        out.append(Obligation(f"{aname} is enabled in some invariant state", solver.check() == z3.sat,
                              time.perf_counter() - t0, kind="non-vacuity", clause="enabled", action=aname))
    return out


VARIANTS = {"consumer": None, "consumer-static": None, "consumer-no-wait-release": "no_wait_release", "consumer-unfenced-commits": "unfenced_commits"}
