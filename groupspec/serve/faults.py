"""Fault injection for ``groupspec serve``: scriptable, deterministic rules.

A fault plan is a list of rules, each ``{"on": TRIGGER, "do": ACTION, ...}``; the same rules come
from the command line (``--fault JSON``, repeatable), from a script file (``--fault-script FILE``,
JSON Lines, ``#`` comments) or from Python (``FaultPlan.parse_rule`` / ``Server.inject``).

Triggers (``on``):
* ``{"api": "Heartbeat", "nth": 3, "count": 1, "client": "c1", "group": "g"}``: the ``nth``
  request of that API (counted from 1, in arrival order, among requests passing the optional
  ``client`` (client.id prefix) and ``group`` filters), and the ``count - 1`` matching requests
  after it (``count`` 0: every one from the ``nth`` on). ``api`` may be ``"*"``.
* ``{"at_ms": 8000}``: once the server's clock (ms since start) reaches 8000.

Actions on the matched request (the coordinator still handles it, except for ``error``):
* ``"error"`` with ``"error": "REBALANCE_IN_PROGRESS"`` (any Kafka error name): the server answers
  with that error instead of passing the request to the coordinator;
* ``"delay"`` with ``"ms": 500``: the answer leaves ``ms`` later;
* ``"drop"``: the coordinator handles the request but its answer is never sent.

Actions on the server (run right after the matched request was handled, or at ``at_ms``):
* ``"failover"`` (optional ``"load_ms"``, default 0): the coordinator moves to the next broker; the
  old one answers NOT_COORDINATOR, the new one COORDINATOR_LOAD_IN_PROGRESS for ``load_ms``, then
  it has loaded the groups from the log (failover as the coordinator-script ``unload``/``load``);
* ``"expire_session"`` (optional ``"client"``; default: the member that sent the matched request):
  that member's heartbeats are lost on the way (the server answers them NONE and never passes
  them on) until the coordinator expires its session;
* ``"pause_clock"`` with ``"ms"``: the coordinator's clock stands still for ``ms`` of real time
  (no timer fires; requests are handled at the frozen time).

Rules are checked in the order given; every rule acts on its own matches (two rules may both act
on one request: the first request action wins, every server action runs).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from groupspec.reference.errors import Error
from groupspec.reference.sim import json_type

from .wire import API_NAMES

__all__ = ["FaultError", "Rule", "FaultPlan", "REQUEST_ACTIONS", "SERVER_ACTIONS"]

REQUEST_ACTIONS = frozenset({"error", "delay", "drop"})
SERVER_ACTIONS = frozenset({"failover", "expire_session", "pause_clock"})
_APIS = set(API_NAMES.values()) | {"*"}


class FaultError(ValueError):
    """A malformed fault rule; ``str()`` names the field (and the line, for files)."""


@dataclass(frozen=True)
class Rule:
    action: str
    api: str | None = None
    nth: int = 1
    count: int = 1
    client: str | None = None
    group: str | None = None
    at_ms: int | None = None
    error: str | None = None
    ms: int = 0
    load_ms: int = 0
    target_client: str | None = None

    def to_dict(self) -> dict[str, Any]:
        on: dict[str, Any] = {"at_ms": self.at_ms} if self.at_ms is not None else {"api": self.api, "nth": self.nth, "count": self.count}
        if self.client is not None:
            on["client"] = self.client
        if self.group is not None:
            on["group"] = self.group
        out: dict[str, Any] = {"on": on, "do": self.action}
        if self.error is not None:
            out["error"] = self.error
        if self.action in ("delay", "pause_clock"):
            out["ms"] = self.ms
        if self.action == "failover":
            out["load_ms"] = self.load_ms
        if self.target_client is not None:
            out["client"] = self.target_client
        return out


def _name(obj: dict[str, Any], name: str, where: str = "") -> Any:
    """``obj[name]`` if it is absent or a string (a name looked up in a table), else a ``FaultError``."""
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise FaultError(f"field '{where}{name}' must be a string, not {json_type(value)}")
    return value


def _int(obj: dict[str, Any], name: str, default: int, minimum: int) -> int:
    value = obj.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise FaultError(f"field '{name}' must be an integer >= {minimum}, got {json.dumps(value)}")
    return value


def _opt_str(obj: dict[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise FaultError(f"field '{name}' must be a string, got {json.dumps(value)}")
    return value


@dataclass
class FaultPlan:
    rules: list[Rule] = field(default_factory=list)
    # per rule: how many matching requests it has seen
    seen: list[int] = field(default_factory=list)
    fired_at: list[bool] = field(default_factory=list)

    def add(self, rule: Rule) -> None:
        self.rules.append(rule)
        self.seen.append(0)
        self.fired_at.append(False)

    @staticmethod
    def parse_rule(obj: Any) -> Rule:
        if not isinstance(obj, dict):
            raise FaultError("a fault rule must be a JSON object {\"on\": ..., \"do\": ...}")
        extra = sorted(set(obj) - {"on", "do", "error", "ms", "load_ms", "client"})
        if extra:
            raise FaultError(f"unknown field '{extra[0]}'")
        action = _name(obj, "do")
        if action not in REQUEST_ACTIONS | SERVER_ACTIONS:
            raise FaultError(f"field 'do' must be one of {', '.join(sorted(REQUEST_ACTIONS | SERVER_ACTIONS))}, got {json.dumps(action)}")
        on = obj.get("on")
        if not isinstance(on, dict):
            raise FaultError("field 'on' must be an object ({\"api\": ..., \"nth\": ...} or {\"at_ms\": ...})")
        extra = sorted(set(on) - {"api", "nth", "count", "client", "group", "at_ms"})
        if extra:
            raise FaultError(f"unknown field 'on.{extra[0]}'")
        at_ms = None
        api = None
        if "at_ms" in on:
            if "api" in on:
                raise FaultError("field 'on' takes either 'at_ms' or 'api', not both")
            at_ms = _int(on, "at_ms", 0, 0)
            if action in REQUEST_ACTIONS:
                raise FaultError(f"action '{action}' acts on a request: it needs 'on.api', not 'on.at_ms'")
        else:
            api = _name(on, "api", "on.")
            if api not in _APIS:
                raise FaultError(f"field 'on.api' must be an API name ({', '.join(sorted(_APIS))}), got {json.dumps(api)}")
        error = None
        if action == "error":
            error = _name(obj, "error")
            if not isinstance(error, str) or error not in Error.__members__:
                raise FaultError(f"field 'error' must be a Kafka error name, got {json.dumps(error)}")
        elif "error" in obj:
            raise FaultError("field 'error' is only for action 'error'")
        if action in ("delay", "pause_clock") and "ms" not in obj:
            raise FaultError(f"action '{action}' needs field 'ms'")
        return Rule(action=action, api=api, nth=_int(on, "nth", 1, 1), count=_int(on, "count", 1, 0),
                    client=_opt_str(on, "client"), group=_opt_str(on, "group"), at_ms=at_ms, error=error,
                    ms=_int(obj, "ms", 0, 0), load_ms=_int(obj, "load_ms", 0, 0),
                    target_client=_opt_str(obj, "client"))

    @classmethod
    def parse_lines(cls, text: str, source: str = "fault script") -> "FaultPlan":
        plan = cls()
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise FaultError(f"{source}: line {number}: bad JSON: {e.msg} (column {e.colno})") from None
            try:
                plan.add(cls.parse_rule(obj))
            except FaultError as e:
                raise FaultError(f"{source}: line {number}: {e}") from None
        return plan

    # ------------------------------------------------------------------ matching

    def match(self, api: str, client: str | None, group: str | None) -> list[Rule]:
        """The rules that act on this request (counting it for every rule whose filters it passes)."""
        hits = []
        for i, rule in enumerate(self.rules):
            if rule.at_ms is not None:
                continue
            if rule.api != "*" and rule.api != api:
                continue
            if rule.client is not None and not (client or "").startswith(rule.client):
                continue
            if rule.group is not None and rule.group != group:
                continue
            self.seen[i] += 1
            n = self.seen[i]
            if n >= rule.nth and (rule.count == 0 or n < rule.nth + rule.count):
                hits.append(rule)
        return hits

    def due(self, now_ms: int) -> list[Rule]:
        """Timed rules whose time has come (each fires once)."""
        out = []
        for i, rule in enumerate(self.rules):
            if rule.at_ms is not None and not self.fired_at[i] and now_ms >= rule.at_ms:
                self.fired_at[i] = True
                out.append(rule)
        return out

    def next_due(self) -> int | None:
        pending = [r.at_ms for i, r in enumerate(self.rules) if r.at_ms is not None and not self.fired_at[i]]
        return min(pending) if pending else None
