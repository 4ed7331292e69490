"""The long fuzz of `groupspec serve` (issue #31): bad bytes for minutes, every request accounted for.

A server (``protocol="both"``: every API the server has) runs in a thread of this process; this
process opens one connection per exchange and writes 1 to 5 frames in one write (pipelined), each
a real client's request (``tests/serve_data/captured_requests.jsonl``, correlation ids renumbered)
damaged one of four ways, or not at all:

* ``flip``: 1 to 4 random bits flipped anywhere after the size;
* ``null``: one field (string, bytes, array or struct, at any depth) of the decoded request set to
  null and the request encoded again (the codec writes null: -1, or 0 in compact form), every field
  in turn over the run;
* ``lie``: a length (2 or 4 bytes at a random place after the header, or the frame's own size) made
  to lie: -2, -1, 0x7fff, 0x7fffffff, or off by a few bytes;
* ``cut``: the frame cut short (and its size told the truth) or padded with junk;
* ``clean``: the request as the client sent it.

Then it reads answers until every frame is accounted for or the server closed the connection
(waiting up to ``--wait`` seconds for each answer, counted from the previous one).
Each frame must end one of these ways: answered (a well-framed answer carrying its correlation id,
in order); the connection closed by one of Kafka's rules, counted by the server under a
``closed_*`` statistic (no answer, as Kafka closes: unreadable header, impossible size, an API or
version not served, a body that does not parse); no answer by rule (a Produce with ``acks=0``); or
still pending by rule after ``--wait`` seconds: a JoinGroup/SyncGroup parked by the coordinator, a
Fetch long-polling (``max_wait_ms``), or a frame queued behind one (Kafka mutes a connection with a
request in flight). Anything else is a failure: a frame unanswered on an open connection for no
reason (wedged), a close no rule counted, an answer with the wrong correlation id, and any
``internal_error`` or ``loop_error`` the server counted (exceptions that escaped its handling).

Prints the seed (``--seed`` replays the run; ``--first N --count 1`` one exchange), a table of the
outcomes, and exits 1 on any failure. Usage:
    python bench/fuzz_serve.py --minutes 10 [--seed S] [--wait 1.0] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import socket
import struct
import sys
import time
from collections import Counter
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "serve_data" / "captured_requests.jsonl"

from groupspec.reference.classic import CoordinatorConfig  # noqa: E402
from groupspec.serve import Cluster, Server, wire  # noqa: E402

_BY_RULE = ("closed_unsupported", "closed_malformed", "closed_unreadable", "closed_frame_size", "closed_produce_error")
_PENDING_APIS = {11: "parked JoinGroup", 14: "parked SyncGroup", 1: "long-polled Fetch"}


def _null_paths(struct_field: Any, obj: Any, version: int, prefix: tuple = ()) -> list[tuple]:
    """Every field (path of names and list indexes) that could be written as null on the wire."""
    out = []
    for f in struct_field._fields:
        if not f.for_version_q(version) or f.tagged_field_q(version):
            continue
        value = getattr(obj, f.name, None)
        if value is None:
            continue
        if f.is_array() or f.is_struct() or f.type_str in ("string", "bytes", "records"):
            out.append(prefix + (f.name,))
        if f.is_struct_array():
            for i, item in enumerate(value[:3]):
                out += _null_paths(f.array_of, item, version, prefix + (f.name, i))
        elif f.is_struct():
            out += _null_paths(f, value, version, prefix + (f.name,))
    return out


def _with_null(frame: bytes, path: tuple) -> bytes | None:
    header, body = wire.decode_request(frame, wire.supported_for("both"))
    target = body
    for step in path[:-1]:
        target = target[step] if isinstance(step, int) else getattr(target, step)
    setattr(target, path[-1], None)
    try:
        return wire.frame_request(body, header.correlation_id, header.client_id, header.api_version)[4:]
    except Exception:  # the codec cannot write a null there (a fixed-size struct): not a wire shape
        return None


class Frames:
    """The captured requests and, per request, the fields that can be nulled."""

    def __init__(self) -> None:
        rows = [json.loads(line) for line in DATA.read_text().splitlines()]
        both = wire.supported_for("both")
        self.frames: list[bytes] = []
        self.paths: list[list[tuple]] = []
        for r in rows:
            frame = bytes.fromhex(r["hex"])
            try:
                header, body = wire.decode_request(frame, both)
            except wire.WireError:
                continue
            if header.api_key in (12, 14):  # read directly (no codec object): damaged by the other ways
                paths: list[tuple] = []
            else:
                paths = _null_paths(wire.APIS[header.api_key][1]._struct, body, header.api_version)
            self.frames.append(frame)
            self.paths.append(paths)

    def damaged(self, rng: random.Random, corr: int) -> tuple[str, bytes, bool]:
        """(kind, frame bytes with its size, whether the size tells the truth)."""
        i = rng.randrange(len(self.frames))
        frame = bytearray(self.frames[i])
        kind = rng.choice(["flip", "flip", "null", "lie", "cut", "clean"])
        if kind == "null":
            paths = self.paths[i]
            if paths:  # one field at random: over a run every field of every request is nulled
                nulled = _with_null(bytes(frame), paths[rng.randrange(len(paths))])
                if nulled is not None:
                    frame = bytearray(nulled)
                else:
                    kind = "clean"
            else:
                kind = "clean"
        struct.pack_into(">i", frame, 4, corr)
        if kind == "flip":
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(frame))
                frame[pos] ^= 1 << rng.randrange(8)
        elif kind == "cut":
            if rng.random() < 0.5:
                frame = frame[:rng.randint(0, len(frame))]
            else:
                frame += rng.randbytes(rng.randint(1, 16))
        elif kind == "lie":
            value = rng.choice([-2, -1, 0x7FFF, 0x7FFFFFFF, rng.randint(-8, 8)])
            if rng.random() < 0.25:  # the frame's own size lies
                size = value if value > 0x7FFF else len(frame) + value
                return kind, struct.pack(">i", size) + bytes(frame), False
            if len(frame) > 12:
                pos = rng.randrange(10, len(frame) - 1)
                if rng.random() < 0.5 or pos + 4 > len(frame):
                    frame[pos:pos + 2] = struct.pack(">h", max(-32768, min(32767, value)))
                else:
                    frame[pos:pos + 4] = struct.pack(">i", value)
        return kind, struct.pack(">i", len(frame)) + bytes(frame), True


def _header(frame: bytes) -> tuple[int, int] | None:
    if len(frame) < 12:
        return None
    key, _version, corr = struct.unpack_from(">hhi", frame, 4)
    return key, corr


def _acks0(frame: bytes) -> bool:
    try:
        header, body = wire.decode_request(frame[4:], wire.supported_for("both"))
    except wire.WireError:
        return False
    return header.api_key == 0 and body.acks == 0


def exchange(srv: Server, frames: list[bytes], truthful: list[bool], wait: float) -> tuple[Counter, list[str]]:
    """Send the frames in one write; account for each (module docstring)."""
    outcome: Counter = Counter()
    failures: list[str] = []
    before = srv.call(lambda c: {k: c.stats.get(k, 0) for k in _BY_RULE + ("loop_error", "internal_error")})
    sock = socket.create_connection(("127.0.0.1", srv.cluster.ports[0]), timeout=5)
    sock.sendall(b"".join(frames))
    expect = []  # (api key, correlation id) of the frames that stand alone, in order
    for f, ok in zip(frames, truthful):
        if not ok:
            break  # a frame whose size lies: what follows is read as part of it, or as its own frames
        h = _header(f)
        expect.append(h)
    data = b""
    closed = False
    deadline = time.monotonic() + wait
    sock.settimeout(0.05)
    answered = 0
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            chunk = None
        except ConnectionResetError:
            closed, chunk = True, b""
        if chunk == b"":
            closed = True
            break
        if chunk:
            data += chunk
        while len(data) >= 8:
            (size,) = struct.unpack_from(">i", data)
            if len(data) < 4 + size:
                break
            (corr,) = struct.unpack_from(">i", data, 4)
            if answered < len(expect) and expect[answered] is not None and expect[answered][1] == corr:
                answered += 1
                outcome["answered"] += 1
                # the next frame was read only now (one request at a time per connection): its wait starts
                # now, so a long-polled Fetch ahead of it (up to its max_wait_ms) does not eat its time
                deadline = time.monotonic() + wait
            elif not all(truthful) and 1000 <= corr < 1000 + len(frames):
                outcome["answered (frames re-cut by a lying size)"] += 1  # the bytes after the lie, read as frames
            else:
                failures.append(f"answer with correlation id {corr}, expected {expect[answered:answered + 1]}")
            data = data[4 + size:]
        if answered == len(expect) and not data and all(ok for ok in truthful):
            break
    sock.close()
    time.sleep(0.002)  # let the server see the close before its statistics are read
    after = srv.call(lambda c: {k: c.stats.get(k, 0) for k in _BY_RULE + ("loop_error", "internal_error")})
    by_rule = sum(after[k] - before[k] for k in _BY_RULE)
    for k in ("loop_error", "internal_error"):
        if after[k] > before[k]:
            failures.append(f"{k}: " + (srv.loop_errors[-1] if k == "loop_error" and srv.loop_errors
                                        else srv.call(lambda c: getattr(c, "last_internal_error", ""))))
    rest = list(zip(frames[answered:], expect[answered:]))
    if closed:
        if rest:
            if by_rule >= 1:
                outcome["closed by rule"] += 1
                for k in _BY_RULE:
                    if after[k] > before[k]:
                        outcome[k] += after[k] - before[k]
                outcome["not reached (after the closing frame)"] += len(rest) - 1
            elif all(_acks0(f) for f, _h in rest):
                outcome["no answer by rule (acks=0)"] += len(rest)
            else:
                failures.append(f"closed without a rule, {len(rest)} frame(s) unanswered: "
                                + rest[0][0][:48].hex())
    elif rest:
        first_frame, first = rest[0]
        if first is not None and first[0] in _PENDING_APIS:
            outcome["pending by rule: " + _PENDING_APIS[first[0]]] += 1
            outcome["queued behind a pending request"] += len(rest) - 1
        elif _acks0(first_frame):
            outcome["no answer by rule (acks=0)"] += 1
            outcome["queued behind a pending request"] += len(rest) - 1  # pragma: no cover - rare
        elif any(not ok for ok in truthful):
            outcome["waiting for the rest of a frame (size lies)"] += 1
        else:
            failures.append(f"wedged: no answer on an open connection to {first_frame[:48].hex()}")
    elif any(not ok for ok in truthful):
        outcome["waiting for the rest of a frame (size lies)"] += 1
    return outcome, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--first", type=int, default=0, help="first exchange to run (replay)")
    ap.add_argument("--count", type=int, default=None, help="exchanges to run (default: until --minutes)")
    ap.add_argument("--wait", type=float, default=1.0, help="seconds to wait for the answers of one exchange")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"fuzz_serve: seed {seed} (replay: python bench/fuzz_serve.py --seed {seed} --first N --count 1)",
          file=sys.stderr)
    frames = Frames()
    srv = Server(Cluster(topics={"t": 3}, record=False, protocol="both",
                         config=CoordinatorConfig(initial_rebalance_delay_ms=0))).start()
    totals: Counter = Counter()
    failures: list[str] = []
    end = time.monotonic() + args.minutes * 60
    start_cpu, start = time.process_time(), time.monotonic()
    i = args.first
    try:
        while time.monotonic() < end and (args.count is None or i < args.first + args.count):
            rng = random.Random(f"{seed}:{i}")
            n = rng.choice([1, 1, 1, 2, 3, 5])
            kinds, batch, truthful = [], [], []
            for k in range(n):
                kind, frame, ok = frames.damaged(rng, 1000 + k)
                kinds.append(kind)
                batch.append(frame)
                truthful.append(ok)
            outcome, bad = exchange(srv, batch, truthful, args.wait)
            totals.update(outcome)
            totals.update("sent: " + k for k in kinds)
            totals["exchanges"] += 1
            totals["frames"] += n
            for b in bad:
                failures.append(f"exchange {i}: {b}")
            i += 1
            if totals["exchanges"] % 2000 == 0:
                print(f"  {totals['exchanges']} exchanges, {len(failures)} failure(s), "
                      f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    finally:
        stats = srv.call(lambda c: dict(c.stats))
        srv.stop()
    wall = time.monotonic() - start
    report = {"seed": seed, "wall_s": round(wall, 1), "exchanges": totals["exchanges"], "frames": totals["frames"],
              "outcomes": dict(sorted(totals.items())), "server_stats": stats,
              "loop_error": stats.get("loop_error", 0), "internal_error": stats.get("internal_error", 0),
              "failures": failures[:50], "failure_count": len(failures),
              "load_avg": os.getloadavg(), "client_cpu_s": round(time.process_time() - start_cpu, 1)}
    if args.json:
        print(json.dumps(report))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"fuzz_serve: {totals['exchanges']} exchanges, {totals['frames']} frames in {wall:.0f} s "
                            f"(seed {seed}; load average {os.getloadavg()[0]:.1f}: figures under load)")
        table.add_column("outcome")
        table.add_column("count", justify="right")
        for k, v in sorted(totals.items()):
            table.add_row(k, str(v))
        table.add_row("loop_error (server)", str(stats.get("loop_error", 0)))
        table.add_row("internal_error (server)", str(stats.get("internal_error", 0)))
        table.add_row("failures", str(len(failures)))
        Console().print(table)
        for f in failures[:20]:
            print("FAIL", f)
    return 1 if failures or stats.get("loop_error", 0) or stats.get("internal_error", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
