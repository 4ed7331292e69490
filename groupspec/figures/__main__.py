"""``python -m groupspec.figures [--out DIR] [--check]``: (re)draw every figure of the docs.

``--check`` draws everything into a temporary folder and compares it with what is committed under
``DIR`` (default ``docs``): it lists every stale or missing figure and exits 1 if there is one.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn

from groupspec.checker import export_graph
from groupspec.model import BROKEN, VARIANTS

from . import plots, statediagram, stories, strips, swimlane
from .runs import Run, Story, run, run_coordinator_side, run_next_generation, run_zookeeper

# The simulator's stories of the protocol's history (docs/learn/*.md show them).
STORIES = (
    Story("eager-join", "new-consumer-joins", "eager", "A consumer joins (eager)"),
    Story("cooperative-join", "new-consumer-joins", "cooperative", "A consumer joins (cooperative)"),
    Story("eager-bounce", "consumer-bounces", "eager", "A consumer bounces (eager)"),
    Story("static-bounce", "static-member-restart", "static", "A static member restarts within its session timeout"),
    Story("eager-leave", "consumer-leaves-permanently", "eager", "A consumer leaves for good (eager)"),
    Story("eager-one-by-one", "consumers-join-one-by-one", "eager", "Three consumers join one after another (eager)"),
    Story("eager-crash", "consumer-crashes", "eager", "A consumer crashes (eager)"),
    Story("eager-subscription", "subscription-change", "eager", "A member changes its subscription (eager)"),
    Story("eager-stop-the-world", "eager-stop-the-world", "eager", "A join while a member is in a GC pause (eager)"),
    Story("eager-rolling", "rolling-restart", "eager", "Rolling restart (eager)"),
    Story("static-rolling", "rolling-restart", "static", "Rolling restart (static membership)"),
    Story("cooperative-rolling", "rolling-restart", "cooperative", "Rolling restart (cooperative)"),
    Story("connect-bounce", "connect-worker-bounces", "connect", "A Connect worker bounces within the delay"),
    Story("connect-leave", "connect-worker-leaves", "connect", "A Connect worker leaves for good"),
    Story("static-cooperative-left-behind", "static-member-left-behind", "static-cooperative",
          "Static-cooperative: a member left behind (Kafka's own double ownership)"),
)

# The ZooKeeper era (no coordinator: reference/history/zookeeper_group.py): a consumer joins a group of three, and
# a consumer crashes (its nodes stay until its ZooKeeper session expires).
ZK_START = [(0, "start", "c1"), (700, "start", "c2"), (1400, "start", "c3")]
ZK_STORIES = (
    (Story("zookeeper-join", "zookeeper-join", "zookeeper", "ZooKeeper era: a consumer joins"),
     ZK_START + [(20000, "start", "c4")], 20000, 40000, ()),
    (Story("zookeeper-crash", "zookeeper-crash", "zookeeper", "ZooKeeper era: a consumer crashes"),
     ZK_START + [(20000, "crash", "c3")], 20000, 40000, ()),
    # Split brain: c4's ZooKeeper server lags 3 s; c5 and c6 join a second apart, so c4 acts on a view without c6.
    (Story("zookeeper-split-brain", "zookeeper-split-brain", "zookeeper",
           "ZooKeeper era: split brain (c4's server lags 3 s)", partitions=8),
     ZK_START + [(2100, "start", "c4"), (20000, "start", "c5"), (21000, "start", "c6")], 20000, 34000,
     (("c4", 3000),)),
)
# Coordinator-side assignment (the 0.9 draft: reference/history/coordinator_side_group.py): a join, a crash.
CS_START = [(0, "start", "c1"), (700, "start", "c2"), (1400, "start", "c3")]
CS_STORIES = (
    (Story("coordinator-side-join", "coordinator-side-join", "coordinator-side",
           "Coordinator-side: a consumer joins"), CS_START + [(20000, "start", "c4")], 19500, 22500),
    (Story("coordinator-side-crash", "coordinator-side-crash", "coordinator-side",
           "Coordinator-side: a consumer crashes"), CS_START + [(20000, "crash", "c3")], 18000, 36000),
)
# The next-generation protocol (KIP-848: reference/sim/consumer_sim.py): its scale-out and rolling-restart stories.
NEXT_STORIES = (
    (Story("consumer-scale-out", "scale-out", "consumer", "KIP-848: three consumers join 3 s apart"),
     [(0, "start", 0), (3000, "start", 1), (6000, "start", 2)], 0, 20000),
    (Story("consumer-rolling", "rolling-restart", "consumer", "KIP-848: rolling restart"),
     [(0, "start", i) for i in range(3)] + [(t, a, i) for i in range(3) for t, a in
                                            ((10000 + 15000 * i, "crash"), (10500 + 15000 * i, "start"))], 6000, 52000),
)
HERD_SIZES = (2, 4, 8, 16, 32)


def herd_table() -> str:
    """The herd effect as a number: one consumer joins a group of N; every one of them is notified."""
    from groupspec.reference.history import ZkConfig, ZkGroup

    rows = ["| consumers before the join | watch notifications | rebalance attempts | failed ownership claims | gave up |",
            "|---:|---:|---:|---:|---:|"]
    for n in HERD_SIZES:
        zk = ZkGroup(ZkConfig(seed=0, partitions=max(6, 2 * n)))
        for k in range(n):
            zk.at(k * 100, "start", f"c{k + 1}")
        zk.run_until(30000)
        before = (zk.notifications, zk.rebalance_attempts, zk.failed_claims, zk.gave_up)
        zk.at(30000, "start", f"c{n + 1}")
        zk.run_until(90000)
        rows.append(f"| {n} | {zk.notifications - before[0]} | {zk.rebalance_attempts - before[1]} | "
                    f"{zk.failed_claims - before[2]} | {zk.gave_up - before[3]} |")
    return "\n".join(rows) + "\n"


# Which stories' numbers each Learn chapter quotes, side by side.
NUMBERS = {
    "eager": ("eager-one-by-one", "eager-join", "eager-leave", "eager-crash", "eager-subscription", "eager-bounce",
              "eager-stop-the-world"),
    "static": ("eager-bounce", "static-bounce", "eager-rolling", "static-rolling"),
    "cooperative": ("eager-join", "cooperative-join", "eager-rolling", "cooperative-rolling"),
    "connect": ("connect-bounce", "connect-leave"),
}

# Each broken variant at the bounds `groupspec verify` catches it with.
BROKEN_STORIES = (
    stories.Broken("cooperative-direct-transfer", "exclusive_ownership", 2, 2, "", 1,
                   "Cooperative, but the leader hands a partition over in one round"),
    stories.Broken("eager-no-revoke", "exclusive_ownership", 2, 2, "", 0, "Eager, but members keep their partitions while rejoining"),
    stories.Broken("unfenced-commits", "commit_fencing", 2, 2, "zombie", 1, "Offset commits without a generation check"),
    stories.Broken("cooperative-flappy", "convergence", 2, 2, "", 0, "A cooperative assignor that never settles"),
    stories.Broken("zookeeper", "commit_fencing", 2, 2, "zombie", 1, "ZooKeeper-era offsets: a paused consumer overwrites the new owner's"),
    stories.Broken("consumer-no-wait-release", "exclusive_ownership", 2, 2, "", 0,
                   "KIP-848, but a partition goes to its new owner before the old one released it"),
)

# The explorer's instances: (members, partitions, faults, budget) per variant.
EXPLORER_FAULTS = {
    "eager": "crash,leave", "static": "crash,join", "cooperative": "crash,leave", "connect-delayed": "crash,leave",
    "coordinator-assigns": "crash", "zookeeper": "join,leave", "cooperative-direct-transfer": "",
    "eager-no-revoke": "", "unfenced-commits": "zombie", "cooperative-flappy": "",
    "static-cooperative": "crash,join", "consumer": "crash,leave", "consumer-static": "crash,join",
    "consumer-no-wait-release": "", "consumer-unfenced-commits": "zombie", "consumer-no-epoch-bump": "",
    "consumer-rejoin-fenced": "lose-answer", "consumer-second-heartbeat": "late-answer",  # (issue 30: bugs in flight)
}
STATUS_DIAGRAMS = (("cooperative", "crash,leave,timeout"), ("static", "crash,join,timeout"))


def explorer_instances() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in VARIANTS:
        if name.startswith("classic-to"):
            continue  # the migration's two group types have no view in the explorer yet (docs/migration.md)
        faults = EXPLORER_FAULTS.get(name, "crash")
        out.append({"id": f"{name}-2x2", "protocol": name, "members": 2, "partitions": 2, "faults": faults, "budget": 1,
                    "label": f"{name}{' (broken on purpose)' if name in BROKEN else ''} — 2 members × 2 partitions"
                             f"{', faults ' + faults if faults else ''}"})
        if name not in BROKEN:
            out.append({"id": f"{name}-3x4", "protocol": name, "members": 3, "partitions": 4, "faults": "", "budget": 0,
                        "label": f"{name} — 3 members × 4 partitions, no faults"})
    return out


CONSUMER_SCENARIOS = ("scale-out", "rolling-restart", "static-bounce", "zombie")


def consumer_numbers() -> str:
    """The next-generation protocol's own simulator (reference/sim/consumer_sim.py), its stories' totals."""
    from groupspec.reference.sim import run_consumer_scenario

    rows = ["| story (`--protocol consumer`) | heartbeats | final group epoch | partitions moved | "
            "partition-seconds without an owner | commits refused | replay |", "|---|---:|---:|---:|---:|---:|---|"]
    for name in CONSUMER_SCENARIOS:
        r = run_consumer_scenario(name)
        refused = sum(r.rejected_commits.values())
        rows.append(f"| {name} | {r.heartbeats} | {r.group_epoch} | {r.moved} | {r.unowned_partition_ms / 1000:.1f} | "
                    f"{refused} | `groupspec simulate {name} --protocol consumer --seed 0` |")
    return "\n".join(rows) + "\n"


def numbers_table(runs: list[Run]) -> str:
    head = ("| story | rebalances | partitions revoked (stopped) | partitions moved | partition-seconds without an owner "
            "| replay |\n|---|---:|---:|---:|---:|---|\n")
    rows = []
    for r in runs:
        t = r.totals
        rows.append(f"| {r.story.title} | {t['rebalances']} | {t['partitions_revoked']} | {t['partitions_moved']} | "
                    f"{t['partition_seconds_without_owner']:.1f} | `{r.story.replay()}` |")
    return head + "\n".join(rows) + "\n"


def draw_all(out: Path, progress: Callable[[str], None] = print) -> list[Path]:
    figs = out / "figures"
    graphs = out / "assets" / "explorer" / "graphs"
    figs.mkdir(parents=True, exist_ok=True)
    graphs.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(path: Path, text: str) -> None:  # whole or not at all (a run stopped half-way)
        tmp = path.with_name(f".{path.name}.partial")
        try:
            tmp.write_text(text)
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
        written.append(path)

    runs = []
    for st in STORIES:
        progress(f"story {st.slug}")
        r = run(st)
        runs.append(r)
        write(figs / f"{st.slug}-lanes.svg", swimlane.draw(r))
        write(figs / f"{st.slug}-strip.svg", strips.draw(r))
    for st, joins, disturbance, end, lagging in ZK_STORIES:
        progress(f"story {st.slug}")
        r = run_zookeeper(st, joins, disturbance, end, lagging)
        write(figs / f"{st.slug}-lanes.svg", swimlane.draw(r))
        write(figs / f"{st.slug}-strip.svg", strips.draw(r))
    for st, actions, start, end in CS_STORIES:
        progress(f"story {st.slug}")
        r = run_coordinator_side(st, actions, start, end)
        write(figs / f"{st.slug}-lanes.svg", swimlane.draw(r))
        write(figs / f"{st.slug}-strip.svg", strips.draw(r))
    for st, schedule, start, end in NEXT_STORIES:
        progress(f"story {st.slug}")
        r = run_next_generation(st, schedule, start, end)
        write(figs / f"{st.slug}-lanes.svg", swimlane.draw(r))
        write(figs / f"{st.slug}-strip.svg", strips.draw(r))
    write(figs / "numbers-herd.md", herd_table())
    by_slug = {r.story.slug: r for r in runs}
    for chapter, slugs in NUMBERS.items():
        write(figs / f"numbers-{chapter}.md", numbers_table([by_slug[s] for s in slugs]))
    write(figs / "numbers-consumer.md", consumer_numbers())
    progress("plots of the sweep's rows")
    for slug, (chart, table) in plots.all_plots().items():
        write(figs / f"{slug}.svg", chart)
        write(figs / f"{slug}.md", table)
    for b in BROKEN_STORIES:
        progress(f"counterexample {b.protocol}")
        write(figs / f"broken-{b.protocol}.svg", stories.draw(b))
        write(figs / f"broken-{b.protocol}.md", f"```\n$ {b.command()}\n{stories.timeline_text(b)}\n```\n")
    for name, faults in STATUS_DIAGRAMS:
        progress(f"status diagram {name}")
        g = export_graph(name, members=2, partitions=2, faults=frozenset(faults.split(",")), budget=2)
        write(figs / f"status-{name}.svg", statediagram.draw(g, f"The group's status diagram, from the model of {name}"))
    manifest = []
    for inst in explorer_instances():
        progress(f"explorer graph {inst['id']}")
        g = export_graph(inst["protocol"], members=inst["members"], partitions=inst["partitions"],
                         faults=frozenset(f for f in inst["faults"].split(",") if f), budget=inst["budget"],
                         with_check=True)
        write(graphs / f"{inst['id']}.json", json.dumps(g, separators=(",", ":"), sort_keys=True) + "\n")
        manifest.append({"id": inst["id"], "label": inst["label"], "states": len(g["states"])})
    write(graphs / "manifest.json", json.dumps({"instances": manifest}, indent=1, sort_keys=True) + "\n")
    return written


class _Parser(argparse.ArgumentParser):
    """Bad arguments as every groupspec command gives them: one line, ``groupspec: error: figures: ...``, 2."""

    def error(self, message: str) -> NoReturn:
        _refuse(message)


def _refuse(message: str) -> NoReturn:
    print(f"groupspec: error: figures: {message}", file=sys.stderr)
    sys.exit(2)


def _refuse_bad_out(out: Path, check: bool) -> None:
    """--out must be the docs folder to compare with (--check) or a folder that can be written (drawing)."""
    import os

    if check:
        if not out.is_dir():
            _refuse(f"--out {out}: no such folder (--check compares with the figures committed there)")
        return
    if out.exists() and not out.is_dir():
        _refuse(f"--out {out}: exists and is not a folder")
    top = out if out.exists() else out.parent
    if not top.is_dir():
        _refuse(f"--out {out}: folder {top} does not exist")
    if not os.access(top, os.W_OK | os.X_OK):
        _refuse(f"--out {out}: folder {top} is not writable")


def _new_folders(out: Path) -> list[Path]:
    """The folders a run under ``out`` would create (removed again when it is stopped half-way)."""
    return [d for d in (out, out / "figures", out / "assets", out / "assets" / "explorer",
                        out / "assets" / "explorer" / "graphs") if not d.exists()]


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C and SIGTERM stop the drawing as they stop ``groupspec``: one line, 130 / 143, and the folders
    this run created removed (every figure is written whole: a temporary file renamed)."""
    import shutil
    import signal

    terminated: list[int] = []

    def on_term(signum: int, frame: object) -> None:
        terminated.append(signum)
        raise KeyboardInterrupt

    ap = _Parser(prog="python -m groupspec.figures", description=__doc__)
    ap.add_argument("--out", default="docs", help="the docs folder (default: docs)")
    ap.add_argument("--check", action="store_true", help="compare with the committed figures; exit 1 if any is stale")
    args = ap.parse_args(argv)
    _refuse_bad_out(Path(args.out), args.check)
    previous = signal.signal(signal.SIGTERM, on_term)
    created = _new_folders(Path(args.out)) if not args.check else []
    try:
        return _main(args)
    except KeyboardInterrupt:
        if created:
            shutil.rmtree(created[0], ignore_errors=True)  # the topmost folder this run made
        print("groupspec: terminated" if terminated else "groupspec: interrupted", file=sys.stderr)
        return 143 if terminated else 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not args.check:
        files = draw_all(out)
        print(f"wrote {len(files)} figures under {out}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        files = draw_all(Path(tmp), progress=lambda _m: None)
        stale = [str(f.relative_to(tmp)) for f in files
                 if not (out / f.relative_to(tmp)).exists() or not filecmp.cmp(f, out / f.relative_to(tmp), shallow=False)]
    if stale:
        print(f"{len(stale)} of {len(files)} figures are stale or missing (run `make docs-figures`): " + ", ".join(stale))
        return 1
    print(f"all {len(files)} figures are fresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
