"""The scale tier (property S1): groups at the sizes of Kafka's own scale tests, with a time budget.

Theory of operation
-------------------
The generated group states stay small (shrinking needs that), so an assignor that takes 2 s at 200 members
and minutes at 2,000 is never flagged by them. S1 builds groups with the subscription shape of Kafka's
``testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout`` (assignors.md §3: member i with i % 4 == 0
subscribes to the first half of the topics, every other member to the second half; fresh members, no owned
partitions) at growing sizes, and calls the candidate once per size:

=============  ==========================  ============================================
tier           members × partitions        topics × partitions per topic
=============  ==========================  ============================================
default        200 × 1,000                 20 × 50
default        500 × 20,000                100 × 200 (Kafka's NotTimeout test)
``thorough``   2,000 × 10,000              50 × 200
``thorough``   2,000 × 1,000,000           500 × 2,000 (Kafka's 1M-partition tests)
=============  ==========================  ============================================

The **budget** of each call comes from a reference measured in the same run on the same input: the project's
own assignor of the candidate's kind (range, roundrobin, sticky; a cooperative candidate or a generic
cooperative one against cooperative-sticky, a generic eager one against sticky), times ``factor`` (default
10, ``--scale-factor``), and never less than ``floor`` seconds (5 s: below it, timing noise and the cost of
the adapters of other libraries would decide). Time is CPU time of the thread that runs the call (the
machine's load does not count); a call is cut off at ``3 × budget + 5`` seconds of wall time. A candidate past
its budget is reported with the size and the time it took (or that it was cut off), and larger sizes are not
tried. Within the budget, its output must keep I1–I4 (a fresh group: a cooperative assignor has nothing to
withhold, so it must be complete in its first round).
"""
from __future__ import annotations

from typing import Any

from .core import check_complete, check_members, check_no_duplicates, check_subscribed_only
from .engine import HELD, NA, VIOLATED, PropertyResult, Ctx

#: (members, topics, partitions per topic)
DEFAULT_SIZES: list[tuple[int, int, int]] = [(200, 20, 50), (500, 100, 200)]
THOROUGH_SIZES: list[tuple[int, int, int]] = DEFAULT_SIZES + [(2000, 50, 200), (2000, 500, 2000)]

NAME = "scale: within a time budget at Kafka's scale-test sizes (NotTimeout-style subscriptions)"


def not_timeout_group(members: int, topics: int, partitions: int) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """Kafka's NotTimeout shape: member i % 4 == 0 takes the first half of the topics, the others the second."""
    wt, wm = len(str(topics)), len(str(members))
    names = [f"topic{i:0{wt}d}" for i in range(topics)]
    half = max(1, topics // 2)
    first, second = names[:half], names[half:] or names[:half]
    subs = {f"consumer{i:0{wm}d}": {"topics": list(first if i % 4 == 0 else second), "owned": [],
                                    "generation": -1, "instance_id": None, "rack": None} for i in range(members)}
    return {t: partitions for t in names}, subs


def reference_name(ctx: Ctx) -> str:
    kind = ctx.cand.kind
    if kind in ("range", "roundrobin"):
        return kind
    return "cooperative-sticky" if ctx.cooperative else "sticky"


def run_scale(ctx: Ctx, sizes: list[tuple[int, int, int]], factor: float = 10.0,
              floor: float = 5.0) -> PropertyResult:
    from .load import CallRunner, load_candidate

    ref_name = reference_name(ctx)
    ref = load_candidate(ref_name)
    ref_runner = CallRunner(None)
    lines: list[str] = []
    figures: list[dict[str, Any]] = []
    try:
        for members, topics, per_topic in sizes:
            ppt, subs = not_timeout_group(members, topics, per_topic)
            size = f"{members:,} members × {topics * per_topic:,} partitions"
            r = ref_runner.run(ref, ppt, subs)
            ref_cpu = r.cpu_seconds
            budget = max(floor, factor * ref_cpu)
            res = ctx.runner.run(ctx.cand, ppt, subs, timeout=3 * budget + 5)
            ctx.calls += 1
            ctx.call_seconds += res.seconds
            fig = {"members": members, "partitions": topics * per_topic, "topics": topics,
                   "reference": ref_name, "reference_cpu_seconds": round(ref_cpu, 3),
                   "budget_seconds": round(budget, 3), "cpu_seconds": round(res.cpu_seconds, 3),
                   "wall_seconds": round(res.seconds, 3)}
            figures.append(fig)
            why = None
            if res.failure == "timeout":
                why = (f"at {size}: no answer within {res.seconds:.1f} s (wall), past its budget of {budget:.1f} s "
                       f"CPU (the project's {ref_name} took {ref_cpu:.2f} s × factor {factor:g})")
            elif res.assignment is None:
                ctx.failed_calls += 1
                if ctx.first_failure is None:
                    ctx.first_failure = ((ppt, subs), res)
                lines.append(f"{size}: {res.message} (I11)")
                break
            elif res.cpu_seconds > budget:
                why = (f"at {size}: took {res.cpu_seconds:.1f} s CPU, past its budget of {budget:.1f} s (the "
                       f"project's {ref_name} took {ref_cpu:.2f} s × factor {factor:g})")
            else:
                out = res.assignment
                why = (check_members(subs, out) or check_no_duplicates(out) or check_subscribed_only(ppt, subs, out)
                       or check_complete(ppt, subs, out))
                if why:
                    why = f"at {size}: {why}"
            if why:
                cx = {"input": {"generator": "NotTimeout (assignors.md §3): member i % 4 == 0 subscribes to the "
                                             "first half of the topics, the others to the second half; fresh",
                                "members": members, "topics": topics, "partitions_per_topic": per_topic},
                      "output": None, "explanation": why, "scale": figures}
                return PropertyResult("S1", NAME, VIOLATED, len(figures), cx)
            lines.append(f"{members:,}×{topics * per_topic:,}: {res.cpu_seconds:.2f} s CPU, {ref_name} "
                         f"{ref_cpu:.2f} s (budget {budget:.1f} s)")
    finally:
        ref_runner.close()
    if not figures or (lines and "(I11)" in lines[-1] and len(figures) == 1):
        return PropertyResult("S1", NAME, NA, len(figures), None, "; ".join(lines) or "no size tried")
    return PropertyResult("S1", NAME, HELD, len(figures), None, "; ".join(lines))
