"""The classic family's plug-in of the script replay (``replay.py``): a JSON Lines script against the classic
coordinator.

Theory of operation
-------------------
Implements the coordinator-script format (``docs/formats.md``) exactly (plus a few
additive step kinds and fields, listed below). A script is parsed completely first (so a malformed
line anywhere is reported before anything runs, with its line number), then run step by step
against one ``GroupCoordinator``:

* a request step advances virtual time to ``at`` (timers fire on the way) and sends the request from
  connection ``from`` (the alias is the connection id); the coordinator's answers are printed in the
  order it sends them, each stamped with the time it was sent (a timer's deadline for answers that a
  timer released);
* after every step one state line shows the group as the coordinator holds it.

Aliases. Members are named by aliases; the coordinator generates the real ids. ``$self`` / ``$X``
resolve to the member id the coordinator most recently gave that alias: the newest id it generated
for a JoinGroup sent from that alias (handed out with MEMBER_ID_REQUIRED, or with the JoinGroup
answer; an admin may name a parked member by ``$X`` before that answer). In transcripts a member id
is shown as the alias it was generated for; ids the coordinator never generated are shown
literally, ``""`` as ``null``. Resolving ``$X`` for an alias never seen, or one that has not been
given an id yet, is an error of the script.

Payloads. ``metadata`` entries become ``ConsumerProtocolSubscription`` bytes and ``assignments``
entries ``ConsumerProtocolAssignment`` bytes (``reference.classic.consumer_protocol``); equal metadata
fields give equal bytes. The coordinator itself never looks inside them; the transcript decodes
SyncGroup assignments back to ``[[topic, partition], ...]``.

Additions to the contract (the contract allows additive fields and steps):
* request steps may carry ``group_id`` (default: the configured group) and JoinGroup ``client_id``;
  LeaveGroup ``version``; OffsetCommit ``member_id``/``generation`` default to ``""``/``-1``;
* ``"send": "OffsetFetch"`` (optional ``partitions``) answers ``offsets: [[t, p, offset]]``;
  ``"send": "FindCoordinator"`` (optional ``key``) answers ``partition``;
* faults ``"load_start"`` (the partition starts loading: COORDINATOR_LOAD_IN_PROGRESS),
  ``"load_finish"``, and ``"mark_dead"`` (the group is Dead while requests still reach it);
* LeaveGroup answers show ``instance`` for entries that carried an instance id.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Callable, TypeVar

from ..classic import (
    JOIN_GROUP_VERSION, LEAVE_GROUP_VERSION, MAX_OFFSETS_PARTITIONS, Assignment, ConsumerProtocolError, CoordinatorConfig,
    FindCoordinatorRequest, FindCoordinatorResponse, GroupCoordinator, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, MemberIdentity, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, Outbound, Request, Subscription,
    SyncGroupRequest, SyncGroupResponse, decode_assignment, encode_assignment, encode_subscription,
)
from ..errors import Error, ScriptError

__all__ = ["Step", "parse_script", "Replayer", "claims", "run"]

_CONFIG_FIELDS = {
    "initial_rebalance_delay_ms", "group_max_size", "min_session_timeout_ms", "max_session_timeout_ms",
    "offsets_partitions", "group_id", "member_id_seed",
}
_COMMON_REQUEST_FIELDS = {"at", "from", "send", "group_id"}
_REQUEST_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # kind: (required, optional)
    "JoinGroup": ({"member_id"}, {"instance_id", "protocol_type", "protocols", "metadata", "session_timeout_ms",
                                  "rebalance_timeout_ms", "version", "client_id"}),
    "SyncGroup": ({"member_id", "generation"}, {"instance_id", "protocol_name", "protocol_type", "assignments",
                                                "version"}),
    "Heartbeat": ({"member_id", "generation"}, {"instance_id", "version"}),
    "LeaveGroup": ({"members"}, {"version"}),
    "OffsetCommit": ({"offsets"}, {"member_id", "instance_id", "generation", "version"}),
    "OffsetFetch": (set(), {"partitions"}),
    "FindCoordinator": (set(), {"key"}),
}
_FAULTS = {"unload", "load", "load_start", "load_finish", "store_fails", "mark_dead"}
_DEFAULT_SUBSCRIPTION = {"topics": ["t"], "owned": [], "generation": -1}

_R = TypeVar("_R")



@dataclass(frozen=True)
class Step:
    line: int
    kind: str  # "config", "advance", "fault", or a request name
    at: int | None
    body: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------------

def parse_script(text: str) -> list[Step]:
    """Parse and check a whole script (shape only; aliases are checked while running)."""
    steps: list[Step] = []
    last_at = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ScriptError(number, f"bad JSON: {e.msg} (column {e.colno})") from None
        if not isinstance(obj, dict):
            raise ScriptError(number, "a step must be a JSON object")
        step = _parse_step(number, obj, first=not steps)
        if step.at is not None:
            if step.at < last_at:
                raise ScriptError(number, f"'at' goes backwards ({step.at} < {last_at})")
            last_at = step.at
        steps.append(step)
    return steps


def _parse_step(number: int, obj: dict[str, Any], first: bool) -> Step:
    kinds = [k for k in ("send", "advance", "fault", "config") if k in obj]
    if len(kinds) != 1:
        what = "none" if not kinds else ", ".join(kinds)
        raise ScriptError(number, f"a step needs exactly one of 'send', 'advance', 'fault', 'config' (found {what})")
    kind = kinds[0]
    if kind == "config" and first and "at" not in obj:
        _only(number, obj, {"config"})
        _check_config(number, obj["config"])
        return Step(number, "config", None, obj)
    at = _require(number, obj, "at", "step")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise ScriptError(number, f"field 'at' must be an integer >= 0, got {json.dumps(at)}")
    if kind == "config":
        _only(number, obj, {"at", "config"})
        _check_config(number, obj["config"])
        for fixed in ("offsets_partitions", "group_id", "member_id_seed"):
            if fixed in obj["config"]:
                raise ScriptError(number, f"config field '{fixed}' can only be set in the first line")
        return Step(number, "config", at, obj)
    if kind == "advance":
        _only(number, obj, {"at", "advance"})
        if obj["advance"] is not True:
            raise ScriptError(number, "field 'advance' must be true")
        return Step(number, "advance", at, obj)
    if kind == "fault":
        fault = _string(number, obj, "fault")
        if fault not in _FAULTS:
            raise ScriptError(number, f"unknown fault {json.dumps(fault)} (known: {', '.join(sorted(_FAULTS))})")
        if fault == "store_fails":
            _only(number, obj, {"at", "fault", "error"})
            name = _require(number, obj, "error", "store_fails step")
            if not isinstance(name, str) or name not in Error.__members__:
                raise ScriptError(number, f"field 'error' is not a Kafka error name: {json.dumps(name)}")
        else:
            _only(number, obj, {"at", "fault"})
        return Step(number, "fault", at, obj)
    send = _string(number, obj, "send")
    if send not in _REQUEST_FIELDS:
        raise ScriptError(number, f"unknown request {json.dumps(send)} (known: {', '.join(_REQUEST_FIELDS)})")
    required, optional = _REQUEST_FIELDS[send]
    _only(number, obj, _COMMON_REQUEST_FIELDS | required | optional)
    sender = _require(number, obj, "from", f"{send} step")
    if not isinstance(sender, str) or sender == "" or sender.startswith("$"):
        raise ScriptError(number, f"field 'from' must be an alias (a non-empty name without '$'), got {json.dumps(sender)}")
    for name in sorted(required):
        _require(number, obj, name, f"{send} step")
    return Step(number, send, at, obj)


def json_type(value: Any) -> str:
    """What kind of JSON value ``value`` is, in words ("an object", "an array", ...), for messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return "a number"


def _string(number: int, obj: dict[str, Any], name: str) -> str:
    """``obj[name]``, which must be a string (a step kind or a fault name: looked up in a table)."""
    value = obj[name]
    if not isinstance(value, str):
        raise ScriptError(number, f"field '{name}' must be a string, not {json_type(value)}")
    return value


def _require(number: int, obj: dict[str, Any], name: str, what: str) -> Any:
    if name not in obj:
        raise ScriptError(number, f"{what} is missing field '{name}'")
    return obj[name]


def _only(number: int, obj: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise ScriptError(number, f"unknown field '{extra[0]}'")


def _check_config(number: int, cfg: Any) -> None:
    if not isinstance(cfg, dict):
        raise ScriptError(number, "field 'config' must be an object")
    for key, value in cfg.items():
        if key not in _CONFIG_FIELDS:
            raise ScriptError(number, f"unknown config field '{key}'")
        if key == "group_id":
            if not isinstance(value, str):
                raise ScriptError(number, "config field 'group_id' must be a string")
        elif key in ("group_max_size", "member_id_seed"):
            least = 1 if key == "group_max_size" else 0
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
                raise ScriptError(number, f"config field '{key}' must be null or an integer >= {least}")
        elif not isinstance(value, int) or isinstance(value, bool) or value < (1 if key == "offsets_partitions" else 0):
            raise ScriptError(number, f"config field '{key}' must be "
                                      + ("an integer >= 1" if key == "offsets_partitions" else "a non-negative integer"))
        elif key == "offsets_partitions" and value > MAX_OFFSETS_PARTITIONS:  # (2**70 ran out of memory)
            raise ScriptError(number, f"config field 'offsets_partitions' is {value}, more than the "
                                      f"{MAX_OFFSETS_PARTITIONS:,} a script may give (offsets.topic.num.partitions)")


# ---------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------

@dataclass
class Replayer:
    """Runs parsed steps; ``lines`` collects the transcript (JSON strings)."""

    faults: frozenset[str] = frozenset()
    group_id: str = "g"
    coordinator: GroupCoordinator | None = None
    seen: set[str] = field(default_factory=set)  # aliases that have sent something
    lines: list[str] = field(default_factory=list)

    def run(self, steps: Iterable[Step]) -> list[str]:
        for step in steps:
            if self.coordinator is None:
                self._create(step)
                if step.kind == "config" and step.at is None:
                    continue
            self._run_step(step)
        return self.lines

    def _create(self, step: Step) -> None:
        cfg: dict[str, Any] = dict(step.body["config"]) if step.kind == "config" and step.at is None else {}
        self.group_id = cfg.pop("group_id", "g")
        try:
            config = CoordinatorConfig(**cfg)
        except ValueError as e:
            raise ScriptError(step.line, f"bad config: {e}") from None
        self.coordinator = GroupCoordinator(config, faults=self.faults)

    def _run_step(self, step: Step) -> None:
        c = self.coordinator
        assert c is not None and step.at is not None
        at = step.at
        # time passes first: answers released by timers are given before this step's request
        # is built, so "$self" already resolves to an id handed out on the way
        self._emit(c.advance(at))
        out: list[Outbound] = []
        if step.kind == "config":
            try:
                c.set_config(replace(c.config, **step.body["config"]))
            except ValueError as e:
                raise ScriptError(step.line, f"bad config: {e}") from None
        elif step.kind == "fault":
            out = self._fault(step, at)
        elif step.kind != "advance":
            self.seen.add(step.body["from"])
            request = self._request(step)
            out = c.handle(at, step.body["from"], request)
        self._emit(out)
        self.lines.append(_dump(self._state(at)))

    def _emit(self, out: list[Outbound]) -> None:
        for o in out:
            self.lines.append(_dump(self._render(o)))

    def _fault(self, step: Step, at: int) -> list[Outbound]:
        c = self.coordinator
        assert c is not None
        fault = step.body["fault"]
        if fault == "unload":
            return c.unload_group(self.group_id, at)
        if fault == "load":
            return c.load_group(self.group_id, at)
        if fault == "load_start":
            return c.load_group(self.group_id, at, complete=False)
        if fault == "load_finish":
            return c.finish_loading(c.partition_of(self.group_id), at)
        if fault == "mark_dead":
            return c.mark_dead(self.group_id, at)
        c.fail_next_store(Error[step.body["error"]])
        return []

    # ---------------------------------------------------------------- building requests

    def _request(self, step: Step) -> Request:
        b = step.body
        n = step.line
        gid = _typed(n, b, "group_id", str, self.group_id)
        instance = _typed(n, b, "instance_id", (str, type(None)), None)
        kind = step.kind
        if kind == "JoinGroup":
            return self._join(step, gid, instance)
        if kind == "SyncGroup":
            assignments = _typed(n, b, "assignments", dict, {})
            pairs = []
            for alias, parts in assignments.items():
                member_id = self._alias_id(n, alias, "assignments")
                # (a list where Assignment says tuple: encode_assignment only iterates it)
                pairs.append((member_id, encode_assignment(Assignment(_partitions(n, parts, "assignments")))))  # type: ignore[arg-type]
            return self._build(n, SyncGroupRequest, group_id=gid, member_id=self._member(n, b, "member_id", step),
                               generation_id=_typed(n, b, "generation", int, None), assignments=tuple(pairs),
                               group_instance_id=instance,
                               protocol_type=_typed(n, b, "protocol_type", (str, type(None)), "consumer"),
                               protocol_name=_typed(n, b, "protocol_name", (str, type(None)), None),
                               version=_typed(n, b, "version", int, 5))
        if kind == "Heartbeat":
            return self._build(n, HeartbeatRequest, group_id=gid, member_id=self._member(n, b, "member_id", step),
                               generation_id=_typed(n, b, "generation", int, None), group_instance_id=instance,
                               version=_typed(n, b, "version", int, 4))
        if kind == "LeaveGroup":
            members = _typed(n, b, "members", list, None)
            identities = []
            for entry in members:
                if not isinstance(entry, dict):
                    raise ScriptError(n, "each entry of 'members' must be an object")
                _only(n, entry, {"member_id", "instance_id"})
                identities.append(MemberIdentity(self._member(n, entry, "member_id", step),
                                                  _typed(n, entry, "instance_id", (str, type(None)), None)))
            return self._build(n, LeaveGroupRequest, group_id=gid, members=tuple(identities),
                               version=_typed(n, b, "version", int, LEAVE_GROUP_VERSION))
        if kind == "OffsetCommit":
            offsets = _typed(n, b, "offsets", list, None)
            triples = []
            for o in offsets:
                if not (isinstance(o, list) and len(o) == 3 and isinstance(o[0], str)
                        and all(isinstance(x, int) and not isinstance(x, bool) for x in o[1:]) and o[1] >= 0):
                    raise ScriptError(n, f"field 'offsets' entries must be [topic, partition, offset], got {json.dumps(o)}")
                triples.append((o[0], o[1], o[2]))
            member_id = self._member(n, b, "member_id", step) if "member_id" in b else ""
            return self._build(n, OffsetCommitRequest, group_id=gid, offsets=tuple(triples), member_id=member_id,
                               generation_id=_typed(n, b, "generation", int, -1), group_instance_id=instance,
                               version=_typed(n, b, "version", int, 8))
        if kind == "OffsetFetch":
            parts = b.get("partitions")
            wanted = None if parts is None else tuple(_partitions(n, parts, "partitions"))
            return self._build(n, OffsetFetchRequest, group_id=gid, partitions=wanted)
        return self._build(n, FindCoordinatorRequest, key=_typed(n, b, "key", str, gid))

    def _join(self, step: Step, gid: str, instance: str | None) -> JoinGroupRequest:
        b, n = step.body, step.line
        protocols = _typed(n, b, "protocols", list, ["range"])
        if not all(isinstance(p, str) for p in protocols):
            raise ScriptError(n, "field 'protocols' must be a list of protocol names")
        metadata = _typed(n, b, "metadata", dict, {})
        for name in metadata:
            if name not in protocols:
                raise ScriptError(n, f"field 'metadata' names protocol '{name}' that is not in 'protocols'")
        pairs = tuple((p, _subscription(n, metadata.get(p, _DEFAULT_SUBSCRIPTION))) for p in protocols)
        return self._build(n, JoinGroupRequest, group_id=gid, member_id=self._member(n, b, "member_id", step),
                           protocol_type=_typed(n, b, "protocol_type", str, "consumer"), protocols=pairs,
                           session_timeout_ms=_typed(n, b, "session_timeout_ms", int, 10000),
                           rebalance_timeout_ms=_typed(n, b, "rebalance_timeout_ms", int, 60000),
                           group_instance_id=instance, version=_typed(n, b, "version", int, JOIN_GROUP_VERSION),
                           client_id=_typed(n, b, "client_id", str, "consumer"))

    @staticmethod
    def _build(n: int, cls: Callable[..., _R], **kwargs: Any) -> _R:
        try:
            return cls(**kwargs)
        except ValueError as e:
            raise ScriptError(n, str(e)) from None

    def _member(self, n: int, obj: dict[str, Any], name: str, step: Step) -> str:
        value = obj.get(name)
        if not isinstance(value, str):
            raise ScriptError(n, f"field '{name}' must be a string (\"\", \"$self\", \"$X\" or an id)")
        if value == "$self":
            return self._alias_id(n, step.body["from"], name)
        if value.startswith("$"):
            return self._alias_id(n, value[1:], name)
        return value

    def _alias_id(self, n: int, alias: str, where: str) -> str:
        if alias.startswith("$"):
            alias = alias[1:]
        if alias not in self.seen:
            raise ScriptError(n, f"unknown alias '{alias}' in '{where}'")
        assert self.coordinator is not None
        latest = None
        for member_id, owner in self.coordinator.id_owner.items():
            if owner == alias:
                latest = member_id
        if latest is None:
            raise ScriptError(n, f"alias '{alias}' (in '{where}') has not been given a member id yet")
        return latest

    # ---------------------------------------------------------------- rendering

    def _alias(self, member_id: str | None) -> str | None:
        if not member_id:
            return None
        assert self.coordinator is not None
        owner = self.coordinator.id_owner.get(member_id)
        return str(owner) if owner is not None else member_id

    def _render(self, o: Outbound) -> dict[str, Any]:
        r = o.response
        head: dict[str, Any] = {"at": o.at_ms, "to": str(o.destination)}
        if isinstance(r, JoinGroupResponse):
            return {**head, "request": "JoinGroup", "error": r.error.name, "member": self._alias(r.member_id),
                    "generation": r.generation_id, "leader": self._alias(r.leader), "protocol": r.protocol_name,
                    "members": [self._alias(m.member_id) for m in r.members], "skip_assignment": r.skip_assignment}
        if isinstance(r, SyncGroupResponse):
            return {**head, "request": "SyncGroup", "error": r.error.name, "assignment": _decode(r.assignment)}
        if isinstance(r, HeartbeatResponse):
            return {**head, "request": "Heartbeat", "error": r.error.name}
        if isinstance(r, LeaveGroupResponse):
            members = []
            for m in r.members:
                entry: dict[str, Any] = {"member": self._alias(m.member_id)}
                if m.group_instance_id is not None:
                    entry["instance"] = m.group_instance_id
                entry["error"] = m.error.name
                members.append(entry)
            return {**head, "request": "LeaveGroup", "error": r.error.name, "members": members}
        if isinstance(r, OffsetCommitResponse):
            return {**head, "request": "OffsetCommit", "error": r.error.name}
        if isinstance(r, OffsetFetchResponse):
            return {**head, "request": "OffsetFetch", "error": r.error.name,
                    "offsets": [[t, p, off] for t, p, off, _ in r.offsets]}
        assert isinstance(r, FindCoordinatorResponse)
        return {**head, "request": "FindCoordinator", "error": r.error.name, "partition": r.partition}

    def _state(self, at: int) -> dict[str, Any]:
        assert self.coordinator is not None
        view = self.coordinator.group(self.group_id)
        if view is None:
            return {"at": at, "state": None, "generation": None, "leader": None, "protocol": None,
                    "members": [], "pending": [], "static": {}}
        return {"at": at, "state": view.status.value, "generation": view.generation,
                "leader": self._alias(view.leader), "protocol": view.protocol_name,
                "members": [self._alias(m) for m in view.member_ids],
                "pending": [self._alias(m) for m in view.pending],
                "static": {inst: self._alias(mid) for inst, mid in view.static}}


def _typed(n: int, obj: dict[str, Any], name: str, types: Any, default: Any) -> Any:
    if name not in obj:
        if default is None and types is not None and not (isinstance(types, tuple) and type(None) in types):
            raise ScriptError(n, f"missing field '{name}'")
        return default
    value = obj[name]
    bad_bool = isinstance(value, bool) and types is int
    if bad_bool or not isinstance(value, types):
        raise ScriptError(n, f"field '{name}' has the wrong type: {json.dumps(value)}")
    return value


def _partitions(n: int, parts: Any, where: str) -> list[tuple[str, int]]:
    if not isinstance(parts, list):
        raise ScriptError(n, f"field '{where}' must list [topic, partition] pairs")
    out = []
    for p in parts:
        if not (isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)
                and not isinstance(p[1], bool) and p[1] >= 0):
            raise ScriptError(n, f"field '{where}' entries must be [topic, partition], got {json.dumps(p)}")
        out.append((p[0], p[1]))
    return out


def _subscription(n: int, spec: Any) -> bytes:
    if not isinstance(spec, dict):
        raise ScriptError(n, "each 'metadata' entry must be an object {topics, owned, generation}")
    _only(n, spec, {"topics", "owned", "generation", "user_data", "rack"})
    topics = spec.get("topics", ["t"])
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise ScriptError(n, "field 'metadata.topics' must be a list of topic names")
    owned = _partitions(n, spec.get("owned", []), "metadata.owned")
    generation = spec.get("generation", -1)
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise ScriptError(n, "field 'metadata.generation' must be an integer")
    user_data = spec.get("user_data")
    rack = spec.get("rack")
    if user_data is not None and not isinstance(user_data, str):
        raise ScriptError(n, "field 'metadata.user_data' must be a string")
    if rack is not None and not isinstance(rack, str):
        raise ScriptError(n, "field 'metadata.rack' must be a string")
    sub = Subscription(tuple(sorted(topics)), user_data.encode() if user_data is not None else None,
                       tuple(owned), generation, rack)
    return encode_subscription(sub)


def _decode(data: bytes) -> Any:
    if not data:
        return []
    try:
        return [[t, p] for t, p in decode_assignment(data).partitions]
    except ConsumerProtocolError:
        return data.hex()


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


def claims(text: str) -> bool:
    """Every script is the classic family's unless another family claims it (the driver asks it last)."""
    return True


def run(text: str, faults: Iterable[str] = frozenset()) -> list[str]:
    """Parse and run a whole classic script; returns the transcript lines. Raises ``ScriptError``; a fault
    switch the classic coordinator does not know is a ``ValueError`` (``FAULTS`` lists them)."""
    steps = parse_script(text)
    return Replayer(faults=frozenset(faults)).run(steps)
