"""The trace checker's rules: what one consumer group's events mean (:class:`GroupChecker`; whole traces: :mod:`.runs`).

Theory of operation
-------------------
Events are read in time order and applied to each group's state: per member what it owns, whether
its process runs (``joined`` .. ``left``; a member seen without ``joined`` counts as started at its
first event), its last generation and whether it has been fenced since it last got an assignment;
per partition its owners. Ownership follows the contract's reading rules only: an eager ``assigned``
replaces what the member owned, a cooperative (or ``consumer``) one adds, ``revoked``/``lost``
remove, ``left`` releases everything, and a ``joined`` of a member already running is a restart under
the same name (the old process is gone: it releases too). ``snapshot`` lines (a client's polled
``assignment()``) and unknown kinds are accepted and never decide ownership.

Everything that depends on time is judged at the end of each *tick* (all events with one ``ts_ms``),
so clock ties between members do not matter: a hand-over written ``c2 assigned`` before ``c1
revoked`` in the same millisecond is no overlap, and a partition revoked and re-assigned in the same
millisecond was never unowned.

Properties (``PROPERTY_IDS``):

* ``exclusive_ownership`` — a partition owned by two members for a positive time, *neither* of them a
  zombie. Whether an owner was a zombie follows from what the protocol says, never from its leaving
  later: it had been removed or fenced when (a) the trace has a ``removed`` line for it before the
  overlap (the coordinator's record of a session that expired, or of a member it dropped); (b) its next
  membership event (``assigned``, ``fenced``, ``lost``, ``left``, ``joined``) after the overlap began is
  ``fenced`` or ``lost`` (it learned it had been fenced out; a late ``assigned`` line of a generation
  older than the other owner's is skipped); or (c) it was *left behind*: its generation (the one it got
  the partition in, or a later one it reached) is older than the other owner's and it gave the partition
  up (``revoked``, ``lost``, ``left``) without showing a line of the newer generation first — the group
  completed that generation without it (KAFKA-8220). A same-generation overlap ended by a clean
  ``left``, and an eager member that keeps its partitions into the next generation, are violations.
  Overlaps with a zombie are allowed by the protocol and listed under ``zombie_overlaps``, with the
  zombie's accepted commits.
* ``commit_fencing`` — an offset commit the coordinator *accepted* from the older owner of a partition
  while a newer owner had it: when the commit says when it was sent (``sent_ms``), any commit sent
  after the other member acquired the partition; otherwise (a line written when the answer came) only
  a commit carrying a generation at or after the one in which the other member acquired it.
* ``generation_monotonic`` — a line (``assigned``, ``revoked``, ``lost`` or ``commit``) carries a generation
  older than the member's last assignment's, without a reset (``fenced``, ``lost``, ``joined`` or
  generation -1) in between. A ``commit`` line that says when it was sent (``sent_ms``, at or before its
  ``ts_ms``) carries the generation the member had when it *sent* it: it is judged against the generation
  the member had just before the tick ``sent_ms`` (a commit answered after the member's next epoch is no
  regression). The checker remembers each member's last ``GEN_HISTORY`` generation changes; a commit sent
  before all of them is not judged (its generation then is unknown).
* ``completeness`` — a partition unowned for longer than ``converge_within_s`` while a member was
  alive (every such maximal interval is listed in ``unowned_windows``).
* ``convergence`` — the trace is cut into *periods* at every membership change (``joined``, ``left``,
  ``fenced``, a restart), and at the first change of an assignment that stayed complete, balanced and
  unchanged for half of ``converge_within_s`` (the group had converged: what follows is a new
  rebalance); a period converged at the last moment from which its assignment was complete
  (every partition of the trace's topics owned by exactly one member), balanced (owned counts differ by
  at most one, overall or in every topic) and unchanged until the period ended. A period longer than
  ``converge_within_s`` that never converged, or converged only after more than ``converge_within_s``,
  is a violation.
* ``well_formed`` — trace defects: lines that are not JSON objects, missing fields, time going back,
  revoking a partition not owned, a cooperative ``assigned`` of a partition already owned, events of a
  member after ``left`` (ignored until its next ``joined``). Reported with their line number, never
  raised.

A notice, not a property: ``starved_members`` (``starved``), live members kept out of the generations the
group went through for longer than their session timeout.

Memory: the state of each group (members, owners, overlaps still open or undecided, a ring of the
last events for timelines) plus the findings; nothing grows with the number of events. Members that left
and that no overlap waits for are *retired* at the end of their tick (only their names are kept), so the
work per tick follows the members alive, not every name the trace ever had.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from .against_model import ModelMatcher
from .overlaps import FENCING_EVENTS, OverlapRules, Overlap  # noqa: F401 - FENCING_EVENTS, Overlap: re-exported
from .reader import MAX_TOPIC_PARTITIONS, MAX_TS, BadTime, check_ts
from . import balance as _balance
from . import starved as _starved
from .timeline import beliefs, render_event

__all__ = ["PROPERTY_IDS", "GroupChecker", "Unsorted"]

PROPERTY_IDS = (
    "exclusive_ownership", "commit_fencing", "generation_monotonic", "completeness", "convergence", "well_formed",
)
TP = tuple[str, int]
_MEMBERSHIP = frozenset(("assigned", "fenced", "lost", "left", "joined"))
GEN_HISTORY = 4  # generation changes remembered per member (commits judged by their sent_ms); kernel.GEN_HISTORY
_GENERATIONAL = frozenset(("assigned", "revoked", "lost", "commit"))  # lines whose generation must not go down
_RING = 8  # events kept before a finding, for its timeline
_AFTER = 4  # events added after it


class Unsorted(Exception):
    """Raised in strict mode when time goes back: the caller re-reads the trace sorted."""


def _secs(a: int, b: int) -> float:
    return round((b - a) / 1000.0, 3)


@dataclass
class _Member:
    name: str
    owned: dict[TP, int] = field(default_factory=dict)  # partition -> generation it got it in
    alive: bool = True
    left: bool = False
    fenced: bool = False
    removed: bool = False  # a ``removed`` line: the coordinator dropped it (it may not know yet)
    generation: int = -1
    last_gen: int | None = None  # last generation seen on any line (for beliefs)
    waiting: list[tuple["Overlap", str]] = field(default_factory=list)  # overlaps awaiting its next membership event
    wait_from: int | None = None  # waiting for an assignment since (``starved``)
    others_at: int | None = None  # another member was assigned meanwhile, first at
    session_timeout_ms: int | None = None  # from its latest ``joined`` line
    consumer: bool = False  # its listener lines say protocol "consumer": its generations are its own epochs
    gen_hist: tuple[tuple[int, int], ...] = ()  # its last GEN_HISTORY generation changes (ts_ms, generation), newest first


def _set_gen(m: _Member, gen: int, ts: int) -> None:
    """The member's generation becomes ``gen`` at ``ts``; a change is remembered (``gen_hist``)."""
    if gen != m.generation:
        m.generation = gen
        m.gen_hist = ((ts, gen),) + m.gen_hist[:GEN_HISTORY - 1]


def _gen_then(m: _Member, ev: dict[str, Any], ts: int) -> int | None:
    """The generation a commit line is judged against: the member's now, or, when the line says it was sent
    (``sent_ms`` at or before ``ts``), the one it had just before the tick ``sent_ms``; ``None``: unknown
    (sent before the oldest change remembered)."""
    sent = ev.get("sent_ms")
    if type(sent) is not int or sent > ts:
        return m.generation
    for at, g in m.gen_hist:
        if at < sent:
            return g
    return -1 if len(m.gen_hist) < GEN_HISTORY else None


class _Capture:
    """Events around a finding: the ring at the moment, then a few more."""

    __slots__ = ("before", "after", "want", "beliefs", "at_ms")

    def __init__(self, before: list[tuple[int, dict[str, Any]]], beliefs_: list[str], at_ms: int) -> None:
        self.before = before
        self.after: list[tuple[int, dict[str, Any]]] = []
        self.want = _AFTER
        self.beliefs = beliefs_
        self.at_ms = at_ms

    def lines(self) -> list[str]:
        out = [render_event(n, ev) for n, ev in self.before]
        out.append(f"      at {self.at_ms} ms the members believed:")
        out.extend(f"        {b}" for b in self.beliefs)
        out.extend(render_event(n, ev) for n, ev in self.after)
        return out


class GroupChecker(OverlapRules):
    """Streaming checker of one consumer group. Feed events in time order, then :meth:`finish`."""

    def __init__(self, group: str | None, converge_within_s: float = 20.0, strict_order: bool = False,
                 against_model: bool = False, max_listed: int = 10_000) -> None:
        self.group = group
        self.matcher: ModelMatcher | None = ModelMatcher() if against_model else None
        self.within_ms = int(round(converge_within_s * 1000))
        self.strict = strict_order
        self.refuse_bad_time = False  # a ts_ms that is no time: raise BadTime (files) instead of a trace defect
        self.members: dict[str, _Member] = {}
        # Members that left and are settled (no overlap waits for them) are *retired*: their records are
        # dropped and only their names kept, so that the work per tick follows the members alive, not every
        # name the trace ever had (a fleet whose consumers come and go). A retired name's next line is a
        # ``joined`` (a fresh record) or a trace defect, as for any member after ``left``.
        self.retired: set[str] = set()
        self.leavers: list[str] = []  # left since; retired at the end of a tick once settled
        # (retired?, name) since the compiled loop last loaded this group (None: it never did; then it is
        # not kept, and the loop takes every retired name at its first load)
        self.retire_log: list[tuple[bool, str]] | None = None
        self.owners: dict[TP, dict[str, int]] = {}  # partition -> {member: generation it got it in}
        # every partition seen, and those whose owners changed in this tick: dicts, not sets, so that they keep the
        # order the partitions came in, as the compiled loop does, and windows closing in one tick close in the same
        # order both ways, whatever the hash seed (which windows are listed, past the cap, depends on it)
        self.universe: dict[TP, None] = {}
        self.topics: dict[str, int] = {}
        # member name -> the topics it subscribes to, from ``subscribed`` lines and ``joined`` lines with
        # ``topics`` (a member with none is taken to subscribe to every topic of the trace)
        self.subs: dict[str, frozenset[str]] = {}
        self.n_one = 0  # partitions of the universe with exactly one owner
        self.n_multi = 0  # partitions with two or more
        self.alive = 0
        self.tick: int | None = None
        self.last_ts = 0
        self.first_ts: int | None = None
        self.dirty: dict[TP, None] = {}  # (see universe)
        self.all_dirty = False
        self.changed = False  # ownership changed in this tick
        self.cut_pending = False
        self.window_start: dict[TP, int] = {}
        # Listed up to max_listed each (the counts are always exact; violations are always all kept),
        # so that memory stays the size of the group's state however long the trace.
        self.max_listed = max_listed
        self.n_windows = 0
        self.n_periods = 0
        self.windows: list[tuple[str, int, int, int, bool]] = []
        self.completeness: list[tuple[str, int, int, int, bool, list[str], _Capture]] = []
        self.convergence: list[tuple[tuple[int, int, list[str], int | None], _Capture]] = []
        self.period_from: int | None = None
        self.period_members: list[str] = []
        self.conv_at: int | None = None
        self.hold_ms = self.within_ms // 2  # an assignment unchanged this long had converged (a period ends at its next change)
        # the last converged stretch, broken by the ownership changes of these members (a member that
        # leaves, is fenced or restarts revokes first: its own revocations belong to its departure)
        self.broken: tuple[int, set[str]] | None = None
        self.changers: set[str] = set()
        self.cut_by: set[str | None] = set()
        self.periods: list[tuple[int, int, list[str], int | None]] = []
        self.overlaps: dict[TP, list[Overlap]] = {}
        self.pending: list[Overlap] = []  # ended, not yet decided
        self.exclusive: list[dict[str, Any]] = []
        self.zombie_overlaps: list[dict[str, Any]] = []
        self.starved: list[dict[str, Any]] = []  # notices (``starved``)
        self.waiting_alone: set[str] = set()  # members waiting that have seen no one else assigned yet
        self.commit_fencing: list[dict[str, Any]] = []
        self.generation: list[dict[str, Any]] = []
        self.defects: list[dict[str, Any]] = []
        self.ring: deque[tuple[int, dict[str, Any]]] = deque(maxlen=_RING)
        self.captures: list[_Capture] = []
        self.events = 0

    def new_member(self, name: str) -> _Member:
        """A record for a member first seen by the compiled inner loop (its fields are then set from it)."""
        m = self.members[name] = _Member(name)
        return m

    def fast_ready(self) -> bool:
        """Quiet: nothing open that the compiled inner loop (``kernel``) does not hold, so it may go on."""
        return (self.strict and self.matcher is None and not self.overlaps and not self.pending
                and not self.captures and not self.n_multi and not self.subs)

    # ------------------------------------------------------------------------------------------ helpers
    def _capture(self) -> _Capture:
        cap = _Capture(list(self.ring), beliefs(self.members, self.tick or 0), self.tick or 0)
        self.captures.append(cap)
        return cap

    def defect(self, line: int | None, ts: int | None, member: str | None, message: str) -> None:
        self.defects.append({"line": line, "ts_ms": ts, "member": member, "message": message})

    def _add_owner(self, tp: TP, name: str, gen: int) -> dict[str, int]:
        own = self.owners.get(tp)
        if own is None:
            own = self.owners[tp] = {}
        if tp not in self.universe:
            self.universe[tp] = None
            self.all_dirty = True
        n = len(own)
        own[name] = gen
        if n == 0:
            self.n_one += 1
        elif n == 1:
            self.n_one -= 1
            self.n_multi += 1
        self.dirty[tp] = None
        self.changed = True
        self.changers.add(name)
        return own

    def _remove_owner(self, tp: TP, name: str, ts: int) -> None:
        own = self.owners.get(tp)
        if own is None or name not in own:
            return
        del own[name]
        n = len(own)
        if n == 0:
            self.n_one -= 1
        elif n == 1:
            self.n_multi -= 1
            self.n_one += 1
        self.dirty[tp] = None
        self.changed = True
        self.changers.add(name)
        ovs = self.overlaps.get(tp)
        if ovs:
            keep = []
            for ov in ovs:
                if name in (ov.old, ov.new):
                    ov.to_ms = ts
                    if ts > ov.from_ms:
                        self.pending.append(ov)
                    else:
                        self._unwait(ov)
                else:
                    keep.append(ov)
            if keep:
                self.overlaps[tp] = keep
            else:
                del self.overlaps[tp]

    def _release_all(self, m: _Member, ts: int) -> None:
        for tp in sorted(m.owned):  # sorted: the same order whichever loop filled ``owned``
            self._remove_owner(tp, m.name, ts)
        m.owned.clear()

    def _cut(self, who: str | None = None) -> None:
        self.cut_pending = True
        self.cut_by.add(who)

    # ------------------------------------------------------------------------------------------ ticks
    def _end_tick(self) -> None:
        ts = self.tick
        if ts is None:
            return
        if not (self.cut_pending or self.changed or self.all_dirty or self.dirty or self.pending):
            return
        if (self.changed and not self.cut_pending and self.conv_at is not None
                and ts - self.conv_at >= self.hold_ms):
            # the assignment had held, complete and balanced, for half of --converge-within: the group had
            # converged, and what changes it now (a rebalance without a membership change) starts a period
            self._cut()
        if self.cut_pending:
            if self.conv_at is None and self.broken is not None and (
                    self.broken[1] <= self.cut_by
                    or any(w in self.members and self.members[w].fenced for w in self.cut_by)):
                # it stayed converged until its leaver started leaving, or until the group reacted to
                # the unobserved removal of a member that only now learns it was fenced
                self.conv_at = self.broken[0]
            self._close_period(ts)
            self.period_from = ts
            self.period_members = sorted(n for n, m in self.members.items() if m.alive)
            self.conv_at = None
            self.broken = None
            self.cut_pending = False
            self.cut_by = set()
            self.changed = True
        # unowned windows
        anyone = self.alive > 0
        live_topics = _balance.live_topics(self) if self.subs and anyone else None
        if self.all_dirty:
            todo: Iterable[TP] = self.universe
        else:
            todo = self.dirty
        ws = self.window_start
        for tp in todo:
            own = self.owners.get(tp)
            unowned = anyone and not own and (live_topics is None or tp[0] in live_topics)
            start = ws.get(tp)
            if unowned and start is None:
                ws[tp] = ts
            elif not unowned and start is not None:
                del ws[tp]
                self._close_window(tp, start, ts, open_=False)
        # convergence of the current period
        if (self.changed or self.all_dirty) and self.period_from is not None:
            was = self.conv_at
            self.conv_at = ts if self._converged() else None
            if self.conv_at is not None:
                self.broken = None
            elif was is not None:
                self.broken = (was, set(self.changers))
            elif self.broken is not None:
                self.broken[1].update(self.changers)
        self.changers = set()
        self.dirty.clear()
        self.all_dirty = False
        self.changed = False
        # overlaps that ended and are decided
        if self.pending:
            still = []
            for ov in self.pending:
                if ov.decided():
                    self._emit_overlap(ov)
                else:
                    still.append(ov)
            self.pending = still
        if self.leavers:
            self._retire()

    def _retire(self) -> None:
        keep = []
        for name in self.leavers:
            m = self.members.get(name)
            if m is None or not m.left:
                continue
            if m.waiting:
                m.waiting = [(ov, r) for ov, r in m.waiting if not ov.emitted]
                if m.waiting:
                    keep.append(name)
                    continue
            del self.members[name]
            self.retired.add(name)
            if self.retire_log is not None:
                self.retire_log.append((True, name))
        self.leavers = keep

    def _converged(self) -> bool:
        return _balance.converged(self)

    def _close_window(self, tp: TP, start: int, end: int, open_: bool) -> None:
        if end <= start:
            return
        self.n_windows += 1
        if end - start > self.within_ms:
            alive = sorted(n for n, m in self.members.items() if m.alive)
            self.completeness.append((tp[0], tp[1], start, end, open_, alive, self._capture()))
        if len(self.windows) < self.max_listed:
            self.windows.append((tp[0], tp[1], start, end, open_))

    def _close_period(self, end: int) -> None:
        if self.period_from is None or end <= self.period_from:
            return
        long_ = end - self.period_from > self.within_ms
        bad = long_ and self.period_members and (self.conv_at is None or self.conv_at - self.period_from > self.within_ms)
        row = (self.period_from, end, self.period_members, self.conv_at)
        self.n_periods += 1
        if bad:
            self.convergence.append((row, self._capture()))
        if len(self.periods) < self.max_listed:
            self.periods.append(row)

    # ------------------------------------------------------------------------------------------ events
    def feed(self, ev: dict[str, Any], line: int | None = None) -> None:
        """Apply one event (a parsed trace line; ``line`` its number, for reports)."""
        self.events += 1
        ts = ev.get("ts_ms")
        kind = ev.get("event")
        if type(ts) is not int or not 0 <= ts <= MAX_TS:
            try:
                ts = check_ts(ts)
            except BadTime as e:
                if self.refuse_bad_time:
                    raise  # the caller refuses the file, naming it and the line
                self.defect(line, None, ev.get("member"), str(e))
                return
            if ts is None:
                self.defect(line, None, ev.get("member"), "missing or non-integer ts_ms")
                return
        if type(kind) is not str:
            self.defect(line, ts, ev.get("member"), "missing event")
            return
        if ts != self.tick:
            if self.tick is not None and ts < self.tick:
                if self.strict:
                    raise Unsorted
                self.defect(line, ts, ev.get("member"), f"time goes back from {self.tick} to {ts} ms; read at {self.tick} ms")
                ts = self.tick
            else:
                self._end_tick()
                self.tick = ts
                if self.first_ts is None:
                    self.first_ts = ts
                    self.period_from = ts
        self.last_ts = ts
        if self.matcher is not None:
            self.matcher.feed(ev, line)
        self.ring.append((line or self.events, ev))
        if self.captures:
            item = (line or self.events, ev)
            for cap in self.captures:
                cap.after.append(item)
                cap.want -= 1
            self.captures = [c for c in self.captures if c.want > 0]
        if kind == "commit" and not self.overlaps:
            # the fast path of the most frequent line: with no overlap open, only a removed member's
            # accepted commit, or a line of a member that left, can be a finding
            m = self.members.get(ev.get("member"))  # type: ignore[arg-type]
            if m is not None and not m.left and not m.removed:
                gen = ev.get("generation")
                if type(gen) is int:
                    if gen >= 0:
                        then = _gen_then(m, ev, ts)
                        if then is not None and gen < then:
                            self._gen_down(m, "commit", gen, ts, line, then)
                    m.last_gen = gen
                return
        if kind == "end":
            return  # the recording ran until here (windows and periods still open last until now)
        if kind == "topic":
            topic, n = ev.get("topic"), ev.get("partitions")
            if not isinstance(topic, str) or type(n) is not int or not 0 <= n <= MAX_TOPIC_PARTITIONS:
                self.defect(line, ts, None, "topic event needs 'topic' (a string) and 'partitions' (a count, "
                            f"at most {MAX_TOPIC_PARTITIONS:,}; got {n!r:.40})")
                return
            if n > self.topics.get(topic, 0):
                for p in range(self.topics.get(topic, 0), n):
                    self.universe[(topic, p)] = None
                self.topics[topic] = n
                self.all_dirty = True
                self.changed = True
                self._cut()  # a topic that grows is a disturbance too: the group must rebalance
            return
        if kind == "coordinator":
            return  # a recording's header: the coordinator and its settings (the real-stack harness); decides nothing
        if kind == "subscribed":
            _balance.subscribe(self, ev, line, ts)
            return
        name = ev.get("member")
        if not isinstance(name, str):
            self.defect(line, ts, None, f"{kind} event without a member")
            return
        m = self.members.get(name)
        if m is None:
            if name in self.retired:
                if kind != "joined":
                    self.defect(line, ts, name, f"{name}: {kind} after left (ignored)")
                    return
                self.retired.discard(name)
                if self.retire_log is not None:
                    self.retire_log.append((False, name))
            m = self.members[name] = _Member(name)
            self.alive += 1
            self.all_dirty = True
            if kind != "joined":
                self._cut(name)
        elif m.left and kind != "joined":
            self.defect(line, ts, name, f"{name}: {kind} after left (ignored)")
            return
        gen = ev.get("generation")
        if type(gen) is not int:
            gen = None
        else:
            m.last_gen = gen
        parts: list[TP] = []  # the event's partitions (the three kinds below)
        if kind == "assigned" or kind == "revoked" or kind == "lost":
            got = self._parts(ev, line, ts, name)
            if got is None:
                return
            parts = got
            proto_v = ev.get("protocol")
            if proto_v is not None:
                m.consumer = proto_v == "consumer"
            if m.waiting and kind != "assigned":
                for tp in parts:
                    self._give_up(m, tp, gen)
        if kind in _MEMBERSHIP and m.waiting:
            self._membership(m, kind, gen, ev)
        if gen is not None and 0 <= gen and kind in _GENERATIONAL:
            then = _gen_then(m, ev, ts) if kind == "commit" else m.generation
            if then is not None and gen < then:
                self._gen_down(m, kind, gen, ts, line, then)
        if kind == "assigned":
            _starved.on_assigned(self, m, ts)
            if gen is not None:
                if gen > m.generation or gen == -1:
                    _set_gen(m, gen, ts)
            m.fenced = False
            m.removed = False
            g = gen if gen is not None else -1
            proto = ev.get("protocol", "eager")
            if proto == "eager":
                keep = set(parts)
                for tp in sorted(t for t in m.owned if t not in keep):
                    self._remove_owner(tp, name, ts)
                    del m.owned[tp]
            for tp in parts:
                if tp in m.owned:
                    if proto != "eager":
                        self.defect(line, ts, name, f"{name} is assigned {tp[0]}-{tp[1]} which it already owns")
                    m.owned[tp] = g
                    continue
                own = self._add_owner(tp, name, g)
                m.owned[tp] = g
                if len(own) > 1:
                    for other, og in list(own.items()):
                        if other != name:
                            self._open_overlap(tp, other, og, name, g, ts)
        elif kind == "revoked" or kind == "lost":
            _starved.start_waiting(self, m, ts)
            for tp in parts:
                if tp not in m.owned:
                    if kind == "revoked":
                        self.defect(line, ts, name, f"{name} revokes {tp[0]}-{tp[1]} which it does not own")
                    continue
                del m.owned[tp]
                self._remove_owner(tp, name, ts)
            if kind == "lost":  # it learned it had been fenced out: a membership change
                _set_gen(m, -1, ts)
                m.fenced = True
                self._cut(name)
        elif kind == "commit":
            if ev.get("accepted") is True and m.owned:
                self._commit(m, ev, ts, gen, line)
        elif kind == "joined":
            if not m.alive:
                m.alive = True
                self.alive += 1
                self.all_dirty = True
            self._release_all(m, ts)
            m.left = False
            m.fenced = False
            m.removed = False
            _set_gen(m, -1, ts)
            m.session_timeout_ms = _starved.session_timeout(ev)
            _starved.start_waiting(self, m, ts, restart=True)
            self._cut(name)
            if "topics" in ev:
                _balance.subscribe(self, ev, line, ts)
        elif kind == "left":
            _starved.stop_waiting(self, m, ts)
            self._release_all(m, ts)
            if not m.left:
                self.leavers.append(name)
            m.left = True
            if m.alive:
                m.alive = False
                self.alive -= 1
                self.all_dirty = True
            self._cut(name)
        elif kind == "fenced":
            _starved.start_waiting(self, m, ts)
            m.fenced = True
            _set_gen(m, -1, ts)
            self._cut(name)
        elif kind == "removed":
            if not m.removed:
                m.removed = True
                self._cut(name)
        if gen == -1:
            _set_gen(m, -1, ts)

    def _gen_down(self, m: _Member, kind: str, gen: int, ts: int, line: int | None, then: int) -> None:
        self.generation.append({
            "member": m.name, "event": kind, "ts_ms": ts, "line": line, "from_generation": then,
            "to_generation": gen, "_cap": self._capture()})

    def _parts(self, ev: dict[str, Any], line: int | None, ts: int, name: str) -> list[TP] | None:
        raw = ev.get("partitions")
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            self.defect(line, ts, name, "'partitions' is not a list")
            return None
        out = []
        for p in raw:
            if (isinstance(p, list) and len(p) >= 2 and isinstance(p[0], str) and type(p[1]) is int):
                out.append((p[0], p[1]))
            else:
                self.defect(line, ts, name, f"partition {p!r} is not [topic, number]")
                return None
        return out

    # ------------------------------------------------------------------------------------------ end
    def finish(self, final: bool = True) -> None:
        """The trace ended. With ``final=False`` it is the prefix of a trace still being written: an
        overlap whose owners have not yet shown whether one was a zombie is left undecided (unreported)."""
        if self.matcher is not None:
            self.matcher.finish()
        self._end_tick()
        end = self.last_ts
        for tp, start in sorted(self.window_start.items()):
            self._close_window(tp, start, end, open_=True)
        self.window_start.clear()
        self._close_period(end)
        self.period_from = None
        _starved.finish(self, end)
        for ovs in self.overlaps.values():
            for ov in ovs:
                ov.to_ms = end  # still held by both when the trace ends
                self.pending.append(ov)
        self.overlaps.clear()
        for ov in self.pending:
            if final or ov.decided():
                self._emit_overlap(ov)
        self.pending = []

    # ------------------------------------------------------------------------------------------ report
    def to_dict(self) -> dict[str, Any]:
        def window(t: str, p: int, a: int, b: int, o: bool) -> dict[str, Any]:
            return {"topic": t, "partition": p, "from_ms": a, "to_ms": b, "seconds": _secs(a, b),
                    **({"open": True} if o else {})}

        def period(a: int, b: int, mem: list[str], conv: int | None) -> dict[str, Any]:
            return {"from_ms": a, "to_ms": b, "members": mem, "converged_at_ms": conv,
                    "seconds_to_converge": None if conv is None else _secs(a, conv)}

        windows = [window(*w) for w in sorted(self.windows, key=lambda w: (w[2], w[0], w[1]))]
        completeness = [{**window(t, p, a, b, o), "members_alive": al, "timeline": c.lines()}
                        for t, p, a, b, o, al, c in sorted(self.completeness, key=lambda w: (w[2], w[0], w[1]))]
        periods = [period(*row) for row in self.periods]
        convergence = [{**period(*row), "seconds": _secs(row[0], row[1]), "timeline": c.lines()}
                       for row, c in self.convergence]

        def strip(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            out = []
            for d in items:
                d = dict(d)
                cap = d.pop("_cap", None)
                d["timeline"] = cap.lines() if cap is not None else []
                out.append(d)
            return out

        found = {
            "exclusive_ownership": strip(self.exclusive),
            "commit_fencing": strip(self.commit_fencing),
            "generation_monotonic": strip(self.generation),
            "completeness": completeness,
            "convergence": convergence,
            "well_formed": list(self.defects),
        }
        return {
            "group": self.group,
            "members": sorted(self.retired.union(self.members)),
            "properties": [{"id": pid, "verdict": "violated" if found[pid] else "held", "violations": found[pid]}
                           for pid in PROPERTY_IDS],
            "unowned_windows": windows,
            "periods": periods,
            "zombie_overlaps": strip(self.zombie_overlaps),
            "starved_members": strip(self.starved),
            **({"unowned_windows_total": self.n_windows, "periods_total": self.n_periods}
               if self.n_windows > len(self.windows) or self.n_periods > len(self.periods) else {}),
            **({"against_model": self.matcher.to_dict()} if self.matcher is not None else {}),
        }

    @property
    def ok(self) -> bool:
        if self.matcher is not None and self.matcher.first is not None:
            return False
        return not (self.exclusive or self.commit_fencing or self.generation or self.defects
                    or self.completeness or self.convergence)
