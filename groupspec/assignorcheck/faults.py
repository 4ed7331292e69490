"""Cooperative rebalances that go wrong half-way (property I8f).

Theory of operation
-------------------
A cooperative rebalance takes several rounds, and a round can fail for one member. The property draws a group
state and one fault, then drives the rounds as :meth:`groupspec.assignorcheck.engine.Ctx.converge` does,
applying the fault after round ``at``:

* ``lost-sync``: the member's SyncGroup answer is lost: it keeps its previous owned partitions at its previous
  generation, while the others move on to the next generation;
* ``missed-round``: the member misses the next round (it is not in the group for that round) and rejoins in the
  one after with what it owned before;
* ``left``: the member leaves the group half-way and does not come back.

Every round must keep I1–I3, I6 and I6′ (the stale member's claims are judged by generation, as the coordinator
and Kafka's assignor do), and once the fault is over the group must converge (no revocation) within
``MAX_FOLLOW_UPS`` further rounds with every subscribed partition assigned (I4).
"""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .core import (
    Assignment, check_complete, check_cooperative, check_generation_validated, check_members, check_no_duplicates,
    check_subscribed_only, describe_state, max_generation, next_round, owned_of,
)
from .engine import MAX_FOLLOW_UPS, State, Ctx

FAULTS = ("lost-sync", "missed-round", "left")

Fault = tuple[str, int, int]  # kind, member index, after which round (1-based)


_FAULT = st.tuples(st.sampled_from(FAULTS), st.integers(0, 39), st.integers(1, 2))


def fault_cases(ctx: Ctx) -> st.SearchStrategy[tuple[State, Fault]]:
    return st.tuples(ctx.states(min_members=2), _FAULT)


def faulted(ctx: Ctx, states: st.SearchStrategy[State]) -> st.SearchStrategy[tuple[State, Fault]]:
    """One fault around states drawn elsewhere (an input class of the catalogue)."""
    return st.tuples(states, _FAULT)


def _revokes(subs: dict[str, dict[str, Any]], out: Assignment) -> bool:
    return any(owned_of(s) - set(out.get(m, ())) for m, s in subs.items())


def p_failure_paths(case: tuple[State, Fault], ctx: Ctx) -> tuple[str, Assignment | None, dict[str, Any]] | None:
    (ppt, subs), (kind, idx, at) = case
    victim = sorted(subs)[idx % len(subs)]
    gen = max_generation(subs)
    cur = subs
    away: dict[str, Any] | None = None  # the victim's subscription while it misses a round
    steps: list[str] = []
    limit = at + 2 + MAX_FOLLOW_UPS
    for rnd in range(1, limit + 1):
        out = ctx.round(ppt, cur)
        for pid, why in (("I1", check_members(cur, out)), ("I2", check_no_duplicates(out)),
                         ("I3", check_subscribed_only(ppt, cur, out)), ("I6", check_cooperative(cur, out)),
                         ("I6'", check_generation_validated(cur, out, ctx.java_parity))):
            if why:
                return (f"{pid} in round {rnd} ({'; '.join(steps) or 'before the fault'}): {why}", out,
                        {"fault": [kind, victim, at], "round": rnd, "round_input": describe_state(ppt, cur)})
        if rnd > at + 1 and away is None and not _revokes(cur, out):
            why = check_complete(ppt, {m: s for m, s in cur.items()}, out)
            if why:
                return f"I4 after the {kind} fault ({'; '.join(steps)}): {why}", out, {"fault": [kind, victim, at]}
            return None
        gen += 1
        nxt = next_round(cur, out, gen)
        if rnd == at:
            if kind == "lost-sync" and victim in cur:
                nxt[victim] = dict(cur[victim])  # keeps what it owned, at its old generation
                steps.append(f"{victim} lost its round-{rnd} SyncGroup answer")
            elif kind == "missed-round" and victim in nxt:
                away = dict(cur[victim])
                del nxt[victim]
                steps.append(f"{victim} missed round {rnd + 1}")
            elif kind == "left" and victim in nxt:
                del nxt[victim]
                steps.append(f"{victim} left after round {rnd}")
        elif away is not None:
            nxt[victim] = away  # back, with what it owned before it missed the round
            away = None
            steps.append(f"{victim} rejoined in round {rnd + 1}")
        cur = nxt
    return (f"I8 after the {kind} fault ({'; '.join(steps)}): still revoking after {limit} rounds", out,
            {"fault": [kind, victim, at]})
