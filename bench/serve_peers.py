"""The two servers bench/bench_serve.py runs the JoinGroup/SyncGroup round against, each in a process
of its own (not a benchmark: `make bench` runs bench/bench_*.py):

* `--timeline-server DELAY_MS PARTITIONS`: the `Server` and `Cluster` that `groupspec serve` runs,
  with timestamps on each request handed in, each answer given and each tick;
* `--canned-server N`: the transport alone, a server on the same event loop that decides nothing.

Each prints its port as one JSON line first.

It also holds `base_checkout` (another git revision's tree, importable: bench_serve --base) and the join
bench/bench_serve.py's heartbeat comparison makes against every peer (groupspec serve,
librdkafka's mock cluster, Tansu): `join_any` speaks versions all three answer (JoinGroup v5, SyncGroup v3; the mock
answers JoinGroup only up to v6 and SyncGroup up to v4) and decodes with kafka-python's codec.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from typing import Any

from groupspec.reference.classic import Assignment, Subscription, encode_assignment, encode_subscription
from groupspec.reference.classic import CoordinatorConfig
from groupspec.serve import wire

META = encode_subscription(Subscription(("t",)))


def join_any(members: list[Any], exchange: Any, group: str = "g", session_timeout_ms: int = 30000) -> None:
    """Join ``members`` (bench_serve.Member: connected, non-blocking) to ``group`` and sync them: JoinGroup v5
    (rejoining with the member id when the server asks for one: MEMBER_ID_REQUIRED), then SyncGroup v3 with the
    leader's assignment for everyone; sets each member's ``member_id`` and ``generation``. A long
    ``session_timeout_ms`` keeps a peer's members in its group while the other peers are measured."""
    from kafka.protocol.consumer import JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse

    proto = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=META)]

    def join_frame(mb: Any) -> bytes:
        req = JoinGroupRequest(version=5, group_id=group, session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=60000,
                               member_id=mb.member_id, group_instance_id=None, protocol_type="consumer", protocols=proto)
        return wire.frame_request(req, 2, mb.name, 5)

    leader: list[str] = []

    def on_join(mb: Any, answer: bytes, _now: float) -> bytes | None:
        r = JoinGroupResponse.decode(answer, version=5, header=True)
        if r.error_code == 79:  # MEMBER_ID_REQUIRED: join again with the id given
            mb.member_id = r.member_id
            return join_frame(mb)
        assert r.error_code == 0, f"JoinGroup answered error {r.error_code}"
        mb.member_id, mb.generation = r.member_id, r.generation_id
        if r.leader == r.member_id:
            leader.append(r.member_id)
        return None

    for mb in members:
        mb.member_id = ""
        mb.frame = join_frame(mb)
    exchange(members, on_join)
    assert len(leader) == 1 and len({mb.generation for mb in members}) == 1, "not one generation with one leader"
    asg = SyncGroupRequest.SyncGroupRequestAssignment
    everyone = [asg(member_id=mb.member_id, assignment=encode_assignment(Assignment((("t", i),))))
                for i, mb in enumerate(members)]
    for mb in members:
        req = SyncGroupRequest(version=3, group_id=group, generation_id=mb.generation, member_id=mb.member_id,
                               group_instance_id=None, assignments=everyone if mb.member_id == leader[0] else [])
        mb.frame = wire.frame_request(req, 3, mb.name, 3)

    def on_sync(_mb: Any, answer: bytes, _now: float) -> None:
        r = SyncGroupResponse.decode(answer, version=3, header=True)
        assert r.error_code == 0, f"SyncGroup answered error {r.error_code} to {_mb.member_id} (leader {leader[0]}, ids {[m.member_id for m in members]}, generations {[m.generation for m in members]})"
        return None

    # the followers' first, the leader's once they are in: librdkafka's mock completes the sync as soon as the leader's
    # assignment covers every member, and answers a SyncGroup that comes after that INVALID_REQUEST (its group is Up)
    followers = [mb for mb in members if mb.member_id != leader[0]]
    for mb in followers:
        mb.sock.sendall(mb.frame)
        mb.frame = b""
    time.sleep(0.5)
    exchange([mb for mb in members if mb.member_id == leader[0]], on_sync)
    exchange(followers, on_sync)


def base_checkout(rev: str) -> str:
    """The tree of git revision ``rev`` of this repository in a temporary directory, laid out as the installed
    namespace (``groupspec/`` with ``model``, ``reference``, ``proofs``, ``pipeline`` inside it, as pyproject's
    package-dir maps them), for ``PYTHONPATH``: a server of that revision in the same run (A/B)."""
    import atexit
    import shutil
    import tarfile
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp(prefix="groupspec-base-")
    atexit.register(shutil.rmtree, tmp, True)
    archive = subprocess.run(["git", "-C", root, "archive", "--format=tar", rev], check=True, capture_output=True).stdout
    src = os.path.join(tmp, "src")
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        # our own archive; the "data" filter where this Python has it (3.11.4 and later; Debian's 3.11.2 does not)
        tar.extractall(src, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    pkg = os.path.join(tmp, "path", "groupspec")
    shutil.copytree(os.path.join(src, "groupspec"), pkg)
    for sub in ("model", "reference", "proofs", "pipeline"):
        os.symlink(os.path.join(src, sub), os.path.join(pkg, sub))
    return os.path.join(tmp, "path")


def start_server(delay_ms: int, partitions: int, base_path: str | None = None) -> tuple[subprocess.Popen, int]:
    """`groupspec serve` in a process of its own, this checkout's, or the tree at ``base_path`` (base_checkout):
    (the process, its port)."""
    code = "from groupspec.cli import main; main()"
    if base_path is not None:  # the editable install's finder (this worktree) taken off, the revision's tree first
        code = (f"import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
                f"sys.path.insert(0, {base_path!r}); {code}")
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--port", "0",
                             "--json", "--brokers", "1", "--partitions", f"t={partitions}",
                             "--initial-rebalance-delay-ms", str(delay_ms)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = json.loads(line)["listening"][0]["port"]
    return proc, port


def timeline_server_main(delay_ms: int, partitions: int) -> None:
    from groupspec.serve import Cluster, Server
    from groupspec.serve import server as server_mod

    # (time, api key or -2 for a tick, 0 request in or tick / 1 answer out, process CPU-seconds)
    events: list[tuple[float, int, int, float]] = []
    clock, cpu = time.perf_counter, time.process_time
    handle, answered, tick = Server._handle, server_mod._Link.answered, Cluster.tick

    def _handle(self: Server, link: Any, frame: bytes) -> None:
        link.api = frame[1] if len(frame) > 1 else -1
        events.append((clock(), link.api, 0, cpu()))
        handle(self, link, frame)

    def _answered(self: Any, data: bytes) -> None:
        events.append((clock(), getattr(self, "api", -1), 1, cpu()))
        answered(self, data)

    def _tick(self: Cluster) -> None:
        events.append((clock(), -2, 0, cpu()))
        tick(self)

    Server._handle = _handle  # type: ignore[method-assign]
    server_mod._Link.answered = _answered  # type: ignore[method-assign]
    Cluster.tick = _tick  # type: ignore[method-assign]
    cluster = Cluster(topics={"t": partitions}, brokers=1, record=False,
                      config=CoordinatorConfig(initial_rebalance_delay_ms=delay_ms))
    server = Server(cluster).start()
    print(json.dumps({"port": cluster.ports[0]}), flush=True)
    for line in sys.stdin:
        if line.strip() == "dump":
            print(json.dumps({"events": server.call(lambda _c: list(events)), "cpu": time.process_time()}), flush=True)
            server.call(lambda _c: events.clear())
    server.stop()


def _join_v9_member_id_empty(frame: bytes, client_id_len: int) -> bool:
    """Whether a JoinGroup v9 request (short group id and member id) has an empty member id: header,
    tagged fields, group id, two timeouts, then the member id's compact length."""
    pos = 10 + max(client_id_len, 0) + 1
    pos += frame[pos] + 8
    return frame[pos] == 1


def canned_server_main(n: int) -> None:
    """The transport alone, for the round: a server on the same event loop (uvloop, an
    ``asyncio.Protocol`` per connection, TCP_NODELAY) that makes no decision. It gives the first
    JoinGroup of each connection MEMBER_ID_REQUIRED with an id, parks the second until ``n`` are
    parked, then writes the JoinGroup answers (built while the requests came in, the leader's with
    every member, as the coordinator's), parks SyncGroups until the leader's, then answers them
    all with an assignment of the size the coordinator's has. Prints its port; stops on stdin EOF."""
    import asyncio

    from groupspec.serve.server import run_loop

    leader_asg = encode_assignment(Assignment((("t", 0),)))
    state: dict[str, Any] = {"joins": [], "ids": [], "syncs": [], "leader_synced": False, "round": 0}

    class Canned(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.t, self.buf, self.member_id = transport, b"", ""

        def data_received(self, data: bytes) -> None:
            self.buf += data
            while len(self.buf) >= 4:
                (size,) = struct.unpack_from(">i", self.buf)
                if len(self.buf) < 4 + size:
                    return
                frame, self.buf = self.buf[4:4 + size], self.buf[4 + size:]
                self.frame(frame)

        def frame(self, frame: bytes) -> None:
            api, _v, corr, clen = struct.unpack_from(">hhih", frame)
            header = wire._HeaderInfo(api, 9 if api == 11 else 5, corr, None)
            if api == 18:
                self.t.write(struct.pack(">iih", 6, corr, 0))
            elif api == 11 and _join_v9_member_id_empty(frame, clen):
                self.member_id = f"member-{id(self)}"
                self.t.write(wire.join_group_response(header, 79, -1, "consumer", None, "", False, self.member_id, []))
            elif api == 11:
                if not state["joins"]:
                    state["round"] += 1
                    state["ids"], state["syncs"], state["leader_synced"] = [], [], False
                state["ids"].append(self.member_id)
                state["joins"].append((self, header))
                if len(state["joins"]) == n:
                    ids, leader = state["ids"], state["ids"][0]
                    everyone = [(mid, None, META) for mid in ids]
                    answers = [(p, wire.join_group_response(h, 0, state["round"], "consumer", "range", leader, False,
                                                            p.member_id, everyone if p.member_id == leader else []))
                               for p, h in state["joins"]]
                    state["joins"] = []
                    for p, answer in answers:
                        p.t.write(answer)
            elif api == 14:
                answer = wire.sync_group_response(header, 0, "consumer", "range", leader_asg)
                state["syncs"].append((self, answer))
                if self.member_id == state["ids"][0]:
                    state["leader_synced"] = True
                if state["leader_synced"]:
                    for p, a in state["syncs"]:
                        p.t.write(a)
                    state["syncs"] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        srv = await loop.create_server(Canned, "127.0.0.1", 0)
        print(json.dumps({"port": srv.sockets[0].getsockname()[1]}), flush=True)
        await loop.run_in_executor(None, sys.stdin.read)
        srv.close()

    run_loop(main())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--canned-server":
        canned_server_main(int(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "--timeline-server":
        timeline_server_main(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit(__doc__)
