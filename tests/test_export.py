"""The explorer's graphs say what the checker decided (groupspec.checker.export), on the checker's bounds.

Each test here failed on the export before issue #33: frontier states of a cut-off graph looked like
deadlocks ("No step is enabled"), cooperative-flappy's deadlock was not in the graph at all (20,000 concrete
states, cut off, where ``check`` stores 93), and the graph said nothing of the checker's counterexamples.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from groupspec.checker.export import check_command, export_graph

ROOT = Path(__file__).resolve().parents[1]


def _walk(g, path):
    s = g["initial"][0]
    for k in path:
        s = g["edges"][s][k][0]
    return s


def test_frontier_states_of_a_cut_off_graph_are_marked_not_called_deadlocks():
    g = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash", "leave"}), budget=1,
                     max_states=60)
    assert g["truncated"] and g["frontier"]
    for i in g["frontier"]:
        assert not g["states"][i]["deadlock"]  # unexplored is not stuck
    # a state with no step listed is a frontier state or a converged one: the correct variant has no deadlock
    stuck = [i for i, out in enumerate(g["edges"]) if not out]
    assert stuck and all(i in g["frontier"] or g["states"][i]["converged"] for i in stuck)
    assert any(i in g["frontier"] for i in stuck)  # the ones the old export called "the run stutters here"
    full = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash", "leave"}), budget=1)
    assert not full["truncated"] and full["frontier"] == []


def _check_json(protocol, config):
    cmd = check_command(protocol, config).split()[1:] + ["--json", "--engine", "python"]
    r = subprocess.run([str(Path(sys.executable).parent / "groupspec"), *cmd], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_flappy_graph_holds_the_checkers_deadlock_and_its_state_count():
    g = export_graph("cooperative-flappy", members=2, partitions=2, budget=1, with_check=True)
    assert not g["truncated"], "generations up to a shift: the graph is finite, as the checker's is"
    c = g["check"]
    out = _check_json("cooperative-flappy", g["config"])
    assert c["states"] == out["states"]
    conv = c["verdicts"]["convergence"]
    assert conv["held"] is False and conv["explanation"].startswith("deadlock")
    end = _walk(g, conv["path"])  # the checker's counterexample, followed in the graph
    assert g["states"][end]["deadlock"] and not g["states"][end]["converged"]
    assert not any(e[3] for e in g["edges"][end])


def test_broken_variant_exports_its_shortest_counterexample_as_a_path():
    g = export_graph("cooperative-direct-transfer", members=2, partitions=2, budget=1, with_check=True)
    v = g["check"]["verdicts"]["exclusive_ownership"]
    assert v["held"] is False and v["path"]
    assert "exclusive_ownership" in g["states"][_walk(g, v["path"])]["violations"]
    # shortest: no violating state is nearer the initial state (BFS over the graph)
    depth = {g["initial"][0]: 0}
    frontier = [g["initial"][0]]
    while frontier and not any(g["states"][s]["violations"] for s in frontier):
        nxt = []
        for s in frontier:
            for e in g["edges"][s]:
                if e[0] not in depth:
                    depth[e[0]] = depth[s] + 1
                    nxt.append(e[0])
        frontier = nxt
    assert depth[frontier[0]] == len(v["path"])


def test_picture_marks_two_owners_of_one_partition():
    g = export_graph("cooperative-direct-transfer", members=2, partitions=2, budget=1, with_check=True)
    end = _walk(g, g["check"]["verdicts"]["exclusive_ownership"]["path"])
    own = g["states"][end]["picture"]["own"]
    assert own[0] & own[1], own  # one partition in both members' masks
    assert len(g["partitions"]) == 2 and g["partitions"][0] != g["partitions"][1]
    good = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash"}), budget=1)
    assert all(s["picture"]["own"][0] & s["picture"]["own"][1] == 0 for s in good["states"])


def test_count_shown_is_the_clis_on_the_same_bounds_also_with_symmetry():
    """cooperative: the graph keeps members apart (268 states); the page shows check's own count (130)."""
    g = export_graph("cooperative", members=2, partitions=2, faults=frozenset({"crash", "leave"}), budget=1,
                     with_check=True)
    cmd = g["check"]["command"].split()[1:] + ["--json"]  # the command as printed, default engine
    r = subprocess.run([str(Path(sys.executable).parent / "groupspec"), *cmd], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert g["check"]["states"] == json.loads(r.stdout)["states"] < len(g["states"])
    assert g["check"]["symmetric"] and g["check"]["verdicts"]["convergence"]["held"] is True
