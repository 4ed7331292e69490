"""No drift: the Z3 transition relation admits exactly the successors ``groupspec.model`` computes.

Theory of operation
-------------------
For a concrete state ``s`` of the model, :func:`check_state` builds the symbolic successors of
:class:`~groupspec.proofs.finite.Encoding` on the *encoded* ``s`` (every term is then ground except the
uninterpreted assignor), fixes every assignor application to the model's own assignor on the same
arguments, and simplifies.  For every action instance of the instance it then checks, in both
directions:

* the Z3 guard is ``true`` exactly when the model lists the action as enabled in ``s``;
* when enabled, the Z3 successor is *exactly* the encoding of ``model.step(s, a)`` (the encoding is a
  function of the state, so "admits the model's successor" and "admits nothing else" are the same
  ground equality, checked field by field);

and that the encoded properties (``exclusive_ownership``, ``commit_fencing``, ``converged`` and, on
every step, ``generation_monotonic``) agree with the model's.  A disagreement is reported with the
action and the first differing field, so a change to ``model/`` that the proofs do not follow fails
the test that runs this (``tests/test_proofs_drift.py``) instead of silently proving something else.
"""
from __future__ import annotations

from typing import Any

import z3

from groupspec.model import ACTIONS, SAFETY

from .finite import Encoding, SState, leaves


def _ground(enc: Encoding) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """Substitution pairs: every recorded assignor application := the model's answer."""
    pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    fns = enc._asg()
    seen: set[int] = set()
    for args, _existing, _results in enc.asg_apps:
        vals: list[int] = []  # True/False are ints too
        for a in args:
            v = z3.simplify(a)
            if z3.is_true(v):
                vals.append(True)
            elif z3.is_false(v):
                vals.append(False)
            elif z3.is_int_value(v) or z3.is_bv_value(v):
                vals.append(v.as_long())
            else:
                raise ValueError(f"assignor argument is not ground: {v}")
        meta = [(i, vals[5 * i + 1], vals[5 * i + 2], vals[5 * i + 3], bool(vals[5 * i + 4]))
                for i in range(enc.n) if vals[5 * i]]
        try:
            result = enc.proto.assignor(enc.cfg, meta, vals[-1])
        except Exception:  # noqa: BLE001 - junk input from a branch the state does not take
            continue
        cargs = []
        for i in range(enc.n):
            pres, topics, owned, gen, static = vals[5 * i: 5 * i + 5]
            cargs += [z3.BoolVal(pres), enc.Tm(topics), enc.P(owned), z3.IntVal(gen), z3.BoolVal(static)]
        cargs.append(enc.P(vals[-1]))
        for i, *_ in meta:
            term = fns[i](*cargs)
            if term.get_id() in seen:
                continue
            seen.add(term.get_id())
            pairs.append((term, enc.P(result[i])))
    return pairs


def _value(e: z3.ExprRef, subs: list[Any]) -> Any:
    v = z3.simplify(e)
    if subs and not (z3.is_true(v) or z3.is_false(v) or z3.is_int_value(v) or z3.is_bv_value(v)):
        v = z3.simplify(z3.substitute(v, *subs))
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    if z3.is_int_value(v) or z3.is_bv_value(v):
        return v.as_long()
    raise ValueError(f"term did not reduce to a value: {v}")


def _first_diff(enc: Encoding, got: SState, want: SState, subs: list[Any]) -> str | None:
    names = _field_names(enc)
    for name, x, y in zip(names, leaves(got), leaves(want)):
        if x is y:
            continue
        vx, vy = _value(x, subs), _value(y, subs)
        if vx != vy:
            return f"{name}: Z3 gives {vx}, the model {vy}"
    return None


_NAMES: dict[tuple[Any, ...], list[str]] = {}


def _field_names(enc: Encoding) -> list[str]:
    key = (enc.n, enc.K, enc.T)
    if key not in _NAMES:
        _NAMES[key] = _names(enc)
    return _NAMES[key]


def _names(enc: Encoding) -> list[str]:
    s = enc.fresh("n")
    return [str(e).split(".", 1)[1] if "." in str(e) else str(e) for e in leaves(s)]


def check_state(proto: Any, enc: Encoding, s: Any) -> list[str]:
    """Every disagreement between the encoding and the model at concrete state ``s`` (empty: none)."""
    problems: list[str] = []
    enc.asg_apps.clear()
    S = enc.encode(s)
    trans = enc.transitions(S)
    conv = enc.converged(S)
    props = {"exclusive_ownership": enc.exclusive_ownership(S), "commit_fencing": enc.commit_fencing(S)}
    subs = _ground(enc)
    enabled = set(proto.enabled(s))
    for a, guard, nxt in trans:
        on = _value(guard, subs)
        if on != (a in enabled):
            problems.append(f"{a!r}: Z3 says {'enabled' if on else 'disabled'}, the model says "
                            f"{'enabled' if a in enabled else 'disabled'}")
            continue
        if not on:
            continue
        t = proto.step(s, a)
        diff = _first_diff(enc, nxt, enc.encode(t), subs)
        if diff:
            problems.append(f"{a!r}: successor differs at {diff}")
        mono = _value(enc.generation_monotonic(S, enc.encode(t)), [])
        want = all(p.check(proto, s, t) is None for p in ACTIONS)
        if mono != want:
            problems.append(f"{a!r}: generation_monotonic is {mono} in Z3, {want} in the model")
    for p in SAFETY:
        if p.name in props:
            got = _value(props[p.name], subs)
            want = p.check(proto, s) is None
            if got != want:
                problems.append(f"{p.name}: {got} in Z3, {want} in the model")
    got = _value(conv, subs)
    if got != proto.converged(s):
        problems.append(f"converged: {got} in Z3, {proto.converged(s)} in the model")
    return problems
