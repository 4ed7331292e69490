"""``mypy --strict`` on the project's packages (issue 26; ``groupspec/py.typed`` says the package ships its types).

Every module under :data:`ROOTS` (every folder of the installed namespace) is checked strictly except those in
:data:`NOT_YET_TYPED`, so a new module is typed from its first day. Left out: only the numba kernels
(:data:`NUMBA_KERNELS`: ``groupspec/checker/compiled``'s and the trace checker's compiled loop; their functions are
untyped on purpose: numba infers their types). The migration page derives from the KIP-848 one and replaces its
states: the KIP-848 page is generic in its state (``Consumer[S]``, ``Consumer`` alone is ``Consumer[ConsumerState]``).

mypy reads the packages as they are installed, not as they lie in the tree: ``groupspec.model``,
``groupspec.reference``, ``groupspec.proofs`` and ``groupspec.pipeline`` are the top-level folders ``model/``, ... (the
``package-dir`` mapping of pyproject.toml), which mypy cannot follow from ``groupspec/`` (nor through the editable
install's import hook). So :func:`installed_view` builds that layout out of symlinks in a scratch folder and mypy
runs there: a call from one room into another is checked against the other room's annotations (without it every
such name is ``Any``). Errors name the installed paths (``groupspec/model/spec.py`` is ``model/spec.py``). The last
tests show the check fails on a type error, and on one that crosses rooms.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# every folder of the installed namespace (pyproject.toml's package-dir: groupspec/ and the top-level rooms)
ROOTS = ["groupspec", "model", "reference", "proofs", "pipeline"]
NUMBA_KERNELS = [*[f"groupspec/checker/compiled/{n}.py" for n in (
    'classic_words', 'consumer_kernel', 'consumer_keys', 'families', 'kernel', 'layout', 'lean', 'migration_kernel', 'migration_properties',
    'search')], "groupspec/trace/kernel.py", "groupspec/trace/scan.py"]
NOT_YET_TYPED: list[str] = [*NUMBA_KERNELS]
FLAGS = ["--strict", "--ignore-missing-imports", "--follow-imports=silent"]


def package_dirs() -> dict[str, str]:
    """pyproject.toml's ``package-dir``: installed package -> its folder in the tree (``groupspec.model`` -> ``model``)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return dict(tomllib.load(f)["tool"]["setuptools"]["package-dir"])


def installed_view(into: Path) -> Path:
    """The packages laid out as installed, under ``into``: ``groupspec/`` holds symlinks to the tree's
    ``groupspec/*`` and, for each mapped sub-package, to its top-level folder (``groupspec/model`` -> ``model/``)."""
    view = into / "groupspec"
    view.mkdir(parents=True)
    for entry in sorted((ROOT / "groupspec").iterdir()):
        if entry.name != "__pycache__":
            (view / entry.name).symlink_to(entry)
    for package, folder in package_dirs().items():
        if package != "groupspec":
            (into / package.replace(".", "/")).symlink_to(ROOT / folder)
    return into


def installed_path(module: str) -> str:
    """``module`` (a path in the tree) as it lies in :func:`installed_view` (``model/spec.py`` -> ``groupspec/model/spec.py``)."""
    for package, folder in package_dirs().items():
        if package != "groupspec" and (module == folder or module.startswith(folder + "/")):
            return package.replace(".", "/") + module[len(folder):]
    return module


def typed_modules() -> list[str]:
    files: list[str] = []
    for r in ROOTS:
        p = ROOT / r
        files += [r] if p.suffix == ".py" else [str(f.relative_to(ROOT)) for f in sorted(p.rglob("*.py"))]
    return [f for f in files if f not in NOT_YET_TYPED]


def mypy(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    # one cache in the tree (.mypy_cache/, git-ignored): mypy keys it by module, so the scratch views share it
    return subprocess.run([sys.executable, "-m", "mypy", *FLAGS, f"--cache-dir={ROOT / '.mypy_cache'}", *paths], cwd=cwd,
                          capture_output=True, text=True, check=False)


def mypy_installed(*modules: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """mypy on ``modules`` (paths in the tree) in the installed layout; ``extra``: more files (installed path ->
    source) written into the scratch view, not into the tree."""
    with tempfile.TemporaryDirectory() as tmp:
        view = installed_view(Path(tmp))
        for path, source in (extra or {}).items():
            (view / path).write_text(source)
        return mypy(*[installed_path(m) for m in modules], *(extra or {}), cwd=view)


def test_the_typed_modules_pass_mypy_strict() -> None:
    out = mypy_installed(*typed_modules())
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_installed_view_maps_every_folder_of_pyproject() -> None:
    assert installed_path("model/spec.py") == "groupspec/model/spec.py"
    assert installed_path("reference/classic") == "groupspec/reference/classic"
    assert installed_path("groupspec/verify.py") == "groupspec/verify.py"
    assert installed_path("modelx/a.py") == "modelx/a.py"
    assert {installed_path(f) for f in package_dirs().values()} == {p.replace(".", "/") for p in package_dirs()}


def test_the_not_yet_typed_list_names_only_existing_modules() -> None:
    assert [f for f in NOT_YET_TYPED if not (ROOT / f).exists()] == []


def test_the_roots_are_every_folder_of_the_installed_namespace() -> None:
    assert sorted(ROOTS) == sorted(set(package_dirs().values()))
    assert NOT_YET_TYPED == NUMBA_KERNELS  # nothing but the numba kernels is left out


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / "groupspec" / "py.typed").exists()


def test_mypy_strict_catches_a_type_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n")
    out = mypy(str(bad))
    assert out.returncode == 1 and "Incompatible return value type" in out.stdout


# a tool in groupspec/ misreading the model's Spec: Spec.name is a str (model/spec.py), and the model is only
# visible to mypy in the installed layout (from groupspec/ alone, groupspec.model is a missing import: Any)
CROSS_ROOM_ERROR = ("from groupspec.model import Config, make\n\n\n"
                    "def size() -> int:\n    n: int = make('eager', Config()).name\n    return n\n")


def test_mypy_strict_catches_a_type_error_across_rooms() -> None:
    out = mypy_installed("groupspec/verify.py", extra={"groupspec/planted.py": CROSS_ROOM_ERROR})
    assert out.returncode == 1, out.stdout + out.stderr
    assert ('planted.py:5: error: Incompatible types in assignment (expression has type "str", variable has type "int")'
            in out.stdout), out.stdout


def test_the_tree_layout_misses_that_error(tmp_path: Path) -> None:
    """Why the installed view: run from the tree, mypy takes the model for Any and passes the same file."""
    (tmp_path / "groupspec").mkdir()
    bad = tmp_path / "groupspec" / "planted.py"
    bad.write_text(CROSS_ROOM_ERROR)
    out = mypy(str(bad))
    assert out.returncode == 0, out.stdout + out.stderr


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
