"""Checks on a rebalance trace alone (contracts/trace-format.md), as a user's own trace would be checked.

Theory of operation
-------------------
:func:`check_trace` replays the events in order and keeps, per member, what it owns, whether it is
running, the last generation it reported and whether it has been fenced since it last got an
assignment. It needs nothing but the trace: no coordinator state, no model. It reports
:class:`Violation` records (never raises on bad input) of these kinds:

* ``exclusive_ownership`` — a partition owned by two running members at once where *neither* of
  them turns out to be a zombie. A zombie is an owner whose next membership event (``assigned``,
  ``fenced``, ``lost``, ``left`` or ``joined``) after the overlap is ``fenced``, ``lost`` or ``left``:
  it had already been removed by the coordinator and had not noticed yet (for the older owner, an
  ``assigned`` line of a generation older than the one in which the newer owner got the partition is
  skipped: a zombie applying a late answer after a GC pause). Also a zombie: an owner
  *left behind* by a join phase that completed without it (a static member kept in the group by the
  rebalance timeout without rejoining, KAFKA-8220): the other owner got the partition in a newer
  generation, and the older owner gives it up (``revoked``/``lost``) while still in the generation it
  got it in, taking part in no newer assignment with it (the model's ``live_member`` reads such a
  member the same way). Overlaps with a zombie are allowed by the protocol (fencing makes them
  harmless) and reported as ``zombie_overlap`` notes.
* ``commit_fencing`` — an offset commit the coordinator *accepted* for a partition that, at that
  moment, the committer owned together with another member which acquired it later, in a generation
  at least as new as the committer's (the committer is the stale owner; a zombie's late ``assigned``
  line of an older generation does not make it the newer owner), and the commit carries a generation at or after the one in which the other member
  acquired it. A ``commit`` line is written when the answer arrives, so a commit made in an older
  generation may legitimately have been accepted before the hand-over; a trace alone cannot tell, and
  such commits are not reported (the conformance harness checks each acceptance at the coordinator).
* ``generation_monotonic`` — a member's generation went down without a reset in between (a reset is
  ``fenced``, ``lost``, ``joined``, or an event with generation -1).
* ``well_formed`` — trace defects: revoking a partition not owned, a cooperative ``assigned`` of a
  partition already owned, events of a member after ``left`` and before its next ``joined``, missing
  fields. Defects are reported, never raised.

Ownership follows the contract's reading rules: an eager ``assigned`` replaces what the member owned, a
cooperative one adds; ``revoked``/``lost`` remove; ``left`` releases everything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["Violation", "check_trace", "TRACE_CHECKS"]

TRACE_CHECKS = ("exclusive_ownership", "commit_fencing", "generation_monotonic", "well_formed")
TP = tuple[str, int]
_MEMBERSHIP = ("assigned", "fenced", "lost", "left", "joined")


@dataclass(frozen=True)
class Violation:
    """One finding: ``check`` is one of :data:`TRACE_CHECKS` (or ``zombie_overlap`` for a note)."""

    check: str
    ts_ms: int
    message: str
    members: tuple[str, ...] = ()
    partition: TP | None = None
    index: int = -1  # position of the event in the trace

    def __str__(self) -> str:
        return f"[{self.check}] at {self.ts_ms} ms: {self.message}"


@dataclass
class _Member:
    owned: dict[TP, int] = field(default_factory=dict)  # partition -> index of the event that gave it
    running: bool = False
    left: bool = False
    generation: int = -1


def _parts(ev: dict[str, Any]) -> list[TP]:
    out = []
    for p in ev.get("partitions") or []:
        out.append((str(p[0]), int(p[1])))
    return out


def _next_membership(events: list[dict[str, Any]], member: str, after: int, below: int = -1) -> str | None:
    """``member``'s next membership event after index ``after``, skipping ``assigned`` lines of a
    generation older than ``below`` (a zombie's late SyncGroup answer, applied after a GC pause)."""
    for ev in events[after + 1:]:
        if ev.get("member") == member and ev.get("event") in _MEMBERSHIP:
            gen = ev.get("generation")
            if ev["event"] == "assigned" and isinstance(gen, int) and 0 <= gen < below:
                continue
            return str(ev["event"])
    return None


def check_trace(events: Iterable[dict[str, Any]], notes: bool = False, final: bool = True) -> list[Violation]:
    """Every violation in ``events`` (time-ordered trace lines). With ``notes``, zombie overlaps too.

    ``final=False`` reads ``events`` as the prefix of a trace still being written: an overlap whose
    owners have no later membership event yet is undecided (one may still turn out to be a zombie)
    and is not reported."""
    evs = list(events)
    out: list[Violation] = []
    members: dict[str, _Member] = {}
    owners: dict[TP, dict[str, int]] = {}  # partition -> {member: index where it got it}
    acquired_gen: dict[tuple[TP, str], int] = {}  # (partition, member) -> generation it got it in
    for k, ev in enumerate(evs):
        kind = ev.get("event")
        ts = ev.get("ts_ms")
        if not isinstance(ts, int) or kind is None:
            out.append(Violation("well_formed", -1, f"line {k + 1} lacks ts_ms or event", index=k))
            continue
        if kind == "topic":
            continue
        name = ev.get("member")
        if not isinstance(name, str):
            out.append(Violation("well_formed", ts, f"{kind} event without a member", index=k))
            continue
        m = members.setdefault(name, _Member())
        if m.left and kind != "joined":
            out.append(Violation("well_formed", ts, f"{name}: {kind} after left", (name,), index=k))
        gen = ev.get("generation")
        if kind in ("fenced", "lost", "joined") or gen == -1:
            m.generation = -1
        elif isinstance(gen, int) and kind == "assigned":
            if gen < m.generation:
                out.append(Violation("generation_monotonic", ts,
                                     f"{name}'s generation went down from {m.generation} to {gen} without a reset",
                                     (name,), index=k))
            m.generation = max(m.generation, gen)
        if kind == "joined":
            m.running, m.left = True, False
            _release(name, m, owners)
        elif kind == "assigned":
            if ev.get("protocol", "eager") != "cooperative":
                _release(name, m, owners)
            for tp in _parts(ev):
                if tp in m.owned:
                    out.append(Violation("well_formed", ts, f"{name} is assigned {_tp(tp)} which it already owns",
                                         (name,), tp, k))
                    continue
                for other in list(owners.get(tp, {})):
                    behind = _left_behind(evs, k, tp, other, acquired_gen.get((tp, other), -1),
                                          gen if isinstance(gen, int) else -1)
                    out.extend(_overlap(evs, k, ts, tp, other, name, notes, final, behind,
                                        gen if isinstance(gen, int) else -1))
                m.owned[tp] = k
                owners.setdefault(tp, {})[name] = k
                acquired_gen[(tp, name)] = gen if isinstance(gen, int) else -1
        elif kind in ("revoked", "lost"):
            for tp in _parts(ev):
                if tp not in m.owned:
                    if kind == "revoked":
                        out.append(Violation("well_formed", ts, f"{name} revokes {_tp(tp)} which it does not own",
                                             (name,), tp, k))
                    continue
                del m.owned[tp]
                owners[tp].pop(name, None)
        elif kind == "left":
            _release(name, m, owners)
            m.running, m.left = False, True
        elif kind == "commit" and ev.get("accepted") is True:
            for p in ev.get("partitions") or []:
                tp = (str(p[0]), int(p[1]))
                mine = m.owned.get(tp)
                if mine is None:
                    continue
                # A commit is logged when its answer arrives: it may have been accepted before the other
                # member got the partition. Only a commit made in (or after) the generation in which the
                # other member acquired it must have been refused.
                cgen = gen if isinstance(gen, int) else -1
                # The other owner is the newer one only if it got the partition in a generation at least as
                # new as the committer's: a zombie's assignment line may come later in the trace (its
                # SyncGroup answer was delivered late, after a GC pause) with an older generation.
                own_gen = acquired_gen.get((tp, name), -1)
                newer = [o for o, at in owners.get(tp, {}).items()
                         if o != name and at > mine and cgen >= acquired_gen.get((tp, o), -1) >= 0
                         and acquired_gen.get((tp, o), -1) >= own_gen]
                if newer:
                    out.append(Violation("commit_fencing", ts,
                                         f"{name}'s commit for {_tp(tp)} was accepted while {newer[0]} owned it too "
                                         f"(since a later assignment)", (name, newer[0]), tp, k))
    return out


def _release(name: str, m: _Member, owners: dict[TP, dict[str, int]]) -> None:
    for tp in m.owned:
        owners.get(tp, {}).pop(name, None)
    m.owned.clear()


def _left_behind(evs: list[dict[str, Any]], k: int, tp: TP, old: str, old_gen: int, new_gen: int) -> bool | None:
    """Whether ``old`` (which got ``tp`` in ``old_gen``) was left behind when the other owner got it in
    ``new_gen`` at event ``k``: it gives ``tp`` up in ``old_gen`` without a newer assignment first.
    ``None`` when the trace ends before it shows."""
    if not 0 <= old_gen < new_gen:
        return False
    for ev in evs[k + 1:]:
        if ev.get("member") != old:
            continue
        kind = ev.get("event")
        if kind in ("revoked", "lost") and tp in _parts(ev):
            return ev.get("generation") in (old_gen, -1)
        if kind == "assigned" and isinstance(ev.get("generation"), int) and 0 <= ev["generation"] < new_gen:
            continue  # a late answer of an older generation: it still took part in no newer one
        if kind in ("assigned", "joined"):
            return False
    return None


def _overlap(evs: list[dict[str, Any]], k: int, ts: int, tp: TP, old: str, new: str, notes: bool,
             final: bool, behind: bool | None = False, new_gen: int = -1) -> list[Violation]:
    nxt = {old: _next_membership(evs, old, k, below=new_gen), new: _next_membership(evs, new, k)}
    zombies = [w for w in (old, new) if nxt[w] in ("fenced", "lost", "left")]
    if behind and old not in zombies:
        zombies.append(old)
    if not zombies and not final and (None in nxt.values() or behind is None):
        return []  # undecided: an owner has not shown yet whether it was a zombie
    if zombies:
        if notes:
            return [Violation("zombie_overlap", ts, f"{_tp(tp)} owned by {old} and {new}; {zombies[0]} was a zombie",
                              (old, new), tp, k)]
        return []
    return [Violation("exclusive_ownership", ts, f"{_tp(tp)} is owned by both {old} and {new}, neither of them fenced",
                      (old, new), tp, k)]


def _tp(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"
