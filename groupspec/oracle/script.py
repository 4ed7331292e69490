"""A coordinator script run through Kafka's own coordinator (the oracle), transcribed as the reference transcribes it.

The script is parsed and its requests are built by the reference's own script reader (``reference.sim.replay_classic``: the
same aliases, defaults, payload bytes), then each request is sent to the oracle instead of the reference
coordinator. Aliases resolve against the ids *Kafka* handed out: ``$X`` is the newest id Kafka gave a JoinGroup
sent from X, and in the transcript an id is shown as the alias it was given to, so two coordinators that generate
different ids (Kafka: ``<client.id>-<UUID>``) still give comparable transcripts ("member ids up to renaming").

Steps the oracle cannot take are transcribed as ``{"at": T, "unsupported": WHY}`` (the comparison explains them):
``FindCoordinator`` (a broker-level lookup, not the coordinator shard's), the fault ``mark_dead`` (no request makes a
loaded Kafka group Dead) and a configuration change mid-script (Kafka reads the group settings once, at start-up).
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from groupspec.reference.classic import ConsumerProtocolError, decode_assignment
from groupspec.reference.classic import (
    HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest, OffsetFetchRequest,
    SyncGroupRequest,
)
from groupspec.reference.sim import Replayer, ScriptError, Step, parse_script

from .process import KafkaOracle

__all__ = ["KafkaScriptRunner", "run_script_on_kafka", "UNSUPPORTED"]

#: steps the oracle cannot take, and why (shown in the comparison; docs/conformance.md)
UNSUPPORTED = {
    "FindCoordinator": "FindCoordinator is answered by the broker (KafkaApis), not by the coordinator shard",
    "mark_dead": "no request makes a loaded Kafka group Dead; the fault has no counterpart in Kafka's shard",
    "config": "Kafka reads group.* settings once at start-up; a change mid-script has no counterpart",
}


class KafkaScriptRunner(Replayer):
    """``reference.sim.replay_classic.Replayer``'s script reading, with Kafka's coordinator answering."""

    lines: list[str]  # (Replayer's) the transcript written so far

    def __init__(self, oracle: KafkaOracle) -> None:
        super().__init__()
        self.oracle = oracle
        self.id_owner: dict[str, str] = {}
        self.started = False
        self.store_armed = False
        self.store_consumed: list[int] = []   # script lines whose step made the armed store failure happen

    # ---------------------------------------------------------------- running
    def run(self, steps: Iterable[Step]) -> list[str]:
        for step in steps:
            if not self.started:
                self._start(step)
                if step.kind == "config" and step.at is None:
                    continue
            self._step(step)
        return self.lines

    def _start(self, step: Step) -> None:
        cfg: dict[str, Any] = dict(step.body["config"]) if step.kind == "config" and step.at is None else {}
        self.group_id = cfg.pop("group_id", "g")
        if cfg.get("group_max_size") is None:
            cfg.pop("group_max_size", None)
        self.oracle.reset(cfg)
        self.started = True

    def _step(self, step: Step) -> None:
        assert step.at is not None
        at = step.at
        base: dict[str, Any] = {"at": at, "group_id": self.group_id, "state_group": self.group_id}
        if step.kind == "config":
            self.lines.append(json.dumps({"at": at, "unsupported": "config"}))
            answer = self.oracle.send({**base, "op": "advance"})
        elif step.kind == "fault":
            fault = step.body["fault"]
            if fault == "mark_dead":
                self.lines.append(json.dumps({"at": at, "unsupported": "mark_dead"}))
                answer = self.oracle.send({**base, "op": "advance"})
            else:
                answer = self.oracle.send({**base, "op": fault, **({"error": step.body["error"]} if fault == "store_fails" else {})})
        elif step.kind == "advance":
            answer = self.oracle.send({**base, "op": "advance"})
        elif step.kind == "FindCoordinator":
            self.seen.add(step.body["from"])
            self.lines.append(json.dumps({"at": at, "to": step.body["from"], "unsupported": "FindCoordinator"}))
            answer = self.oracle.send({**base, "op": "advance"})
        else:
            # timers due before `at` fire first, so `$self` resolves to an id they handed out
            pre = self.oracle.send({**base, "op": "advance"})
            self._emit_kafka(pre["responses"])
            self.seen.add(step.body["from"])
            request = self._request(step)
            answer = self.oracle.send({**base, **_op(request), "conn": step.body["from"], "state_group": self.group_id})
            self._claim_new_ids(answer, step.body["from"])
        self._emit_kafka(answer["responses"])
        self.lines.append(json.dumps(self._kafka_state(at, answer["state"])))
        armed = bool(answer["state"].get("store_armed"))
        if self.store_armed and not armed:
            self.store_consumed.append(step.line)
        self.store_armed = armed

    # ---------------------------------------------------------------- aliases
    def _alias_id(self, n: int, alias: str, where: str) -> str:
        if alias.startswith("$"):
            alias = alias[1:]
        if alias not in self.seen:
            raise ScriptError(n, f"unknown alias '{alias}' in '{where}'")
        latest = None
        for member_id, owner in self.id_owner.items():
            if owner == alias:
                latest = member_id
        if latest is None:  # the reference gave this alias an id where Kafka did not: Kafka answers for itself
            return f"<no id from Kafka for {alias}>"
        return latest

    def _claim_new_ids(self, answer: dict[str, Any], sender: str) -> None:
        """Ids Kafka generated for this request but has not answered yet (a parked JoinGroup) belong to the sender,
        as in the reference (an admin may name a parked member by ``$X``)."""
        s = answer.get("state", {})
        for member_id in [*s.get("members", []), *s.get("pending", [])]:
            if member_id not in self.id_owner:
                self.id_owner[member_id] = sender

    def _alias(self, member_id: str | None) -> str | None:
        if not member_id:
            return None
        return self.id_owner.get(member_id, member_id)

    # ---------------------------------------------------------------- rendering
    def _emit_kafka(self, responses: list[dict[str, Any]]) -> None:
        for r in responses:
            if (r["request"] == "JoinGroup" and r.get("member_id") and r["member_id"] not in self.id_owner
                    and r["error"] in ("NONE", "MEMBER_ID_REQUIRED")):
                self.id_owner[r["member_id"]] = r["conn"]
            self.lines.append(json.dumps(self._render_kafka(r)))

    def _render_kafka(self, r: dict[str, Any]) -> dict[str, Any]:
        head = {"at": r["at"], "to": r["conn"], "request": r["request"], "error": r["error"]}
        kind = r["request"]
        if kind == "JoinGroup":
            return {**head, "member": self._alias(r.get("member_id")), "generation": r["generation"],
                    "leader": self._alias(r.get("leader")), "protocol": r.get("protocol") or None,
                    "members": [self._alias(m) for m in r["members"]], "skip_assignment": r["skip_assignment"]}
        if kind == "SyncGroup":
            return {**head, "assignment": _decode_hex(r.get("assignment") or "")}
        if kind == "LeaveGroup" and r.get("version", 5) < 3:
            # LeaveGroup v0-2 carry one error and no member list (LeaveGroupResponse at those versions)
            error = r["error"]
            if error == "NONE":
                error = next((m["error"] for m in r["members"] if m["error"] != "NONE"), "NONE")
            return {**head, "error": error, "members": []}
        if kind == "LeaveGroup":
            members = []
            for m in r["members"]:
                entry: dict[str, Any] = {"member": self._alias(m.get("member_id"))}
                if m.get("instance_id") is not None:
                    entry["instance"] = m["instance_id"]
                entry["error"] = m["error"]
                members.append(entry)
            return {**head, "members": members}
        if kind == "OffsetFetch":
            return {**head, "offsets": r["offsets"]}
        return head

    def _kafka_state(self, at: int, s: dict[str, Any]) -> dict[str, Any]:
        if s.get("type") != "classic":
            return {"at": at, "state": None if s.get("type") in (None, "unloaded") else s.get("state"),
                    "generation": None, "leader": None, "protocol": None, "members": [], "pending": [], "static": {}}
        return {"at": at, "state": s["state"], "generation": s["generation"], "leader": self._alias(s.get("leader")),
                "protocol": s.get("protocol"), "members": [self._alias(m) for m in s["members"]],
                "pending": [self._alias(m) for m in s["pending"]],
                "static": {i: self._alias(m) for i, m in sorted(s["static"].items())}}


def _op(request: Any) -> dict[str, Any]:
    """A reference request object as an oracle op (payload bytes as hex)."""
    if isinstance(request, JoinGroupRequest):
        return {"op": "JoinGroup", "group_id": request.group_id, "member_id": request.member_id,
                "instance_id": request.group_instance_id, "protocol_type": request.protocol_type,
                "protocols": [[name, data.hex()] for name, data in request.protocols],
                "session_timeout_ms": request.session_timeout_ms, "rebalance_timeout_ms": request.rebalance_timeout_ms,
                "version": request.version, "client_id": request.client_id}
    if isinstance(request, SyncGroupRequest):
        return {"op": "SyncGroup", "group_id": request.group_id, "member_id": request.member_id,
                "instance_id": request.group_instance_id, "generation": request.generation_id,
                "protocol_type": request.protocol_type, "protocol_name": request.protocol_name,
                "assignments": [[m, data.hex()] for m, data in request.assignments], "version": request.version}
    if isinstance(request, HeartbeatRequest):
        return {"op": "Heartbeat", "group_id": request.group_id, "member_id": request.member_id,
                "instance_id": request.group_instance_id, "generation": request.generation_id,
                "version": request.version}
    if isinstance(request, LeaveGroupRequest):
        return {"op": "LeaveGroup", "group_id": request.group_id, "version": request.version,
                "members": [[m.member_id, m.group_instance_id] for m in request.members]}
    if isinstance(request, OffsetCommitRequest):
        return {"op": "OffsetCommit", "group_id": request.group_id, "member_id": request.member_id,
                "instance_id": request.group_instance_id, "generation": request.generation_id,
                "offsets": [list(o) for o in request.offsets], "version": request.version}
    if isinstance(request, OffsetFetchRequest):
        return {"op": "OffsetFetch", "group_id": request.group_id,
                "partitions": None if request.partitions is None else [list(p) for p in request.partitions]}
    raise TypeError(f"no oracle op for {type(request).__name__}")


def _decode_hex(data: str) -> Any:
    if not data:
        return []
    raw = bytes.fromhex(data)
    try:
        return [[t, p] for t, p in decode_assignment(raw).partitions]
    except ConsumerProtocolError:
        return raw.hex()


def run_script_on_kafka(text: str, oracle: KafkaOracle) -> list[str]:
    """Parse a classic coordinator script and run it through Kafka's coordinator; the transcript lines."""
    return KafkaScriptRunner(oracle).run(parse_script(text))
