"""Multi-round churn (C1) and the advisory quality figures of the assignor checker.

Theory of operation
-------------------
C1 is a Hypothesis state machine: members join, leave, restart (static), change subscriptions; topics grow,
appear and are deleted; after each step the group rebalances and the candidate's (converged) output is fed
back as the members' owned partitions at the next generation. Every invariant that applies is checked on
every round (:func:`round_checks`). I9 is judged per round, as Kafka's ``isSticky`` is per ``assign`` call.

The quality figures compare movement and balance with the exact optimum (:mod:`.optimum`); for a cooperative
candidate they also count 2-cycles judged across all the rounds of one rebalance (advisory: Kafka's own
cooperative-sticky assignor makes them, see docs/assignor-checker.md).
"""
from __future__ import annotations

import json
from typing import Any

from hypothesis import given, seed as hseed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from .core import (
    canonical, check_complete, check_cooperative, check_generation_validated, check_members, check_movability,
    check_no_duplicates, check_no_two_cycles, check_subscribed_only, describe_state, max_generation,
)
from .engine import HELD, MAX_FOLLOW_UPS, NA, VIOLATED, PropertyResult, Rounds, State, Ctx, Skip, Violation, \
    seed_for, search_settings
from .optimum import balance_gap, moves_of, optimum

# ----------------------------------------------------------------------------------------- churn (C1)


def round_checks(ctx: Ctx, ppt: dict[str, int], subs: dict[str, dict[str, Any]], r: Rounds) -> str | None:
    """Every per-round and final invariant that applies to this candidate, first violation as one line."""
    for i, (s, out) in enumerate(r.rounds, 1):
        for pid, why in (("I1", check_members(s, out)), ("I2", check_no_duplicates(out)),
                         ("I3", check_subscribed_only(ppt, s, out))):
            if why:
                return f"{pid} in round {i}: {why}"
        if ctx.cooperative:
            for pid, why in (("I6", check_cooperative(s, out)), ("I6'", check_generation_validated(s, out, ctx.java_parity))):
                if why:
                    return f"{pid} in round {i}: {why}"
    if not r.converged:
        return f"I8: still revoking after {MAX_FOLLOW_UPS} follow-up rounds"
    why = check_complete(ppt, subs, r.final)
    if why:
        return f"I4: {why}"
    if ctx.sticky:
        why = check_movability(ppt, subs, r.final)
        if why:
            return f"I5: {why}"
        for i, (s, out) in enumerate(r.rounds, 1):
            why = check_no_two_cycles(s, out)
            if why:
                return f"I9 in round {i}: {why}"
    return None


def _churn_machine(ctx: Ctx, box: dict[str, Any]) -> type[RuleBasedStateMachine]:
    topics_pool = [f"t{i}" for i in range(4)]
    tpm = ctx.domain.get("topics_per_member")
    static_ok = ctx.domain.get("static", True)

    class Churn(RuleBasedStateMachine):
        """Members join, leave, restart (static), change subscriptions; topics grow, appear, are deleted."""

        def __init__(self) -> None:
            super().__init__()
            self.ppt: dict[str, int] = {}
            self.members: dict[str, dict[str, Any]] = {}
            self.owned: dict[str, list[list[Any]]] = {}
            self.gens: dict[str, int] = {}
            self.generation = 0
            self.counter = 0
            self.steps: list[str] = []
            self.rebalances = 0

        @initialize(state=ctx.states(history=False, max_members=4, tricky_ids=False, small=True))
        def start(self, state: State) -> None:
            ppt, subs = state
            self.ppt = dict(ppt)
            self.members = {m: {"topics": list(s["topics"]), "instance_id": s["instance_id"]} for m, s in subs.items()}
            self.owned = {m: [] for m in subs}
            self.gens = {m: -1 for m in subs}
            self.steps.append("start " + json.dumps(describe_state(ppt, subs), ensure_ascii=False))
            self.rebalance()

        def _subs(self) -> dict[str, dict[str, Any]]:
            return {m: {"topics": list(info["topics"]), "owned": [list(x) for x in self.owned.get(m, [])],
                        "generation": self.gens.get(m, -1), "instance_id": info["instance_id"], "rack": None}
                    for m, info in self.members.items()}

        @rule(topics=st.lists(st.sampled_from(topics_pool), min_size=tpm or 1, max_size=tpm or 3, unique=True),
              static=st.booleans() if static_ok else st.just(False))
        def join(self, topics: list[str], static: bool) -> None:
            self.counter += 1
            mid = f"m{self.counter:02d}"
            inst = f"inst-{99 - self.counter}" if static else None
            self.members[mid] = {"topics": topics, "instance_id": inst}
            self.owned[mid], self.gens[mid] = [], -1
            self.steps.append(f"join {mid} (instance {inst}) subscribed to {topics}")

        @rule(i=st.integers(0, 9))
        def leave(self, i: int) -> None:
            if len(self.members) <= 1:
                return
            mid = sorted(self.members)[i % len(self.members)]
            del self.members[mid]
            self.owned.pop(mid, None)
            self.steps.append(f"leave {mid}")

        @rule(i=st.integers(0, 9))
        def restart_static(self, i: int) -> None:
            static = sorted(m for m, info in self.members.items() if info["instance_id"] is not None)
            if not static:
                return
            old = static[i % len(static)]
            self.counter += 1
            new = f"m{self.counter:02d}"
            self.members[new] = self.members.pop(old)
            self.owned.pop(old, None)
            self.owned[new], self.gens[new] = [], -1
            self.steps.append(f"static member {old} restarts as {new} (same instance id)")

        @rule(i=st.integers(0, 9), topics=st.lists(st.sampled_from(topics_pool), min_size=tpm or 0, max_size=tpm or 3,
                                                   unique=True))
        def resubscribe(self, i: int, topics: list[str]) -> None:
            mid = sorted(self.members)[i % len(self.members)]
            self.members[mid]["topics"] = topics
            self.steps.append(f"{mid} now subscribes to {topics}")

        @rule(t=st.sampled_from(topics_pool), by=st.integers(1, 3))
        def grow(self, t: str, by: int) -> None:
            self.ppt[t] = self.ppt.get(t, 0) + by
            self.steps.append(f"topic {t} grows to {self.ppt[t]} partitions")

        @rule(t=st.sampled_from(topics_pool))
        def delete(self, t: str) -> None:
            if t in self.ppt:
                del self.ppt[t]
                self.steps.append(f"topic {t} deleted")

        @rule()
        def rebalance(self) -> None:
            subs = self._subs()
            self.rebalances += 1
            box["rebalances"] += 1
            try:
                r = ctx.converge(self.ppt, subs)
                box["answered"] += 1
            except Skip as e:
                self.steps.append(f"rebalance: candidate failed ({e}); state unchanged")
                return
            why = round_checks(ctx, self.ppt, subs, r)
            self.steps.append(f"rebalance ({len(r.rounds)} round(s))")
            if why:
                box["fail"] = {"steps": list(self.steps), "input": describe_state(self.ppt, subs),
                               "output": canonical(r.final), "explanation": why}
                raise Violation(why)
            if box["fail"] is None:
                best = optimum(self.ppt, subs)
                box["moved"] += moves_of(subs, r.final)
                box["optimal_moves"] += best.moves
            self.generation = max(self.generation, max_generation(subs)) + len(r.rounds)
            for m in self.members:
                self.owned[m] = [[t, p] for t, p in sorted(set(r.final.get(m, ())))]
                self.gens[m] = self.generation

    return Churn


def run_churn(ctx: Ctx, n: int, seed: int, steps: int) -> PropertyResult:
    pid, name = "C1", "multi-round churn: join/leave/restart/resubscribe/grow/delete, output fed back"
    box: dict[str, Any] = {"fail": None, "rebalances": 0, "answered": 0, "runs": 0, "moved": 0, "optimal_moves": 0}
    machine = _churn_machine(ctx, box)

    def factory() -> RuleBasedStateMachine:
        box["runs"] += 0 if box["fail"] else 1
        return machine()

    hseed(seed_for(seed, pid))(factory)
    try:
        run_state_machine_as_test(factory, settings=search_settings(n, steps=steps))  # type: ignore[arg-type]  # a factory works; the stub says a class
    except Exception:  # noqa: BLE001 - Violation or Flaky around it
        if box["fail"] is None:
            raise
    if box["fail"] is not None:
        return PropertyResult(pid, name, VIOLATED, box["runs"], box["fail"])
    if box["answered"] == 0:
        return PropertyResult(pid, name, NA, box["runs"], None,
                              f"no rebalance could be judged: the candidate failed on all {box['rebalances']} (see I11)")
    failed = box["rebalances"] - box["answered"]
    return PropertyResult(pid, name, HELD, box["runs"], None,
                          f"{box['answered']} rebalances judged" + (f", {failed} failed (I11)" if failed else "")
                          + "; " + movement_phrase(box["moved"], box["optimal_moves"]))


def movement_phrase(moved: int, needed: int) -> str:
    """Movement against the optimum, phrased so that worse reads as worse."""
    if moved > needed:
        return (f"moved {moved} partitions, {moved - needed} more than the {needed} the best balance needs "
                f"(worse than optimal)")
    if moved == needed:
        return f"moved {moved} partitions, exactly the fewest the best balance needs"
    return (f"moved {moved} partitions; the best balance needs {needed} moves, so in some rebalance the "
            f"balance stayed below the best")


# ------------------------------------------------------------------------------------------- quality


def churn_quality(ctx: Ctx, n: int, seed: int) -> dict[str, Any]:
    """Movement and balance against the exact optimum, over ``n`` states with (clean) history."""
    q: dict[str, Any] = {"examples": 0, "moved": 0, "optimal_moves": 0, "more_moves_than_needed": 0,
                         "worst_moves": None, "below_best_balance": 0, "worst_balance": None}
    if ctx.cooperative:
        q["two_cycles_across_rounds"] = 0  # I9 judged from the first round's input to the converged output
        q["worst_two_cycle"] = None

    @hseed(seed_for(seed, "quality"))
    @search_settings(n, shrink=False)
    @given(ctx.states(history=True, conflicts=False, tricky_ids=False))
    def sample(state: State) -> None:
        ppt, subs = state
        try:
            r = ctx.converge(ppt, subs)
        except Skip:
            return
        out = r.final
        if not r.converged or any(f(out) for f in (
                lambda o: check_members(subs, o), check_no_duplicates,
                lambda o: check_subscribed_only(ppt, subs, o), lambda o: check_complete(ppt, subs, o))):
            return
        best = optimum(ppt, subs)
        moved = moves_of(subs, out)
        q["examples"] += 1
        if ctx.cooperative and len(r.rounds) > 1:
            cyc = check_no_two_cycles(subs, out)
            if cyc:
                q["two_cycles_across_rounds"] += 1
                if q["worst_two_cycle"] is None:
                    q["worst_two_cycle"] = {"input": describe_state(ppt, subs), "output": canonical(out),
                                            "explanation": f"over {len(r.rounds)} rounds: {cyc}"}
        q["moved"] += moved
        q["optimal_moves"] += best.moves
        if moved > best.moves:
            q["more_moves_than_needed"] += 1
            w = q["worst_moves"]
            if w is None or moved - best.moves > w["moved"] - w["needed"]:
                q["worst_moves"] = {"moved": moved, "needed": best.moves, "input": describe_state(ppt, subs),
                                    "output": canonical(out),
                                    "explanation": f"moved {moved} partitions where {best.moves} were enough"}
        gap = balance_gap(ppt, subs, out, best)
        if gap:
            q["below_best_balance"] += 1
            loads = [len(v) for v in out.values()] or [0]
            spread = max(loads) - min(loads)
            w = q["worst_balance"]
            if w is None or spread - best.spread > w["spread"] - w["best_spread"]:
                q["worst_balance"] = {"spread": spread, "best_spread": best.spread,
                                      "input": describe_state(ppt, subs), "output": canonical(out),
                                      "explanation": gap}

    sample()
    return q
