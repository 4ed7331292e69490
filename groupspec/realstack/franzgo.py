"""The franz-go worker (``franzgo/main.go``: github.com/twmb/franz-go, the pure-Go Kafka client) built once per
source version into the cache (``~/.cache/groupspec/franzgo-<digest>/``) with the machine's Go; the modules come from
the Go module proxy on the first build (``go.mod``/``go.sum`` pin them). ``python -m groupspec.realstack.franzgo``
builds it ahead of time."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from groupspec.kafka import cache_root

__all__ = ["franzgo_binary", "FranzGoError", "go_worker_binary"]

SOURCES = Path(__file__).with_name("franzgo")


class FranzGoError(RuntimeError):
    """Go is missing or the worker does not build (the message is one line)."""


def _digest(sources: Path = SOURCES) -> str:
    h = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        h.update((sources / name).read_bytes())
    return h.hexdigest()[:16]


def franzgo_binary() -> Path:
    """The built worker, building it first if this source version has not been built here."""
    return go_worker_binary("franz-go", SOURCES, "franzgo", FranzGoError)


def go_worker_binary(label: str, sources: Path, name: str, error: type[RuntimeError]) -> Path:
    """A Go worker (``sources``: go.mod, go.sum, main.go) built once per source version into
    ``<cache>/<name>-<digest>/<name>-worker``; ``error`` (with ``label`` first) when Go is missing or the build fails."""
    target = cache_root() / f"{name}-{_digest(sources)}" / f"{name}-worker"
    if target.exists():
        return target
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        raise error(f"{label}: the worker is built with Go, and no go is on PATH (install Go 1.22 or newer)")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    env = dict(os.environ, GOFLAGS="-mod=mod", CGO_ENABLED="0")
    r = subprocess.run([go, "build", "-o", str(tmp), "."], cwd=sources, env=env, capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if ln.strip()), "no output")
        raise error(f"{label}: go build failed: {first[:300]}")
    tmp.replace(target)
    return target


if __name__ == "__main__":
    try:
        print(franzgo_binary())
    except FranzGoError as e:
        print(f"groupspec: error: {e}", file=sys.stderr)
        sys.exit(2)
