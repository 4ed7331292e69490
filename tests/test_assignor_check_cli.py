"""`groupspec assignor check|run` (contract assignor-check.md) and the pytest plugin, through subprocesses."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from candidate_sources import GOOD_AND_DUP

BIN = str(Path(sys.executable).with_name("groupspec"))

MUTANTS = GOOD_AND_DUP + textwrap.dedent('''
    class Coop:
        protocol = "cooperative"
        name = "coop"
        def assign(self, ppt, subs):
            return good(ppt, subs)

    coop = Coop()
    not_an_assignor = 42

    class ProtocolRaises:
        @property
        def protocol(self):
            raise RuntimeError("no protocol today")
        def assign(self, ppt, subs):
            return good(ppt, subs)

    import os as _os

    def noisy_hash_seed(ppt, subs):
        # prints on every call, from Python and at the descriptor (as C code would), and its result depends on
        # the process's string hashing (a set of member names): the workers of I10p must still be heard
        print("assigning", len(subs), "members")
        _os.write(1, b"a line written to fd 1\\n")
        members = list(set(subs))
        out = {m: [] for m in subs}
        parts = sorted((t, p) for t, n in ppt.items() for p in range(n))
        for i, tp in enumerate(parts):
            out[members[i % len(members)]].append(tp)
        return out

    def hangs(ppt, subs):
        if any(not s["topics"] for s in subs.values()):
            while True:
                pass
        return good(ppt, subs)

    class AsyncAssign:
        async def assign(self, ppt, subs):
            return good(ppt, subs)

    async def async_assign(ppt, subs):
        return good(ppt, subs)

    def returns_a_coroutine(ppt, subs):  # not declared async: only its calls tell
        return async_assign(ppt, subs)
''')


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "mut.py").write_text(MUTANTS)
    (tmp_path / "boom.py").write_text("raise RuntimeError('cannot import me')\n")
    return tmp_path


def _run(args, cwd, stdin=None):
    return subprocess.run([BIN, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("target, words", [
    ("nosuch:thing", "no module named 'nosuch'"),
    ("boom:x", "raised RuntimeError: cannot import me"),
    ("mut:not_an_assignor", "not an assignor"),
    ("mut:missing", "has no attribute"),
    ("what", "neither module:attribute nor a built-in name"),
    # a property of the candidate that raises while it is read: was a traceback
    ("mut:ProtocolRaises", "reading it as an assignor raised RuntimeError: no protocol today"),
    # an async def assign: was every property failed on "a coroutine, not a mapping", and RuntimeWarnings that the
    # coroutines were never awaited
    ("mut:AsyncAssign", "mut:AsyncAssign: not an assignor: assign is a coroutine function (async def); "),
    ("mut:async_assign", "mut:async_assign: not an assignor: async_assign is a coroutine function (async def); "),
])
def test_check_bad_target_is_one_line_exit_2(workdir, target, words):
    r = _run(["assignor", "check", target, "--examples", "5"], workdir)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_candidate_that_returns_a_coroutine_fails_i11_and_leaves_no_warning(workdir):
    """Not declared async, so only a call tells: each coroutine is closed (no "never awaited" RuntimeWarning, here
    or in the I10p worker processes) and the call is a malformed output (I11), as the contract says."""
    r = _run(["assignor", "check", "mut:returns_a_coroutine", "--examples", "5", "--json"], workdir)
    assert r.returncode == 1, r.stderr
    i11 = next(p for p in json.loads(r.stdout)["properties"] if p["id"] == "I11")
    assert i11["verdict"] == "violated"
    assert "assign returned a coroutine (async_assign), not an assignment" in i11["counterexample"]["explanation"]
    assert "never awaited" not in r.stderr and "RuntimeWarning" not in r.stderr, r.stderr[-2000:]
    run = _run(["assignor", "run", "mut:returns_a_coroutine"], workdir,
               stdin='{"partitions_per_topic": {"t": 1}, "subscriptions": {"a": {"topics": ["t"]}}}')
    assert run.returncode == 1 and "returned a coroutine" in run.stderr and "never awaited" not in run.stderr


def test_check_json_contract_and_exit_1(workdir):
    r = _run(["assignor", "check", "mut:dup", "--examples", "20", "--seed", "5", "--json"], workdir)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert {"target", "protocol", "properties"} <= set(doc)
    assert doc["target"] == "mut:dup" and doc["protocol"] == "eager"
    by_id = {p["id"]: p for p in doc["properties"]}
    for p in doc["properties"]:
        assert {"id", "name", "verdict", "examples", "counterexample"} <= set(p)
        assert p["verdict"] in ("held", "violated", "not applicable")
    assert by_id["I2"]["verdict"] == "violated"
    cx = by_id["I2"]["counterexample"]
    assert {"input", "output", "explanation"} <= set(cx)


def test_what_the_candidate_prints_goes_to_stderr(workdir):
    # found by trying it as a stranger would: a print() in the candidate went into --json's stdout, and into the
    # I10p workers' answers, which then said nothing could be evaluated and let the hash-seed bug through
    r = _run(["assignor", "check", "mut:noisy_hash_seed", "--examples", "10", "--seed", "3", "--only", "I10p",
              "--only", "I11", "--json"], workdir)
    doc = json.loads(r.stdout)  # stdout is the report alone
    by_id = {p["id"]: p for p in doc["properties"]}
    assert by_id["I11"]["verdict"] == "held"
    assert by_id["I10p"]["verdict"] == "violated" and "PYTHONHASHSEED" in by_id["I10p"]["counterexample"]["explanation"]
    assert r.returncode == 1
    assert "assigning" in r.stderr and "a line written to fd 1" in r.stderr
    r = _run(["assignor", "run", "mut:noisy_hash_seed"], workdir,
             stdin=json.dumps({"partitions_per_topic": {"t": 2}, "subscriptions": {"a": {"topics": ["t"]}}}))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"a": [["t", 0], ["t", 1]]}
    assert "assigning 1 members" in r.stderr


def test_check_table_and_exit_0_and_seed_printed(workdir):
    r = _run(["assignor", "check", "mut:good", "--examples", "10"], workdir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "seed" in r.stderr and "I11" in r.stdout and "held" in r.stdout


def test_check_protocol_override(workdir):
    r = _run(["assignor", "check", "mut:good", "--protocol", "cooperative", "--examples", "10", "--seed", "1",
              "--json"], workdir)
    doc = json.loads(r.stdout)
    assert doc["protocol"] == "cooperative"
    assert {p["id"]: p["verdict"] for p in doc["properties"]}["I6"] == "violated"


def test_check_cuts_off_a_hanging_candidate(workdir):
    r = _run(["assignor", "check", "mut:hangs", "--only", "I11", "--only", "I4", "--call-timeout", "0.2",
              "--examples", "20", "--seed", "1", "--json"], workdir)
    assert r.returncode == 1, r.stderr
    props = {p["id"]: p for p in json.loads(r.stdout)["properties"]}
    assert props["I11"]["verdict"] == "violated"
    assert props["I11"]["counterexample"]["failure"] == "timeout"
    assert props["I4"]["verdict"] in ("held", "not applicable")


def test_compare_side_by_side(workdir):
    r = _run(["assignor", "check", "--compare", "mut:good", "mut:dup", "--examples", "10", "--seed", "2",
              "--json"], workdir)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    a, b = doc["candidates"]
    assert a["violated_properties"] == [] and "I2" in b["violated_properties"]
    assert a["examples"] == b["examples"] == doc["examples"]
    # the full check's failure count sits beside its verdicts, so the two can be read together
    for col in (a, b):
        assert col["full_check_failed_calls"] <= col["full_check_calls"]
    assert a["full_check_failed_calls"] == 0


def test_run_prints_sorted_result_with_every_member(workdir):
    doc = {"partitions_per_topic": {"t": 3, "u": 1},
           "subscriptions": {"b": {"topics": ["t"]}, "a": {"topics": ["t", "u"]}, "z": {"topics": []}}}
    (workdir / "in.json").write_text(json.dumps(doc))
    r = _run(["assignor", "run", "mut:good", "--input", "in.json"], workdir)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"a", "b", "z"} and out["z"] == []
    assert all(v == sorted(v) for v in out.values())
    r2 = _run(["assignor", "run", "range"], workdir, stdin=json.dumps(doc))
    assert r2.returncode == 0, r2.stderr
    assert json.loads(r2.stdout) == {"a": [["t", 0], ["t", 1], ["u", 0]], "b": [["t", 2]], "z": []}


@pytest.mark.parametrize("text, words", [
    ("{not json", "not JSON"),
    ('{"subscriptions": {}}', "missing key 'partitions_per_topic'"),
    ('{"partitions_per_topic": {"t": "3"}, "subscriptions": {}}', "non-negative integer"),
    ('{"partitions_per_topic": {}, "subscriptions": {"a": {"topics": "t"}}}', "topics must be a list"),
    ('{"partitions_per_topic": {}, "subscriptions": {"a": {"topics": [], "owned": [["t"]]}}}', "owned"),
])
def test_run_malformed_input_is_one_line_exit_2(workdir, text, words):
    r = _run(["assignor", "run", "mut:good"], workdir, stdin=text)
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("how", ["stdin", "--input"])
def test_run_input_not_utf8_or_past_int32_is_one_line_exit_2(workdir, how):
    # found by trying it as a stranger would: bytes that are not UTF-8 were a UnicodeDecodeError traceback, and
    # 99,999,999,999 partitions were the candidate's MemoryError (exit 1) instead of bad input
    for data, words in ((b"\xff\xfe\x00x", "not UTF-8 text"),
                        (b'{"partitions_per_topic": {"t": 99999999999}, "subscriptions": {"a": {"topics": ["t"]}}}',
                         "at most 2,147,483,647 partitions")):
        if how == "stdin":
            r = subprocess.run([BIN, "assignor", "run", "mut:good"], cwd=workdir, input=data, capture_output=True,
                               timeout=120)
        else:
            (workdir / "in.json").write_bytes(data)
            r = subprocess.run([BIN, "assignor", "run", "mut:good", "--input", "in.json"], cwd=workdir,
                               capture_output=True, timeout=120)
        err = r.stderr.decode()
        assert r.returncode == 2 and words in err and len(err.strip().splitlines()) == 1, err
        assert r.stdout == b""


PLUGIN_TEST = textwrap.dedent('''
    import mut

    def test_with_fixture(assignor_check):
        rep = assignor_check(mut.good, examples=10)
        assert rep.ok

    def test_fixture_fails_on_violation(assignor_check):
        assignor_check(mut.dup, examples=10, properties=["I2"], quality=False)
''')


def test_pytest_plugin_fixture_and_option(workdir):
    (workdir / "test_mine.py").write_text(PLUGIN_TEST)
    env = {**os.environ, "PYTHONPATH": str(workdir)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--assignor-seed", "3",
                        "test_mine.py"], cwd=workdir, capture_output=True, text=True, env=env, timeout=300)
    assert "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr
    assert "I2 no partition assigned twice: violated by dup" in r.stdout
    (workdir / "empty").mkdir()
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--assignor", "mut:dup",
                        "--assignor-examples", "10", "--assignor-seed", "3", "-k", "I2 or I4 or I7",
                        "-rs", "empty"], cwd=workdir, capture_output=True, text=True, env=env, timeout=300)
    assert "groupspec assignor checks: seed 3" in r.stdout
    assert "1 failed, 1 passed, 1 skipped" in r.stdout, r.stdout + r.stderr
    assert "replay: groupspec assignor check mut:dup --seed 3" in r.stdout
