"""Closing a survivor: search longer for a conformance run that tells it from the model, and keep the run.

``python -m groupspec.specmut.hunt MUTANT VARIANT [--topics 2] [--examples N] [--steps K]`` runs the
conformance state machine of ``VARIANT`` (derandomized, no shrinking) against the model with ``MUTANT``
applied. When a run fails, its schedule (the machine's rule calls, with the simulator seed) is replayed
on the unchanged model, which must pass it, and is then appended to ``tests/spec_mutant_schedules.json``:
the killers replay those schedules (``conformance:regressions:<variant>``) like the recorded regressions,
so the survivor now dies by a run of the reference that reaches its rule.

May import: ``.operators``, ``.loader``, ``.killers``.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from typing import Any

from .killers import SCHEDULES, replay_schedule
from .loader import applied
from .operators import generate

_CALL = re.compile(r"^\s*state\.(\w+\(.*\))\s*$")


def _schedule(exc: BaseException) -> list[str]:
    """The rule calls of the failing example, from the notes Hypothesis attached to the failure."""
    notes = "\n".join(getattr(exc, "__notes__", []) or [])
    return [m.group(1) for line in notes.splitlines() if (m := _CALL.match(line)) and "teardown" not in line]


def hunt(name: str, variant: str, topics: int = 1, examples: int = 150, steps: int = 30) -> dict[str, Any] | None:
    """A schedule of ``variant`` on which ``name`` fails conformance and the unchanged model passes, or None."""
    from hypothesis import HealthCheck, Phase, settings

    m = next(x for x in generate() if x.name == name)
    cfg = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None, derandomize=True,
                   phases=[Phase.generate], print_blob=False, suppress_health_check=list(HealthCheck))
    with applied(m):
        from groupspec.conformance import ConformanceFailure, make_machine, run_machine

        try:
            with contextlib.redirect_stdout(io.StringIO()):
                run_machine(make_machine(variant, topics=topics), cfg)
            return None
        except ConformanceFailure as e:
            calls = _schedule(e)
            check = e.check
            detail = str(e).splitlines()[0]
    if not calls or not calls[0].startswith("boot("):
        raise RuntimeError(f"no schedule in the failure's notes: {detail}")
    seed = int(re.search(r"seed=(\d+)", calls[0]).group(1))  # type: ignore[union-attr]  # (boot(...) names its seed)
    record = {"name": f"kills {name}", "kills": name, "variant": variant, "topics": topics, "seed": seed,
              "rules": calls[1:], "mutant_fails": check, "detail": detail[:300]}
    with applied(None):
        why = replay_schedule(record)
    if why is not None:
        raise RuntimeError(f"the unchanged model fails the schedule too: {why}")
    with applied(m):
        why = replay_schedule(record)
    if why is None:
        raise RuntimeError("the schedule, replayed, does not fail the mutant (not reproducible)")
    return record


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m groupspec.specmut.hunt")
    p.add_argument("mutant")
    p.add_argument("variant")
    p.add_argument("--topics", type=int, default=1)
    p.add_argument("--examples", type=int, default=150)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--save", action="store_true", help=f"append the schedule to {SCHEDULES}")
    a = p.parse_args(argv)
    rec = hunt(a.mutant, a.variant, a.topics, a.examples, a.steps)
    if rec is None:
        print(f"not found: {a.mutant} passes {a.examples} examples of {a.variant}")
        return 1
    print(json.dumps(rec, indent=1))
    if a.save:
        data = json.loads(SCHEDULES.read_text()) if SCHEDULES.exists() else []
        data = [r for r in data if r.get("kills") != rec["kills"]] + [rec]
        SCHEDULES.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
