"""pytest plugin: run the groupspec assignor checks against your own assignor in your CI.

Theory of operation
-------------------
Registered through the ``pytest11`` entry point (``groupspec = "groupspec.assignorcheck.plugin"``), so installing
groupspec is enough. Two ways to use it:

1. **No code**: name the assignor on the command line or in the ini file, and the plugin adds one test item
   per property (``groupspec-assignor[TARGET]::I1`` …)::

       pytest --assignor mypkg.assignors:MyAssignor
       # or in pytest.ini / pyproject [tool.pytest.ini_options]:  groupspec_assignor = mypkg.assignors:MyAssignor

   The check runs once per target (the first item runs it; the others read the same report). An item fails
   with the shrunk counterexample, the candidate's output and the one-line explanation; items whose property
   does not apply are skipped with the reason.

2. **A fixture** in your own test::

       def test_my_assignor(assignor_check):
           assignor_check(MyAssignor, protocol="cooperative")   # fails the test on any violation

Options: ``--assignor-examples N`` (default 100) and ``--assignor-seed S``. Without a seed one is drawn per
session and printed in the report header, so every run can be replayed exactly. ``--assignor`` on the command
line replaces the ini file's ``groupspec_assignor`` list (so one target can be checked alone).

A failure ends with replay lines that run as printed: ``groupspec assignor check module:attribute --seed S
...`` when the candidate can be imported by that name, and always ``pytest 'NODEID' --assignor-seed S``, the
test that failed. Deprecation warnings that third-party assignor libraries (kafka-python, aiokafka) raise while
the checks call them are filtered out of the test report; the user's own warnings are untouched.
"""
from __future__ import annotations

import contextlib
import json
import random
import shlex
import sys
import warnings
from typing import Any, Callable, Iterator

import pytest

_REPORTS: dict[tuple[str, int, int], Any] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("groupspec", "groupspec assignor checks")
    group.addoption("--assignor", action="append", default=[], metavar="TARGET",
                    help="check this assignor (module:attribute or a built-in name); repeatable")
    group.addoption("--assignor-examples", type=int, default=None, metavar="N",
                    help="generated examples per property (default 100)")
    group.addoption("--assignor-seed", type=int, default=None, metavar="S", help="seed for replay")
    group.addoption("--assignor-call-timeout", type=float, default=5.0, metavar="SECONDS",
                    help="per-call time limit before a call counts as hanging (default 5)")
    parser.addini("groupspec_assignor", "assignor targets to check (module:attribute), one per line",
                  type="linelist", default=[])
    parser.addini("groupspec_assignor_examples", "examples per property", default="100")


def _seed(config: pytest.Config) -> int:
    s = config.getoption("--assignor-seed")
    if s is None:
        s = getattr(config, "_groupspec_seed", None)
        if s is None:
            s = random.SystemRandom().randrange(2**31)
            config._groupspec_seed = s  # type: ignore[attr-defined]
    return int(s)


def _examples(config: pytest.Config) -> int:
    n = config.getoption("--assignor-examples")
    return int(n if n is not None else config.getini("groupspec_assignor_examples"))


def _targets(config: pytest.Config) -> list[str]:
    """The targets: ``--assignor`` on the command line if given (it replaces the ini list), else the ini list."""
    given = list(config.getoption("--assignor") or [])
    return given if given else list(config.getini("groupspec_assignor") or [])


# Third-party modules whose DeprecationWarnings are theirs to fix, not the user's: filtered while the checks
# call them. (importlib.resources' legacy functions warn from inside themselves when kafka-python calls them.)
THIRD_PARTY_WARNINGS = (r"kafka(\.|$)", r"aiokafka(\.|$)", r"importlib\.resources\._legacy")


@contextlib.contextmanager
def _third_party_warnings_filtered() -> Iterator[None]:
    with warnings.catch_warnings():
        for module in THIRD_PARTY_WARNINGS:
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)
            warnings.filterwarnings("ignore", category=PendingDeprecationWarning, module=module)
        yield


def importable_target(candidate: Any) -> str | None:
    """``module:attribute`` that ``groupspec assignor check`` would load as ``candidate``, or None.

    A string is already a target. A function or class is found by its module and qualified name; an
    instance by the module-level name that holds it. Only a name that resolves back to the same object counts.
    """
    if isinstance(candidate, str):
        return candidate
    names = []
    mod_name = getattr(candidate, "__module__", None)
    qual = getattr(candidate, "__qualname__", None)
    if isinstance(mod_name, str) and isinstance(qual, str) and "<" not in qual:
        names.append((mod_name, qual))
    owner = getattr(type(candidate), "__module__", None)
    module = sys.modules.get(owner) if isinstance(owner, str) else None
    if module is not None:
        names += [(str(owner), k) for k, v in vars(module).items() if v is candidate and not k.startswith("_")]
    for mod_name, qual in names:
        if mod_name in ("__main__", "builtins") or mod_name.startswith("_pytest"):
            continue
        obj: Any = sys.modules.get(mod_name)
        for part in qual.split("."):
            obj = getattr(obj, part, None)
        if obj is candidate:
            return f"{mod_name}:{qual}"
    return None


def replay_lines(rep: Any, target: str | None, nodeid: str | None, kw: dict[str, Any] | None = None) -> list[str]:
    """Commands that reproduce ``rep``: the CLI when the candidate is importable, and the pytest test."""
    kw = kw or {}
    lines = []
    if target is not None:
        cmd = ["groupspec", "assignor", "check", target, "--seed", str(rep.seed), "--examples", str(rep.examples)]
        for flag in ("protocol", "kind"):
            if kw.get(flag):
                cmd += [f"--{flag}", str(kw[flag])]
        if kw.get("java_parity"):
            cmd.append("--java-parity")
        if kw.get("call_timeout") not in (None, 5.0):
            cmd += ["--call-timeout", str(kw["call_timeout"])]
        for pid in kw.get("properties") or []:
            cmd += ["--only", pid]
        lines.append("replay: " + shlex.join(cmd))
    if nodeid is not None:
        lines.append("replay: " + shlex.join(["pytest", nodeid, "--assignor-seed", str(rep.seed),
                                              "--assignor-examples", str(rep.examples)]))
    return lines


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _targets(config):
        return None
    return f"groupspec assignor checks: seed {_seed(config)} (replay with --assignor-seed {_seed(config)})"


def _report(target: str, config: pytest.Config) -> Any:
    from groupspec.assignorcheck.check import check_assignor

    key = (target, _examples(config), _seed(config))
    if key not in _REPORTS:
        with _third_party_warnings_filtered():
            _REPORTS[key] = check_assignor(target, examples=key[1], seed=key[2],
                                           call_timeout=config.getoption("--assignor-call-timeout"))
    return _REPORTS[key]


class AssignorPropertyItem(pytest.Item):
    """One property of one target; the check itself runs once per target and is shared."""

    def __init__(self, *, target: str, pid: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.target = target
        self.pid = pid

    def runtest(self) -> None:
        from groupspec.assignorcheck.load import LoadError

        try:
            rep = _report(self.target, self.config)
        except LoadError as e:
            raise AssignorPropertyFailed(f"cannot load {self.target}: {e}") from None
        prop = rep[self.pid]
        if prop.verdict == "not applicable":
            pytest.skip(f"{self.pid} not applicable: {prop.note}")
        if prop.verdict == "violated":
            timeout = self.config.getoption("--assignor-call-timeout")
            raise AssignorPropertyFailed(_describe(rep, prop, replay_lines(
                rep, self.target, None, {"call_timeout": timeout})))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, AssignorPropertyFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"groupspec-assignor[{self.target}]::{self.pid}"


class AssignorPropertyFailed(Exception):
    pass


def _describe(rep: Any, prop: Any, replay: list[str]) -> str:
    cx = prop.counterexample or {}
    lines = [f"{prop.id} {prop.name}: violated by {rep.target} (seed {rep.seed}, {prop.examples} examples)",
             f"  {cx.get('explanation')}"]
    for s in cx.get("steps", []):
        lines.append(f"  step: {s}")
    lines.append("  input:  " + json.dumps(cx.get("input"), ensure_ascii=False))
    lines.append("  output: " + json.dumps(cx.get("output"), ensure_ascii=False))
    lines += [f"  {line}" for line in replay]
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so those options select among these items too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    targets = _targets(config)
    if not targets:
        return
    from groupspec.assignorcheck.check import PROPERTIES

    added = 0
    for target in targets:
        for pid in [p.id for p in PROPERTIES] + ["C1", "S1"]:
            items.append(AssignorPropertyItem.from_parent(
                session, name=f"groupspec-assignor[{target}]::{pid}", target=target, pid=pid))
            added += 1
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and isinstance(getattr(reporter, "_numcollected", None), int):
        reporter._numcollected += added  # keep "collected N items" honest (items added after collection)


@pytest.fixture
def assignor_check(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``assignor_check(candidate, **kw)``: run the checks; fail the test on any violation; return the report."""
    from groupspec.assignorcheck.check import check_assignor

    config = request.config

    def run(candidate: Any, **kw: Any) -> Any:
        kw.setdefault("examples", _examples(config))
        kw.setdefault("seed", _seed(config))
        kw.setdefault("call_timeout", config.getoption("--assignor-call-timeout"))
        with _third_party_warnings_filtered():
            rep = check_assignor(candidate, **kw)
        if not rep.ok:
            replay = replay_lines(rep, importable_target(candidate), request.node.nodeid, kw)
            pytest.fail("\n\n".join(_describe(rep, p, replay) for p in rep.violations), pytrace=False)
        return rep

    yield run
