"""A new user's first hour: what the commands say and do on a first run, on a bad path, on Ctrl-C.

The compiled engine's first compilation is announced; ``--max-states N`` stops at N; a timeline shared by two
violations is printed once; ``prove`` says "caught as expected"; ``verify``'s model table fits in 120 columns
with a legend and Ctrl-C stops it at once; outputs are written whole or not at all.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from groupspec.cli import cli, main

GROUPSPEC = str(Path(sys.executable).with_name("groupspec"))


def test_first_compilation_is_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    import groupspec.checker.compiled as compiled
    from groupspec.checker import COMPILE_NOTICE

    assert "first run only" in COMPILE_NOTICE and "~50 s" in COMPILE_NOTICE  # bench/bench_readme.py measures it
    monkeypatch.setattr(compiled, "needs_compiling", lambda *_: True)
    r = CliRunner().invoke(cli, ["check", "--protocol", "eager", "--members", "2", "--partitions", "2"])
    assert r.exit_code == 0, r.output
    assert COMPILE_NOTICE in r.output and "includes compiling the engine, first run only" in r.output
    monkeypatch.setattr(compiled, "needs_compiling", lambda *_: False)  # warm: no notice
    r = CliRunner().invoke(cli, ["check", "--protocol", "eager", "--members", "2", "--partitions", "2"])
    assert r.exit_code == 0 and COMPILE_NOTICE not in r.output and "includes compiling" not in r.output
    # the Python engine never compiles anything
    monkeypatch.setattr(compiled, "needs_compiling", lambda *_: True)
    r = CliRunner().invoke(cli, ["check", "--protocol", "eager", "--members", "2", "--partitions", "2",
                                 "--engine", "python"])
    assert r.exit_code == 0 and COMPILE_NOTICE not in r.output


def test_the_parallel_search_compiles_once_more_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one search serves every family (no notice for the consumer protocol once the classic one ran); the
    first --workers run compiles the parallel expansion once more and says so, not "first run only"."""
    import groupspec.checker.compiled as compiled
    from groupspec.checker import COMPILE_NOTICE, make_explorer
    from groupspec.checker.engines import PARALLEL_NOTICE
    from groupspec.model import Config, make

    seen: list[str] = []
    for protocol in ("eager", "consumer", "classic-to-consumer"):
        proto = make(protocol, Config(members=2, partitions=2))
        monkeypatch.setattr(compiled, "needs_compiling", lambda workers=1: workers > 1)  # serial search cached
        make_explorer(proto, notice=seen.append)
        assert seen == []
        make_explorer(proto, notice=seen.append, workers=2)
        assert seen == [PARALLEL_NOTICE] and "first run only" not in PARALLEL_NOTICE
        seen.clear()
        monkeypatch.setattr(compiled, "needs_compiling", lambda workers=1: True)  # a machine that never compiled
        make_explorer(proto, notice=seen.append, workers=2)
        assert len(seen) == 1 and seen[0].startswith(COMPILE_NOTICE) and "parallel" in seen[0]
        seen.clear()
    r = CliRunner().invoke(cli, ["check", "--protocol", "eager", "--members", "2", "--partitions", "2", "--workers", "2"])
    assert r.exit_code == 0, r.output
    assert "includes compiling the engine" in r.output and "parallel search" in r.output


def test_needs_compiling_reads_numba_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from groupspec.checker import check
    from groupspec.checker.compiled import needs_compiling, search

    check("eager", members=2, partitions=2, engine="compiled")  # compiles (or loads) and caches the search
    assert needs_compiling() is False
    monkeypatch.setattr(search.search._cache._cache_file, "_load_index", lambda: {})  # an empty cache
    assert needs_compiling() is True


def test_progress_shows_states_from_the_start() -> None:
    from groupspec.checker import check

    for engine in ("python", "compiled"):
        seen: list[int] = []
        check("cooperative", members=2, partitions=2, engine=engine, progress=lambda s, q: seen.append(s))
        assert seen and seen[0] <= 2, (engine, seen[:3])  # the initial state(s), before any expansion


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_max_states_stops_at_exactly_n(engine: str) -> None:
    from groupspec.checker import check

    for n in (1, 7, 1000):
        _proto, res = check("cooperative", members=3, partitions=4, faults=frozenset({"crash", "timeout"}),
                            max_states=n, engine=engine, with_symmetry_factor=False)
        assert res.states == n and res.complete is False, (engine, n, res.states)
        assert res.verdicts["convergence"].held is None


def test_a_shared_counterexample_timeline_is_printed_once() -> None:
    r = CliRunner().invoke(cli, ["check", "--protocol", "cooperative-direct-transfer", "--members", "2",
                                 "--partitions", "2", "--engine", "python"])
    assert r.exit_code == 1, r.output
    assert "exclusive_ownership violated" in r.output and "commit_fencing violated" in r.output
    assert r.output.count("0. initial state") == 1
    assert "counterexample: the same 9 steps as for exclusive_ownership above" in r.output


def test_plurals_in_the_check_table() -> None:
    r = CliRunner().invoke(cli, ["check", "--protocol", "eager", "--members", "1", "--partitions", "1",
                                 "--engine", "python"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "1 member × 1 partition × 1 topic," in text and "(s)" not in text


def test_prove_says_caught_as_expected(monkeypatch: pytest.MonkeyPatch) -> None:
    from groupspec.proofs import report

    def fake(protocol=None, deep=False, jobs=None, progress=None):  # type: ignore[no-untyped-def]
        return report.Report([report.Check("unbounded safety", "unfenced-commits", "1 obligation fails: x",
                                           "caught", True, 0.1, "fail", "cti"),
                              report.Check("unbounded safety", "eager", "inductive", "proved", True, 0.1)],
                             0.2, ["unfenced-commits", "eager"])

    monkeypatch.setattr(report, "run_all", fake)
    r = CliRunner().invoke(cli, ["prove"])
    assert r.exit_code == 0, r.output
    assert "caught as expected" in r.output and "all as expected" in r.output
    assert " ok" not in r.output.replace("all as expected", "")


def _rows():  # type: ignore[no-untyped-def]
    from groupspec.verify import MODEL_JOBS, ModelRow

    return [ModelRow(j, 2_412_345, 123.4, {"exclusive_ownership": True, "commit_fencing": not j.expect,
                                           "generation_monotonic": None, "convergence": True},
                     None if j.expect else 39, True, "", 12 if j.expect else None,
                     "python" if j.protocol == "zookeeper" else "compiled") for j in MODEL_JOBS]


def test_verify_model_table_fits_in_120_columns_with_a_legend() -> None:
    from rich.console import Console

    from groupspec.cli.verify import LEGEND, WIDTH, model_table

    rows = _rows()
    console = Console(width=400, record=True)
    console.print(model_table(rows))
    lines = console.export_text().rstrip("\n").splitlines()
    assert WIDTH == 120 and max(len(line.rstrip()) for line in lines) <= 120
    assert sum(1 for line in lines if "caught in 12 steps" in line or "holds" in line or "as in Kafka" in line) == len(rows)
    for word in ("excl.", "fencing", "gen.", "conv.", "budget", "bound", "—", "states", "time"):
        assert word in LEGEND, word
    console = Console(width=WIDTH, record=True)
    console.print(model_table(rows))
    assert len(console.export_text().rstrip("\n").splitlines()) == len(lines)  # nothing wraps at 120 columns


def test_verify_in_a_ci_log_is_not_silent_and_stops_at_once_on_ctrl_c() -> None:
    """Where no spinner can be drawn (stderr a pipe, as in CI), verify prints a progress line as its work ends (at
    most one every GROUPSPEC_PROGRESS_SECONDS); the first one is waited for. Then SIGINT to the process group (what
    Ctrl-C sends), with the workers busy: exit 130, one line, no worker process left."""
    import re

    env = {**os.environ, "GROUPSPEC_PROGRESS_SECONDS": "0"}
    p = subprocess.Popen([GROUPSPEC, "verify"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    try:
        assert p.stderr is not None
        line = p.stderr.readline()  # blocks until the first piece of work has ended
        assert re.fullmatch(r"verify: 1 of \d+ done \(last: (model|proofs|mutants), .+\), \d+ s\n", line), line
        assert p.poll() is None, p.communicate()
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)  # a safety net for a hang; the figure is in bench/, not here
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "groupspec: interrupted"
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert left == []


def test_outputs_are_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from groupspec.reference.sim import trace

    def half(path, events):  # type: ignore[no-untyped-def]
        Path(path).write_text('{"ts_ms": 0,')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(trace, "write_trace", half)
    out = tmp_path / "x.jsonl"
    with pytest.raises(SystemExit) as e:
        main(["simulate", "new-consumer-joins", "--trace", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == f"groupspec: error: {out}: cannot write (No space left on device)\n"
    assert list(tmp_path.iterdir()) == []


def test_output_path_helper() -> None:
    from groupspec.cli._common import UserError, check_output_path

    with pytest.raises(UserError, match="does not exist"):
        check_output_path("/nonexistent-zz/dir/x.jsonl")
    with pytest.raises(UserError, match="is a directory"):
        check_output_path("/")
    with pytest.raises(UserError, match="not a directory"):
        check_output_path(__file__, kind="dir")
    assert check_output_path(Path(__file__).parent / "new-dir-zz", kind="dir").name == "new-dir-zz"
    with pytest.raises(ValueError):
        check_output_path("x", kind="socket")
    with pytest.raises(UserError, match="not standard output"):  # it would be a file named "-"
        check_output_path("-")


def test_check_stopped_by_sigterm_leaves_no_spilled_frontier(tmp_path: Path) -> None:
    """``timeout``, ``kill`` and a cancelled CI job send SIGTERM to the command alone: it stops as on Ctrl-C
    (one line, 143) and the frontier it spilled to the temp dir is removed."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    p = subprocess.Popen([GROUPSPEC, "check", "--protocol", "cooperative", "--members", "5", "--partitions", "5",
                          "--faults", "crash,timeout"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    try:
        for _ in range(6000):  # until the search has spilled part of its frontier (a minute or two)
            if any(tmp_path.glob("groupspec-frontier-*/*.rows")) or p.poll() is not None:
                break
            time.sleep(0.1)
        assert p.poll() is None, p.communicate()
        os.kill(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=300)  # a safety net for a hang
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 143, err
    assert err.decode().strip().splitlines()[-1] == "groupspec: terminated"
    assert list(tmp_path.glob("groupspec-frontier-*")) == []
