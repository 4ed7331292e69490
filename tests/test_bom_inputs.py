"""A UTF-8 byte order mark at the start of an input file is no part of its first line (found by a newcomer's tour:
a trace, a script or a transcript saved by a Windows editor had a defect, or was refused, at line 1).

Every reader of the command line is walked: the trace reader (the Python loop, the compiled inner loop of a long
file, the sorted re-read of a file whose time goes back, gzip, standard input), ``groupspec audit``'s look at a
file before Spark starts, ``read_text`` (coordinator scripts and transcripts, ``serve --fault-script``) and
``assignor run``'s input."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.trace import iter_results

EXE = os.path.join(os.path.dirname(sys.executable), "groupspec")
BOM = b"\xef\xbb\xbf"
REPLAY = Path(__file__).resolve().parent / "replay" / "01_two_step_join.jsonl"


def gs(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], input=stdin, capture_output=True, timeout=300, cwd=cwd)


def _events(n_commits: int = 0) -> list[dict]:
    evs = [{"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 2},
           {"ts_ms": 1, "group": "g", "member": "a", "event": "joined", "generation": 1},
           {"ts_ms": 2, "group": "g", "member": "a", "event": "assigned", "partitions": [["t", 0], ["t", 1]],
            "generation": 1}]
    evs += [{"ts_ms": 10 + k, "group": "g", "member": "a", "event": "commit", "partitions": [["t", 0, k]],
             "accepted": True, "generation": 1} for k in range(n_commits)]
    return evs


def _jsonl(evs: list[dict]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in evs).encode()


def _clean(res) -> None:
    assert res.ok and not res.defects, res.to_dict()
    [g] = res.groups
    assert not g.defects and g.to_dict()["members"] == ["a"], g.defects


def test_a_trace_file_with_a_bom_reads_as_without(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(BOM + _jsonl(_events(3)))
    [res] = iter_results([str(p)])
    _clean(res)
    assert res.events == 6
    z = tmp_path / "t.jsonl.gz"
    z.write_bytes(gzip.compress(BOM + _jsonl(_events(3))))
    [res] = iter_results([str(z)])
    _clean(res)
    out = gs("trace", "check", "--json", "-", stdin=BOM + _jsonl(_events(3)))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ok"] is True


def test_a_long_trace_with_a_bom_goes_through_the_compiled_inner_loop(tmp_path):
    p = tmp_path / "long.jsonl"
    p.write_bytes(BOM + _jsonl(_events(20_000)))  # past fastpath.MIN_FAST (1 MB)
    [res] = iter_results([str(p)])
    _clean(res)
    assert res.fast_events > 0


def test_a_trace_with_a_bom_whose_time_goes_back_is_read_again_sorted(tmp_path):
    evs = _events(2)
    evs[-1], evs[-2] = evs[-2], evs[-1]  # 11 before 10: the file is read again, sorted (spill_sorted, iter_file)
    p = tmp_path / "back.jsonl"
    p.write_bytes(BOM + _jsonl(evs))
    [res] = iter_results([str(p)])
    _clean(res)
    assert res.sorted_by_checker


def test_audit_looks_at_a_trace_with_a_bom_as_a_trace(tmp_path):
    from groupspec.pipeline.audit import expand_inputs

    p = tmp_path / "one.jsonl"
    p.write_bytes(BOM + _jsonl(_events()[1:2]))  # one line: the look before Spark reads nothing else
    assert expand_inputs([str(p)]) == ([str(p)], [])


def _script_without_comments() -> bytes:
    return b"".join(line + b"\n" for line in REPLAY.read_bytes().splitlines() if not line.startswith(b"#"))


def test_coordinator_replay_and_check_read_a_script_and_a_transcript_with_a_bom(tmp_path):
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(_script_without_comments())
    want = gs("coordinator", "replay", str(plain))
    assert want.returncode == 0, want.stderr
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(BOM + plain.read_bytes())
    got = gs("coordinator", "replay", str(bom))
    assert got.returncode == 0 and got.stdout == want.stdout, got.stderr
    got = gs("coordinator", "replay", "-", stdin=BOM + plain.read_bytes())
    assert got.returncode == 0 and got.stdout == want.stdout, got.stderr
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_bytes(BOM + want.stdout)
    checked = gs("coordinator", "check", str(bom), str(transcript), "--json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["ok"] is True


def test_serve_reads_a_fault_script_with_a_bom(tmp_path):
    """Its second line is wrong on purpose: the refusal names line 2, so line 1 (after the BOM) was read."""
    f = tmp_path / "faults.jsonl"
    f.write_bytes(BOM + b'{"on": {"api": "Heartbeat"}, "do": "drop"}\n{"on": {"at_ms": 5}, "do": "explode"}\n')
    r = gs("serve", "--fault-script", str(f), "--port", "0", "--duration", "0.1")
    err = r.stderr.decode()
    assert r.returncode == 2 and f"{f}: line 2:" in err and "line 1" not in err, err


@pytest.mark.parametrize("how", ["--input", "stdin"])
def test_assignor_run_reads_input_with_a_bom(tmp_path, how):
    doc = BOM + b'{"partitions_per_topic": {"t": 2}, "subscriptions": {"a": {"topics": ["t"]}}}'
    if how == "stdin":
        r = gs("assignor", "run", "range", stdin=doc)
    else:
        (tmp_path / "in.json").write_bytes(doc)
        r = gs("assignor", "run", "range", "--input", "in.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"a": [["t", 0], ["t", 1]]}


def test_the_byte_a_decoding_error_names_counts_the_bom_too(tmp_path):
    from groupspec.cli._common import UserError, read_text, utf8_text

    data = BOM + b'{"a\xff"}'
    with pytest.raises(UserError, match=r"x: not UTF-8 text \(invalid start byte at byte 6\)"):
        utf8_text(data, "x")
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    with pytest.raises(UserError, match=r"not UTF-8 text \(invalid start byte at byte 6\)"):
        read_text(str(p))
    p.write_bytes(data[len(BOM):])
    with pytest.raises(UserError, match=r"not UTF-8 text \(invalid start byte at byte 3\)"):
        read_text(str(p))
    p.write_bytes(BOM + b"abc")
    assert read_text(str(p)) == "abc" and utf8_text(BOM + b"abc", "x") == "abc"
