"""The server's brain: a small Kafka cluster around one reference group coordinator, without IO.

Theory of operation
-------------------
``Cluster`` is a driver of ``groupspec.reference.classic.coordinator.GroupCoordinator`` in the way the
simulator is: the sans-IO coordinator is unchanged, the cluster hands it requests and time and
routes its answers. The socket layer (``server.py``) calls:

* ``request(conn, frame)``: one request frame from a connection;
* ``tick()``: let the coordinator's time pass (timers fire, parked answers come out) and run due
  timed faults;

and after each call drains ``out``: ``(conn, frame bytes or None, delay_ms)``, where ``None``
means "close the connection". A connection has at most one request in flight (Kafka mutes a
channel until its answer is sent), so answers on a connection stay in request order.

The cluster has ``brokers`` nodes (all in this process, one listener each). Every partition of
every topic is led by node 0 and stored in ``Topics`` (in memory). The group coordinator of every
group is ``coordinator_node`` (node 0 at start); a ``failover`` moves it to the next node: the
coordinator unloads the groups and loads them back from its ``GroupMetadataLog`` (the
``__consumer_offsets`` contents), exactly the ``unload``/``load`` faults of the coordinator-script
contract, while requests that reach the old node are answered NOT_COORDINATOR by the cluster.

Members and aliases. The coordinator only knows opaque senders; the cluster passes an *alias*
(``c1``, ``c2``, ...) per client session: the alias that first got the member id a request
carries (``GroupCoordinator.id_owner``), or, for a request without a known member id, the alias of
the connection it came on. Parked answers go to the connection where that alias has a request of
that API in flight. The aliases are the ones the transcript uses (``transcript.py``).

Member ids are Kafka's: ``<client.id>-<random UUID>`` (``CoordinatorConfig.member_id_seed``),
from a generator seeded with ``member_id_seed``: drawn fresh from the operating system at each
start unless given (``groupspec serve --member-id-seed``), and written in the recorded script's
config line, so a replay hands out the same ids. A restarted server therefore never hands out an
id it handed out before (a stale heartbeat or commit of a member of the old server is
UNKNOWN_MEMBER_ID), and no client can guess another's id (to evict it with a LeaveGroup).

Time is ``clock() - start`` in ms (wall time by default; tests pass a fake clock), minus the
time the clock spent paused (fault ``pause_clock``).
"""
from __future__ import annotations

import secrets
import struct
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from groupspec.reference.classic import Assignment, ConsumerProtocolError, decode_assignment
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator, Outbound
from groupspec.reference.errors import Error, InvalidMessage
from groupspec.reference import messages as m

from . import wire
from .consumer import ConsumerGroups
from .translate import encode_direct, error_body, offset_fetch_group, to_reference, to_wire
from .faults import FaultPlan, Rule
from .log import BadBatch, Topics
from .transcript import Recorder

__all__ = ["Conn", "Cluster", "GROUP_APIS"]

GROUP_APIS = {8: "OffsetCommit", 9: "OffsetFetch", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup",
              14: "SyncGroup"}
_RESPONSE_API = {m.JoinGroupResponse: "JoinGroup", m.SyncGroupResponse: "SyncGroup",
                 m.HeartbeatResponse: "Heartbeat", m.LeaveGroupResponse: "LeaveGroup",
                 m.OffsetCommitResponse: "OffsetCommit", m.OffsetFetchResponse: "OffsetFetch"}
_API_KEY = {v: k for k, v in GROUP_APIS.items()}
_UNKNOWN_TOPIC_ID = 100  # Kafka's UNKNOWN_TOPIC_ID: not a group-protocol error, so not in reference.errors
#: the numeric code of each error (Error.code is a property: a dict lookup is cheaper on the heartbeat path)
_ERROR_CODE = {e: e.code for e in Error}
_HEARTBEAT_V4 = struct.Struct(">iibihb")  # a Heartbeat v4 answer: size, correlation id, tags, throttle, error, tags
# a Heartbeat v4 answer around its correlation id, by error: the size, then what follows the correlation id
_HEARTBEAT_V4_SIZE = _HEARTBEAT_V4.pack(12, 0, 0, 0, 0, 0)[:4]
_HEARTBEAT_V4_TAIL = {e: _HEARTBEAT_V4.pack(12, 0, 0, 0, e.code, 0)[8:] for e in Error}

# TOPIC_ALREADY_EXISTS (36) is not a group-protocol error, so reference.errors.Error does not list it


@dataclass(eq=False)
class Conn:
    """One client connection to one node."""

    node: int
    number: int
    alias: str | None = None
    closed: bool = False


@dataclass
class _InFlight:
    conn: Conn
    header: Any
    api: str
    body: Any  # the decoded wire request
    delay_ms: int = 0
    drop: bool = False


@dataclass
class Cluster:
    topics: dict[str, int] = field(default_factory=lambda: {"t": 6})
    brokers: int = 2
    config: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    plan: FaultPlan = field(default_factory=FaultPlan)
    record_group: str | None = None
    record: bool = True
    clock: Callable[[], float] = time.monotonic
    host: str = "127.0.0.1"
    ports: list[int] = field(default_factory=list)
    cluster_id: str = "groupspec"
    faults: frozenset[str] = frozenset()
    protocol: str = "classic"  # classic | consumer | both (wire.supported_for)
    consumer_session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    consumer_heartbeat_interval_ms: int = 5_000  # group.consumer.heartbeat.interval.ms
    member_id_seed: int | None = None  # None: the config's, else a fresh one (see the module docstring)

    def __post_init__(self) -> None:
        if self.brokers < 1:
            raise ValueError("brokers must be >= 1")
        if self.member_id_seed is None:
            self.member_id_seed = self.config.member_id_seed
        if self.member_id_seed is None:
            self.member_id_seed = secrets.randbits(63)
        self.config = replace(self.config, member_id_seed=self.member_id_seed)
        self.supported = wire.supported_for(self.protocol)
        self.consumer = ConsumerGroups(self, self.consumer_session_timeout_ms, self.consumer_heartbeat_interval_ms)
        self.coordinator = GroupCoordinator(self.config, faults=self.faults)
        self.log = Topics()
        for name, n in self.topics.items():
            self.log.create(name, n)
        self.topic_ids = {name: _topic_id(name) for name in self.topics}
        if not self.ports:
            self.ports = [9092 + i for i in range(self.brokers)]
        self.coordinator_node = 0
        self.out: list[tuple[Conn, bytes | None, int]] = []
        self._start = self.clock()
        self._paused_total = 0.0
        self._paused_until: float | None = None
        self._paused_since: float | None = None
        self._last_now = 0
        self._conns = 0
        self._inflight: dict[str, list[_InFlight]] = {}
        self._loading_until: int | None = None
        self._lost_heartbeats: set[str] = set()  # member ids whose heartbeats are lost (expire_session)
        self.recorder = Recorder(self.coordinator, self.config, self.record_group) if self.record else None
        self.log_changed: Callable[[], None] = lambda: None
        self.stats: dict[str, int] = {}
        self._producer_ids = 0
        # (client id, api key, version) -> the first request frame seen (test fixtures; None: off)
        self.capture: dict[tuple[str | None, int, int], bytes] | None = None
        # Heartbeat v4 frames' bytes after the correlation id -> (the reference's request, member id): heartbeat_answer
        self._heartbeats: dict[bytes, tuple[m.HeartbeatRequest, str]] = {}
        # Set by a server: hands an answer to a waiting request of another connection to its socket at once (True),
        # or declines (False: it goes to ``out``). A round's burst of answers (every member's JoinGroup or SyncGroup
        # answer, on the request that completes the phase) then leaves while the rest is still being encoded.
        self.answer_now: Callable[[Conn, bytes], bool] | None = None
        self._routing = False
        self._api_versions: dict[int, bytes] = {}  # ApiVersions version -> its answer's body (self.supported's)

    # ------------------------------------------------------------------ time

    def now_ms(self) -> int:
        t = self.clock()
        if self._paused_until is not None:
            if t < self._paused_until:
                t = self._paused_since  # type: ignore[assignment]
            else:
                self._paused_total += self._paused_until - self._paused_since  # type: ignore[operator]
                self._paused_until = self._paused_since = None
        now = int((t - self._start - self._paused_total) * 1000)
        if now > self._last_now:  # never backwards
            self._last_now = now
        return self._last_now

    def pause_clock(self, ms: int) -> None:
        """The coordinator's clock stands still for ``ms`` of real time."""
        now = self.clock()
        if self._paused_until is None:
            self._paused_since = now
            self._paused_until = now + ms / 1000
        else:
            self._paused_until += ms / 1000

    # ------------------------------------------------------------------ connections

    def connect(self, node: int) -> Conn:
        self._conns += 1
        return Conn(node, self._conns)

    def disconnect(self, conn: Conn) -> None:
        conn.closed = True
        for alias in list(self._inflight):
            self._inflight[alias] = [f for f in self._inflight[alias] if f.conn is not conn]

    # ------------------------------------------------------------------ driving

    def tick(self) -> None:
        now = self.now_ms()
        for rule in self.plan.due(now):
            self._server_action(rule, None, now)
        if self._loading_until is not None and now >= self._loading_until:
            self._finish_loading(now)
        if self.consumer.groups:
            self.consumer.tick(now)
        deadline = self.coordinator.next_deadline()
        if deadline is not None and deadline <= now:
            out = self.coordinator.advance(now)
            if self.recorder is not None and out:
                self.recorder.advance(now, out)
            self._route(out)

    def next_wakeup_ms(self) -> int | None:
        """Virtual time of the next thing ``tick`` has to do (None: nothing scheduled)."""
        times = [t for t in (self.coordinator.next_deadline(), self.plan.next_due(), self._loading_until) if t is not None]
        return min(times) if times else None

    def request(self, conn: Conn, frame: bytes) -> None:
        if self._routing:  # answer_now must not hand a connection's next frame back to us while we route
            raise RuntimeError("a request entered the cluster while it was routing answers")
        if frame[1:2] == b"\x0c" and frame[0] == 0 and self._plain_heartbeats(conn):
            self._fast_heartbeat(conn, frame)
        else:
            self._request(conn, frame)

    def _request(self, conn: Conn, frame: bytes) -> None:
        try:
            header, body = wire.decode_request(frame, self.supported)
        except wire.Unsupported as e:
            if e.header.api_key == 18:  # ApiVersions: the v0 answer with the list (KIP-511)
                answer = wire.error_response(e.header, Error.UNSUPPORTED_VERSION.code, supported=self.supported)
                self.out.append((conn, answer, 0))
            else:  # Kafka: InvalidRequestException in parseRequestHeader, the channel is closed
                self._refuse(conn, "closed_unsupported", str(e))
            return
        except wire.WireError as e:  # Unreadable, Malformed: Kafka closes the channel (wire.py's docstring)
            self._refuse(conn, "closed_unreadable" if isinstance(e, wire.Unreadable) else "closed_malformed", str(e))
            return
        name = wire.API_NAMES[header.api_key]
        self.stats[name] = self.stats.get(name, 0) + 1
        if self.capture is not None:
            self.capture.setdefault((header.client_id, header.api_key, header.api_version), bytes(frame))
        try:
            self._dispatch(conn, header, name, body)
        except (InvalidMessage, ValueError, TypeError, KeyError, AttributeError) as e:
            # a request that decodes but makes no sense (negative timeouts, ...): INVALID_REQUEST
            self.stats["invalid"] = self.stats.get("invalid", 0) + 1
            self.last_invalid = f"{name}: {type(e).__name__}: {e}"
            self._answer_error(conn, header, Error.INVALID_REQUEST, body)
        except Exception as e:  # a bug of ours: Kafka's answer to an internal error, and keep serving
            self.internal_error(f"{name}: {type(e).__name__}: {e}")
            self._answer_error(conn, header, Error.UNKNOWN_SERVER_ERROR, body)

    def _refuse(self, conn: Conn, reason: str, detail: str) -> None:
        """Close ``conn`` without an answer, as Kafka does, counted under ``reason`` in ``stats``."""
        self.stats[reason] = self.stats.get(reason, 0) + 1
        self.last_refused = detail
        self.out.append((conn, None, 0))

    def internal_error(self, detail: str) -> None:
        """Count a bug of ours (``stats["internal_error"]``; the fuzz tests require none)."""
        self.stats["internal_error"] = self.stats.get("internal_error", 0) + 1
        self.last_internal_error = detail

    def _plain_heartbeats(self, conn: Conn) -> bool:
        """Whether a Heartbeat on ``conn`` takes the fast lane: nothing to record, capture or inject,
        no lost heartbeats, and ``conn`` reaches the coordinator (else the general path decides)."""
        return (not self.plan.rules and self.recorder is None and self.capture is None and not self._lost_heartbeats
                and conn.node == self.coordinator_node and 12 in self.supported)

    def _fast_heartbeat(self, conn: Conn, frame: bytes) -> None:
        """What ``request`` and ``_dispatch`` do for a Heartbeat in that case, in one call."""
        try:
            header, body = wire.decode_request(frame, self.supported)
        except wire.WireError:  # a frame that does not decode: the general path answers it
            self._request(conn, frame)
            return
        self.stats["Heartbeat"] = self.stats.get("Heartbeat", 0) + 1
        if self.consumer.groups and self.consumer.owns(body.group_id):
            self._dispatch(conn, header, "Heartbeat", body)  # GROUP_ID_NOT_FOUND, as the general path
            return
        try:
            self._heartbeat(conn, header, body, self.now_ms(), self._alias_for(conn, body))
        except (InvalidMessage, ValueError, TypeError, KeyError, AttributeError) as e:
            self._answer_error(conn, header, Error.INVALID_REQUEST, body)
            self.stats["invalid"] = self.stats.get("invalid", 0) + 1
            self.last_invalid = f"Heartbeat: {type(e).__name__}: {e}"
        except Exception as e:  # pragma: no cover - a bug of ours, as in request()
            self.internal_error(f"Heartbeat: {type(e).__name__}: {e}")
            self._answer_error(conn, header, Error.UNKNOWN_SERVER_ERROR, body)

    def heartbeat_answer(self, conn: Conn, frame: bytes) -> bytes | None:
        """The socket layer's fast lane for a Heartbeat v4 frame: its answer, given at once (any answers to
        other connections that came due on the way are in ``out``), or ``None``: hand the frame to
        :meth:`request` (anything but a plain Heartbeat v4 in the fast lane's conditions, see
        :meth:`_plain_heartbeats`). Same answer and effects as :meth:`request`; the decoded request is
        remembered by the frame's bytes after the correlation id (client id, tags, body), so a member's next
        heartbeats skip decoding and the reference request's checks (both already passed for those bytes)."""
        if (frame[1:4] != b"\x0c\x00\x04" or frame[0] != 0 or self.plan.rules or self.recorder is not None
                or self.capture is not None or self._lost_heartbeats or conn.node != self.coordinator_node
                or 12 not in self.supported):  # _plain_heartbeats, inlined (every heartbeat asks)
            return None
        key = frame[8:]
        hit = self._heartbeats.get(key)
        if hit is None:
            try:
                header, body = wire.decode_request(frame, self.supported)
                request = to_reference(header, "Heartbeat", body)
            except Exception:  # noqa: BLE001 - anything that does not decode and check: the general path decides
                return None
            if len(self._heartbeats) >= 4096:
                self._heartbeats.clear()
            hit = self._heartbeats[key] = (request, body.member_id)
        request, member_id = hit
        if self.consumer.groups and self.consumer.owns(request.group_id):
            return None
        owner = self.coordinator.id_owner.get(member_id) if member_id else None
        if owner is not None:
            alias = owner if type(owner) is str else str(owner)
        else:
            if conn.alias is None:
                conn.alias = f"c{conn.number}"
            alias = conn.alias
        queue = self._inflight.get(alias)
        if queue and any(f.api == "Heartbeat" for f in queue):
            return None  # an older Heartbeat of this member waits on another connection: the usual routing
        stats = self.stats
        stats["Heartbeat"] = stats.get("Heartbeat", 0) + 1
        try:
            out = self.coordinator.handle(self.now_ms(), alias, request)
        except Exception as e:  # pragma: no cover - the reference refused a checked request: as _fast_heartbeat
            header, body = wire.decode_request(frame, self.supported)
            if isinstance(e, (InvalidMessage, ValueError, TypeError, KeyError, AttributeError)):
                self._answer_error(conn, header, Error.INVALID_REQUEST, body)
                self.stats["invalid"] = self.stats.get("invalid", 0) + 1
                self.last_invalid = f"Heartbeat: {type(e).__name__}: {e}"
            else:
                self.internal_error(f"Heartbeat: {type(e).__name__}: {e}")
                self._answer_error(conn, header, Error.UNKNOWN_SERVER_ERROR, body)
            return b""  # the answer is in out
        if len(out) == 1:  # the usual case: this heartbeat's answer alone (the loop below, for one answer)
            o = out[0]
            if type(o.response) is m.HeartbeatResponse and o.destination == alias:
                return _HEARTBEAT_V4_SIZE + frame[4:8] + _HEARTBEAT_V4_TAIL[o.response.error]
        answer = b""
        for o in out:
            if not answer and type(o.response) is m.HeartbeatResponse and o.destination == alias:
                answer = _HEARTBEAT_V4_SIZE + frame[4:8] + _HEARTBEAT_V4_TAIL[o.response.error]
            else:
                self._route([o])
        return answer

    def _dispatch(self, conn: Conn, header: Any, name: str, body: Any) -> None:
        now = self.now_ms()
        group = getattr(body, "group_id", None)
        rules = self.plan.match(name, header.client_id, group) if self.plan.rules else []
        req_rule = next((r for r in rules if r.action in ("error", "delay", "drop")), None)
        if req_rule is not None and req_rule.action == "error":
            self._note_injected(conn, name, body, now, req_rule.error or "")
            self._answer_error(conn, header, Error[req_rule.error or "UNKNOWN_SERVER_ERROR"], body)
        elif header.api_key == 68:
            self._emit(conn, self.consumer.heartbeat(conn, header, body, now), req_rule)
        elif header.api_key == 8 and self.consumer.owns(group):
            self._emit(conn, self.consumer.offset_commit(conn, header, body, now), req_rule)
        elif header.api_key in (11, 12, 13, 14) and self.consumer.owns(group):
            self._note_injected(conn, name, body, now, "GROUP_ID_NOT_FOUND")
            self._answer_error(conn, header, Error.GROUP_ID_NOT_FOUND, body)  # "Group g is not a classic group."
        elif header.api_key == 9 and header.api_version < 8 and self.consumer.owns(group):
            self._emit(conn, self._consumer_offset_fetch(conn, header, body), req_rule)
        elif header.api_key in GROUP_APIS:
            self._group_request(conn, header, name, body, now, req_rule)
        else:
            self._emit(conn, self._other_request(conn, header, name, body), req_rule)
        for rule in rules:
            if rule.action not in ("error", "delay", "drop"):
                self._server_action(rule, conn, now, body)

    def _emit(self, conn: Conn, answer: bytes, rule: Rule | None) -> None:
        if rule is not None and rule.action == "drop":
            self.out.append((conn, b"", 0))  # the request is done; its answer is lost
            return
        self.out.append((conn, answer, rule.ms if rule is not None and rule.action == "delay" else 0))

    def _answer_error(self, conn: Conn, header: Any, error: Error, body: Any) -> None:
        if header.api_key == 0 and getattr(body, "acks", 1) == 0:
            # Kafka answers no acks=0 Produce; on an error it closes the connection (KafkaApis)
            self._refuse(conn, "closed_produce_error", error.name)
            return
        stub = error_body(header, error, body)
        self.out.append((conn, wire.error_response(header, error.code, stub, supported=self.supported), 0))

    # ------------------------------------------------------------------ faults

    def _note_injected(self, conn: Conn, name: str, body: Any, now: int, what: str) -> None:
        if self.recorder is not None:
            self.recorder.comment({"at": now, "from": self._alias_for(conn, body), "request": name,
                                   "injected": what, "node": conn.node})

    def _server_action(self, rule: Rule, conn: Conn | None, now: int, body: Any = None) -> None:
        if rule.action == "failover":
            self.failover(rule.load_ms)
        elif rule.action == "pause_clock":
            self.pause_clock(rule.ms)
        elif rule.action == "expire_session":
            member_id = None
            if rule.target_client is not None:
                view = self._groups_views()
                for v in view:
                    for mv in v.members:
                        if mv.client_id.startswith(rule.target_client) or (mv.group_instance_id or "") == rule.target_client:
                            member_id = mv.member_id
            elif body is not None:
                member_id = getattr(body, "member_id", None)
            if member_id:
                self.expire_session(member_id)

    def _groups_views(self) -> list[Any]:
        return [v for v in (self.coordinator.group(g) for g in self.coordinator.group_ids()) if v is not None]

    def expire_session(self, member_id: str) -> None:
        """``member_id``'s heartbeats are lost from now until the coordinator expires its session."""
        self._lost_heartbeats.add(member_id)

    def failover(self, load_ms: int = 0) -> None:
        """Move the group coordinator to the next node (see the module docstring)."""
        now = self.now_ms()
        if self._loading_until is not None:
            self._finish_loading(now)
        partitions = sorted({self.coordinator.partition_of(g) for g in self.coordinator.group_ids()}
                            | {self.coordinator.partition_of(g) for g in self.coordinator.log.group_ids()})
        rec_part = self.coordinator.partition_of(self.recorder.group_id) if self.recorder and self.recorder.group_id else None
        for p in partitions:
            out = self.coordinator.advance(now) + self.coordinator.unload_partition(p, now)
            if self.recorder is not None and p == rec_part:
                self.recorder.fault(now, "unload", out)
            self._route(out)
        self.coordinator_node = (self.coordinator_node + 1) % self.brokers
        self._moving = partitions
        for p in partitions:
            out = self.coordinator.load_partition(p, now, complete=load_ms == 0)
            if self.recorder is not None and p == rec_part:
                self.recorder.fault(now, "load" if load_ms == 0 else "load_start", out)
            self._route(out)
        self._loading_until = now + load_ms if load_ms > 0 else None
        self.stats["failovers"] = self.stats.get("failovers", 0) + 1

    def _finish_loading(self, now: int) -> None:
        rec_part = self.coordinator.partition_of(self.recorder.group_id) if self.recorder and self.recorder.group_id else None
        for p in getattr(self, "_moving", []):
            out = self.coordinator.advance(now) + self.coordinator.finish_loading(p, now)
            if self.recorder is not None and p == rec_part:
                self.recorder.fault(now, "load_finish", out)
            self._route(out)
        self._loading_until = None

    # ------------------------------------------------------------------ group requests

    def _alias_for(self, conn: Conn, body: Any) -> str:
        member_id = getattr(body, "member_id", None)
        if member_id is None and getattr(body, "members", None) and hasattr(body.members[0], "member_id"):
            member_id = body.members[0].member_id
        if member_id:
            owner = self.coordinator.id_owner.get(member_id)
            if owner is not None:
                return str(owner)
        if conn.alias is None:
            conn.alias = f"c{conn.number}"
        return conn.alias

    def _group_request(self, conn: Conn, header: Any, name: str, body: Any, now: int, rule: Rule | None) -> None:
        if conn.node != self.coordinator_node:
            self._note_injected(conn, name, body, now, "NOT_COORDINATOR")
            self._answer_error(conn, header, Error.NOT_COORDINATOR, body)
            return
        if name == "Heartbeat" and body.member_id in self._lost_heartbeats:
            view = self.coordinator.group(body.group_id)
            if view is not None and body.member_id in view.member_ids:
                self._note_injected(conn, name, body, now, "LOST")
                self.out.append((conn, wire.encode_response(header, wire.response_class(12, header.api_version)()), 0))
                return
            self._lost_heartbeats.discard(body.member_id)
        if name == "OffsetFetch" and header.api_version >= 8:
            self._offset_fetch_groups(conn, header, body, now)
            return
        alias = self._alias_for(conn, body)
        if name == "Heartbeat" and rule is None and self.recorder is None:
            self._heartbeat(conn, header, body, now, alias)
            return
        flight = _InFlight(conn, header, name, body)
        if rule is not None:
            flight.drop = rule.action == "drop"
            flight.delay_ms = rule.ms if rule.action == "delay" else 0
        self._inflight.setdefault(alias, []).append(flight)
        out1: list[Outbound] = []
        if self.recorder is not None:  # the transcript shows timer answers before the request's step
            out1 = self.coordinator.advance(now)
            self._route(out1)
        # built after time passed, so an id handed out on the way is already known (as replay does)
        request = to_reference(header, name, body)
        out2 = self.coordinator.handle(now, alias, request)
        if self.recorder is not None:
            self.recorder.request(now, alias, name, request, out1, out2)
        self._route(out2)

    def _heartbeat(self, conn: Conn, header: Any, body: Any, now: int, alias: str) -> None:
        """The hot path: the coordinator answers a Heartbeat at once (it never parks one), so its answer
        goes straight to the asking connection, encoded directly, without an in-flight entry (unless
        the alias has an older Heartbeat in flight on another connection: then the usual routing)."""
        out = self.coordinator.handle(now, alias, to_reference(header, "Heartbeat", body))
        queue = self._inflight.get(alias)
        direct = not queue or all(f.api != "Heartbeat" for f in queue)
        for o in out:
            if direct and type(o.response) is m.HeartbeatResponse and str(o.destination) == alias:
                self.out.append((conn, wire.heartbeat_response(header, _ERROR_CODE[o.response.error]), 0))
                direct = False
            else:
                self._route([o])

    def _offset_fetch_groups(self, conn: Conn, header: Any, body: Any, now: int) -> None:
        resp_cls = wire.response_class(9, header.api_version)
        groups = []
        alias = self._alias_for(conn, body)
        for g in body.groups:
            if self.consumer.owns(g.group_id):
                groups.append(self._consumer_fetch_group(conn, resp_cls, g, header.api_version))
                continue
            parts = None if g.topics is None else tuple((t.name, p) for t in g.topics for p in t.partition_indexes)
            request = m.OffsetFetchRequest(group_id=g.group_id, partitions=parts, require_stable=body.require_stable)
            out1 = self.coordinator.advance(now)
            self._route(out1)
            out2 = self.coordinator.handle(now, alias, request)
            if self.recorder is not None:
                self.recorder.request(now, alias, "OffsetFetch", request, out1, out2)
            for o in out2:
                if isinstance(o.response, m.OffsetFetchResponse):
                    groups.append(offset_fetch_group(resp_cls, g.group_id, o.response))
                else:  # pragma: no cover - OffsetFetch is answered at once, to the asker
                    self._route([o])
        self.out.append((conn, wire.encode_response(header, resp_cls(groups=groups)), 0))

    def _consumer_fetch_group(self, conn: Conn, resp_cls: Any, g: Any, v: int) -> Any:
        """One group of an OffsetFetch v8+ answer, for a consumer group (v9 carries member id and epoch)."""
        member_id, epoch = (g.member_id, g.member_epoch) if v >= 9 else (None, -1)
        err = self.consumer.fetch_error(conn, g.group_id, member_id, epoch)
        wanted = None if g.topics is None else [(t.name, list(t.partition_indexes)) for t in g.topics]
        gcls = resp_cls.OffsetFetchResponseGroup
        topics = [] if err != Error.NONE else [gcls.OffsetFetchResponseTopics(name=t, partitions=[
            gcls.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
                partition_index=p, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=0)
            for p, off in parts]) for t, parts in self.consumer.committed(g.group_id, wanted)]
        return gcls(group_id=g.group_id, error_code=err.code, topics=topics)

    def _consumer_offset_fetch(self, conn: Conn, header: Any, body: Any) -> bytes:
        """OffsetFetch before v8 (one group, no member epoch) for a consumer group."""
        cls = wire.response_class(9, header.api_version)
        err = self.consumer.fetch_error(conn, body.group_id, None, -1)
        wanted = None if body.topics is None else [(t.name, list(t.partition_indexes)) for t in body.topics]
        topics = [] if err != Error.NONE else [cls.OffsetFetchResponseTopic(name=t, partitions=[
            cls.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
                partition_index=p, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=0)
            for p, off in parts]) for t, parts in self.consumer.committed(body.group_id, wanted)]
        return wire.encode_response(header, cls(error_code=err.code, topics=topics))

    def _route(self, out: list[Outbound]) -> None:
        self._routing = True
        try:
            self._route_all(out)
        finally:
            self._routing = False

    def _route_all(self, out: list[Outbound]) -> None:
        inflight = self._inflight
        for o in out:
            response = o.response
            api = _RESPONSE_API.get(type(response))
            queue = inflight.get(str(o.destination))
            if not queue:
                continue
            for i, f in enumerate(queue):
                if f.api == api:
                    del queue[i]
                    if f.drop:
                        self.out.append((f.conn, b"", 0))  # the answer is lost on the way
                    elif not f.conn.closed:
                        data = encode_direct(f.header, response)  # the answers a round sends N of, encoded directly
                        if data is None:
                            data = wire.encode_response(f.header, to_wire(f.header, f.body, response))
                        if f.delay_ms or self.answer_now is None or not self.answer_now(f.conn, data):
                            self.out.append((f.conn, data, f.delay_ms))
                    break

    # ------------------------------------------------------------------ everything else

    def _other_request(self, conn: Conn, header: Any, name: str, body: Any) -> bytes:
        v = header.api_version
        cls = wire.response_class(header.api_key, v)
        if name == "ApiVersions":  # the same answer every time but for the correlation id: its body is kept
            data = self._api_versions.get(v)
            if data is None:
                data = self._api_versions[v] = bytes(wire.api_versions_response(v, supported=self.supported).encode(version=v))
            return struct.pack(">ii", 4 + len(data), header.correlation_id) + data  # response header v0 (KIP-511)
        if name == "Metadata":
            return wire.encode_response(header, self._metadata(cls, body, v))
        if name == "FindCoordinator":
            return wire.encode_response(header, self._find_coordinator(cls, body, v))
        if name == "ListOffsets":
            return wire.encode_response(header, self._list_offsets(cls, body))
        if name == "Produce":
            resp = self._produce(cls, body)
            return b"" if body.acks == 0 else wire.encode_response(header, resp)  # acks=0: no answer
        if name == "Fetch":
            return wire.encode_response(header, self.fetch(cls, body)[0])
        if name == "CreateTopics":
            return wire.encode_response(header, self._create_topics(cls, body, v))
        if name == "InitProducerId":
            # idempotent producers only (no transactions): a fresh producer id each time
            if body.transactional_id is not None:
                return wire.encode_response(header, cls(error_code=Error.COORDINATOR_NOT_AVAILABLE.code,
                                                        producer_id=-1, producer_epoch=-1))
            self._producer_ids += 1
            return wire.encode_response(header, cls(error_code=0, producer_id=self._producer_ids, producer_epoch=0))
        raise AssertionError(name)  # pragma: no cover - SUPPORTED lists exactly these

    def _node(self, cls: Any, node: int) -> Any:
        return cls(node_id=node, host=self.host, port=self.ports[node], rack=None)

    def _metadata(self, cls: Any, body: Any, v: int) -> Any:
        brokers = [self._node(cls.MetadataResponseBroker, n) for n in range(self.brokers)]
        if body.topics is None or (v == 0 and not body.topics):  # v0: an empty list means every topic
            names: Sequence[str | None] = sorted(self.topics)
        else:  # v10+: a topic asked by id has no name (the KIP-848 client resolves its assignment so)
            by_id = {tid: t for t, tid in self.topic_ids.items()}
            # (a topic without an id: None, which no id equals)
            names = [t.name if t.name is not None else by_id.get(getattr(t, "topic_id", None)) for t in body.topics]  # type: ignore[arg-type]
        topics = []
        for i, name in enumerate(names):
            if name is None:
                topics.append(cls.MetadataResponseTopic(
                    error_code=_UNKNOWN_TOPIC_ID, name=None, topic_id=body.topics[i].topic_id,
                    is_internal=False, partitions=[]))
                continue
            n = self.topics.get(name)
            parts = [] if n is None else [
                cls.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=i, leader_id=0, leader_epoch=0, replica_nodes=[0], isr_nodes=[0],
                    offline_replicas=[])
                for i in range(n)]
            topics.append(cls.MetadataResponseTopic(
                error_code=0 if n is not None else Error.UNKNOWN_TOPIC_OR_PARTITION.code, name=name,
                topic_id=self.topic_ids.get(name, uuid.UUID(int=0)), is_internal=False, partitions=parts))
        return cls(brokers=brokers, cluster_id=self.cluster_id, controller_id=0, topics=topics)

    def _find_coordinator(self, cls: Any, body: Any, v: int) -> Any:
        node = self.coordinator_node
        if v >= 4:
            entries = []
            for key in body.coordinator_keys:
                ok = body.key_type == 0
                entries.append(cls.Coordinator(key=key, node_id=node if ok else -1, host=self.host if ok else "",
                                               port=self.ports[node] if ok else -1,
                                               error_code=0 if ok else Error.COORDINATOR_NOT_AVAILABLE.code,
                                               error_message=None))
            return cls(coordinators=entries)
        ok = getattr(body, "key_type", 0) == 0
        return cls(error_code=0 if ok else Error.COORDINATOR_NOT_AVAILABLE.code, error_message=None,
                   node_id=node if ok else -1, host=self.host if ok else "", port=self.ports[node] if ok else -1)

    def _create_topics(self, cls: Any, body: Any, v: int) -> Any:
        results = []
        for t in body.topics:
            n = t.num_partitions if t.num_partitions > 0 else 1  # -1: the broker default (1 here)
            if t.name in self.topics:
                err, msg = 36, f"Topic '{t.name}' already exists."
            elif not t.name or t.assignments:
                err, msg = Error.INVALID_REQUEST.code, "a name and no manual replica assignment are needed"
            else:
                err, msg = 0, None
                if not body.validate_only:
                    self.topics[t.name] = n
                    self.log.create(t.name, n)
                    self.topic_ids[t.name] = _topic_id(t.name)
                    self.consumer.topic_created(self.now_ms(), t.name, n)
            results.append(cls.CreatableTopicResult(
                name=t.name, topic_id=self.topic_ids.get(t.name, uuid.UUID(int=0)), error_code=err, error_message=msg,
                num_partitions=self.topics.get(t.name, n), replication_factor=1, configs=None))
        return cls(topics=results)

    def _list_offsets(self, cls: Any, body: Any) -> Any:
        topics = []
        for t in body.topics:
            parts = []
            for p in t.partitions:
                log = self.log.partition(t.name, p.partition_index)
                if log is None:
                    err, off = Error.UNKNOWN_TOPIC_OR_PARTITION.code, -1
                else:
                    err, off = 0, log.end_offset if p.timestamp == -1 else 0
                parts.append(cls.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=err, timestamp=-1, offset=off, leader_epoch=0))
            topics.append(cls.ListOffsetsTopicResponse(name=t.name, partitions=parts))
        return cls(topics=topics)

    def _produce(self, cls: Any, body: Any) -> Any:
        responses = []
        appended = False
        for t in body.topic_data:
            parts = []
            for p in t.partition_data:
                log = self.log.partition(t.name, p.index)
                base, err = -1, 0
                if log is None:
                    err = Error.UNKNOWN_TOPIC_OR_PARTITION.code
                else:
                    try:
                        base = log.append(bytes(p.records or b""))
                        appended = True
                    except BadBatch:
                        err = Error.CORRUPT_MESSAGE.code
                parts.append(cls.TopicProduceResponse.PartitionProduceResponse(
                    index=p.index, error_code=err, base_offset=base, log_append_time_ms=-1, log_start_offset=0))
            responses.append(cls.TopicProduceResponse(name=t.name, partition_responses=parts))
        if appended:
            self.log_changed()
        return cls(responses=responses)

    def fetch(self, cls: Any, body: Any) -> tuple[Any, bool]:
        """The Fetch answer and whether it carries any record (the server long-polls when not)."""
        responses = []
        any_data = False
        for t in body.topics:
            parts = []
            for p in t.partitions:
                log = self.log.partition(t.topic, p.partition)
                if log is None:
                    parts.append(cls.FetchableTopicResponse.PartitionData(
                        partition_index=p.partition, error_code=Error.UNKNOWN_TOPIC_OR_PARTITION.code,
                        high_watermark=-1, last_stable_offset=-1, log_start_offset=-1, records=None))
                    continue
                if p.fetch_offset > log.end_offset or p.fetch_offset < 0:
                    parts.append(cls.FetchableTopicResponse.PartitionData(
                        partition_index=p.partition, error_code=Error.OFFSET_OUT_OF_RANGE.code,
                        high_watermark=log.end_offset, last_stable_offset=log.end_offset, log_start_offset=0,
                        records=None))
                    continue
                data = log.read(p.fetch_offset, p.partition_max_bytes)
                any_data = any_data or bool(data)
                parts.append(cls.FetchableTopicResponse.PartitionData(
                    partition_index=p.partition, error_code=0, high_watermark=log.end_offset,
                    last_stable_offset=log.end_offset, log_start_offset=0, aborted_transactions=None,
                    preferred_read_replica=-1, records=data))
            responses.append(cls.FetchableTopicResponse(topic=t.topic, partitions=parts))
        return cls(error_code=0, session_id=0, responses=responses), any_data


def _topic_id(name: str) -> uuid.UUID:
    """A topic's id: derived from its name (never Kafka's reserved ids 0 and 1)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, "groupspec-topic:" + name)


def decode_assignment_or_none(data: bytes) -> Assignment | None:
    try:
        return decode_assignment(data)
    except ConsumerProtocolError:
        return None
