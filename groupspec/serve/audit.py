"""A recorded session checked twice: replayed against the reference, and read as a trace checked by the model.

Theory of operation
-------------------
``groupspec serve --transcript DIR`` writes a session as a coordinator script and its transcript
(the coordinator-script contract; for KIP-848 groups the consumer-protocol variant of the format).
``check_session(script, transcript)`` (the CLI: ``groupspec coordinator check``) asks two questions:

1. **Is every answer the reference's?** The script is replayed against the reference
   coordinator (``groupspec.reference.sim.run_script``, which runs consumer-protocol scripts on
   the next-generation coordinator) and the replay's transcript is compared with the recorded one
   line by line; the first line that differs is reported with both versions. A transcript edited
   by hand, or written by a coordinator that is not the reference, fails here.
2. **Do the answers keep the protocol's promises?** The transcript is read as what each member was
   told, and turned into a trace in the trace format (``docs/trace-check.md``): per alias,
   ``joined`` at its first request, ``assigned`` / ``revoked`` from its SyncGroup answers (eager:
   everything owned is revoked when it sends JoinGroup; cooperative and the consumer protocol: the
   difference between what it owns and its new assignment), ``lost`` after UNKNOWN_MEMBER_ID,
   ILLEGAL_GENERATION, FENCED_INSTANCE_ID or FENCED_MEMBER_EPOCH, ``revoked`` and ``left`` on
   LeaveGroup (epoch -1/-2), ``removed`` when the coordinator drops a member it did not hear leave,
   ``commit`` for each OffsetCommit with its answer. ``groupspec.trace.check_events(...,
   against_model=True)`` then checks the invariants (exclusive ownership, commit fencing,
   generations monotone, ...) and matches every event to the model's steps. For the consumer
   protocol the coordinator's state lines are checked too: no partition assigned to, or pending
   revocation from, two members at once (the model's exclusive ownership: a member owns what it was
   given until it acknowledged the revocation; the trace checker's zombie rule, written for
   generations, would excuse an older member epoch).

The two are independent: a transcript can be the reference's own and still break an invariant (a
mutant coordinator recorded the session: both checks fail), or be hand-edited consistently with the
protocol (only the first fails). Members behave as the protocol says in the derived trace (they
revoke when told), so a violation is the coordinator's, never a client's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from groupspec.reference.sim import json_type, run_script
from groupspec.trace import check_events


__all__ = ["SessionCheck", "check_session", "transcript_events", "MalformedTranscript", "read_transcript"]

_GROUP_APIS = {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
               "ConsumerGroupHeartbeat"}
_LOST = {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID", "FENCED_MEMBER_EPOCH"}


class MalformedTranscript(ValueError):
    """A transcript line that is not one of the format's (``docs/formats.md``); ``str()`` names the line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _pairs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and _int(x[1])
                                       for x in v)


def _consumer_members(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(m, dict) and all(m.get(k) is None or _pairs(m[k])
                                                                   for k in ("assigned", "revoking", "target"))
                                       for m in v.values())


# field -> (test, what it must be), for the fields the trace is derived from
_FIELDS: dict[str, tuple[Any, str]] = {
    "to": (lambda v: isinstance(v, str), "a string"),
    "request": (lambda v: isinstance(v, str), "a string"),
    "error": (lambda v: isinstance(v, str), "a string"),
    "event": (lambda v: isinstance(v, str), "a string"),
    "member": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "generation": (lambda v: v is None or _int(v), "an integer or null"),
    "member_epoch": (lambda v: v is None or _int(v), "an integer or null"),
    "group_epoch": (lambda v: v is None or _int(v), "an integer or null"),
    "protocol": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "state": (lambda v: v is None or isinstance(v, str), "a string or null"),
    # SyncGroup: the decoded partitions, or the bytes in hex when they are not a ConsumerProtocolAssignment
    "assignment": (lambda v: v is None or isinstance(v, str) or _pairs(v), "null or an array of [topic, partition]"),
}


def read_transcript(transcript: str) -> list[dict[str, Any]]:
    """The transcript's lines (blank lines skipped), each checked to be one of the format's: an answer
    (``request``, ``to``, ``error``), a state line (``state``, or ``group_epoch`` for the consumer protocol) or
    a coordinator event (``event``), each with its time ``at``. Raises :class:`MalformedTranscript` (bad JSON
    too: a :class:`MalformedTranscript` whose message says so)."""
    out = []
    for n, raw in enumerate(transcript.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            raise MalformedTranscript(n, "a '#' comment, which a transcript never holds: is it a script? "
                                         "(the order is SCRIPT TRANSCRIPT)")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise MalformedTranscript(n, f"not JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise MalformedTranscript(n, f"a transcript line must be a JSON object, not {json_type(obj)}")
        kinds = [k for k in ("request", "state", "group_epoch", "event") if k in obj]
        if not kinds:
            if any(k in obj for k in ("send", "advance", "fault", "config", "metadata")):
                raise MalformedTranscript(n, "a script step, not a transcript line: is it a script? "
                                             "(the order is SCRIPT TRANSCRIPT)")
            raise MalformedTranscript(n, "not a transcript line (an answer has 'request', a state line 'state' "
                                         "or 'group_epoch', an event 'event')")
        if not _int(obj.get("at")) or obj["at"] < 0:
            raise MalformedTranscript(n, f"field 'at' must be an integer >= 0, not {json_type(obj.get('at'))}"
                                      if "at" in obj else "missing field 'at'")
        for name in ("to", "error") if "request" in obj else ():
            if name not in obj:
                raise MalformedTranscript(n, f"an answer is missing field '{name}'")
        for name in sorted(set(obj) & set(_FIELDS)):
            test, what = _FIELDS[name]
            if not test(obj[name]):
                raise MalformedTranscript(n, f"field '{name}' must be {what}, not {json_type(obj[name])}")
        if isinstance(obj.get("assignment"), str) and obj.get("request") != "SyncGroup":
            raise MalformedTranscript(n, "field 'assignment' must be null or an array of [topic, partition], not a "
                                         "string (only a SyncGroup answer shows bytes, in hex)")
        members = obj.get("members")
        if members is not None:
            if "group_epoch" in obj:
                ok, what = _consumer_members(members), "an object of members"
            elif "request" in obj:  # LeaveGroup's answer: one entry per member; JoinGroup's: aliases
                ok = isinstance(members, list) and all(m is None or isinstance(m, (str, dict)) for m in members)
                what = "an array"
            else:
                ok, what = isinstance(members, list) and all(m is None or isinstance(m, str) for m in members), \
                    "an array of aliases"
            if not ok:
                raise MalformedTranscript(n, f"field 'members' must be {what}, not {json_type(members)}")
        out.append(obj)
    return out


@dataclass
class SessionCheck:
    lines: int
    replay_ok: bool
    first_difference: dict[str, Any] | None
    trace: Any  # groupspec.trace.TraceResult
    events: list[dict[str, Any]] = field(default_factory=list)
    # consumer protocol: partitions the coordinator's state lines give to two members at once
    # (assigned or pending revocation); None for classic transcripts (their state lines show no assignment)
    holding: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.replay_ok and self.trace.ok and not self.holding

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "transcript_lines": self.lines,
                "replay": {"ok": self.replay_ok, "first_difference": self.first_difference},
                "model": {"ok": self.trace.ok and not self.holding, "events": len(self.events),
                          "check": self.trace.to_dict(), "one_holder_per_partition": self.holding}}


def check_session(script: str, transcript: str, faults: frozenset[str] = frozenset()) -> SessionCheck:
    """Replay ``script`` (with the reference's ``faults``, for mutants only) and compare; check the
    recorded ``transcript`` as a trace against the model. Raises ``ScriptError`` for a malformed script."""
    replayed = run_script(script, faults=faults)
    read_transcript(transcript)  # every line one of the format's (MalformedTranscript)
    recorded = transcript.splitlines()
    diff = None
    for n in range(max(len(replayed), len(recorded))):
        want = replayed[n] if n < len(replayed) else None
        got = recorded[n] if n < len(recorded) else None
        if want != got:
            diff = {"line": n + 1, "recorded": got, "replayed": want}
            break
    deriver = _derive(script, transcript)
    result = check_events(deriver.events, source="transcript", against_model=True)
    holding = deriver.holding if deriver.protocol == "consumer" else None
    return SessionCheck(len(recorded), diff is None, diff, result, deriver.events, holding)


def _config_group(script: str) -> str:
    """The script's configured group (its ``config`` line's ``group_id``; the contract's default ``g``):
    the group of every step without a ``group_id`` of its own, and the one the state lines show."""
    for raw in script.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            obj = json.loads(line)
            if "config" in obj and "at" not in obj:
                return str(obj["config"].get("group_id", "g"))
            break
    return "g"


def _steps(script: str) -> list[dict[str, Any]]:
    out = []
    for raw in script.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        obj = json.loads(line)
        if "config" in obj and "at" not in obj:
            continue
        out.append(obj)
    return out


def transcript_events(script: str, transcript: str) -> list[dict[str, Any]]:
    """The trace the transcript implies (see the module docstring), in time order."""
    return _derive(script, transcript).events


def _derive(script: str, transcript: str) -> "_Deriver":
    steps = _steps(script)
    lines = read_transcript(transcript)
    d = _Deriver(_config_group(script))
    i = 0
    for step in steps:  # each step's answers, then its state line
        d.step(step)
        while i < len(lines):
            line = lines[i]
            i += 1
            if "state" in line or "group_epoch" in line:
                d.state(line)
                break
            d.answer(line)
    return d


class _Deriver:
    """The trace a transcript implies. A session may serve several groups: each member (alias) belongs
    to the group of its requests (a step's ``group_id``, else the configured one), its events carry that
    group, and the trace checker checks each group on its own. The classic state lines show one group
    (the configured one): only its members are compared with them."""

    # an OffsetCommit sent, until its answer: (alias, offsets, generation or member epoch); set on the first one
    pending_commit: tuple[str, list[list[Any]], int | None] | None

    def __init__(self, group: str = "g") -> None:
        self.group = group
        self.group_of: dict[str, str] = {}  # alias -> the group its requests name
        self.events: list[dict[str, Any]] = []
        self.owned: dict[str, set[tuple[str, int]]] = {}
        self.generation: dict[str, int] = {}
        self.up: set[str] = set()
        self.protocol = "eager"
        self.members: set[str] = set()
        self.alias_of: dict[str, str] = {}  # consumer protocol: member id -> alias
        self.left: set[str] = set()
        self.holding: list[dict[str, Any]] = []

    def _ev(self, at: int, member: str, event: str, **fields: Any) -> None:
        self.events.append({"ts_ms": at, "group": self.group_of.get(member, self.group), "member": member,
                            "event": event, **fields})

    def _release(self, at: int, a: str, event: str) -> None:
        parts = sorted(self.owned.get(a, ()))
        if parts:
            self._ev(at, a, event, partitions=[list(p) for p in parts], **self._gen(a))
        self.owned[a] = set()

    def _gen(self, a: str) -> dict[str, Any]:
        g = self.generation.get(a)
        return {} if g is None else {"generation": g, "protocol": self.protocol}

    def _give(self, at: int, a: str, new: set[tuple[str, int]]) -> None:
        old = self.owned.get(a, set())
        if self.protocol == "eager":
            self._ev(at, a, "assigned", partitions=[list(p) for p in sorted(new)], **self._gen(a))
        else:
            if old - new:
                self._ev(at, a, "revoked", partitions=[list(p) for p in sorted(old - new)], **self._gen(a))
            self._ev(at, a, "assigned", partitions=[list(p) for p in sorted(new - old)], **self._gen(a))
        self.owned[a] = set(new)

    def step(self, s: dict[str, Any]) -> None:
        at, a, send = s.get("at", 0), s.get("from"), s.get("send")
        if a is None or send is None:
            return  # advance, fault, metadata, config
        if send in _GROUP_APIS:
            self.group_of[a] = str(s.get("group_id", self.group))
        if a not in self.up:
            self.up.add(a)
            self.left.discard(a)
            self._ev(at, a, "joined")
        if send == "ConsumerGroupHeartbeat":
            self.protocol = "consumer"
            self.alias_of[s.get("member_id", a)] = a
            if s.get("member_epoch") in (-1, -2):
                self._release(at, a, "revoked")
                self._ev(at, a, "left")
                self.up.discard(a)
                self.left.add(a)
        elif send == "JoinGroup" and self.protocol == "eager":
            self._release(at, a, "revoked")  # onJoinPrepare: an eager member gives everything up first
        elif send == "LeaveGroup":
            for x in s.get("members", []):
                mid = x.get("member_id", "")
                who = mid[1:] if mid.startswith("$") and mid != "$self" else a
                self._release(at, who, "revoked")
                self._ev(at, who, "left")
                self.up.discard(who)
                self.left.add(who)
        elif send == "OffsetCommit":
            self.pending_commit = (a, [list(o) for o in s.get("offsets", [])],
                                   s.get("generation", s.get("member_epoch")))

    def answer(self, r: dict[str, Any]) -> None:
        at = r.get("at", 0)
        if r.get("event") == "removed":  # consumer protocol: the coordinator dropped a member
            a = self.alias_of.get(r.get("member", ""), r.get("member", ""))
            if a in self.up:
                self._ev(at, a, "removed")
            return
        a, req, err = r.get("to"), r.get("request"), r.get("error")
        if a is None:
            return
        if err in _LOST:
            self._release(at, a, "lost")
            if req == "JoinGroup" or req == "ConsumerGroupHeartbeat":
                self.generation.pop(a, None)
        elif req == "JoinGroup" and err == "NONE":
            self.generation[a] = r.get("generation", -1)
        elif req == "SyncGroup" and err == "NONE":
            assignment = r.get("assignment")  # hex: bytes that are not a ConsumerProtocolAssignment
            if isinstance(assignment, list):
                self._give(at, a, {(t, p) for t, p in assignment})
        elif req == "ConsumerGroupHeartbeat" and err == "NONE" and a in self.up:
            self.generation[a] = r.get("member_epoch", 0)
            if r.get("assignment") is not None:
                self._give(at, a, {(t, p) for t, p in r["assignment"]})
        pending: tuple[str, list[list[Any]], int | None] | None = getattr(self, "pending_commit", None)
        if req == "OffsetCommit" and pending and pending[0] == a:
            _a, parts, gen = pending
            fields = {} if gen is None else {"generation": gen, "protocol": self.protocol}
            self._ev(at, a, "commit", partitions=parts, accepted=err == "NONE", **fields)
            self.pending_commit = None

    def state(self, line: dict[str, Any]) -> None:
        at = line.get("at", 0)
        if "group_epoch" in line:  # consumer protocol: the model's exclusive ownership, on the coordinator's side
            holder: dict[tuple[str, int], str] = {}
            for mid, m in sorted((line.get("members") or {}).items()):
                for t, p in (m.get("assigned") or []) + (m.get("revoking") or []):
                    other = holder.setdefault((t, p), mid)
                    if other != mid and len(self.holding) < 100:
                        self.holding.append({"at": at, "partition": [t, p],
                                             "members": [self.alias_of.get(other, other), self.alias_of.get(mid, mid)]})
        if "state" in line and line["state"] is not None:  # classic; None: the group is not loaded (failover)
            proto = line.get("protocol") or ""
            if "cooperative" in proto:
                self.protocol = "cooperative"
            members = set(line.get("members") or [])
            for a in sorted(x for x in self.members - members if self.group_of.get(x, self.group) == self.group):
                if a in self.up and self.owned.get(a):
                    self._ev(at, a, "removed")  # dropped without a LeaveGroup of its own (session expiry)
            self.members = members
