"""Consumer-protocol (KIP-848) scripts through Kafka's coordinator, compared with the reference's
``ConsumerGroupCoordinator`` (``reference.sim.replay_consumer``).

The transcript has the reference's consumer format (answers, ``removed`` events, a state line after every
step). Kafka's coordinator is configured from the script's config line (``topics``, ``session_timeout_ms``,
``heartbeat_interval_ms``, ``assignor``) and, as the reference does, computes a new target assignment at once
(``group.consumer.assignment.interval.ms=0``, no offloading to a background thread): the reference does not
model Kafka 4.3's assignment batching (at most one new target assignment a second by default).
A ``metadata`` step (partitions added) has no counterpart in the oracle and ends the comparison.
"""
from __future__ import annotations

import json
from typing import Any

from .abstractions import diverges, explain
from .compare import Comparison, Difference, step_chunks_consumer
from .process import KafkaOracle

__all__ = ["run_consumer_script_on_kafka", "compare_consumer_script"]


def parse_steps(text: str) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    cfg: dict[str, Any] = {}
    steps: list[tuple[int, dict[str, Any]]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        obj = json.loads(line)
        if not steps and not cfg and "config" in obj and "at" not in obj:
            cfg = obj["config"]
            continue
        steps.append((n, obj))
    return cfg, steps


def _pairs(items: Any) -> Any:
    if items is None:
        return None
    return sorted([t, p] for t, p in items)


def _shift(epoch: int, by: int) -> int:
    """Kafka 4.3.1 starts a new consumer group at group epoch 1 (ModernGroup), the reference at 0: a positive
    epoch of the reference is Kafka's minus one (the ``epoch-origin`` abstraction)."""
    return epoch + by if epoch > 0 else epoch


class ConsumerPair:
    """A consumer-protocol script run step by step on the reference's ``ConsumerGroupCoordinator`` and on Kafka's.

    ``member_epoch`` may be ``"$self"``: the epoch that side last gave the member (0 before any, and after a
    leave). Literal
    positive epochs are sent to Kafka shifted by one, and Kafka's epochs are shown shifted back, so both
    transcripts speak the reference's epochs (``epoch-origin``).
    """

    def __init__(self, cfg: dict[str, Any], oracle: KafkaOracle, faults: frozenset[str] = frozenset()) -> None:
        from groupspec.reference.consumer import COORDINATOR_FAULTS, ConsumerGroupCoordinator

        self.group = cfg.get("group_id", "g")
        session = int(cfg.get("session_timeout_ms", 45_000))
        interval = int(cfg.get("heartbeat_interval_ms", 5_000))
        topics = cfg.get("topics", {"t": 4})
        self.ref = ConsumerGroupCoordinator(self.group, topics, assignor=cfg.get("assignor", "uniform"),
                                            session_timeout_ms=session, heartbeat_interval_ms=interval,
                                            faults=frozenset(faults) & COORDINATOR_FAULTS)
        self.oracle = oracle
        oracle.reset({"topics": topics, "consumer_session_timeout_ms": session,
                      "consumer_min_session_timeout_ms": min(session, 45_000),
                      "consumer_heartbeat_interval_ms": interval,
                      "consumer_min_heartbeat_interval_ms": min(interval, 5_000),
                      "consumer_assignors": [cfg.get("assignor", "uniform")],
                      "consumer_assignment_interval_ms": 0, "consumer_assignor_offload": False})
        self.ref_epoch: dict[str, int] = {}
        self.kafka_epoch: dict[str, int] = {}
        self.kafka_members: set[str] = set()

    def _epoch(self, value: Any, mid: str, side: str) -> int:
        if value == "$self":
            return (self.ref_epoch if side == "ref" else self.kafka_epoch).get(mid, 0)
        return int(value) if side == "ref" else _shift(int(value), 1)

    def step(self, obj: dict[str, Any]) -> tuple[list[str], list[str]]:
        """One step on both sides: (reference lines, Kafka lines), each ending with the state line."""
        return self._ref_step(obj), self._kafka_step(obj)

    def _ref_step(self, obj: dict[str, Any]) -> list[str]:
        from groupspec.reference.consumer import HeartbeatRequest

        at, out, c = obj["at"], [], self.ref
        for mid in c.tick(at):
            out.append(json.dumps({"at": at, "event": "removed", "member": mid}))
        if "send" in obj:
            mid = obj.get("member_id", obj["from"])
            epoch = self._epoch(obj["member_epoch"], mid, "ref")
            if obj["send"] == "ConsumerGroupHeartbeat":
                owned = obj.get("owned")
                tps: dict[str, list[int]] | None = None
                if owned is not None:
                    tps = {}
                    for t, p in owned:
                        tps.setdefault(t, []).append(p)
                r = c.heartbeat(HeartbeatRequest(mid, epoch, instance_id=obj.get("instance_id"),
                                                 rebalance_timeout_ms=obj.get("rebalance_timeout_ms", -1),
                                                 subscribed_topic_names=obj.get("subscribed_topic_names"),
                                                 subscribed_topic_regex=obj.get("subscribed_topic_regex"),
                                                 topic_partitions=tps), at)
                if r.error.name == "NONE" and r.member_id:  # after a leave (-1, -2) a client starts again at 0
                    self.ref_epoch[r.member_id] = max(r.member_epoch, 0)
                out.append(json.dumps({"at": at, "to": obj["from"], "request": "ConsumerGroupHeartbeat",
                                       "error": r.error.name, "member": r.member_id, "member_epoch": r.member_epoch,
                                       "heartbeat_interval_ms": r.heartbeat_interval_ms,
                                       "assignment": None if r.assignment is None else
                                       sorted([t, p] for t, ps in r.assignment.items() for p in ps)}))
            else:
                err = c.offset_commit(mid, epoch, {(t, p): off for t, p, off in obj["offsets"]})
                out.append(json.dumps({"at": at, "to": obj["from"], "request": "OffsetCommit", "error": err.name}))
        d = c.describe()
        out.append(json.dumps({"at": at, "group_epoch": d["group_epoch"], "assignment_epoch": d["assignment_epoch"],
                               "members": {m: {"state": v["state"], "epoch": v["epoch"],
                                               "assigned": _tps(v["assigned"]), "revoking": _tps(v["revoking"]),
                                               "target": _tps(v["target"])}
                                           for m, v in sorted(d["members"].items())}}))
        return out

    def _kafka_step(self, obj: dict[str, Any]) -> list[str]:
        at, out, o = obj["at"], [], self.oracle
        base = {"at": at, "group_id": self.group, "state_group": self.group}
        pre = o.send({**base, "op": "advance"})
        out += _removed(at, self.kafka_members, pre["state"])
        self.kafka_members = set(pre["state"].get("members", {}))
        answer = pre
        if "metadata" in obj:
            out.append(json.dumps({"at": at, "unsupported": "metadata"}))
        elif "send" in obj:
            mid = obj.get("member_id", obj["from"])
            epoch = self._epoch(obj["member_epoch"], mid, "kafka")
            if obj["send"] == "ConsumerGroupHeartbeat":
                answer = o.send({**base, "op": "ConsumerGroupHeartbeat", "conn": obj["from"], "member_id": mid,
                                 "member_epoch": epoch, "instance_id": obj.get("instance_id"),
                                 "rebalance_timeout_ms": obj.get("rebalance_timeout_ms", -1),
                                 "subscribed_topic_names": obj.get("subscribed_topic_names"),
                                 "subscribed_topic_regex": obj.get("subscribed_topic_regex"),
                                 "server_assignor": obj.get("server_assignor"), "owned": obj.get("owned")})
            else:
                answer = o.send({**base, "op": "OffsetCommit", "conn": obj["from"], "version": 9, "member_id": mid,
                                 "generation": epoch, "offsets": obj["offsets"]})
        for r in answer["responses"]:
            if r["request"] == "ConsumerGroupHeartbeat":
                if r["error"] == "NONE" and r.get("member_id"):
                    self.kafka_epoch[r["member_id"]] = max(r["member_epoch"], 0)
                out.append(json.dumps({"at": at, "to": r["conn"], "request": r["request"], "error": r["error"],
                                       "member": r["member_id"], "member_epoch": _shift(r["member_epoch"], -1),
                                       "heartbeat_interval_ms": r["heartbeat_interval_ms"],
                                       "assignment": _pairs(r["assignment"])}))
            else:
                out.append(json.dumps({"at": at, "to": r["conn"], "request": r["request"], "error": r["error"]}))
        s = answer["state"]
        self.kafka_members = set(s.get("members", {}))
        out.append(json.dumps(_state(at, s)))
        return out


def _tps(d: Any) -> list[list[Any]]:
    return sorted([t, p] for t, ps in (d or {}).items() for p in ps)


def run_consumer_script_on_kafka(text: str, oracle: KafkaOracle) -> list[str]:
    """Kafka's transcript of a consumer-protocol script (epochs shown as the reference counts them)."""
    cfg, steps = parse_steps(text)
    pair = ConsumerPair(cfg, oracle)
    out: list[str] = []
    for _, obj in steps:
        out += pair._kafka_step(obj)
    return out


def _removed(at: int, before: set[str], state: dict[str, Any]) -> list[str]:
    now = set(state.get("members", {}))
    return [json.dumps({"at": at, "event": "removed", "member": m}) for m in sorted(before - now)]


def _state(at: int, s: dict[str, Any]) -> dict[str, Any]:
    if s.get("type") != "consumer":
        return {"at": at, "group_epoch": 0, "assignment_epoch": 0, "members": {}}
    return {"at": at, "group_epoch": _shift(s["group_epoch"], -1), "assignment_epoch": _shift(s["assignment_epoch"], -1),
            "members": {m: {"state": v["state"].lower(), "epoch": _shift(v["epoch"], -1), "assigned": v["assigned"],
                            "revoking": v["revoking"], "target": v["target"]}
                        for m, v in sorted(s["members"].items())}}


def compare_consumer_script(text: str, oracle: KafkaOracle, faults: frozenset[str] = frozenset()) -> Comparison:
    """Run a ConsumerGroupHeartbeat script through the reference and Kafka's coordinator; compare step by step."""
    cfg, steps = parse_steps(text)
    pair = ConsumerPair(cfg, oracle, faults)
    out = Comparison(steps=len(steps), compared=len(steps))
    for i, (n, obj) in enumerate(steps):
        found, stopped = compare_consumer_step(n, obj, *pair.step(obj))
        out.differences += found
        if stopped:
            out.compared, out.stopped = i + 1, stopped
            break
    return out


def _same_targets(rs: dict[str, Any], ks: dict[str, Any]) -> bool:
    """Both sides have computed the same targets for the same members (then no assignor chose differently)."""
    rm, km = rs.get("members") or {}, ks.get("members") or {}
    return (rs.get("assignment_epoch") == ks.get("assignment_epoch") and set(rm) == set(km)
            and all(sorted(map(tuple, rm[m]["target"])) == sorted(map(tuple, km[m]["target"])) for m in rm))


def compare_consumer_step(n: int, obj: dict[str, Any], ref_lines: list[str],
                          kafka_lines: list[str]) -> tuple[list[Difference], str | None]:
    ((ra, rs),), ((ka, ks),) = step_chunks_consumer(ref_lines), step_chunks_consumer(kafka_lines)
    if any("unsupported" in a for a in ka):
        return [Difference(n, obj["at"], "unsupported", ra, "a metadata change has no counterpart in the oracle",
                           explained_by="unsupported:metadata")], \
            f"line {n}: a metadata change; the rest of the script is not compared"
    found = []
    key = lambda a: json.dumps(a, sort_keys=True)  # noqa: E731
    if sorted(ra, key=key) != sorted(ka, key=key):
        found.append(Difference(n, obj["at"], "answer", sorted(ra, key=key), sorted(ka, key=key)))
    if rs != ks:
        found.append(Difference(n, obj["at"], "state", rs, ks))
    for d in found:
        d.explained_by = explain(d)
        if d.explained_by == "assignor-choice" and d.what == "answer" and _same_targets(rs, ks):
            d.explained_by = None  # both assignors chose the same targets: the answers differ for another reason
    stop = next((d for d in found if diverges(d.explained_by)), None)
    for d in found:  # the state after a step whose answer already diverged is its consequence
        if stop is not None and d.explained_by is None:
            d.explained_by = f"{stop.explained_by} (same step)"
    return found, (f"line {n}: {stop.explained_by}; the rest of the script is not compared" if stop else None)
