"""The docs' figures: drawn from real runs, fresh in the repository, and the explorer's graphs are the model's."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from groupspec.checker.export import export_graph
from groupspec.figures import statediagram

ROOT = Path(__file__).resolve().parents[1]


def _check(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groupspec.figures", "--check", "--out", str(out)],
                          capture_output=True, text=True)


def test_committed_figures_are_fresh():
    r = _check(ROOT / "docs")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_stale_figure_is_reported(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    fig = docs / "figures" / "eager-join-strip.svg"
    fig.write_text(fig.read_text().replace("#d62728", "#00ff00", 1))
    (docs / "assets" / "explorer" / "graphs" / "eager-2x2.json").unlink()
    r = _check(docs)
    assert r.returncode == 1
    assert "figures/eager-join-strip.svg" in r.stdout and "eager-2x2.json" in r.stdout


def test_graph_of_a_broken_variant_reaches_a_violation_and_a_correct_one_does_not():
    bad = export_graph("cooperative-direct-transfer", members=2, partitions=2, budget=1)
    good = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash", "leave"}), budget=1)
    assert any("exclusive_ownership" in s["violations"] for s in bad["states"])
    assert not any(s["violations"] for s in good["states"])
    assert not any(e[4] for edges in good["edges"] for e in edges)  # no ACTION property broken on any step
    assert not bad["truncated"] and not good["truncated"]


def test_graph_edges_are_the_models_successors():
    from groupspec.model import Config, make

    g = export_graph("eager", members=2, partitions=2, faults=frozenset({"crash"}), budget=1)
    proto = make("eager", Config(members=2, partitions=2, topics=1, faults=frozenset({"crash"}), budget=1, assignor="sticky"))
    s0 = proto.init_states()[0]
    names = [a.name for a, _t in proto.successors(s0)]
    assert [e[2] for e in g["edges"][g["initial"][0]]] == names


def test_status_diagram_has_only_moves_the_model_makes():
    g = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash"}), budget=1)
    moves = statediagram.transitions(g)
    assert ("COMPLETING_REBALANCE", "STABLE") in moves and "ReceiveJoinResponse" in moves[("COMPLETING_REBALANCE", "STABLE")]
    assert not any(a == "DEAD" for a, _b in moves)


def test_split_brain_story_marks_two_claimers_and_the_stale_view():
    from groupspec.figures import strips
    from groupspec.figures.__main__ import ZK_STORIES
    from groupspec.figures.runs import run_zookeeper

    st, joins, start, end, lagging = next(z for z in ZK_STORIES if z[0].slug == "zookeeper-split-brain")
    r = run_zookeeper(st, joins, start, end, lagging)
    lasting = [c for c in r.claims if c[1] - c[0] > 1000]
    assert lasting and all(" and " in title for _a, _b, _p, title in lasting)
    assert any(kind == "stale" and who == "c4" for _t, who, kind, _title in r.notes)
    assert "claim the partition at once" in strips.draw(r)
    # the same story without the lagging server: nobody acts on a stale view, two claims last only a moment
    r0 = run_zookeeper(st, joins, start, end, ())
    assert not any(kind == "stale" for _t, _w, kind, _title in r0.notes)
    assert all(b - a < 1000 for a, b, _p, _t in r0.claims)


def test_coordinator_side_story_has_one_decider():
    from groupspec.figures.__main__ import CS_STORIES
    from groupspec.figures.runs import run_coordinator_side

    st, actions, start, end = CS_STORIES[0]
    r = run_coordinator_side(st, actions, start, end)
    assert r.hub == "coordinator" and r.totals["rebalances"] == 1
    assert any(rec.get("error") == "ILLEGAL_GENERATION" for rec in r.transcript)
    assert not any(who and who.startswith("two owners") for ivs in r.intervals.values() for _a, _b, who in ivs)


def test_next_generation_story_keeps_one_owner_and_bumps_the_epoch_per_join():
    from groupspec.figures.__main__ import NEXT_STORIES
    from groupspec.figures.runs import run_next_generation

    st, schedule, start, end = NEXT_STORIES[0]
    r = run_next_generation(st, schedule, start, end)
    from groupspec.trace import check_trace

    assert [g for _t, g in r.generations] == [1, 2, 3] and check_trace(r.sim_trace) == []
    assert any(e["event"] == "assigned" for e in r.sim_trace)
    assert not any(who and who.startswith("two owners") for ivs in r.intervals.values() for _a, _b, who in ivs)
    # c1 never stops reading the partitions it keeps: one interval from its first assignment to the end
    kept = [ivs for ivs in r.intervals.values() if [w for _a, _b, w in ivs if w] == ["c1"]]
    assert kept


def test_every_story_of_the_history_is_drawn_in_the_learn_chapters():
    learn = "\n".join(p.read_text() for p in (ROOT / "docs" / "learn").glob("*.md"))
    for slug in ("eager-one-by-one", "eager-leave", "eager-crash", "static-bounce", "eager-rolling", "eager-stop-the-world",
                 "eager-subscription", "connect-bounce", "cooperative-join", "consumer-scale-out", "coordinator-side-join",
                 "zookeeper-split-brain"):
        assert f"figures/{slug}-lanes.svg" in learn and f"figures/{slug}-strip.svg" in learn, slug


def test_timelines_use_the_historys_words_where_the_state_says_so():
    def words(protocol, faults):
        g = export_graph(protocol, members=2, partitions=2, faults=frozenset(f for f in faults.split(",") if f), budget=1)
        return "\n".join(g["strings"])

    assert "stop-the-world, it revokes everything it owns" in words("eager", "crash,leave")
    assert "two-phase revoke/assign, it revokes only what moves" in words("cooperative", "crash,leave")
    assert "scheduled rebalance delay: the coordinator holds" in words("connect-delayed", "crash,leave")
    # the broken variant that keeps its partitions while rejoining is never called stop-the-world
    assert "stop-the-world" not in words("eager-no-revoke", "")


def test_every_figure_is_legible_at_page_width():
    """No text of a committed figure is smaller than MIN_TEXT_PX once the figure is scaled to the page's width."""
    from groupspec.figures.svg import MIN_TEXT_PX, smallest_text_px

    figures = sorted((ROOT / "docs" / "figures").glob("*.svg"))
    assert figures
    small = {f.name: round(smallest_text_px(f.read_text()), 2) for f in figures
             if smallest_text_px(f.read_text()) < MIN_TEXT_PX}
    assert small == {}


def test_the_legibility_rule_catches_small_legends():
    from groupspec.figures.svg import MIN_TEXT_PX, Svg, smallest_text_px

    wide = Svg(936, 100, "x")
    wide.text(0, 10, "legend", 8)
    assert smallest_text_px(wide.render()) < MIN_TEXT_PX
    narrow = Svg(700, 100, "x")
    narrow.text(0, 10, "legend", 10)
    assert smallest_text_px(narrow.render()) == 10


def test_counterexample_figures_show_every_step_whole():
    """The counterexample figures wrap a long step instead of cutting it (no '…')."""
    import re

    for f in sorted((ROOT / "docs" / "figures").glob("broken-*.svg")):
        texts = re.findall(r"<text [^>]*>([^<]*)</text>", f.read_text())
        assert not [t for t in texts if t.endswith("…")], f.name
