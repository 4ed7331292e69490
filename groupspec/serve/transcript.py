"""Recording a served session as a coordinator script and its transcript.

Everything the reference coordinator was asked while serving real clients is written down twice,
in the formats of the coordinator-script contract (``groupspec coordinator replay``):

* ``script``: one step per request the coordinator handled (JoinGroup, SyncGroup, Heartbeat,
  LeaveGroup, OffsetCommit, OffsetFetch, with the client's own versions, timeouts, client id and
  subscription), ``advance`` steps for moments when the coordinator's timers released answers,
  ``unload``/``load``/``load_start``/``load_finish`` fault steps for failovers. Answers the server
  gave without asking the coordinator (injected errors, NOT_COORDINATOR from a node that is not
  the coordinator, lost heartbeats) are ``#`` comment lines, which replay ignores.
* ``transcript``: the coordinator's answers and a state line after each step, rendered exactly as
  ``groupspec coordinator replay`` renders them.

Replaying the script gives the transcript back, byte for byte (a test checks it). Member ids are
written as ``$alias`` when the id is the newest the alias was given, literally otherwise (the
replayed coordinator generates the same ids: it gets the same requests in the same order, with
the same client ids, and the config line carries the server's ``member_id_seed``). Subscriptions are decoded and written as ``metadata`` objects (topics, owned
partitions, generation, rack; assignor user data as ``hex:...``), so two JoinGroups with equal
metadata bytes replay with equal bytes. State lines show one group: ``group_id`` (the
``--record-group``, else the first group that sent a group request).
"""
from __future__ import annotations

import json
from typing import Any

from groupspec.reference.classic import ConsumerProtocolError, decode_assignment, decode_subscription
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator, Outbound
from groupspec.reference import messages as m
from groupspec.reference.sim import Replayer

__all__ = ["Recorder"]


class Recorder:
    def __init__(self, coordinator: GroupCoordinator, config: CoordinatorConfig, group_id: str | None) -> None:
        self.coordinator = coordinator
        self.config = config
        self.group_id = group_id
        self.script: list[str] = []
        self.transcript: list[str] = []
        self._renderer = Replayer(coordinator=coordinator)
        self._started = False

    def _start(self, group_id: str | None) -> None:
        if self._started:
            return
        self._started = True
        if self.group_id is None:
            self.group_id = group_id or "g"
        self._renderer.group_id = self.group_id
        c = self.config
        self.script.insert(0, json.dumps({"config": {
            "initial_rebalance_delay_ms": c.initial_rebalance_delay_ms, "group_max_size": c.group_max_size,
            "min_session_timeout_ms": c.min_session_timeout_ms, "max_session_timeout_ms": c.max_session_timeout_ms,
            "offsets_partitions": c.offsets_partitions, "group_id": self.group_id,
            "member_id_seed": c.member_id_seed}}))

    # ------------------------------------------------------------------ steps

    def request(self, at: int, alias: str, name: str, req: Any, out1: list[Outbound], out2: list[Outbound]) -> None:
        self._start(getattr(req, "group_id", None))
        self.script.append(json.dumps(self._step(at, alias, name, req)))
        self._answers(out1 + out2)
        self._state(at)

    def advance(self, at: int, out: list[Outbound]) -> None:
        self._start(None)
        self.script.append(json.dumps({"at": at, "advance": True}))
        self._answers(out)
        self._state(at)

    def fault(self, at: int, fault: str, out: list[Outbound]) -> None:
        self._start(None)
        self.script.append(json.dumps({"at": at, "fault": fault}))
        self._answers(out)
        self._state(at)

    def comment(self, obj: dict[str, Any]) -> None:
        self.script.append("# " + json.dumps(obj))

    def _answers(self, out: list[Outbound]) -> None:
        for o in out:
            self.transcript.append(json.dumps(self._renderer._render(o)))

    def _state(self, at: int) -> None:
        self.transcript.append(json.dumps(self._renderer._state(at)))

    # ------------------------------------------------------------------ rendering requests

    def _ref(self, member_id: str) -> str:
        """``$alias`` for the newest id of an alias, the literal id otherwise."""
        owner = self.coordinator.id_owner.get(member_id)
        if owner is None:
            return member_id
        latest = None
        for mid, alias in self.coordinator.id_owner.items():
            if alias == owner:
                latest = mid
        return f"${owner}" if latest == member_id else member_id

    def _step(self, at: int, alias: str, name: str, req: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"at": at, "from": alias, "send": name}
        if req.group_id != self.group_id:
            step["group_id"] = req.group_id
        if isinstance(req, m.JoinGroupRequest):
            step.update(member_id=self._ref(req.member_id), instance_id=req.group_instance_id,
                        protocol_type=req.protocol_type, protocols=[p for p, _ in req.protocols],
                        metadata={p: _subscription(data) for p, data in req.protocols},
                        session_timeout_ms=req.session_timeout_ms, rebalance_timeout_ms=req.rebalance_timeout_ms,
                        version=req.version, client_id=req.client_id)
        elif isinstance(req, m.SyncGroupRequest):
            assignments = {}
            for mid, data in req.assignments:
                owner = self.coordinator.id_owner.get(mid)
                assignments[str(owner) if owner is not None else mid] = _assignment(data)
            step.update(member_id=self._ref(req.member_id), instance_id=req.group_instance_id,
                        generation=req.generation_id, protocol_type=req.protocol_type,
                        protocol_name=req.protocol_name, assignments=assignments, version=req.version)
        elif isinstance(req, m.HeartbeatRequest):
            step.update(member_id=self._ref(req.member_id), instance_id=req.group_instance_id,
                        generation=req.generation_id, version=req.version)
        elif isinstance(req, m.LeaveGroupRequest):
            step.update(members=[{"member_id": self._ref(x.member_id), "instance_id": x.group_instance_id}
                                 for x in req.members], version=req.version)
        elif isinstance(req, m.OffsetCommitRequest):
            step.update(member_id=self._ref(req.member_id), instance_id=req.group_instance_id,
                        generation=req.generation_id, offsets=[list(o) for o in req.offsets], version=req.version)
        elif isinstance(req, m.OffsetFetchRequest):
            if req.partitions is not None:
                step["partitions"] = [list(p) for p in req.partitions]
        return step

    # ------------------------------------------------------------------ output

    def script_text(self) -> str:
        return "".join(line + "\n" for line in self.script)

    def transcript_text(self) -> str:
        return "".join(line + "\n" for line in self.transcript)


def _subscription(data: bytes) -> dict[str, Any]:
    try:
        sub = decode_subscription(data)
    except ConsumerProtocolError:
        return {"topics": [], "user_data": "raw:" + data.hex()}
    out: dict[str, Any] = {"topics": sorted(sub.topics), "owned": [list(p) for p in sub.owned_partitions],
                           "generation": sub.generation_id}
    if sub.user_data is not None:
        out["user_data"] = "hex:" + sub.user_data.hex()
    if sub.rack_id is not None:
        out["rack"] = sub.rack_id
    return out


def _assignment(data: bytes) -> list[list[Any]]:
    if not data:
        return []
    try:
        return [[t, p] for t, p in decode_assignment(data).partitions]
    except ConsumerProtocolError:
        return []
