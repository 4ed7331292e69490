"""Sweep grids: the YAML file, its validation, the presets, and the expansion into points.

A grid is a YAML mapping. Its top-level axis keys are defaults for every block; ``blocks`` is a list
of mappings, each a cartesian product of its axes (a block's own keys override the defaults). A
grid without ``blocks`` is one block. Every axis takes one value or a list of values::

    name: my-sweep
    commit: [auto, sync]
    seeds: 2                       # seeds 0, 1 (or a list: [7, 11])
    blocks:
      - tag: rolling
        protocol: [eager, cooperative]
        churn: rolling-restart
        members: [3, 6]
        partitions: 12

Axes (:data:`AXES`, with their defaults): ``protocol`` (eager, cooperative, static,
static-cooperative, connect, zookeeper, and ``consumer``: the next-generation protocol, KIP-848),
``assignor`` (range, roundrobin, sticky, cooperative-sticky; for ``consumer`` the server-side uniform
and range; ``connect`` and ``zookeeper`` use their own and ignore it), ``members``, ``partitions``, ``churn``
(:data:`CHURN`), ``crash_per_min`` / ``pause_per_min`` (random faults from 20 s on), ``loss`` (the
network's loss probability), ``session_timeout_ms``, ``heartbeat_interval_ms``,
``max_poll_interval_ms``, ``connect_delay_ms`` (scheduled.rebalance.max.delay.ms), ``bounce_ms``
(how long a bounced member stays away), ``poll_interval_ms`` (the application's time between two
polls: how long it takes to process what one poll returned), ``commit`` (:data:`groupspec.reference.sim.records.STRATEGIES`),
``rate_per_s`` (records produced per partition per second), ``seeds`` (at most :data:`MAX_SEEDS`), and ``tag`` (a label the
report groups by).

Combinations that cannot run are dropped and counted (a cooperative protocol with an eager-only
assignor; ``connect`` and ``zookeeper`` collapse the assignor and commit axes: they run their own
assignment and have no consumer offsets; ``consumer`` needs a server-side assignor and no network
loss, and collapses ``commit`` to ``periodic`` and the poll and record-rate axes to their defaults:
its simulator has no network, poll loop or record flow, see :mod:`groupspec.pipeline.consumer_runs`;
a server-side-only assignor with a classic protocol is dropped). A grid expands into at most
:data:`MAX_COMBINATIONS` combinations. A malformed grid raises :class:`GridError`, whose message
names the file and the field (``grid.yaml: blocks[1].members: ...``).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from groupspec.reference.assignors import NAMES as ASSIGNORS
from groupspec.reference.assignors.server import NAMES as SERVER_ASSIGNORS
from groupspec.reference.sim import STRATEGIES

__all__ = ["GridError", "Point", "Grid", "PROTOCOLS", "CHURN", "AXES", "PRESETS", "load_grid", "preset", "parse_grid"]

PROTOCOLS = ("eager", "cooperative", "static", "static-cooperative", "connect", "zookeeper", "consumer")
CHURN = ("steady", "join", "leave", "crash", "bounce", "rolling-restart", "random")
COOPERATIVE_ASSIGNORS = ("cooperative-sticky",)


#: the most seeds an axis may ask for (``seeds: N`` or a list), and the most combinations a grid may expand into
#: (before those that cannot run are dropped; the ``large`` preset has 185,760): past them a grid is a typo, not a
#: sweep, and would exhaust memory while being expanded
MAX_SEEDS = 10_000
MAX_COMBINATIONS = 1_000_000


class GridError(ValueError):
    """A malformed grid: the message names the file and the field."""


@dataclass(frozen=True, order=True)
class Point:
    """One run of the sweep: every input of it (the row's key columns)."""

    tag: str
    protocol: str
    assignor: str
    members: int
    partitions: int
    churn: str
    crash_per_min: float
    pause_per_min: float
    loss: float
    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_poll_interval_ms: int
    connect_delay_ms: int
    bounce_ms: int
    poll_interval_ms: int
    commit: str
    rate_per_s: float
    seed: int

    @cached_property
    def point_id(self) -> str:
        """A stable name for the point (a hash of its inputs). Made once per point (kept in the instance's
        ``__dict__``, which the dataclass's equality, order and hash do not read): planning a large grid asks
        for it several times per point (93,600 points of the ``large`` preset took 33 s to plan)."""
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha1(blob).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (what ``dataclasses.asdict`` gives: every field is a plain value), without its
        recursive copy."""
        return {name: getattr(self, name) for name in _POINT_FIELDS}



# axis -> (default, python type, check)
AXES: dict[str, tuple[Any, type]] = {
    "tag": ("", str),
    "protocol": ("eager", str),
    "assignor": ("range", str),
    "members": (3, int),
    "partitions": (6, int),
    "churn": ("bounce", str),
    "crash_per_min": (0.0, float),
    "pause_per_min": (0.0, float),
    "loss": (0.0, float),
    "session_timeout_ms": (10000, int),
    "heartbeat_interval_ms": (3000, int),
    "max_poll_interval_ms": (60000, int),
    "connect_delay_ms": (300000, int),
    "bounce_ms": (4000, int),
    "poll_interval_ms": (200, int),
    "commit": ("auto", str),
    "rate_per_s": (10.0, float),
    "seeds": ([0], int),
}
_TOP_ONLY = {"name", "blocks"}
_POINT_FIELDS = [f.name for f in fields(Point)]


@dataclass(frozen=True)
class Grid:
    name: str
    points: tuple[Point, ...]
    dropped: int  # combinations that cannot run (see the module docstring)
    source: str

    def __len__(self) -> int:
        return len(self.points)


def _values(loc: str, key: str, raw: Any) -> list[Any]:
    """The values of one axis; ``loc`` names the field (``grid.yaml: blocks[1].members``)."""
    default, typ = AXES[key]
    if key == "seeds" and isinstance(raw, int) and not isinstance(raw, bool):
        if not 1 <= raw <= MAX_SEEDS:
            raise GridError(f"{loc}: a seed count must be between 1 and {MAX_SEEDS:,}, got {raw}")
        return list(range(raw))
    vals = raw if isinstance(raw, list) else [raw]
    if not vals:
        raise GridError(f"{loc}: empty list")
    if key == "seeds" and len(vals) > MAX_SEEDS:
        raise GridError(f"{loc}: at most {MAX_SEEDS:,} seeds, got {len(vals):,}")
    out: list[Any] = []
    for v in vals:
        if isinstance(v, bool) or v is None:
            raise GridError(f"{loc}: {v!r} is not a {typ.__name__}")
        if typ is float and isinstance(v, int):
            v = float(v)
        if not isinstance(v, typ):
            raise GridError(f"{loc}: {v!r} is not a {typ.__name__}")
        out.append(v)
    for v in out:
        _check_value(loc, key, v)
    return out


def _check_value(loc: str, key: str, v: Any) -> None:
    def bad(msg: str) -> GridError:
        return GridError(f"{loc}: {msg}")

    if key == "protocol" and v not in PROTOCOLS:
        raise bad(f"unknown protocol {v!r}; choose from {', '.join(PROTOCOLS)}")
    if key == "assignor" and v not in ASSIGNORS and v not in SERVER_ASSIGNORS:
        names = list(ASSIGNORS) + [n for n in SERVER_ASSIGNORS if n not in ASSIGNORS]
        raise bad(f"unknown assignor {v!r}; choose from {', '.join(names)}")
    if key == "churn" and v not in CHURN:
        raise bad(f"unknown churn pattern {v!r}; choose from {', '.join(CHURN)}")
    if key == "commit" and v not in STRATEGIES:
        raise bad(f"unknown commit strategy {v!r}; choose from {', '.join(STRATEGIES)}")
    if key == "members" and not 1 <= v <= 64:
        raise bad(f"members must be between 1 and 64, got {v}")
    if key == "partitions" and not 1 <= v <= 1024:
        raise bad(f"partitions must be between 1 and 1024, got {v}")
    if key in ("crash_per_min", "pause_per_min") and not 0 <= v <= 60:
        raise bad(f"must be between 0 and 60, got {v}")
    if key == "loss" and not 0 <= v < 1:
        raise bad(f"a loss probability must be in [0, 1), got {v}")
    if key.endswith("_ms") and v < 0:
        raise bad(f"must be >= 0, got {v}")
    if key in ("session_timeout_ms", "heartbeat_interval_ms", "max_poll_interval_ms", "poll_interval_ms") and v < 1:
        raise bad(f"must be >= 1, got {v}")
    if key == "rate_per_s" and not 0 <= v <= 1000:
        raise bad(f"must be between 0 and 1000, got {v}")
    if key == "seeds" and v < 0:
        raise bad(f"a seed must be >= 0, got {v}")


def _normalise(p: Point) -> Point | None:
    """The point as it runs, or None when the combination cannot run."""
    from dataclasses import replace

    if p.protocol in ("connect", "zookeeper"):
        p = replace(p, assignor=p.protocol, commit="none")
    elif p.protocol == "consumer":  # the server-side assignors only; the simulator has no network or poll loop
        if p.assignor not in SERVER_ASSIGNORS or p.loss > 0:
            return None
        p = replace(p, commit="periodic", poll_interval_ms=AXES["poll_interval_ms"][0],
                    max_poll_interval_ms=AXES["max_poll_interval_ms"][0], rate_per_s=AXES["rate_per_s"][0])
    elif p.assignor not in ASSIGNORS:
        return None  # a server-side assignor (uniform) with a classic protocol
    elif p.protocol in ("cooperative", "static-cooperative") and p.assignor not in COOPERATIVE_ASSIGNORS:
        return None
    elif p.protocol in ("eager", "static") and p.assignor in COOPERATIVE_ASSIGNORS:
        return None  # cooperative-sticky makes the member cooperative: that is the cooperative protocol
    if p.churn in ("leave", "crash", "bounce", "rolling-restart") and p.members < 2:
        return None
    if p.heartbeat_interval_ms >= p.session_timeout_ms:
        return None
    return p


def parse_grid(doc: Any, source: str) -> Grid:
    """Validate a parsed YAML document and expand it."""
    if not isinstance(doc, dict):
        raise GridError(f"{source}: the grid must be a mapping of axes (see docs/pipeline.md)")
    for k in doc:
        if k not in AXES and k not in _TOP_ONLY:
            raise GridError(f"{source}: {k}: unknown field; choose from {', '.join(sorted(set(AXES) | _TOP_ONLY))}")
    name = doc.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise GridError(f"{source}: name: must be a non-empty string")
    defaults = {k: v for k, v in doc.items() if k in AXES}
    blocks = doc.get("blocks", [{}])
    if not isinstance(blocks, list) or not blocks:
        raise GridError(f"{source}: blocks: must be a non-empty list of mappings")
    seen: set[Point] = set()
    points: list[Point] = []
    dropped = 0
    combinations = 0
    for i, block in enumerate(blocks):
        where = f"{source}: blocks[{i}]"
        if not isinstance(block, dict):
            raise GridError(f"{where}: a block must be a mapping of axes")
        for k in block:
            if k not in AXES:
                raise GridError(f"{where}.{k}: unknown field; choose from {', '.join(sorted(AXES))}")
        merged = {k: AXES[k][0] for k in AXES}
        merged.update(defaults)
        merged.update(block)
        axes = {}
        for k in AXES:
            w = f"{where}.{k}" if k in block else f"{source}: {k}"
            if k == "seeds" and k not in block and k not in defaults:
                axes[k] = [0]
                continue
            axes[k] = _values(w, k, merged[k])
        keys = list(axes)
        combinations += math.prod(len(v) for v in axes.values())
        if combinations > MAX_COMBINATIONS:
            raise GridError(f"{where}: the grid expands into more than {MAX_COMBINATIONS:,} combinations of its axes "
                            f"({combinations:,} up to this block); split it into several sweeps")
        for combo in itertools.product(*(axes[k] for k in keys)):
            d: dict[str, Any] = dict(zip(keys, combo))
            d["seed"] = d.pop("seeds")
            p = _normalise(Point(**{f: d[f] for f in _POINT_FIELDS}))
            if p is None:
                dropped += 1
                continue
            if p not in seen:
                seen.add(p)
                points.append(p)
    if not points:
        raise GridError(f"{source}: no runnable combination ({dropped} dropped: e.g. a cooperative protocol "
                        f"needs the cooperative-sticky assignor)")
    return Grid(name, tuple(points), dropped, source)


def load_grid(path: str) -> Grid:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GridError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise GridError(f"{path}: cannot read ({e})") from None
    try:
        import yaml
    except ImportError:  # PyYAML comes with the spark extra, as PySpark does
        raise GridError(f"{path}: reading a grid needs PyYAML, which is not installed; install the spark extra: "
                        "pip install 'groupspec[spark]'") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise GridError(f"{path}: {where}not valid YAML ({getattr(e, 'problem', None) or e})") from None
    return parse_grid(doc, path)


# ------------------------------------------------------------------------------------------ presets

PRESETS: dict[str, dict[str, Any]] = {
    # < 1 min on one machine: one point per claim family, small groups
    "smoke": {
        "name": "smoke",
        "partitions": 6,
        "members": 3,
        "blocks": [
            {"tag": "stop-the-world", "protocol": ["eager", "cooperative"], "assignor": ["range", "cooperative-sticky"],
             "churn": "rolling-restart"},
            {"tag": "static-bounce", "protocol": ["eager", "static"], "churn": "bounce"},
            {"tag": "herd", "protocol": "zookeeper", "churn": "join", "members": [2, 4]},
        ],
    },
    # the history's claims with numbers (< 10 min on 2 cores)
    "history": {
        "name": "history",
        "seeds": 3,
        "blocks": [
            {"tag": "stop-the-world", "protocol": ["eager", "cooperative"],
             "assignor": ["range", "cooperative-sticky"], "churn": "rolling-restart", "members": [3, 6],
             "partitions": 12, "poll_interval_ms": [200, 2000], "commit": ["auto", "on-revoke", "sync", "async"]},
            {"tag": "static-bounce", "protocol": ["eager", "static"], "churn": "bounce", "members": [3, 6],
             "partitions": 12, "bounce_ms": [4000, 20000], "session_timeout_ms": 10000},
            {"tag": "connect-delay", "protocol": "connect", "churn": "bounce", "members": 3, "partitions": 6,
             "connect_delay_ms": [0, 60000], "bounce_ms": 4000},
            {"tag": "sticky-vs-range", "protocol": ["eager", "cooperative"],
             "assignor": ["range", "sticky", "cooperative-sticky"], "churn": ["join", "leave"],
             "members": [4, 8], "partitions": 24},
            {"tag": "herd", "protocol": ["zookeeper", "eager"], "churn": "join",
             "members": [2, 4, 8, 16, 32], "partitions": 32},
            {"tag": "faults", "protocol": ["eager", "cooperative", "static"],
             "assignor": ["range", "cooperative-sticky"], "churn": "random", "crash_per_min": 1.0,
             "pause_per_min": 1.0, "members": 4, "partitions": 8, "commit": ["auto", "on-revoke", "sync", "async"]},
        ],
    },
    # classic cooperative vs the next-generation protocol (KIP-848) on the history's churn (< 1 min)
    "protocols": {
        "name": "protocols",
        "seeds": 3,
        "blocks": [
            {"tag": "protocols", "protocol": ["cooperative", "consumer"], "assignor": ["cooperative-sticky", "uniform"],
             "churn": ["rolling-restart", "bounce", "join", "leave", "crash"], "members": [3, 6], "partitions": 12},
        ],
    },
    # for a cluster: thousands of points
    "large": {
        "name": "large",
        "seeds": 20,
        "blocks": [
            {"tag": "matrix", "protocol": ["eager", "cooperative", "static", "static-cooperative"],
             "assignor": ["range", "roundrobin", "sticky", "cooperative-sticky"],
             "churn": ["join", "leave", "crash", "bounce", "rolling-restart", "random"],
             "members": [3, 8, 16], "partitions": [12, 48], "crash_per_min": [0.0, 1.0],
             "session_timeout_ms": [10000, 45000], "commit": ["auto", "on-revoke", "sync", "async"]},
            {"tag": "connect-delay", "protocol": "connect", "churn": ["bounce", "leave", "crash"],
             "members": [3, 8], "partitions": [6, 24], "connect_delay_ms": [0, 60000, 300000]},
            {"tag": "herd", "protocol": ["zookeeper", "eager"], "churn": ["join", "leave", "crash"],
             "members": [2, 4, 8, 16, 32, 64], "partitions": 64},
        ],
    },
}


def preset(name: str) -> Grid:
    if name not in PRESETS:
        raise GridError(f"--preset: unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    return parse_grid(PRESETS[name], f"preset {name}")
