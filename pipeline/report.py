"""The sweep's report: the history's claims stated with this sweep's numbers (Markdown + PNG plots).

Each claim reads the rows it is about (by churn pattern and protocol, whatever block they came
from), takes means over seeds, writes one paragraph with the figures and one plot. A claim whose
rows are not in the sweep says so instead of inventing a number. :func:`claims` returns the figures
as plain data too (``report.json``), so tests and people read the same numbers.

1. **Stop-the-world** (rolling restart): eager vs cooperative - partition-seconds without an owner,
   rebalances, and records processed.
2. **Static membership** (bounce): rebalances of static vs dynamic members when the member returns
   within the session timeout, and when it returns after it.
3. **Connect's delay** (bounce of a worker): tasks moved and rebalances with
   ``scheduled.rebalance.max.delay.ms`` = 0 vs > 0.
4. **Sticky vs range** (join, leave): partitions moved vs the optimum, per assignor.
5. **ZooKeeper's herd** (a join, as the group grows): notifications and rebalance attempts per change.
6. **Commit strategies**: records processed twice and skipped, per strategy.
7. **Classic cooperative vs the consumer protocol** (KIP-848; rolling restart, bounce, join, leave,
   crash): partition-seconds without an owner, rebalances, time to converge, partitions moved vs
   the optimum, trace-checker violations, per churn pattern.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["claims", "write_report"]


def _fmt(x: Any, nd: int = 1) -> str:
    if x is None:
        return "n/a"
    try:
        if x != x:  # NaN
            return "n/a"
    except Exception:
        pass
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return f"{x:,}"


def _mean(df: Any, col: str) -> float | None:
    s = df[col].dropna()
    return float(s.mean()) if len(s) else None


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def claims(df: Any) -> list[dict[str, Any]]:
    """Every claim: ``{"id", "title", "text", "figures", "table"}`` (``table``: rows for the plot)."""
    out: list[dict[str, Any]] = []

    # 1. stop the world
    rr = df[(df.churn == "rolling-restart") & (df.protocol.isin(["eager", "cooperative"])) & (df.crash_per_min == 0)
            & (df.pause_per_min == 0)]
    c: dict[str, Any] = {"id": "stop-the-world", "title": "Eager vs cooperative on a rolling restart"}
    if len(rr) and set(rr.protocol) == {"eager", "cooperative"}:
        tab = (rr.groupby(["protocol", "poll_interval_ms", "members", "partitions"])
               [["partition_seconds_unowned", "rebalances", "records_processed", "partitions_moved"]]
               .mean().reset_index())
        f: dict[str, Any] = {}
        texts = []
        for poll in sorted(set(rr.poll_interval_ms)):
            sub = rr[rr.poll_interval_ms == poll]
            e, k = sub[sub.protocol == "eager"], sub[sub.protocol == "cooperative"]
            fe, fk = _mean(e, "partition_seconds_unowned"), _mean(k, "partition_seconds_unowned")
            f[str(int(poll))] = {"eager_unowned_s": fe, "cooperative_unowned_s": fk, "ratio": _ratio(fe, fk),
                                 "eager_rebalances": _mean(e, "rebalances"),
                                 "cooperative_rebalances": _mean(k, "rebalances"),
                                 "eager_records": _mean(e, "records_processed"),
                                 "cooperative_records": _mean(k, "records_processed")}
            g = f[str(int(poll))]
            texts.append(
                f"with the application polling every {poll / 1000:g} s ({len(sub)} runs), eager left partitions "
                f"without an owner for {_fmt(fe)} partition-seconds per run, cooperative for {_fmt(fk)} "
                f"(eager / cooperative = {_fmt(g['ratio'], 2)}); rebalances per run: eager "
                f"{_fmt(g['eager_rebalances'])}, cooperative {_fmt(g['cooperative_rebalances'])}; records processed "
                f"per run: eager {_fmt(g['eager_records'], 0)}, cooperative {_fmt(g['cooperative_records'], 0)}")
        c["figures"] = {"by_poll_interval_ms": f}
        c["text"] = ("On a rolling restart: " + "; ".join(texts) + ". An eager rebalance stops every member until "
                     "the slowest has polled again, so its cost grows with the time between polls; cooperative "
                     "members keep consuming, but each move takes two rounds and the moved partitions wait between "
                     "them for every member to rejoin (up to a heartbeat interval).")
        c["table"] = tab.to_dict("records")
    out.append(c)

    # 2. static membership
    b = df[(df.churn == "bounce") & (df.protocol.isin(["eager", "static"])) & (df.crash_per_min == 0)]
    c = {"id": "static-bounce", "title": "Static membership on a bounce"}
    if len(b) and set(b.protocol) == {"eager", "static"}:
        within = b[b.bounce_ms < b.session_timeout_ms]
        past = b[b.bounce_ms >= b.session_timeout_ms]
        f = {"static_within": _mean(within[within.protocol == "static"], "rebalances") if len(within) else None,
             "eager_within": _mean(within[within.protocol == "eager"], "rebalances") if len(within) else None,
             "static_past": _mean(past[past.protocol == "static"], "rebalances") if len(past) else None,
             "eager_past": _mean(past[past.protocol == "eager"], "rebalances") if len(past) else None,
             "static_unowned_within": _mean(within[within.protocol == "static"], "partition_seconds_unowned")
             if len(within) else None}
        c["figures"] = f
        c["text"] = (f"A member bouncing within the session timeout ({len(within)} runs): static members "
                     f"{_fmt(f['static_within'])} rebalances per bounce, dynamic (eager) members "
                     f"{_fmt(f['eager_within'])}. Back only after the session timeout ({len(past)} runs): static "
                     f"{_fmt(f['static_past'])}, dynamic {_fmt(f['eager_past'])}. The price: the static member's "
                     f"partitions wait for it ({_fmt(f['static_unowned_within'])} partition-seconds without an "
                     f"owner per bounce within the timeout).")
        c["table"] = (b.assign(returns=b.bounce_ms.map(lambda x: f"back after {x / 1000:g} s"))
                      .groupby(["protocol", "returns"])[["rebalances", "partition_seconds_unowned"]].mean()
                      .reset_index().to_dict("records"))
    out.append(c)

    # 3. Connect's delay
    cn = df[(df.protocol == "connect") & (df.churn == "bounce")]
    c = {"id": "connect-delay", "title": "Connect's scheduled rebalance delay on a worker bounce"}
    if len(cn) and (cn.connect_delay_ms == 0).any() and (cn.connect_delay_ms > 0).any():
        z, d = cn[cn.connect_delay_ms == 0], cn[cn.connect_delay_ms > 0]
        f = {"moved_no_delay": _mean(z, "partitions_moved"), "moved_delay": _mean(d, "partitions_moved"),
             "rebalances_no_delay": _mean(z, "rebalances"), "rebalances_delay": _mean(d, "rebalances"),
             "unowned_no_delay": _mean(z, "partition_seconds_unowned"),
             "unowned_delay": _mean(d, "partition_seconds_unowned"),
             "delays_ms": sorted(int(x) for x in d.connect_delay_ms.unique())}
        c["figures"] = f
        c["text"] = (f"A worker bounces ({_fmt(int(cn.bounce_ms.iloc[0]) / 1000)} s away): without the delay its "
                     f"tasks moved {_fmt(f['moved_no_delay'])} times per bounce ({_fmt(f['rebalances_no_delay'])} "
                     f"rebalances); with scheduled.rebalance.max.delay.ms = {f['delays_ms']} they moved "
                     f"{_fmt(f['moved_delay'])} times ({_fmt(f['rebalances_delay'])} rebalances). The price: its "
                     f"tasks idle {_fmt(f['unowned_delay'])} task-seconds per bounce with the delay vs "
                     f"{_fmt(f['unowned_no_delay'])} without.")
        c["table"] = cn.groupby("connect_delay_ms")[["partitions_moved", "rebalances", "partition_seconds_unowned"]] \
            .mean().reset_index().to_dict("records")
    out.append(c)

    # 4. sticky vs range
    sv = df[df.churn.isin(["join", "leave"]) & df.assignor.isin(["range", "roundrobin", "sticky", "cooperative-sticky"])
            & (df.crash_per_min == 0)]
    c = {"id": "sticky-vs-range", "title": "Partitions moved: sticky vs range"}
    if len(sv) and "range" in set(sv.assignor) and set(sv.assignor) & {"sticky", "cooperative-sticky"}:
        tab = sv.groupby(["assignor", "churn"])[["partitions_moved", "moves_optimum"]].mean().reset_index()
        f = {a: {"moved": _mean(sv[sv.assignor == a], "partitions_moved"),
                 "optimum": _mean(sv[sv.assignor == a], "moves_optimum")} for a in sorted(set(sv.assignor))}
        c["figures"] = f
        parts = [f"{a}: {_fmt(v['moved'])} moved vs an optimum of {_fmt(v['optimum'])}" for a, v in f.items()]
        c["text"] = (f"When a member joins or leaves ({len(sv)} runs, means per run): " + "; ".join(parts) + ".")
        c["table"] = tab.to_dict("records")
    out.append(c)

    # 5. herd effect
    zk = df[(df.protocol == "zookeeper") & (df.churn == "join")]
    c = {"id": "herd", "title": "ZooKeeper's herd effect as the group grows"}
    if len(zk) and zk.members.nunique() >= 2:
        tab = zk.groupby("members")[["notifications", "rebalance_attempts", "failed_claims", "seconds_to_converge"]] \
            .mean().reset_index()
        eager = df[(df.protocol == "eager") & (df.churn == "join")].groupby("members")["protocol_messages"].mean()
        rows = tab.to_dict("records")
        for r in rows:
            r["coordinator_messages"] = float(eager.get(r["members"])) if r["members"] in eager.index else None
        small, big = rows[0], rows[-1]
        c["figures"] = {"by_members": rows}
        c["text"] = (f"One consumer joins: with {small['members']} consumers ZooKeeper sent "
                     f"{_fmt(small['notifications'])} watch notifications and the consumers made "
                     f"{_fmt(small['rebalance_attempts'])} rebalance attempts ({_fmt(small['failed_claims'])} failed "
                     f"claims); with {big['members']}: {_fmt(big['notifications'])} notifications, "
                     f"{_fmt(big['rebalance_attempts'])} attempts ({_fmt(big['failed_claims'])} failed claims) - every "
                     f"consumer wakes for every change, and their claims collide. The coordinator protocol "
                     f"(eager) exchanged {_fmt(small.get('coordinator_messages'), 0)} and "
                     f"{_fmt(big.get('coordinator_messages'), 0)} protocol messages in those runs, through one "
                     f"decider.")
        c["table"] = rows
    out.append(c)

    # 6. commit strategies
    cm = df[df.records_processed.notna()]
    c = {"id": "commit-strategies", "title": "Records processed twice or skipped, per commit strategy"}
    if len(cm):
        tab = cm.groupby("commit")[["records_processed", "records_processed_twice", "records_skipped"]].sum() \
            .reset_index()
        rows = tab.to_dict("records")
        for r in rows:
            r["twice_per_10k"] = 1e4 * r["records_processed_twice"] / r["records_processed"] if r["records_processed"] else None
        c["figures"] = {"by_strategy": rows}
        c["text"] = ("Over every run with records (" + str(len(cm)) + " runs): " + "; ".join(
            f"{r['commit']}: {_fmt(int(r['records_processed_twice']))} processed twice "
            f"({_fmt(r['twice_per_10k'], 1)} per 10,000 processings), {_fmt(int(r['records_skipped']))} skipped"
            for r in rows) + ".")
        c["table"] = rows
    out.append(c)

    out.append(_protocols(df))

    for c in out:
        c.setdefault("figures", None)
        c.setdefault("table", [])
        c.setdefault("text", "Not in this sweep (no rows for it).")
    return out


_PROTOCOL_CHURN = ("rolling-restart", "bounce", "join", "leave", "crash")
_PROTOCOL_COLS = ("partition_seconds_unowned", "rebalances", "seconds_to_converge", "partitions_moved", "moves_optimum",
                  "violations")


def _protocols(df: Any) -> dict[str, Any]:
    """Claim 7: classic cooperative (cooperative-sticky) vs the consumer protocol (uniform), per churn pattern."""
    c: dict[str, Any] = {"id": "protocols", "title": "Classic cooperative vs the consumer protocol (KIP-848)"}
    pr = df[(((df.protocol == "cooperative") & (df.assignor == "cooperative-sticky"))
             | ((df.protocol == "consumer") & (df.assignor == "uniform")))
            & df.churn.isin(_PROTOCOL_CHURN) & (df.crash_per_min == 0) & (df.pause_per_min == 0) & (df.loss == 0)]
    if not len(pr) or set(pr.protocol) != {"cooperative", "consumer"}:
        return c
    f: dict[str, Any] = {}
    texts = []
    for churn in [x for x in _PROTOCOL_CHURN if x in set(pr.churn)]:
        sub = pr[pr.churn == churn]
        k, n = sub[sub.protocol == "cooperative"], sub[sub.protocol == "consumer"]
        if not len(k) or not len(n):
            continue
        g = {f"{who}_{col}": _mean(rows, col) for who, rows in (("cooperative", k), ("consumer", n))
             for col in _PROTOCOL_COLS}
        g["runs"] = len(sub)
        f[churn] = g
        texts.append(
            f"{churn} ({len(sub)} runs): {_fmt(g['cooperative_partition_seconds_unowned'])} vs "
            f"{_fmt(g['consumer_partition_seconds_unowned'])} partition-seconds without an owner; "
            f"{_fmt(g['cooperative_rebalances'])} vs {_fmt(g['consumer_rebalances'])} rebalances; converged "
            f"{_fmt(g['cooperative_seconds_to_converge'])} s vs {_fmt(g['consumer_seconds_to_converge'])} s after "
            f"the last change; {_fmt(g['cooperative_partitions_moved'])} vs {_fmt(g['consumer_partitions_moved'])} "
            f"partitions moved (optimum {_fmt(g['cooperative_moves_optimum'])} vs "
            f"{_fmt(g['consumer_moves_optimum'])})")
    if not f:
        return c
    viol = {who: int(pr[pr.protocol == who].violations.fillna(0).gt(0).sum()) for who in ("cooperative", "consumer")}
    c["figures"] = {"by_churn": f, "runs_with_violations": viol}
    c["text"] = ("Means per run, classic cooperative (cooperative-sticky) vs the consumer protocol (uniform): "
                 + "; ".join(texts) + f". Runs with trace-checker violations: cooperative {viol['cooperative']}, "
                 f"consumer {viol['consumer']}. A rebalance of the consumer protocol is one new target assignment "
                 "(a group epoch); its members learn it at their next heartbeat and a partition moves once its "
                 "owner acknowledged the revocation, so its hand-overs wait for heartbeats, not for every member "
                 "to rejoin.")
    c["table"] = (pr.groupby(["churn", "protocol"])[list(_PROTOCOL_COLS)].mean().reset_index().to_dict("records"))
    return c


def _plot(c: dict[str, Any], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    if not c["table"]:
        return False
    t = pd.DataFrame(c["table"])
    fig, ax = plt.subplots(figsize=(7, 4))
    cid = c["id"]
    if cid == "stop-the-world":
        t["group"] = t.apply(lambda r: f"poll {r['poll_interval_ms'] / 1000:g} s, {r['members']} members", axis=1)
        t.pivot(index="group", columns="protocol", values="partition_seconds_unowned").plot.bar(ax=ax, rot=15)
        ax.set_ylabel("partition-seconds without an owner")
    elif cid == "static-bounce":
        t.pivot(index="returns", columns="protocol", values="rebalances").plot.bar(ax=ax, rot=0)
        ax.set_ylabel("rebalances per bounce")
    elif cid == "connect-delay":
        t["delay"] = t.connect_delay_ms.map(lambda x: f"delay {x / 1000:g} s")
        t.set_index("delay")[["partitions_moved", "rebalances"]].plot.bar(ax=ax, rot=0)
        ax.set_ylabel("per bounce")
    elif cid == "sticky-vs-range":
        t["case"] = t.assignor + " / " + t.churn
        t.set_index("case")[["partitions_moved", "moves_optimum"]].plot.bar(ax=ax, rot=30)
        ax.set_ylabel("partitions moved per run")
    elif cid == "herd":
        ax.plot(t.members, t.notifications, marker="o", label="watch notifications")
        ax.plot(t.members, t.rebalance_attempts, marker="s", label="rebalance attempts")
        ax.plot(t.members, t.failed_claims, marker="^", label="failed claims")
        ax.set_xlabel("consumers in the group")
        ax.set_ylabel("per join")
        ax.legend()
    elif cid == "protocols":
        t.pivot(index="churn", columns="protocol", values="partition_seconds_unowned").plot.bar(ax=ax, rot=0)
        ax.set_ylabel("partition-seconds without an owner")
    elif cid == "commit-strategies":
        t.set_index("commit")[["records_processed_twice", "records_skipped"]].plot.bar(ax=ax, rot=0)
        ax.set_ylabel("records (all runs)")
    ax.set_title(c["title"])
    fig.tight_layout()
    fig.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(fig)
    return True


def write_report(df: Any, dest: Path) -> list[dict[str, Any]]:
    """``report.md``, ``report.json`` and ``plots/<claim>.png`` under ``dest``."""
    cs = claims(df)
    plots = dest / "plots"
    plots.mkdir(exist_ok=True)
    name = str(df.sweep.iloc[0]) if len(df) else ""
    lines = [f"# Sweep `{name}`", "", f"{len(df)} runs; protocols: {', '.join(sorted(set(df.protocol)))}; "
             f"seeds per point: {df.seed.nunique()}. Rows: `rows/` (Parquet, partitioned by protocol and assignor).", ""]
    viol = df.violations.dropna()
    if len(viol):
        lines += [f"Trace checker (`groupspec trace check`, converge within 20 s): {int((viol > 0).sum())} of "
                  f"{len(viol)} runs with violations.", ""]
        bad = df[df.violations.fillna(0) > 0]
        if len(bad):
            lines += ["| tag | protocol | churn | runs with violations | properties |", "|---|---|---|---|---|"]
            for (tag, proto, churn), sub in sorted(bad.groupby(["tag", "protocol", "churn"])):
                total = len(df[(df.tag == tag) & (df.protocol == proto) & (df.churn == churn)])
                props = sorted({v for s in sub.violated.dropna() for v in s.split(",") if v})
                lines.append(f"| {tag} | {proto} | {churn} | {len(sub)} of {total} | {', '.join(props)} |")
            lines += ["", "Completeness and convergence are judged against 20 s: a Connect delay longer than that, "
                      "or crashes noticed only after a session timeout, show up here by design.", ""]
    else:
        lines += ["Trace checker: not installed in this environment; `violations` is null.", ""]
    for c in cs:
        lines += [f"## {c['title']}", "", c["text"], ""]
        if _plot(c, plots / f"{c['id']}.png"):
            lines += [f"![{c['title']}](plots/{c['id']}.png)", ""]
    (dest / "report.md").write_text("\n".join(lines))
    (dest / "report.json").write_text(json.dumps([{k: c[k] for k in ("id", "title", "text", "figures")} for c in cs],
                                                 indent=1, default=float) + "\n")
    return cs
