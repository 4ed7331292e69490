"""Not a timing: a digest of the project's deterministic behaviour, to compare two checkouts (issue 26, "no behaviour
changes": a refactoring must leave every verdict, state count, replay transcript and simulation the same).

For one checkout (``--tree DIR``, default: this one) it records, each as a SHA-256 of the output with its timings
taken out, and the headline figures beside it:

* ``verify``: ``groupspec verify --json`` — every model check's states, edges, verdicts and bound, every proof's
  verdict, every reference mutant's catch (examples, simulator seed); times, the worker profile and the witnesses Z3
  chooses (not the same model every run) removed;
* ``check:<variant>``: ``groupspec check --protocol V --json`` for every variant ``check --list`` names, at its
  default bounds (a variant whose default search is larger than ``--max-states`` is skipped, and says so);
* ``simulate:<scenario>[:<protocol>]``: ``groupspec simulate NAME --json`` for every built-in scenario (seeded);
* ``replay:<script>``: ``groupspec coordinator replay`` of every script under ``tests/replay/`` (of *this* checkout,
  so both sides answer the same requests);
* ``figures``: the committed figure files of the checkout (``docs/figures``), hashed.

The other checkout is run from its own tree, laid out as installed (symlinks, as ``tests/test_types.py`` does), with
this checkout's virtual environment for the dependencies. Then ``--diff OLD.json NEW.json`` prints every entry that
differs (exit 1) or says they are identical (exit 0).

Run::

    .venv/bin/python bench/behaviour_digest.py --out /tmp/new.json
    git worktree add /tmp/old <commit> && .venv/bin/python bench/behaviour_digest.py --tree /tmp/old --out /tmp/old.json
    .venv/bin/python bench/behaviour_digest.py --diff /tmp/old.json /tmp/new.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
TIMING_KEYS = {"seconds", "time", "wall_seconds", "cpu_seconds", "elapsed", "profile", "ended", "worker",
               "states_per_second", "memory_per_state", "peak_memory", "rss", "started", "ms_per_state", "compile_seconds",
               "peak_bytes", "per_state_bytes", "search_cpu_seconds", "serial_cpu_seconds"}


def installed_view(tree: Path, into: Path) -> Path:
    """``tree``'s packages laid out as installed under ``into`` (pyproject.toml's ``package-dir``)."""
    with open(tree / "pyproject.toml", "rb") as f:
        dirs = dict(tomllib.load(f)["tool"]["setuptools"]["package-dir"])
    view = into / "groupspec"
    view.mkdir(parents=True)
    for entry in sorted((tree / "groupspec").iterdir()):
        if entry.name != "__pycache__":
            (view / entry.name).symlink_to(entry)
    for package, folder in dirs.items():
        if package != "groupspec":
            (into / package.replace(".", "/")).symlink_to(tree / folder)
    return into


def strip(doc: Any) -> Any:
    """``doc`` without its timings (keys in :data:`TIMING_KEYS`, anywhere)."""
    if isinstance(doc, dict):
        return {k: strip(v) for k, v in doc.items() if k not in TIMING_KEYS}
    if isinstance(doc, list):
        return [strip(v) for v in doc]
    return doc


def verify_core(doc: Any) -> Any:
    """``verify --json`` without what Z3 may choose differently run to run: a proof's verdict stays, its witness or
    counterexample (``detail``, ``data``: which model Z3 returned) goes; so does the counterexample text of a model
    check and a reference mutant (the shortest one is not unique); the verdicts, state counts, bounds and catches stay."""
    if not isinstance(doc, dict):
        return doc
    out = dict(doc)
    if isinstance(out.get("proofs"), dict):
        out["proofs"] = {**out["proofs"], "checks": [{k: c.get(k) for k in ("family", "protocol", "name", "verdict", "ok",
                                                                               "expect", "count")}
                                                     for c in out["proofs"].get("checks", [])]}
    out["mutants"] = [{k: v for k, v in m.items() if k != "detail"} for m in out.get("mutants", [])]
    return out


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Runner:
    def __init__(self, pythonpath: Path | None) -> None:
        self.env = {**os.environ}
        if pythonpath is not None:
            self.env["PYTHONPATH"] = str(pythonpath)
        self.cwd = tempfile.mkdtemp(prefix="digest-")  # neutral: ``python -c`` puts the working folder on sys.path

    def cli(self, *args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "import sys; from groupspec.cli import main; main(sys.argv[1:])", *args],
                              capture_output=True, text=True, env=self.env, cwd=self.cwd, timeout=timeout)


def record(tree: Path, max_states: int, only: set[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tree": str(tree)}
    with tempfile.TemporaryDirectory() as tmp:
        run = Runner(None if tree == HERE else installed_view(tree, Path(tmp)))
        head = run.cli("check", "--list", "--json")
        if head.returncode != 0:
            raise SystemExit(f"behaviour_digest: {tree}: groupspec does not start: {head.stderr.strip()[-400:]}")

        def entry(key: str, r: subprocess.CompletedProcess[str], headline: Any = None) -> None:
            try:
                doc = strip(json.loads(r.stdout)) if r.stdout.strip().startswith(("{", "[")) else r.stdout
            except json.JSONDecodeError:
                doc = r.stdout
            if key == "verify":
                doc = verify_core(doc)
            text = doc if isinstance(doc, str) else json.dumps(doc, sort_keys=True)
            out[key] = {"rc": r.returncode, "sha": digest(text), "headline": headline(doc) if headline else None}
            print(f"  {key}: exit {r.returncode}, {out[key]['sha']}", file=sys.stderr, flush=True)

        def want(section: str) -> bool:
            return only is None or section in only

        t0 = time.monotonic()
        if want("check"):
            for row in json.loads(head.stdout):
                v = row["protocol"]
                r = run.cli("check", "--protocol", v, "--json", "--max-states", str(max_states))
                entry(f"check:{v}", r, lambda d: {"states": d.get("states"), "bound": d.get("convergence_bound")}
                      if isinstance(d, dict) else None)
        if want("simulate"):
            for row in json.loads(run.cli("simulate", "--list", "--json").stdout):
                r = run.cli("simulate", row["name"], "--protocol", row["default_protocol"], "--json")
                entry(f"simulate:{row['name']}:{row['default_protocol']}", r)
        if want("replay"):
            for script in sorted((HERE / "tests" / "replay").glob("*.jsonl")):
                entry(f"replay:{script.name}", run.cli("coordinator", "replay", str(script)))
        if want("figures"):
            figs = sorted(p for p in (tree / "docs" / "figures").rglob("*") if p.is_file())
            h = hashlib.sha256()
            for p in figs:
                h.update(p.relative_to(tree).as_posix().encode() + b"\0" + p.read_bytes())
            out["figures"] = {"rc": 0, "sha": h.hexdigest()[:16], "headline": {"files": len(figs)}}
        if want("verify"):
            entry("verify", run.cli("verify", "--json"),
                  lambda d: {"ok": d.get("ok"), "mutants caught": sum(1 for m in d.get("mutants", []) if m.get("caught"))}
                  if isinstance(d, dict) else None)
        out["_seconds"] = round(time.monotonic() - t0)
    return out


def diff(old_path: str, new_path: str) -> int:
    old, new = json.loads(Path(old_path).read_text()), json.loads(Path(new_path).read_text())
    keys = sorted((set(old) | set(new)) - {"tree", "_seconds"})
    differ = [k for k in keys if old.get(k, {}).get("sha") != new.get(k, {}).get("sha")
              or old.get(k, {}).get("rc") != new.get(k, {}).get("rc")]
    print(f"{len(keys)} entries compared: {old.get('tree')} against {new.get('tree')}")
    for k in differ:
        print(f"  DIFFERS {k}: {old.get(k)} -> {new.get(k)}")
    print("identical" if not differ else f"{len(differ)} differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=str(HERE), help="the checkout to record (default: this one)")
    ap.add_argument("--out", help="write the digest here (JSON)")
    ap.add_argument("--max-states", type=int, default=2_000_000)
    ap.add_argument("--only", default=None, help="comma list of sections: check,simulate,replay,figures,verify")
    ap.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="compare two digests")
    a = ap.parse_args()
    if a.diff:
        return diff(*a.diff)
    if not a.out:
        ap.error("--out is required (or --diff OLD NEW)")
    doc = record(Path(a.tree).resolve(), a.max_states, set(a.only.split(",")) if a.only else None)
    Path(a.out).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(doc) - 2} entries in {doc['_seconds']} s -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
