"""The pytest plugin as a client library's CI meets it: replay lines that run, third-party warnings filtered,
``--assignor`` replacing the ini list. Through subprocesses, in a scratch project."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from candidate_sources import GOOD_AND_DUP

MUT = GOOD_AND_DUP + textwrap.dedent('''
    class Dup:
        name = "dup-object"
        def assign(self, ppt, subs):
            return dup(ppt, subs)

    dup_object = Dup()
''')

TESTS = textwrap.dedent('''
    import mut

    def test_importable(assignor_check):
        assignor_check(mut.dup, examples=10, properties=["I2"], quality=False)

    def test_instance(assignor_check):
        assignor_check(mut.dup_object, examples=10, properties=["I2"], quality=False)

    def test_local(assignor_check):
        def local_dup(ppt, subs):
            return mut.dup(ppt, subs)
        assignor_check(local_dup, examples=10, properties=["I2"], quality=False)
''')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mut.py").write_text(MUT)
    (tmp_path / "test_mine.py").write_text(TESTS)
    return tmp_path


def env_for(project: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(project), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=project,
                          capture_output=True, text=True, env=env_for(project), timeout=600)


def replays(text: str) -> list[str]:
    return [line.split("replay: ", 1)[1].strip() for line in text.splitlines() if "replay: " in line]


def test_replay_lines_are_commands_that_run(project: Path) -> None:
    r = pytest_run(project, "-q", "--assignor-seed", "3", "test_mine.py")
    assert "3 failed" in r.stdout, r.stdout + r.stderr
    lines = replays(r.stdout)
    cli = sorted({x for x in lines if x.startswith("groupspec ")})
    tests = sorted({x for x in lines if x.startswith("pytest ")})
    # an importable function and a module-level instance get a CLI line; the local function does not
    assert cli == ["groupspec assignor check mut:dup --seed 3 --examples 10 --only I2",
                   "groupspec assignor check mut:dup_object --seed 3 --examples 10 --only I2"], lines
    assert len(tests) == 3 and all("test_mine.py::test_" in t for t in tests)
    for line in cli:  # each runs, as printed, and finds the same violation
        out = subprocess.run(shlex.split(line), cwd=project, capture_output=True, text=True,
                             env=env_for(project), timeout=600)
        assert out.returncode == 1 and "I2 violated" in out.stdout, (line, out.stdout, out.stderr)
    for line in tests:
        argv = shlex.split(line)
        assert argv[0] == "pytest"
        out = pytest_run(project, "-q", *argv[1:])
        assert out.returncode == 1 and "1 failed" in out.stdout and "violated by" in out.stdout, out.stdout


def test_command_line_assignor_replaces_the_ini_list(project: Path) -> None:
    (project / "pytest.ini").write_text("[pytest]\ngroupspec_assignor =\n    mut:good\n    range\n")
    (project / "empty").mkdir()
    r = pytest_run(project, "--collect-only", "-q", "empty")
    assert "groupspec-assignor[mut:good]" in r.stdout and "groupspec-assignor[range]" in r.stdout, r.stdout
    r = pytest_run(project, "--collect-only", "-q", "--assignor", "mut:dup", "empty")
    assert "groupspec-assignor[mut:dup]" in r.stdout, r.stdout
    assert "mut:good" not in r.stdout and "[range]" not in r.stdout, r.stdout


def test_third_party_deprecation_warnings_are_filtered(project: Path) -> None:
    (project / "empty").mkdir()
    r = pytest_run(project, "-W", "error::DeprecationWarning", "--assignor",
                   "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor", "--assignor-examples", "5",
                   "--assignor-seed", "1", "-k", "I2 or I3 or I4", "empty")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 passed" in r.stdout and "DeprecationWarning" not in r.stdout, r.stdout


def test_the_filter_is_only_for_third_party_modules() -> None:
    from groupspec.assignorcheck.plugin import _third_party_warnings_filtered

    def warn(module: str) -> None:
        warnings.warn_explicit("old api", DeprecationWarning, f"{module}.py", 1, module=module)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with _third_party_warnings_filtered():
            warn("kafka.protocol.schemas.load_json")
            warn("aiokafka.conn")
            with pytest.raises(DeprecationWarning):
                warn("mylib.assignors")  # the user's own warning still shows
        with pytest.raises(DeprecationWarning):
            warn("kafka.protocol.schemas.load_json")  # outside the checks nothing is filtered


def test_importable_target() -> None:
    from groupspec.assignorcheck import plugin
    from groupspec.reference.assignors import range_assignor

    assert plugin.importable_target("mypkg:thing") == "mypkg:thing"
    assert plugin.importable_target(plugin.importable_target) == "groupspec.assignorcheck.plugin:importable_target"
    assert plugin.importable_target(lambda p, s: {}) is None
    cls = next(v for v in vars(range_assignor).values() if isinstance(v, type) and v.__module__ == range_assignor.__name__)
    assert plugin.importable_target(cls) == f"{range_assignor.__name__}:{cls.__qualname__}"
