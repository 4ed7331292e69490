"""``mypy --strict`` on the project's packages (issue 26; ``groupspec/py.typed`` says the package ships its types).

Every module under :data:`ROOTS` is checked strictly except those in :data:`NOT_YET_TYPED`, so a new module is
typed from its first day. Left out: the numba kernels (:data:`NUMBA_KERNELS`: ``groupspec/checker/compiled``'s and
the trace checker's compiled loop; their functions are untyped on purpose: numba infers their types), and the
modules not annotated yet, listed by name so the list can only shrink: the KIP-848 and migration pages of the
model (the migration page derives from the KIP-848 one, whose states it replaces: typing it needs the KIP-848
page generic in its state), the serve hot path, the mutation campaign, a few tools. ``reference/`` is typed
where it is listed in :data:`ROOTS`. The last test shows the check fails on a type error.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ["model", "proofs", "pipeline", "groupspec/checker", "groupspec/trace", "groupspec/assignorcheck", "groupspec/cli",
         "groupspec/serve", "groupspec/figures", "groupspec/specmut", "groupspec/oracle", "groupspec/realstack",
         "groupspec/kafka", "groupspec/verify.py", "groupspec/__init__.py", "groupspec/strategies.py",
         "reference/assignors/__init__.py", "reference/assignors/properties.py", "reference/classic", "reference/consumer",
         "reference/sim/actor_sim.py", "reference/actor.py",
         "reference/connect", "reference/history", "reference/migration", "reference/errors.py"]
NUMBA_KERNELS = [*[f"groupspec/checker/compiled/{n}.py" for n in (
    'consumer_kernel', 'consumer_keys', 'families', 'kernel', 'layout', 'lean', 'migration_kernel', 'migration_properties',
    'search')], "groupspec/trace/kernel.py", "groupspec/trace/scan.py"]
NOT_YET_TYPED = [
    *NUMBA_KERNELS,
    *[f"groupspec/serve/{n}.py" for n in ('cluster', 'wire')],
    *[f"groupspec/specmut/{n}.py" for n in ('campaign', 'hunt', 'kafka_consumer_walks', 'kafka_walks', 'killers', 'loader', 'operators')],
    *[f"model/{n}.py" for n in ('consumer', 'consumer_flight', 'consumer_view', 'migration')],
    *[f"proofs/{n}.py" for n in ('consumer',)],
]
FLAGS = ["--strict", "--ignore-missing-imports", "--follow-imports=silent"]


def typed_modules() -> list[str]:
    files: list[str] = []
    for r in ROOTS:
        p = ROOT / r
        files += [r] if p.suffix == ".py" else [str(f.relative_to(ROOT)) for f in sorted(p.rglob("*.py"))]
    return [f for f in files if f not in NOT_YET_TYPED]


def mypy(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *FLAGS, *paths], cwd=ROOT, capture_output=True, text=True,
                          check=False)


def test_the_typed_modules_pass_mypy_strict() -> None:
    out = mypy(*typed_modules())
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_not_yet_typed_list_names_only_existing_modules() -> None:
    assert [f for f in NOT_YET_TYPED if not (ROOT / f).exists()] == []


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / "groupspec" / "py.typed").exists()


def test_mypy_strict_catches_a_type_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n")
    out = mypy(str(bad))
    assert out.returncode == 1 and "Incompatible return value type" in out.stdout


def but_stub_mismatches(source: str, fields: dict[str, list[str]]) -> list[str]:
    """The ``@evolvable`` classes of ``source`` whose ``but`` stub (the signature declared for the type checker
    under ``if TYPE_CHECKING``) does not name exactly the fields ``fields[class]``, in order."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and any(isinstance(d, ast.Name) and d.id == "evolvable"
                                                       for d in node.decorator_list)):
            continue
        stubs = [f for s in node.body if isinstance(s, ast.If) for f in s.body
                 if isinstance(f, ast.FunctionDef) and f.name == "but"]
        if stubs and [a.arg for a in stubs[0].args.kwonlyargs] != fields[node.name]:
            bad.append(node.name)
    return bad


def model_but_stub_mismatches() -> list[str]:
    bad = []
    for f in sorted((ROOT / "model").glob("*.py")):
        mod = importlib.import_module(f"groupspec.model.{f.stem}")
        classes = {n: c for n, c in vars(mod).items() if isinstance(c, type) and dataclasses.is_dataclass(c)}
        fields = {n: [x.name for x in dataclasses.fields(c)] for n, c in classes.items()}
        bad += [f"{f.name}: {c}" for c in but_stub_mismatches(f.read_text(), fields)]
    return bad


def test_every_but_stub_names_its_class_fields() -> None:
    assert model_but_stub_mismatches() == []


def test_the_but_stub_check_catches_a_missing_field() -> None:
    src = ("@evolvable\n@dataclass\nclass C:\n    a: int\n    b: int\n"
           "    if TYPE_CHECKING:\n        def but(self, *, a: int = ...) -> C: ...\n")
    assert but_stub_mismatches(src, {"C": ["a", "b"]}) == ["C"]
    assert but_stub_mismatches(src, {"C": ["a"]}) == []
