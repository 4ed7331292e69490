"""The trace checker's cost does not grow with the number of member names, and an unsorted file is sorted
in bounded memory (issue #31). No timing here (bench/bench_trace.py measures): the tests check the
mechanisms — members that left and settled are retired (the per-tick work follows the live members),
the compiled loop's tables grow instead of handing the rest of the file to the Python code, and the
sort spills runs to disk and merges them to the order the checker defines."""
from __future__ import annotations

import json
import os
import random

import pytest

import groupspec.trace.runs as runs
from groupspec.trace import check_events, check_paths
from groupspec.trace.runs import sorted_by_time, spill_sorted


def fleet(names: int, fresh: bool = True) -> list[str]:
    """A group whose members come and go: the oldest of three leaves, a member joins (a new name when
    ``fresh``, else the one that left), eager rebalances in between, a commit per member per phase."""
    out = [json.dumps({"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 3})]
    live = ["m0", "m1", "m2"]
    ts, gen = 10, 1

    def ev(m, kind, parts=None, **kw):
        d = {"ts_ms": ts, "group": "g", "member": m, "event": kind}
        if parts is not None:
            d["partitions"] = [["t", p] for p in parts]
        d.update(kw)
        out.append(json.dumps(d, separators=(",", ":")))

    for m in live:
        ev(m, "joined")
    ts += 10
    for i, m in enumerate(live):
        ev(m, "assigned", [i], generation=gen)
    nxt = 3
    while nxt < names:
        ts += 100
        for i, m in enumerate(live):
            ev(m, "commit", partitions=[["t", i, ts]], accepted=True, generation=gen)
        old = live.pop(0)
        ts += 100
        ev(old, "revoked", [0], generation=gen)
        ev(old, "left")
        for i, m in enumerate(live):
            ev(m, "revoked", [i + 1], generation=gen)
        gen += 1
        ts += 10
        ev(live[0], "assigned", [0, 1], generation=gen)
        ev(live[1], "assigned", [2], generation=gen)
        ts += 100
        new = f"m{nxt}" if fresh else old
        nxt += 1
        ev(new, "joined")
        ev(live[0], "revoked", [0, 1], generation=gen)
        ev(live[1], "revoked", [2], generation=gen)
        live.append(new)
        gen += 1
        ts += 10
        for i, m in enumerate(live):
            ev(m, "assigned", [i], generation=gen)
    return out


def test_members_that_left_are_retired_and_the_compiled_loop_reads_past_its_first_table_size(tmp_path):
    """17,000 names (more than the compiled loop's first table of 16,384 strings): the loop grows its
    tables and reads every line; the checker keeps records of the live members only."""
    p = tmp_path / "fleet.jsonl"
    lines = fleet(17_000)
    p.write_text("\n".join(lines) + "\n")
    r = check_paths([str(p)]).traces[0]
    [g] = r.groups
    assert r.ok
    assert r.fast_events >= r.events - 100, (r.fast_events, r.events)
    assert len(g.members) <= 4 and len(g.retired) >= 16_990
    assert len(g.to_dict()["members"]) == 17_000


def test_retirement_changes_no_report():
    """The same trace read by GroupChecker.feed alone, and with names reused (restarts): same verdicts;
    a retired name's line other than `joined` is still a trace defect."""
    lines = [json.loads(x) for x in fleet(300)]
    r = check_events(lines)
    assert r.ok and len(r.groups[0].members) <= 4
    again = [json.loads(x) for x in fleet(300, fresh=False)]
    r2 = check_events(again)
    assert r2.ok and sorted(r2.to_dict()["groups"][0]["members"]) == ["m0", "m1", "m2"]
    late = lines + [{"ts_ms": lines[-1]["ts_ms"] + 1, "group": "g", "member": "m5", "event": "commit",
                     "partitions": [["t", 0, 1]], "accepted": True}]
    [d] = [p for p in check_events(late).to_dict()["groups"][0]["properties"] if p["id"] == "well_formed"][0]["violations"]
    assert d["message"] == "m5: commit after left (ignored)"


@pytest.mark.parametrize("memory", [1, 2_000, 50_000, None])
def test_the_sort_spills_and_merges_to_the_checkers_order(memory):
    rng = random.Random(31)
    print("seed 31")
    items = []
    for n in range(1, 3000):
        ts = rng.randrange(0, 500)
        if rng.random() < 0.05:
            raw = b"not json"
        elif rng.random() < 0.05:
            raw = json.dumps({"member": "a", "event": "joined"}).encode()  # no time: keeps the one before
        else:
            raw = json.dumps({"ts_ms": ts, "member": "a", "event": "x"}).encode()
        items.append((n, raw))
    want = [(n, raw) for n, raw in sorted_by_time(
        [(n, json.loads(raw) if raw != b"not json" else "bad") for n, raw in items])]
    got = list(spill_sorted(iter(items), memory))
    assert [n for n, _ in got] == [n for n, _ in want]


def test_an_unsorted_file_checked_in_spilled_runs_gives_the_same_report(tmp_path, monkeypatch):
    lines = fleet(400)
    body = lines[1:]
    swapped = [lines[0]]
    # every other block of 40 lines written before the one it follows
    blocks = [body[k:k + 40] for k in range(0, len(body), 40)]
    for k in range(0, len(blocks) - 1, 2):
        swapped += blocks[k + 1] + blocks[k]
    if len(blocks) % 2:
        swapped += blocks[-1]
    p = tmp_path / "unsorted.jsonl"
    p.write_text("\n".join(swapped) + "\n")
    whole = check_paths([str(p)]).to_dict()
    monkeypatch.setattr(runs, "SORT_MEMORY", 4_000)
    spilled = check_paths([str(p)]).to_dict()
    assert whole == spilled
    assert whole["traces"][0].get("sorted") is True
    assert os.path.getsize(p) > 40 * 4_000  # many runs were spilled


@pytest.mark.parametrize("fresh", [True, False])
def test_the_compiled_loop_retires_and_revives_as_feed_does(tmp_path, monkeypatch, fresh):
    """Byte-identical reports with and without the compiled loop on a fleet (new names) and on restarts
    under the same names (retired, then revived by their `joined`), with a late line of a retired
    member (a defect) and a long unowned window (a finding) planted."""
    import groupspec.trace.fastpath as fastpath

    lines = fleet(1200, fresh=fresh)  # fewer than the 10,000 windows listed (past them, which are listed
    # when several close in one tick follows set order in feed(), interning order in the loop)
    last = json.loads(lines[-1])["ts_ms"]
    lines.append(json.dumps({"ts_ms": last + 1, "group": "g", "member": "m0", "event": "commit",
                             "partitions": [["t", 0, 1]], "accepted": True}))
    lines.append(json.dumps({"ts_ms": last + 2, "group": "g", "member": lines and json.loads(lines[-2])["member"],
                             "event": "revoked", "partitions": [["t", 0]]}))
    lines.append(json.dumps({"ts_ms": last + 60_000, "group": "g", "event": "end"}))
    p = tmp_path / "f.jsonl"
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size > fastpath.MIN_FAST
    fast = check_paths([str(p)])
    assert fast.traces[0].fast_events > 0.9 * fast.traces[0].events
    monkeypatch.setenv("GROUPSPEC_TRACE_PURE", "1")
    pure = check_paths([str(p)])
    assert pure.traces[0].fast_events == 0
    assert json.dumps(fast.to_dict(), sort_keys=True) == json.dumps(pure.to_dict(), sort_keys=True)
    assert not fast.ok
