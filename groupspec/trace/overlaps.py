"""The trace checker's overlap rules: when two members own one partition, which (if either) was a zombie.

Part of :class:`groupspec.trace.checker.GroupChecker` (a mixin: the methods use its state). An overlap
opens when a member is assigned a partition another member owns; it is decided once the protocol shows
whether an owner was a zombie — fenced or removed — or that neither was (docs/trace-check.md, "The
zombie rule"): (a) a ``removed`` line for it before the overlap; (b) its next membership event after the
overlap began is ``fenced`` or ``lost`` (a late ``assigned`` of a generation older than the other
owner's is skipped); (c) it was left behind: its generation is older than the other owner's and it gave
the partition up (``revoked``/``lost`` in that generation or -1, ``left`` still in it) without showing a
line of the newer generation first — classic protocol only: with ``protocol: consumer`` (KIP-848) the
numbers are member epochs, each member's own, and the coordinator gives a partition to another member
only once its owner acknowledged the revocation, so only (a) and (b) excuse there. A later ``left`` alone
excuses nothing. Overlaps with a zombie go to
``zombie_overlaps``; the others are ``exclusive_ownership`` violations. Accepted commits during an
overlap are judged here too (``commit_fencing``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["OverlapRules"]

TP = tuple[str, int]
FENCING_EVENTS = ("fenced", "lost")  # a next membership event that shows the member had been fenced out


def _secs(a: int, b: int) -> float:
    return round((b - a) / 1000.0, 3)


@dataclass
class Overlap:
    tp: TP
    old: str
    new: str
    from_ms: int
    old_gen: int
    new_gen: int
    timeline: Any
    to_ms: int | None = None
    nxt_old: str | None = None
    nxt_new: str | None = None
    # the owner in the older generation (its generation known, and below the other's), if either is:
    # whether it gave the partition up still in that generation (left behind: a zombie) is ``behind``
    older: str | None = None
    older_gen: int = -1
    newer_gen: int = -1
    behind: bool | None = False
    commits: list[dict[str, Any]] = field(default_factory=list)

    removed: str | None = None  # an owner the coordinator had removed when the overlap began
    emitted: bool = False  # reported (a member still waiting for its next membership event owes it nothing)

    def zombie(self) -> str | None:
        """The owner the protocol says was a zombie (fenced or removed), or None: a ``removed`` line
        before the overlap; a next membership event ``fenced`` or ``lost``; or left behind in an older
        generation than the other's. Never because it later logs ``left``."""
        if self.removed is not None:
            return self.removed
        if self.nxt_old in FENCING_EVENTS:
            return self.old
        if self.nxt_new in FENCING_EVENTS:
            return self.new
        if self.behind:
            return self.older
        return None

    def decided(self) -> bool:
        if self.zombie() is not None:
            return True
        return self.nxt_old is not None and self.nxt_new is not None and self.behind is not None

    def gen_of(self, role: str) -> int:
        """The generation of the *other* owner, for ``role``'s late-line rule."""
        return self.new_gen if role == "old" else self.old_gen


class MemberView(Protocol):
    """What the overlap rules read and change of a member (the checker's member record)."""

    name: str
    owned: dict[TP, int]
    removed: bool
    last_gen: int | None
    waiting: list[tuple[Overlap, str]]


class OverlapRules:
    """The overlap methods of :class:`GroupChecker` (its state: ``members``, ``overlaps``, ``pending``,
    ``captures``, ``exclusive``, ``zombie_overlaps``, ``commit_fencing``)."""

    members: dict[str, Any]
    overlaps: dict[TP, list[Overlap]]
    captures: list[Any]
    exclusive: list[dict[str, Any]]
    zombie_overlaps: list[dict[str, Any]]
    commit_fencing: list[dict[str, Any]]

    def _capture(self) -> Any:  # pragma: no cover - GroupChecker's
        raise NotImplementedError

    def defect(self, line: int | None, ts: int | None, member: str | None, message: str) -> None:  # pragma: no cover
        raise NotImplementedError

    def _unwait(self, ov: Overlap) -> None:
        for who in (ov.old, ov.new):
            m = self.members.get(who)
            if m is not None and m.waiting:
                m.waiting = [(o, r) for o, r in m.waiting if o is not ov]
        if ov.timeline is not None and ov.timeline in self.captures:
            self.captures.remove(ov.timeline)
        ov.timeline = None

    def _emit_overlap(self, ov: Overlap) -> None:
        z = ov.zombie()
        d = {
            "topic": ov.tp[0], "partition": ov.tp[1], "members": [ov.old, ov.new],
            "from_ms": ov.from_ms, "to_ms": ov.to_ms, "seconds": _secs(ov.from_ms, ov.to_ms or ov.from_ms),
            "generations": [ov.old_gen, ov.new_gen], "zombie": z,
            "zombie_commits_accepted": [c for c in ov.commits if c["member"] == z] if z else [],
            "_cap": ov.timeline,
        }
        (self.zombie_overlaps if z else self.exclusive).append(d)
        ov.emitted = True

    def _open_overlap(self, tp: TP, old: str, old_gen: int, new: str, new_gen: int, ts: int) -> None:
        ov = Overlap(tp, old, new, ts, old_gen, new_gen, self._capture())
        for who in (old, new):
            if self.members[who].removed:
                ov.removed = who
        # each owner's generation now: the one it got the partition in, or a later one it has reached
        # since (a cooperative member keeps a partition across generations without a line for it)
        g_old = max(old_gen, self.members[old].generation)
        g_new = max(new_gen, self.members[new].generation)
        if self.members[old].consumer or self.members[new].consumer:
            pass  # KIP-848: member epochs are each member's own, not the group's generation: no "older" owner
        elif 0 <= g_old < g_new:
            ov.older, ov.older_gen, ov.newer_gen, ov.behind = old, g_old, g_new, None
        elif 0 <= g_new < g_old:
            ov.older, ov.older_gen, ov.newer_gen, ov.behind = new, g_new, g_old, None
        self.overlaps.setdefault(tp, []).append(ov)
        self.members[old].waiting.append((ov, "old"))
        self.members[new].waiting.append((ov, "new"))

    def _membership(self, m: MemberView, kind: str, gen: int | None, ev: dict[str, Any]) -> None:
        """``m``'s next membership event after an overlap began (a late ``assigned`` of a generation older
        than the other owner's is no news: it is skipped)."""
        keep = []
        for ov, role in m.waiting:
            other_gen = ov.newer_gen if ov.older == m.name else ov.gen_of(role)
            late = kind == "assigned" and gen is not None and 0 <= gen < other_gen
            if ov.older == m.name and ov.behind is None and not late:
                if kind in ("assigned", "joined"):
                    ov.behind = False  # it reached a newer generation (or restarted) still holding it
                elif kind == "left":
                    # it closed while still in the older generation: the group had moved on without it
                    g = gen if gen is not None and gen >= 0 else m.last_gen
                    ov.behind = g is not None and 0 <= g < ov.newer_gen
            if not late:
                if role == "old" and ov.nxt_old is None:
                    ov.nxt_old = kind
                elif role == "new" and ov.nxt_new is None:
                    ov.nxt_new = kind
            done = (ov.nxt_old if role == "old" else ov.nxt_new) is not None
            if not done or (ov.older == m.name and ov.behind is None):
                keep.append((ov, role))
        m.waiting = keep

    def _give_up(self, m: MemberView, tp: TP, gen: int | None) -> None:
        """``m`` gives ``tp`` up (revoked/lost): decides "left behind" for overlaps where it is the older owner."""
        for ov, _role in m.waiting:
            if ov.older == m.name and ov.tp == tp and ov.behind is None:
                ov.behind = gen is not None and gen < ov.newer_gen  # -1: it had been reset (fenced)

    def _commit(self, m: MemberView, ev: dict[str, Any], ts: int, gen: int | None, line: int | None) -> None:
        sent = ev.get("sent_ms")
        if m.removed:
            self.commit_fencing.append({
                "reason": "removed", "member": m.name, "ts_ms": ts, "line": line, "generation": gen,
                "partitions": ev.get("partitions"), "_cap": self._capture()})
        for p in ev.get("partitions") or []:
            if not (isinstance(p, list) and len(p) >= 2 and isinstance(p[0], str) and type(p[1]) is int):
                self.defect(line, ts, m.name, f"commit partition {p!r} is not [topic, number, offset]")
                continue
            tp = (p[0], p[1])
            if tp not in m.owned:
                continue
            for ov in self.overlaps.get(tp, ()):
                if m.name not in (ov.old, ov.new):
                    continue
                c = {"member": m.name, "ts_ms": ts, "generation": gen, "offset": p[2] if len(p) > 2 else None}
                ov.commits.append(c)
                if ov.old != m.name or ov.new_gen < ov.old_gen:
                    continue
                if type(sent) is int:
                    stale = sent >= ov.from_ms
                else:
                    stale = gen is not None and ov.new_gen >= 0 and gen >= ov.new_gen
                if stale:
                    self.commit_fencing.append({
                        "reason": "newer_owner", "topic": tp[0], "partition": tp[1], "member": m.name, "other": ov.new, "ts_ms": ts,
                        "line": line, "generation": gen, "other_generation": ov.new_gen,
                        "other_since_ms": ov.from_ms, "offset": c["offset"], "_cap": self._capture()})

