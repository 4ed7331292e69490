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
session and printed in the report header, so every run can be replayed exactly.
"""
from __future__ import annotations

import json
import random
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
    return list(config.getoption("--assignor") or []) + list(config.getini("groupspec_assignor") or [])


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _targets(config):
        return None
    return f"groupspec assignor checks: seed {_seed(config)} (replay with --assignor-seed {_seed(config)})"


def _report(target: str, config: pytest.Config) -> Any:
    from groupspec.assignorcheck.check import check_assignor

    key = (target, _examples(config), _seed(config))
    if key not in _REPORTS:
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
            raise AssignorPropertyFailed(_describe(rep, prop))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, AssignorPropertyFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"groupspec-assignor[{self.target}]::{self.pid}"


class AssignorPropertyFailed(Exception):
    pass


def _describe(rep: Any, prop: Any) -> str:
    cx = prop.counterexample or {}
    lines = [f"{prop.id} {prop.name}: violated by {rep.target} (seed {rep.seed}, {prop.examples} examples)",
             f"  {cx.get('explanation')}"]
    for s in cx.get("steps", []):
        lines.append(f"  step: {s}")
    lines.append("  input:  " + json.dumps(cx.get("input"), ensure_ascii=False))
    lines.append("  output: " + json.dumps(cx.get("output"), ensure_ascii=False))
    lines.append(f"  replay: groupspec assignor check {rep.target} --seed {rep.seed} --examples {rep.examples}")
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so those options select among these items too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    targets = _targets(config)
    if not targets:
        return
    from groupspec.assignorcheck.check import PROPERTIES

    added = 0
    for target in targets:
        for pid in [p.id for p in PROPERTIES] + ["C1"]:
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
        rep = check_assignor(candidate, **kw)
        if not rep.ok:
            pytest.fail("\n\n".join(_describe(rep, p) for p in rep.violations), pytrace=False)
        return rep

    yield run
