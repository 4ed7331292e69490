"""Model conformance of a recorded trace: map each event to the model's steps; report the first that none explains.

Theory of operation
-------------------
A trace shows only what members observed; most of the model's steps (JoinGroup and SyncGroup
requests travelling, the coordinator's join phases, heartbeats) leave no line. So each event is
matched to the model step that *produces* it, with any number of unobserved steps before it
(stutters allowed): the matcher keeps, per member, the part of the model's client state a trace can
show — process running or not (``Proc``), what it owns, its generation, whether it is a fresh member
— and checks each event against the guard of the step that would produce it, in the model's words:

=================  ==========================================================================
event              model step(s) that explain it, and their guard
=================  ==========================================================================
``joined``         ``Start`` (the process was DOWN); a ``joined`` of a running process is
                   ``Crash`` then ``Start`` (a restart under the same name)
``revoked``        eager: ``SendJoinGroup`` (onJoinPrepare revokes *everything* it owns) or
                   ``LeaveGroup``; cooperative: ``ReceiveSyncResponse`` / ``Revoke`` (a subset of
                   what it owns). Never a partition it does not own.
``assigned``       ``ReceiveSyncResponse`` (onJoinComplete): eager — the member owns nothing
                   (it revoked before rejoining); cooperative — none of the added partitions is
                   already its own; the generation is a completed join phase's, never below the
                   member's own (a reset member starts again)
``lost``           ``Heartbeat`` / ``ReceiveError`` answered UNKNOWN_MEMBER_ID or
                   ILLEGAL_GENERATION: the member resets and loses what it owns (a subset it owns)
``fenced``         the same error steps, or FENCED_INSTANCE_ID for a replaced static member
``left``           ``LeaveGroup`` or ``Crash`` of a running process
``removed``        ``SessionExpired`` (the coordinator drops the member; it may not know yet): its
                   partitions given to others afterwards are a zombie's, explained
``topic``          ``AddPartition`` when it grows (stutter otherwise)
others             stutters (``commit``, ``snapshot``, unknown kinds)
=================  ==========================================================================

An event of a process that has stopped (after ``left``, before ``joined``) is explained by no step.
The first unexplained event of each group is reported with the guard it breaks; later events are
still matched (after resetting the member to what the event says) so the count of unexplained
events is also given. This is a projection of the model's client steps written by hand (as the
conformance harness's abstraction function is), not a search of the model's state space; safety
properties across members (two owners) are the trace checker's job, not this matcher's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModelMatcher", "match_events"]

TP = tuple[str, int]


@dataclass
class _M:
    up: bool = False
    owned: set[TP] = field(default_factory=set)
    generation: int = -1
    removed: bool = False  # a ``removed`` line: the coordinator dropped it (SessionExpired), it may not know yet
    # partitions another member was given while this one owned them: this one must turn out to have
    # been removed unobserved (a zombie) — (partition, generation given in, line, event, receiver)
    must_be_zombie: list[tuple[TP, int, int | None, dict[str, Any], str]] = field(default_factory=list)


class ModelMatcher:
    """Streaming matcher of one group's events against the model's steps."""

    def __init__(self) -> None:
        self.members: dict[str, _M] = {}
        self.first: dict[str, Any] | None = None
        self.unexplained = 0
        self.steps: dict[str, int] = {}
        self.events = 0
        self.topics: dict[str, int] = {}
        self.holders: dict[TP, set[str]] = {}

    def _step(self, name: str) -> None:
        self.steps[name] = self.steps.get(name, 0) + 1

    def _bad(self, line: int | None, ev: dict[str, Any], reason: str) -> None:
        self.unexplained += 1
        if self.first is None or (line is not None and self.first["line"] is not None and line < self.first["line"]):
            self.first = {"line": line, "ts_ms": ev.get("ts_ms"), "member": ev.get("member"), "event": ev.get("event"),
                          "reason": reason}

    def feed(self, ev: dict[str, Any], line: int | None = None) -> None:
        self.events += 1
        kind = ev.get("event")
        if kind == "topic":
            t, n = ev.get("topic"), ev.get("partitions")
            if isinstance(t, str) and type(n) is int:
                if t in self.topics and n > self.topics[t]:
                    self._step("AddPartition")
                self.topics[t] = max(n, self.topics.get(t, 0))
            return
        if kind == "subscribed":
            return  # a subscription: the model's members subscribe to the trace's topics; nothing happens here
        name = ev.get("member")
        if not isinstance(name, str) or not isinstance(kind, str):
            return  # a malformed line: the trace checker reports it
        m = self.members.get(name)
        if m is None:
            m = self.members[name] = _M()
            if kind != "joined":
                m.up = True  # started before the trace began
                self._step("Start")
        parts = [(p[0], p[1]) for p in ev.get("partitions") or [] if isinstance(p, list) and len(p) >= 2]
        gen = ev.get("generation") if type(ev.get("generation")) is int else None
        eager = ev.get("protocol", "eager") == "eager"
        if m.must_be_zombie:
            self._settle(name, m, kind, parts, gen)
        if kind == "joined":
            self._step("Crash+Start" if m.up else "Start")
            self._own(name, m, set())
            m.up, m.generation, m.removed = True, -1, False
            return
        if kind == "removed":
            # SessionExpired / the rebalance timeout: the coordinator drops the member; the process may
            # go on believing it owns its partitions (a zombie) until it hears so
            self._step("SessionExpired (coordinator removes it)")
            m.removed = True
            return
        if not m.up and kind in ("assigned", "revoked", "lost", "fenced", "left"):
            self._bad(line, ev, f"{name} is not running (it left): no step of the model has a stopped process {kind} anything")
            return
        if kind == "revoked":
            extra = set(parts) - m.owned
            if extra:
                self._bad(line, ev, f"{name} revokes {_fmt(extra)} which it does not own: no step removes what a member does not own")
            elif eager and set(parts) != m.owned:
                self._bad(line, ev, f"eager {name} revokes {_fmt(parts)} but owns {_fmt(m.owned)}: SendJoinGroup "
                                    "(onJoinPrepare) and LeaveGroup revoke everything an eager member owns")
            else:
                self._step("SendJoinGroup/LeaveGroup (onJoinPrepare revokes)" if eager else "Revoke")
            self._own(name, m, m.owned - set(parts))
        elif kind == "assigned":
            if gen is not None and 0 <= gen < m.generation:
                self._bad(line, ev, f"{name} applies generation {gen} after {m.generation}: ReceiveSyncResponse never "
                                    "lowers a member's generation (only a reset to a fresh member does)")
            elif eager and m.owned:
                self._bad(line, ev, f"eager {name} is assigned {_fmt(parts)} while it still owns {_fmt(m.owned)}: "
                                    "its SendJoinGroup (onJoinPrepare) revokes everything before it rejoins")
            elif not eager and set(parts) & m.owned:
                self._bad(line, ev, f"{name} is assigned {_fmt(set(parts) & m.owned)} which it already owns: "
                                    "ReceiveSyncResponse adds only partitions it did not own")
            else:
                self._step("ReceiveSyncResponse")
            for tp in dict.fromkeys(parts):  # who owns what it is given (per partition: no loop over every member)
                for other_name in sorted(self.holders.get(tp, ())):
                    other = self.members[other_name]
                    if other_name != name and other.up and not other.removed:  # a removed owner is a zombie
                        other.must_be_zombie.append((tp, gen if gen is not None else -1, line, ev, name))
            self._own(name, m, set(parts) if eager else m.owned | set(parts))
            m.removed = False  # it rejoined: a member again
            if gen is not None and gen >= 0:
                m.generation = max(m.generation, gen)
        elif kind == "lost":
            extra = set(parts) - m.owned
            if extra:
                self._bad(line, ev, f"{name} loses {_fmt(extra)} which it does not own")
            else:
                self._step("Heartbeat/ReceiveError (reset)")
            self._own(name, m, m.owned - set(parts))
            m.generation = -1
        elif kind == "fenced":
            self._step("Heartbeat/ReceiveError (error answer)")
            m.generation = -1
        elif kind == "left":
            self._step("LeaveGroup/Crash")
            self._own(name, m, set())
            m.up = False
        else:
            self._step("stutter")

    def _own(self, name: str, m: _M, new: set[TP]) -> None:
        """``m`` owns ``new`` from now on (``holders``, partition -> owners, follows)."""
        for tp in m.owned - new:
            h = self.holders.get(tp)
            if h is not None:
                h.discard(name)
                if not h:
                    del self.holders[tp]
        for tp in new - m.owned:
            self.holders.setdefault(tp, set()).add(name)
        m.owned = new

    def _settle(self, name: str, m: _M, kind: str, parts: list[TP], gen: int | None) -> None:
        """``name``'s event decides whether it was a zombie when others were given its partitions."""
        keep = []
        for tp, g, line, ev, receiver in m.must_be_zombie:
            if kind in ("fenced", "lost"):
                continue  # it had been removed: SessionExpired / RebalanceTimeout, unobserved
            if kind == "left" and 0 <= (gen if gen is not None else m.generation) < g:
                continue  # it leaves still in an older generation: the group had completed g without it
            if kind in ("revoked", "lost") and tp in parts and (gen is None or gen < g or g < 0):
                continue  # left behind by a join phase it missed, giving up what it got before
            if kind == "assigned" and gen is not None and 0 <= gen < g:
                keep.append((tp, g, line, ev, receiver))  # a late answer of an older generation
                continue
            if kind in ("assigned", "joined"):
                self._bad(line, ev, f"{receiver} is given {tp[0]}-{tp[1]} while {name} owns it and stays a member "
                                    f"(its next step is {kind}, not a reset): ReceiveSyncResponse never gives a "
                                    "partition a live member owns")
                continue
            keep.append((tp, g, line, ev, receiver))
        m.must_be_zombie = keep

    def finish(self) -> None:
        """At the end of the trace an owner not yet shown to be a zombie is taken to be a member."""
        for name, m in self.members.items():
            for tp, _g, line, ev, receiver in m.must_be_zombie:
                self._bad(line, ev, f"{receiver} is given {tp[0]}-{tp[1]} while {name} owns it, and the trace never "
                                    f"shows {name} removed: ReceiveSyncResponse never gives a partition a live member owns")
            m.must_be_zombie = []

    def to_dict(self) -> dict[str, Any]:
        return {"explained": self.first is None, "events": self.events, "unexplained": self.unexplained,
                "first_unexplained": self.first, "steps": dict(sorted(self.steps.items()))}


def _fmt(parts: Any) -> str:
    return "{" + ", ".join(f"{t}-{p}" for t, p in sorted(parts)) + "}"


def match_events(events: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Per group: the matcher's report for ``events`` (in time order)."""
    out: dict[Any, ModelMatcher] = {}
    for n, ev in enumerate(events, 1):
        if isinstance(ev, dict):
            out.setdefault(ev.get("group"), ModelMatcher()).feed(ev, n)
    for m in out.values():
        m.finish()
    return {g: m.to_dict() for g, m in out.items()}
