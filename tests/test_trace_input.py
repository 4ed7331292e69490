"""Input `groupspec trace check` and `groupspec audit` refuse in one line (issue #31): empty traces, the
sweep's Parquet traces, times that are no time (1e300, negative, NaN)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.trace import check_events

GS = [str(Path(sys.executable).parent / "groupspec")]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(GS + list(args), capture_output=True, text=True, timeout=300)


def one_line_error(out: subprocess.CompletedProcess, *needles: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupspec: error: "), out.stderr
    assert "Traceback" not in out.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("body", [b"", b"\n  \n\n"])
def test_an_empty_trace_is_refused(tmp_path, body):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(body)
    one_line_error(run("trace", "check", str(p)), str(p), "empty trace")
    out = subprocess.run(GS + ["trace", "check", "-"], input=body, capture_output=True)
    assert out.returncode == 2 and b"empty trace" in out.stderr


def test_audit_of_nothing_is_refused(tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"\n")
    one_line_error(run("audit", str(p), "--out", str(tmp_path / "out")), str(p), "empty trace")
    assert not (tmp_path / "out").exists()
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    e = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"trace": pa.array([], pa.string()), "line_no": pa.array([], pa.int64()),
                             "line": pa.array([], pa.string())}), e)
    one_line_error(run("audit", str(e), "--out", str(tmp_path / "out")), str(e), "empty Parquet")


def test_parquet_traces_are_refused_by_trace_check(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    p = tmp_path / "part-0.parquet"
    line = json.dumps({"ts_ms": 1, "group": "g", "member": "a", "event": "joined"})
    pq.write_table(pa.table({"trace": ["x"], "line_no": [1], "line": [line]}), p)
    one_line_error(run("trace", "check", str(p)), str(p), "Parquet", "groupspec audit")


@pytest.mark.parametrize("ts,shown", [("1e300", "1e+300"), ("-5", "-5"), ("NaN", "NaN"), ("Infinity", "Infinity"),
                                      ("9007199254740992", "9007199254740992")])
def test_a_time_that_is_no_time_is_refused_naming_file_and_line(tmp_path, ts, shown):
    p = tmp_path / "t.jsonl"
    good = '{"ts_ms": 5, "group": "g", "member": "a", "event": "joined"}\n'
    p.write_text(good + '{"ts_ms": %s, "group": "g", "member": "a", "event": "left"}\n' % ts)
    one_line_error(run("trace", "check", str(p)), f"{p}: line 2: ts_ms {shown}")


def test_a_negative_time_deep_in_a_long_file_is_refused(tmp_path):
    """Read by the compiled inner loop (past 1 MB): it hands the line back, and the file is refused."""
    p = tmp_path / "long.jsonl"
    lines = [json.dumps({"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 2}),
             json.dumps({"ts_ms": 1, "group": "g", "member": "a", "event": "joined"}),
             json.dumps({"ts_ms": 2, "group": "g", "member": "a", "event": "assigned", "partitions": [["t", 0], ["t", 1]]})]
    for k in range(20_000):
        lines.append(json.dumps({"ts_ms": 10 + k, "group": "g", "member": "a", "event": "commit",
                                 "partitions": [["t", 0, k]], "accepted": True}))
    lines.append(json.dumps({"ts_ms": -1, "group": "g", "member": "a", "event": "left"}))
    p.write_text("\n".join(lines) + "\n")
    one_line_error(run("trace", "check", str(p)), f"{p}: line {len(lines)}: ts_ms -1")


def test_check_events_reports_a_time_that_is_no_time_as_a_defect():
    """The library entry point (the Spark audit's) does not raise: a trace defect."""
    r = check_events([{"ts_ms": 1e300, "group": "g", "member": "a", "event": "joined"}])
    assert not r.ok
    [d] = r.to_dict()["groups"][0]["properties"][-1]["violations"]
    assert "is not a time" in d["message"]


def test_the_text_report_is_one_table_for_many_traces(tmp_path):
    """Issue #32: one table for every trace and group (not one per group), then only what needs reading."""
    src = Path(__file__).parent / "trace_data" / "recorded"
    names = sorted(p.name for p in src.glob("*.jsonl"))
    for k in range(30):
        (tmp_path / f"t{k:02}.jsonl").write_text((src / names[k % len(names)]).read_text())
    bad = json.loads((src / names[0]).read_text().splitlines()[1])
    (tmp_path / "t99.jsonl").write_text((src / names[0]).read_text() + json.dumps(dict(bad, ts_ms=99_999, event="revoked",
                                                                                       partitions=[["t", 9]])) + "\n")
    out = subprocess.run(GS + ["trace", "check", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "COLUMNS": "250"})
    assert out.returncode == 1
    assert out.stdout.count("┏") == 1  # one table
    assert "31 trace(s), 31 group(s)" in out.stdout
    assert out.stdout.count("VIOLATED") == 1 and "well_formed violated" in out.stdout


def _capped(limit: int = 3 << 30) -> None:
    """In the child: at most 3 GB of data, so a checker that allocates without bound fails fast instead of
    taking the machine's memory (a topic line of 10^11 partitions was killed by the OOM killer)."""
    import resource

    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def test_a_topic_line_with_absurdly_many_partitions_is_a_trace_defect(tmp_path):
    p = tmp_path / "t.jsonl"
    lines = [{"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 100_000_000_000},
             {"ts_ms": 1, "group": "g", "member": "a", "event": "joined"},
             {"ts_ms": 2, "group": "g", "member": "a", "event": "assigned", "partitions": [["t", 0]]}]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = subprocess.run(GS + ["trace", "check", "--json", str(p)], capture_output=True, text=True, timeout=300,
                         preexec_fn=_capped)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr[-500:]
    [g] = json.loads(out.stdout)["traces"][0]["groups"]
    [wf] = [x for x in g["properties"] if x["id"] == "well_formed"]
    assert [(v["line"], "at most 1,000,000; got 100000000000" in v["message"]) for v in wf["violations"]] == [(1, True)]


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux /proc")
def test_a_file_that_opens_but_cannot_be_read_is_refused():
    one_line_error(run("trace", "check", "/proc/self/mem"), "/proc/self/mem: line 1: cannot read")


def test_two_traces_off_a_terminal_leave_stderr_empty(tmp_path):
    """The progress bar of several traces is for a terminal: in a pipe it drew nothing but an empty line."""
    src = Path(__file__).parent / "trace_data" / "recorded"
    a = sorted(src.glob("*.jsonl"))[0]
    out = run("trace", "check", str(a), str(a))
    assert out.returncode in (0, 1) and out.stderr == ""


def test_a_trace_that_names_no_member_holds_vacuously_and_says_so(tmp_path):
    """Only `topic` and `end` lines (valid per the trace contract): every invariant holds, exit 0 as the contract
    says, but the report says nothing was checked: members_seen 0, nothing_checked true, the table's verdict, and
    one warning line on stderr (with --json too). A trace with a member says nothing of the kind."""
    p = tmp_path / "quiet.jsonl"
    p.write_text('{"ts_ms": 0, "event": "topic", "topic": "t", "partitions": 3}\n{"ts_ms": 10, "event": "end"}\n')
    out = run("trace", "check", "--json", str(p))
    assert out.returncode == 0, out.stderr
    [t] = json.loads(out.stdout)["traces"]
    assert t["ok"] is True and t["members_seen"] == 0 and t["nothing_checked"] is True
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("groupspec: warning: ") and str(p) in line and "no event names a member" in line
    text = run("trace", "check", str(p))
    assert text.returncode == 0 and "nothing checked" in text.stdout and "no event names a member" in text.stderr
    good = tmp_path / "busy.jsonl"
    good.write_text(p.read_text().replace('{"ts_ms": 10, "event": "end"}',
                                          '{"ts_ms": 5, "member": "a", "event": "joined"}\n'
                                          '{"ts_ms": 6, "member": "a", "event": "assigned", '
                                          '"partitions": [["t", 0], ["t", 1], ["t", 2]]}'))
    out = run("trace", "check", "--json", str(good))
    [t] = json.loads(out.stdout)["traces"]
    assert t["members_seen"] == 1 and t["nothing_checked"] is False and out.stderr == "", out.stderr
    assert "nothing checked" not in run("trace", "check", str(good)).stdout
