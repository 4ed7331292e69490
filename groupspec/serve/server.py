"""The socket layer: asyncio listeners around a ``Cluster``, in a thread of its own or in the foreground.

``Server(cluster)`` binds one loopback listener per node (``port`` for node 0, the next ports for
the others; port 0 picks free ports), then:

* per connection (an ``asyncio.Protocol``, TCP_NODELAY), hands one frame at a time to the cluster
  and the next one only once the answer to the previous one has been written (Kafka mutes a
  connection while a request is in flight, so answers keep request order); answers held by a
  ``delay`` fault leave after their delay. Answers are written once per turn of the loop: every
  read of one poll is handled first, then each connection's answers leave in one write (those to
  the frames of one read of a client that pipelines, too); the clients then wake once for many
  answers, as librdkafka's mock cluster writes on its next poll (``Server._write_all``);
* one timer callback calls ``cluster.tick()`` every ``tick_ms`` (5 ms), sooner when a deadline is nearer: timers fire within that
  granularity (Kafka's purgatory has one too); asking the coordinator for its next deadline after
  every request would cost a scan of every member's timer;
* a Fetch with nothing to return waits (up to its ``max_wait_ms``) until a Produce appends;
* connections are accepted by one task per listener, at most ``max_connections`` open at once
  (Kafka's ``max.connections``, unbounded by default: past it the acceptor waits for a slot, as
  Kafka's ``Acceptor`` does), and a connection with no traffic for ``connections_max_idle_ms``
  (Kafka's ``connections.max.idle.ms``, 600000 by default) is closed;
* an exception that escapes the handling of a frame, a Fetch, a timer or any callback of the loop
  is a bug of ours: it is counted (``cluster.stats["loop_error"]``, the fuzz tests require none),
  remembered (``loop_errors``) and the connection concerned is closed; the server goes on;
* a closed connection drops its buffers at once (a partial frame is not kept until a full GC).

Python API (tests): ``start()`` / ``stop()`` run the loop in a daemon thread; ``bootstrap`` is
``"127.0.0.1:PORT"``; ``call(fn)`` runs ``fn(cluster)`` on the loop thread and returns its result
(``inject``, ``failover``, ``expire_session``, ``pause_clock`` are shortcuts).
"""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import wire
from .cluster import Cluster, Conn
from .faults import FaultPlan

__all__ = ["Server", "MAX_FRAME", "run_loop"]

MAX_FRAME = 100 * 1024 * 1024
CONNECTIONS_MAX_IDLE_MS = 600_000  # Kafka's connections.max.idle.ms default
MAX_CONNECTIONS = 2**31 - 1  # Kafka's max.connections default (Int.MaxValue: no cap)
_SIZE = struct.Struct(">i")
T = TypeVar("T")


def run_loop(main: Any) -> Any:
    """Run ``main`` on uvloop's event loop (libuv) when it is installed, else asyncio's own.

    The one place the loop is chosen, for the CLI, the thread of the Python API and the benchmark.
    uvloop roughly halves the cost of each read and write on a connection (bench/bench_serve.py).
    """
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency; asyncio's loop works the same
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


class Server:
    def __init__(self, cluster: Cluster, port: int = 0, tick_ms: int = 5,
                 connections_max_idle_ms: int = CONNECTIONS_MAX_IDLE_MS, max_connections: int = MAX_CONNECTIONS) -> None:
        if connections_max_idle_ms < 1 or max_connections < 1:
            raise ValueError("connections_max_idle_ms and max_connections must be >= 1")
        self.cluster = cluster
        self.port = port
        self.tick_ms = tick_ms
        self.connections_max_idle_ms = connections_max_idle_ms
        self.max_connections = max_connections
        self.loop_errors: list[str] = []
        self._listeners: list[socket.socket] = []
        self._slot: asyncio.Condition | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping: asyncio.Event | None = None
        self._tick_handle: asyncio.Handle | None = None  # the timer's next call (_tick)
        self._data: asyncio.Event | None = None
        self._links: set[_Link] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsent: list[_Link] = []  # connections with answers to write at the next flush (_write_all)
        self.error: BaseException | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def bootstrap(self) -> str:
        return f"{self.cluster.host}:{self.cluster.ports[0]}"

    async def _bind(self) -> None:
        self._stopping = asyncio.Event()
        self._data = asyncio.Event()
        self._slot = asyncio.Condition()
        ports = []
        for node in range(self.cluster.brokers):
            want = 0 if self.port == 0 else self.port + node
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self.cluster.host, want))
                sock.listen(128)
                sock.setblocking(False)
            except OSError:
                sock.close()
                for s in self._listeners:
                    s.close()
                raise
            self._listeners.append(sock)
            ports.append(sock.getsockname()[1])
        self.cluster.ports = ports
        self.cluster.log_changed = self._data_arrived
        self.cluster.answer_now = self._answer_now

    async def _accept(self, node: int, sock: socket.socket) -> None:
        """Kafka's Acceptor: take the next connection once there is a slot for it (``max_connections``)."""
        loop = asyncio.get_running_loop()
        assert self._slot is not None
        while True:
            async with self._slot:
                await self._slot.wait_for(lambda: len(self._links) < self.max_connections)
            try:
                conn, _addr = await loop.sock_accept(sock)
            except OSError:  # pragma: no cover - the listener was closed (stop) or ran out of descriptors
                if self._stopping is not None and self._stopping.is_set():
                    return
                await asyncio.sleep(0.05)
                continue
            link = self._serve(node)
            self._links.add(link)  # counted at once: the cap holds before the transport is up
            try:
                await loop.connect_accepted_socket(lambda: link, conn)
            except OSError:  # pragma: no cover - the client went away before the transport was made
                conn.close()
                self._closed(link)

    def _closed(self, link: "_Link") -> None:
        was_full = len(self._links) >= self.max_connections
        self._links.discard(link)
        if self._slot is not None and was_full and len(self._links) < self.max_connections:  # an acceptor waits
            slot = self._slot

            async def free() -> None:
                async with slot:
                    slot.notify_all()

            self._spawn(free())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def loop_error(self, where: str, exc: BaseException | None, link: "_Link | None" = None) -> None:
        """A bug of ours surfaced on the loop: counted, remembered, the connection closed (module docstring)."""
        self.cluster.stats["loop_error"] = self.cluster.stats.get("loop_error", 0) + 1
        self.loop_errors.append(f"{where}: {type(exc).__name__}: {exc}" if exc is not None else where)
        del self.loop_errors[:-20]
        if link is not None:
            link.close()

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.loop_error(str(context.get("message", "loop")), context.get("exception"))

    async def _reaper(self) -> None:
        """Close connections idle longer than ``connections_max_idle_ms`` (Kafka's Selector does it per poll)."""
        loop = asyncio.get_running_loop()
        idle = self.connections_max_idle_ms / 1000
        while True:
            now = loop.time()
            oldest = now
            for link in list(self._links):
                if link.closed:
                    continue
                if now - link.last_active >= idle:
                    self.cluster.stats["closed_idle"] = self.cluster.stats.get("closed_idle", 0) + 1
                    link.close()
                else:
                    oldest = min(oldest, link.last_active)
            # a new connection's deadline is at least ``idle`` away: waking every second at most keeps the
            # closing within a second of its deadline (Kafka's Selector checks on every poll)
            await asyncio.sleep(min(1.0, max(0.01, oldest + idle - now)))

    def _data_arrived(self) -> None:
        assert self._data is not None
        self._data.set()
        self._data = asyncio.Event()

    async def run(self, ready: Callable[[], None] | None = None) -> None:
        """Serve until ``stop`` (or cancellation)."""
        await self._bind()
        self.loop = asyncio.get_running_loop()
        if ready is not None:
            ready()
        self._ready.set()
        self.loop.set_exception_handler(self._loop_exception)
        self._tick_handle = self.loop.call_soon(self._tick)
        helpers = [asyncio.create_task(self._reaper())]
        helpers += [asyncio.create_task(self._accept(n, s)) for n, s in enumerate(self._listeners)]
        assert self._stopping is not None
        try:
            await self._stopping.wait()
        finally:
            if self._tick_handle is not None:
                self._tick_handle.cancel()
                self._tick_handle = None
            for t in helpers:
                t.cancel()
            for sock in self._listeners:
                sock.close()
            for link in list(self._links):
                link.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    def start(self) -> "Server":
        """Run in a daemon thread; returns once the listeners are bound."""
        def main() -> None:
            try:
                run_loop(self.run())
            except BaseException as e:  # pragma: no cover - reported to the caller through .error
                self.error = e
                self._ready.set()

        self._thread = threading.Thread(target=main, name="groupspec-serve", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self.error is not None:
            raise self.error
        return self

    def stop(self) -> None:
        if self.loop is not None and self._stopping is not None:
            self.loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ API for tests

    def call(self, fn: Callable[[Cluster], T]) -> T:
        """Run ``fn(cluster)`` on the server's loop (the cluster is not thread-safe)."""
        assert self.loop is not None

        async def go() -> T:
            result = fn(self.cluster)
            self._flush()
            self._poke()
            return result

        return asyncio.run_coroutine_threadsafe(go(), self.loop).result(10)

    def inject(self, rule: dict[str, Any]) -> None:
        parsed = FaultPlan.parse_rule(rule)
        self.call(lambda c: c.plan.add(parsed))

    def failover(self, load_ms: int = 0) -> None:
        self.call(lambda c: c.failover(load_ms))

    def pause_clock(self, ms: int) -> None:
        self.call(lambda c: c.pause_clock(ms))

    # ------------------------------------------------------------------ serving

    def _poke(self) -> None:
        """Tick now (something from outside the loop may have made a timer due: ``call``)."""
        if self._tick_handle is not None and self.loop is not None:
            self._tick_handle.cancel()
            self._tick_handle = self.loop.call_soon(self._tick)

    def _tick(self) -> None:
        """The timer: ``cluster.tick()``, then the next tick armed at the next deadline or ``tick_ms`` from now,
        whichever is first (a callback of the loop, not a task waiting on an event with a timeout: an idle server
        with 200 connections spent 22 CPU-ms a second in the task's waits)."""
        try:
            self.cluster.tick()
            self._flush()
        except Exception as e:  # a bug of ours: counted, the timers go on
            self.loop_error("tick", e)
        wait = self.tick_ms / 1000
        try:
            wake = self.cluster.next_wakeup_ms()
            if wake is not None:
                wait = min(wait, max(0.0, (wake - self.cluster.now_ms()) / 1000))
        except Exception as e:  # a bug of ours: counted, the timers go on at the tick's pace
            self.loop_error("tick", e)
        assert self.loop is not None
        self._tick_handle = self.loop.call_later(max(wait, 0.001), self._tick)

    def _flush(self) -> None:
        out, self.cluster.out = self.cluster.out, []
        for conn, data, delay in out:
            link: _Link | None = getattr(conn, "link", None)
            if link is None:
                continue
            if data is None:
                link.close()
            elif delay > 0:
                assert self.loop is not None
                self.loop.call_later(delay / 1000, link.answered, data)
            else:
                link.answered(data)

    def _answer_now(self, conn: Conn, data: bytes) -> bool:
        """``Cluster.answer_now``: the answer to a connection's waiting request, written at once when that
        connection has nothing else to do (no request of its own being handled, no further frame buffered: so the
        cluster is not entered again from here); else declined, and it leaves with the turn's other answers."""
        link: _Link | None = getattr(conn, "link", None)
        if link is None or link.pumping or link.closed or link.transport is None or len(link.buf) - link.off >= 4:
            return False
        link.answered(data)  # not busy any more; nothing buffered to pump
        link.flush()
        return True

    def _write_all(self) -> None:
        """Write the answers given since the last flush, one write per connection: every read of one poll is
        handled before any answer leaves (as librdkafka's mock writes on the next poll), so the answers to
        many connections leave together and the clients wake once for many of them."""
        unsent, self._unsent = self._unsent, []
        for link in unsent:
            try:
                link.flush()
            except Exception as e:  # a bug of ours: counted, this connection closed, the others written
                self.loop_error("write", e, link)

    def _serve(self, node: int) -> "_Link":
        return _Link(self, node)

    def _handle(self, link: "_Link", frame: bytes) -> None:
        # a Fetch with nothing to give waits for data (long poll), outside the cluster
        if len(frame) >= 2 and frame[0] == 0 and frame[1] == 1 and self._fetch_direct():
            try:
                header, body = wire.decode_request(frame)
            except wire.WireError:
                pass
            else:
                self.cluster.stats["Fetch"] = self.cluster.stats.get("Fetch", 0) + 1
                self._spawn(self._fetch(link, header, body))
                return
        self.cluster.request(link.conn, frame)
        self._flush()

    def _fetch_direct(self) -> bool:
        return self.cluster.capture is None and not any(r.api in ("Fetch", "*") for r in self.cluster.plan.rules)

    async def _fetch(self, link: "_Link", header: Any, body: Any) -> None:
        try:
            await self._long_poll(link, header, body)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug of ours: counted, and the connection is not left waiting forever
            self.loop_error("Fetch", e, link)

    async def _long_poll(self, link: "_Link", header: Any, body: Any) -> None:
        cls = wire.response_class(1, header.api_version)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0, body.max_wait_ms) / 1000
        while True:
            assert self._data is not None
            data_event = self._data
            response, has_data = self.cluster.fetch(cls, body)
            remaining = deadline - loop.time()
            if has_data or remaining <= 0 or link.closed:
                link.answered(wire.encode_response(header, response))
                return
            try:
                await asyncio.wait_for(data_event.wait(), timeout=remaining)
            except asyncio.TimeoutError:
                pass


class _Link(asyncio.Protocol):
    """One client connection: frames in, one request at a time, answers out in request order."""

    def __init__(self, server: Server, node: int) -> None:
        self.server = server
        self.conn = server.cluster.connect(node)
        self.conn.link = self  # type: ignore[attr-defined]
        self.buf: bytes | bytearray = b""
        self.off = 0
        self.busy = False
        self.closed = False
        self.pumping = False
        self.queued = False  # in the server's list of connections to write at the next flush
        self.wbuf: list[bytes] = []
        self.transport: asyncio.Transport | None = None
        self._time = asyncio.get_running_loop().time
        self.last_active = self._time()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.closed:  # closed before its transport was made (the server stopping): close it now
            transport.close()
            return
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server._links.add(self)

    def data_received(self, data: bytes) -> None:
        self.last_active = self._time()
        # the unread bytes are kept as one bytes object and an offset into it (no copy of a read
        # that holds whole frames, the usual case)
        if self.off >= len(self.buf):
            self.buf = data
        elif type(self.buf) is bytearray and self.off == 0:
            self.buf += data  # a long frame arriving in pieces grows in place
        else:
            rest = bytearray(self.buf[self.off:])
            rest += data
            self.buf = rest
        self.off = 0
        self._pump()

    def _pump(self) -> None:
        """Hand the buffered frames to the server, one at a time; write what was answered at once."""
        if self.pumping:
            return  # an answer given while a frame is being handled: the loop below goes on
        self.pumping = True
        cluster = self.server.cluster
        try:
            while not self.busy and not self.closed and len(self.buf) - self.off >= 4:
                buf, off = self.buf, self.off
                (size,) = _SIZE.unpack_from(buf, off)
                if size < 0 or size > MAX_FRAME:
                    stats = self.server.cluster.stats
                    stats["closed_frame_size"] = stats.get("closed_frame_size", 0) + 1
                    self.close()  # Kafka closes a connection that announces an impossible size
                    return
                if len(buf) - off - 4 < size:
                    break
                self.off = off + 4 + size
                self.busy = True
                frame = buf[off + 4:off + 4 + size]
                if type(frame) is not bytes:
                    frame = bytes(frame)
                try:
                    if size > 9 and frame[1] == 12:  # a Heartbeat: answered at once in the fast lane, unless it says no
                        answer = cluster.heartbeat_answer(self.conn, frame)
                        if answer is not None:
                            self.busy = False
                            if answer:
                                self.wbuf.append(answer)
                            if cluster.out:  # answers to other connections that came due on the way
                                self.server._flush()
                            continue
                    self.server._handle(self, frame)
                except Exception as e:  # a bug of ours: counted, this connection closed, the server goes on
                    self.server.loop_error("request", e, self)
                    return
        finally:
            self.pumping = False
            if self.wbuf and not self.queued:
                self.queued = True
                server = self.server
                unsent = server._unsent
                unsent.append(self)
                if len(unsent) == 1:
                    if server.loop is not None:
                        server.loop.call_soon(server._write_all)
                    else:
                        server._write_all()

    def flush(self) -> None:
        """Write the answers held for this connection, in one write."""
        self.queued = False
        if self.wbuf:
            if self.transport is not None and not self.closed:
                self.transport.write(b"".join(self.wbuf) if len(self.wbuf) > 1 else self.wbuf[0])
            self.wbuf.clear()

    def eof_received(self) -> None:
        """The client's end is shut: the answers already given leave before the transport closes (None: close)."""
        if self.queued:
            self.flush()

    def answered(self, data: bytes) -> None:
        if self.closed:
            return
        if data:
            self.wbuf.append(data)
            if self.server.loop is not None:
                self.last_active = self.server.loop.time()
        self.busy = False
        if not self.pumping:
            self._pump()

    def close(self) -> None:
        if not self.closed and self.transport is not None:
            if self.wbuf:  # answers to earlier frames of the same read leave first
                self.transport.write(b"".join(self.wbuf))
                self.wbuf.clear()
            self.transport.close()
        self.closed = True
        self.buf, self.off = b"", 0  # a partial frame is freed now, not when a full GC breaks the cycles

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.buf, self.off = b"", 0
        self.wbuf.clear()
        self.server.cluster.disconnect(self.conn)
        self.conn.link = None  # type: ignore[attr-defined]
        self.transport = None
        self.server._closed(self)
