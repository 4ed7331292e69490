"""The installed distribution exposes one import namespace and no generic top-level package."""
from __future__ import annotations

import importlib.metadata as md
import importlib.util
import subprocess
import sys


def test_subpackages_import_under_groupspec():
    for name in ("groupspec.model", "groupspec.reference", "groupspec.proofs", "groupspec.cli"):
        assert importlib.util.find_spec(name) is not None, name


def test_no_generic_top_level_package_installed(tmp_path):
    # Run from an empty directory so the checkout itself is not on sys.path.
    code = "import importlib.util,sys; sys.exit(any(importlib.util.find_spec(n) for n in ('model','reference','proofs')))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path)
    assert r.returncode == 0, "a generic top-level package (model/reference/proofs) is importable"


def test_console_script_declared():
    eps = md.entry_points(group="console_scripts")
    assert any(ep.name == "groupspec" and ep.value == "groupspec.cli:main" for ep in eps)


def test_reference_never_imports_model():
    import pathlib
    import re

    pattern = re.compile(r"^\s*(from\s+(groupspec\.model|\.\.model)\b|import\s+groupspec\.model\b)", re.M)
    root = pathlib.Path(__file__).resolve().parents[1] / "reference"
    offenders = [str(p) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


# ------------------------------------------------------------------------------------------ import directions
# Each room of the project and the rooms it may import (besides itself). ARCHITECTURE.md draws the same
# table; a new room must be added to both. The CLI may import every room; nothing imports the CLI.
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
ROOMS = {  # room -> folder
    "model": "model", "reference": "reference", "proofs": "proofs", "pipeline": "pipeline",
    "checker": "groupspec/checker", "conformance": "groupspec/conformance", "assignorcheck": "groupspec/assignorcheck",
    "trace": "groupspec/trace", "realstack": "groupspec/realstack", "serve": "groupspec/serve", "figures": "groupspec/figures",
    "kafka": "groupspec/kafka", "oracle": "groupspec/oracle", "specmut": "groupspec/specmut",
    "verify": "groupspec/verify.py", "cli": "groupspec/cli", "top": "groupspec/__init__.py", "strategies": "groupspec/strategies.py",
}
ALLOWED = {
    "model": set(),
    "reference": set(),
    "checker": {"model"},
    "proofs": {"model", "checker"},
    "assignorcheck": {"reference"},
    "trace": {"model", "checker"},
    "conformance": {"model", "reference", "checker", "trace"},
    "serve": {"reference", "trace"},
    "realstack": {"reference", "trace", "serve", "kafka"},
    "kafka": set(),
    "oracle": {"reference", "kafka"},
    "pipeline": {"reference", "trace", "model"},
    "verify": {"model", "checker", "proofs", "conformance"},
    "specmut": {"model", "checker", "conformance", "reference", "oracle", "kafka", "trace"},
    "figures": {"model", "reference", "checker", "pipeline"},
    "strategies": {"assignorcheck"},
    "top": {"assignorcheck"},
    "cli": set(ROOMS) - {"cli", "top"},
}


def _module_of(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    top = {"model": "groupspec.model", "reference": "groupspec.reference", "proofs": "groupspec.proofs",
           "pipeline": "groupspec.pipeline"}.get(parts[0])
    name = ".".join([top, *parts[1:]] if top else parts)
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _room_of_module(name):
    for room, folder in ROOMS.items():
        mod = _module_of(ROOT / folder) if not folder.endswith(".py") else _module_of(ROOT / folder)
        if name == mod or name.startswith(mod + ".") and not folder.endswith(".py"):
            return room
    return None


def _project_files():
    files = []
    for folder in ROOMS.values():
        p = ROOT / folder
        files += [p] if p.suffix == ".py" else sorted(p.rglob("*.py")) if p.exists() else []
    return files


def _imports(path, me=None):
    """Every groupspec module ``path`` imports (top-level or inside a function), resolved to module names
    (``me``: the module ``path`` stands for, when it is not a file of the checkout)."""
    import ast
    import importlib.util

    me = me or _module_of(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("groupspec")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            if not base.startswith("groupspec"):
                continue
            for a in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{base}.{a.name}"
                exported = a.name in _exported(base)  # the package's own name, not its submodule
                out.add(sub if not exported and importlib.util.find_spec(base) and _is_module(sub) else base)
    return out


def _exported(package):
    """The names a project package's front door exports (its ``__all__``)."""
    import importlib

    try:
        return set(getattr(importlib.import_module(package), "__all__", ()))
    except ImportError:
        return set()


def _is_module(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_rooms_import_only_what_they_may():
    offenders = []
    for path in _project_files():
        room = _room_of_module(_module_of(path))
        for target in _imports(path):
            other = _room_of_module(target)
            if other is None:
                offenders.append(f"{path.relative_to(ROOT)} imports {target}, which belongs to no room")
            elif other != room and other not in ALLOWED[room]:
                offenders.append(f"{path.relative_to(ROOT)} ({room}) imports {target} ({other})")
    assert offenders == []


def test_no_module_imports_in_a_cycle():
    import networkx as nx

    graph = nx.DiGraph()
    for path in _project_files():
        me = _module_of(path)
        for target in _imports(path):
            if target != me and not me.startswith(target + "."):  # a module's own package is not a cycle
                graph.add_edge(me, target)
    cycles = list(nx.simple_cycles(graph))
    assert cycles == []


def test_architecture_lists_every_room():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    for room, folder in ROOMS.items():
        if (ROOT / folder).exists():
            assert f"`{folder}" in text, f"ARCHITECTURE.md does not list {folder}"


def test_no_python_file_is_past_the_size_limit():
    """A file that grows past ~700 lines is split by what its parts do; this test stops any file at 1,000.
    Exempt, as ARCHITECTURE.md explains: the compiled kernel (one numba compilation unit)."""
    exempt = {"groupspec/checker/compiled/kernel.py"}
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in _project_files()
           if str(p.relative_to(ROOT)) not in exempt and (n := len(p.read_text().splitlines())) > 1000]
    assert big == []


def test_reference_files_stay_under_700_lines():
    """reference/ was cut at its seams (issue 26: the classic coordinator into its driving surface, the group,
    the join and sync phases and the sessions; the classic client into its inputs, its rebalance and its
    values): no file of it grows past 700 lines again."""
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in sorted((ROOT / "reference").rglob("*.py"))
           if (n := len(p.read_text().splitlines())) > 700]
    assert big == []


def test_every_package_folder_is_declared_for_non_editable_installs():
    """A wheel holds only the packages pyproject.toml lists: a folder of modules left out is missing for
    anyone who installs groupspec without ``-e`` (a Spark executor, a user's CI)."""
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared = set(cfg["packages"])
    dirs = {name: ROOT / path for name, path in cfg["package-dir"].items()}
    missing = []
    for name, path in dirs.items():
        for d in [path, *[p for p in path.rglob("*") if p.is_dir()]]:
            if "__pycache__" in d.parts or not any(d.glob("*.py")):
                continue
            pkg = ".".join([name, *d.relative_to(path).parts])
            if pkg not in declared:
                missing.append(pkg)
    assert missing == [], f"add to [tool.setuptools] packages in pyproject.toml: {missing}"


# Rooms whose files are being regrouped right now (issue 26) are not held to the two rules below yet: each entry
# names the room, who is moving it, and the rule it is exempt from. Remove an entry when its work lands.
PENDING_ROOMS: dict[str, str] = {}


def _room_of_path(path):
    return _room_of_module(_module_of(path))


def _private_uses(path):
    """Another module's ``_private`` names this file uses: ``from m import _x`` and ``m._x`` on an imported
    project module ``m`` (dunders are not private)."""
    import ast

    def private(name):
        return name.startswith("_") and not name.startswith("__")

    tree = ast.parse(path.read_text())
    modules = set()  # names bound to project modules in this file
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("groupspec")):
            for a in node.names:
                if private(a.name):
                    out.append(f"from {'.' * node.level}{node.module or ''} import {a.name}")
                else:
                    modules.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.startswith("groupspec")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in modules):
            out.append(f"{node.value.id}.{node.attr}")
    return out


def test_no_file_uses_another_files_private_names():
    """Inside a room a file uses only another file's public names: a name used by several files is the room's
    own interface and is named as such; a room cut by size rather than at seams shows up here."""
    offenders = []
    for path in _project_files():
        if _room_of_path(path) in PENDING_ROOMS:
            continue
        offenders += [f"{path.relative_to(ROOT)}: {use}" for use in _private_uses(path)]
    assert offenders == []


def test_the_private_name_check_catches_an_import_and_an_attribute(tmp_path):
    mutant = tmp_path / "m.py"
    mutant.write_text("from . import lean as L\nfrom .kernel import _b\nx = L._key\ny = L.grow\n")
    assert _private_uses(mutant) == ["from .kernel import _b", "L._key"]



# ------------------------------------------------------------------------------ reference/'s sub-packages
# reference/ is one room of sub-packages by what they are; each has a front door whose docstring says what it
# owns and may import. Inside the room: which sub-package may import which (ARCHITECTURE.md draws the same).
REFERENCE_PARTS = {  # sub-package (or module) -> the others it may import (the one actor contract: every part)
    "errors": set(),
    "actor": set(),
    "assignors": set(),
    "classic": {"errors", "actor"},
    "consumer": {"errors", "assignors", "actor"},
    "migration": {"classic", "consumer", "errors", "actor"},
    "connect": {"classic", "assignors", "errors", "actor"},
    "sim": {"classic", "consumer", "migration", "connect", "assignors", "errors", "actor"},
    "history": {"sim", "actor"},
}


def _reference_part(module):
    """The sub-package of ``groupspec.reference`` a module belongs to (``None`` for the front door itself)."""
    rest = module.removeprefix("groupspec.reference").lstrip(".")
    return rest.split(".")[0] or None


def test_reference_sub_packages_import_only_what_they_may():
    offenders = []
    for path in sorted((ROOT / "reference").rglob("*.py")):
        part = _reference_part(_module_of(path))
        if part is not None:
            assert part in REFERENCE_PARTS, f"{path.relative_to(ROOT)}: a sub-package missing from REFERENCE_PARTS"
            offenders += _reference_offences(str(path.relative_to(ROOT)), part, _imports(path))
    assert offenders == []


def _reference_offences(where, part, targets):
    out = []
    for target in sorted(targets):
        if not target.startswith("groupspec.reference"):
            continue
        other = _reference_part(target)
        if other is None:
            out.append(f"{where} imports the room's front door (import the part)")
        elif other != part and other not in REFERENCE_PARTS[part]:
            out.append(f"{where} ({part}) imports {target} ({other})")
    return out


def test_the_reference_parts_check_catches_a_wrong_direction():
    assert _reference_offences("x.py", "classic", {"groupspec.reference.sim.simulator"}) == [
        "x.py (classic) imports groupspec.reference.sim.simulator (sim)"]
    assert _reference_offences("x.py", "consumer", {"groupspec.reference"}) != []
    assert _reference_offences("x.py", "sim", {"groupspec.reference.classic.client", "groupspec.model"}) == []


def test_reference_sub_packages_have_front_doors():
    """Every folder of reference/ is a package whose docstring says what it owns and what it may import."""
    import ast

    for sub in sorted(p for p in (ROOT / "reference").iterdir() if p.is_dir() and p.name != "__pycache__"):
        init = sub / "__init__.py"
        assert init.exists(), f"{sub.relative_to(ROOT)} has no __init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        if sub.name != "assignors":  # the assignors' door predates the rule; its docstring lists its modules
            assert "May import" in doc, f"{init.relative_to(ROOT)}: the docstring does not say what it may import"


def test_the_reference_front_door_lends_every_public_name():
    """``from groupspec.reference import X`` works for every public name of the parts that one family defines;
    the names two families define are refused with a pointer to both."""
    import importlib

    import pytest

    ref = importlib.import_module("groupspec.reference")
    for sub in ("classic", "consumer", "migration", "connect", "history", "sim", "errors", "actor"):
        part = importlib.import_module(f"groupspec.reference.{sub}")
        for name in part.__all__:
            if name in ref.SHARED:
                assert sub in ref.SHARED[name]
                continue
            assert getattr(ref, name) is getattr(part, name), f"groupspec.reference.{name} is not {sub}'s"
    assert set(ref.SHARED) >= {"HeartbeatRequest", "MemberState"}
    with pytest.raises(AttributeError, match="classic and consumer"):
        getattr(ref, "HeartbeatRequest")


def test_other_rooms_import_reference_through_front_doors():
    """Outside reference/ (tests excepted), code names ``groupspec.reference``, a sub-package or ``errors``,
    never a module inside a sub-package (the assignors' modules are the assignors room's business)."""
    offenders = []
    for path in _project_files():
        if not str(path.relative_to(ROOT)).startswith("reference/"):
            offenders += _deep_reference_imports(str(path.relative_to(ROOT)), _imports(path))
    assert offenders == []


def _deep_reference_imports(where, targets):
    import importlib

    out = []
    for target in sorted(targets):
        parts = target.split(".")
        if target.startswith("groupspec.reference.") and parts[2] != "assignors" and len(parts) > 3:
            door = importlib.import_module(".".join(parts[:3]))
            if len(parts) > 4 or parts[3] not in getattr(door, "__all__", ()):  # a module the door lends is fine
                out.append(f"{where} imports {target}")
    return out


def test_the_reference_front_door_check_catches_a_deep_import():
    assert _deep_reference_imports("x.py", {"groupspec.reference.classic.join_sync"}) == [
        "x.py imports groupspec.reference.classic.join_sync"]
    assert _deep_reference_imports("x.py", {"groupspec.reference.classic", "groupspec.reference.sim.trace",
                                            "groupspec.reference.assignors.server", "groupspec.reference"}) == []

# Files allowed to reach past another room's front door, each with its reason (kept short on purpose).
DEEP_IMPORT_EXCEPTIONS = {
    "groupspec/strategies.py": "is groupspec.assignorcheck.strategies under its public name (a star re-export)",
    "proofs/finite.py": "the finite Z3 encoding is model/classic.py again, action class by action class, field by field",
    "groupspec/checker/compiled/": "the compiled kernels encode the KIP-848 and migration model's own records field by "
                                   "field (consumer, migration_state: names the model's front door cannot export "
                                   "without clashes)",
}


def _deep_imports(path, me=None):
    """The project modules ``path`` imports from another room other than through that room's front door."""
    room = _room_of_module(me or _module_of(path))
    fronts = {r: _module_of(ROOT / folder) for r, folder in ROOMS.items()}
    out = []
    for target in sorted(_imports(path, me)):
        other = _room_of_module(target)
        if other is None or other == room or target == fronts[other] or other in PENDING_ROOMS:
            continue
        if other == "reference" and not _deep_reference_imports("", {target}):
            continue  # reference's front doors are its sub-packages' (test_other_rooms_import_reference_through_front_doors)
        out.append(target)
    return out


def test_other_rooms_import_a_room_through_its_front_door():
    """A room's ``__init__`` is its public surface: another room imports ``groupspec.trace``, not
    ``groupspec.trace.runs``, so a room can regroup its files without breaking its neighbours."""
    offenders = []
    for path in _project_files():
        rel = str(path.relative_to(ROOT))
        if _room_of_path(path) in PENDING_ROOMS or rel.startswith(tuple(DEEP_IMPORT_EXCEPTIONS)):
            continue
        offenders += [f"{rel} imports {t}" for t in _deep_imports(path)]
    assert offenders == []


def test_the_front_door_check_catches_a_deep_import(tmp_path):
    probe = tmp_path / "probe.py"  # as if it were a file of groupspec/trace
    probe.write_text("from groupspec.checker.timeline import render\nfrom groupspec.model import Config\n"
                     "from groupspec.checker import check\nfrom . import runs\n")
    assert _deep_imports(probe, me="groupspec.trace.probe") == ["groupspec.checker.timeline"]
    # reference's sub-package doors are front doors; a module behind one is not
    probe.write_text("from groupspec.reference.sim import run_scenario\nfrom groupspec.reference.classic import Consumer\n"
                     "from groupspec.reference.classic.join_sync import JoinSync\n")
    assert _deep_imports(probe, me="groupspec.serve.probe") == ["groupspec.reference.classic.join_sync"]


# The rooms whose row in ARCHITECTURE.md gives the folder's one-line purpose instead of naming each file.
ROWS_BY_PURPOSE = {"cli": "one module per sub-command, parsing and presentation only"}


def _unnamed_files(text):
    """Each room's Python files that its row of ARCHITECTURE.md's table does not name."""
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| `")}
    out = []
    for room, folder in ROOMS.items():
        path = ROOT / folder
        if folder.endswith(".py") or room in PENDING_ROOMS or room in ROWS_BY_PURPOSE or not path.exists():
            continue
        row = rows.get(f"`{folder}/`", "")
        out += [f"{folder}/{p.relative_to(path)}" for p in sorted(path.rglob("*.py"))
                if p.name != "__init__.py" and "__pycache__" not in p.parts and p.name not in row]
    return out


def test_architecture_names_every_file_of_a_room():
    assert _unnamed_files((ROOT / "ARCHITECTURE.md").read_text()) == []


def test_the_file_list_check_catches_a_file_left_out():
    text = (ROOT / "ARCHITECTURE.md").read_text().replace("`overlaps.py`", "`overlap rules`")
    assert _unnamed_files(text) == ["groupspec/trace/overlaps.py"]
