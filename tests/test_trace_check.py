"""The trace checker (groupspec.trace, `groupspec trace check`): simulator traces hold, the model's
broken variants replayed as traces are caught, planted defects and malformed files are reported."""
from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.checker import Step, check as explore
from groupspec.model import Config, make
from groupspec.reference.sim import SCENARIOS, ScenarioOptions, run_scenario, dumps_jsonl
from groupspec.trace import PROPERTY_IDS, check_events, check_paths
from groupspec.trace.from_model import path_to_events
from groupspec.verify import MODEL_JOBS

GS = [str(Path(sys.executable).parent / "groupspec")]


def ev(ts, member, event, parts=(), gen=1, **kw):
    e = {"ts_ms": ts, "group": kw.pop("group", "g"), "member": member, "event": event, "generation": gen,
         "protocol": kw.pop("protocol", "eager")}
    if parts:
        e["partitions"] = [["t", p] if not isinstance(p, tuple) else ["t", *p] for p in parts]
    e.update(kw)
    return e


def verdicts(result, group="g"):
    d = result.to_dict()
    g = next(x for x in d["groups"] if x["group"] == group)
    return {p["id"]: p["verdict"] for p in g["properties"]}, g


def violated(result, group="g"):
    v, _g = verdicts(result, group)
    return sorted(k for k, x in v.items() if x == "violated")


TOPIC = {"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 2}


def clean():
    return [TOPIC, ev(0, "a", "joined", gen=-1), ev(0, "b", "joined", gen=-1),
            ev(1000, "a", "assigned", [0, 1]), ev(5000, "a", "revoked", [0, 1]),
            ev(6000, "a", "assigned", [0], gen=2), ev(6000, "b", "assigned", [1], gen=2)]


# ------------------------------------------------------------------------------------ simulator traces
@pytest.mark.parametrize("name", sorted(n for n, sc in SCENARIOS.items() if not sc.finding))
def test_simulator_scenarios_hold(name):
    report = run_scenario(name, ScenarioOptions(seed=1))
    r = check_events(report.sim.trace, source=name)
    assert r.ok, json.dumps(r.to_dict(), indent=1)[:3000]
    _v, g = verdicts(r)
    assert g["periods"] and g["periods"][-1]["converged_at_ms"] is not None


@pytest.mark.parametrize("name", sorted(n for n, sc in SCENARIOS.items() if sc.finding))
def test_simulator_findings_are_caught(name):
    """The stories that reproduce a model counterexample Kafka shares: the checker names the property."""
    report = run_scenario(name, ScenarioOptions(seed=1))
    assert SCENARIOS[name].finding in violated(check_events(report.sim.trace, source=name))


@pytest.mark.parametrize("fault,expect", [
    ("skip_revoke_before_join", "exclusive_ownership"),
    ("same_round_transfer", "exclusive_ownership"),
])
def test_simulator_mutants_are_caught(fault, expect):
    """The reference consumer's fault switches (mutants) leave traces the checker rejects."""
    proto = "cooperative" if fault == "same_round_transfer" else "eager"
    caught = False
    for seed in range(4):
        rep = run_scenario("new-consumer-joins", ScenarioOptions(protocol=proto, seed=seed, faults=frozenset({fault})))
        if expect in violated(check_events(rep.sim.trace)):
            caught = True
            break
    assert caught


# ------------------------------------------------------------------------------- model paths as traces
# The broken variants of KIP-848's in-flight rules (model/consumer_flight.py) are left out: the trace format
# has no lost heartbeat answer nor a late OffsetCommit yet, so their counterexamples cannot be written as
# traces (docs/trace-check.md, issue 29's report). The checker and verify catch them.
IN_FLIGHT = {"consumer-commit-any-epoch", "consumer-fenced-keeps-partitions"}
# The downgrade that lowers the group's generation: its one symptom is the group's epoch, which no trace line carries
# (every member's generation stays where it was); the checker and verify catch it.
IN_FLIGHT |= {"classic-to-consumer-gen-drops"}
BROKEN = [j for j in MODEL_JOBS if j.expect and j.protocol not in IN_FLIGHT]


@pytest.mark.parametrize("job", BROKEN, ids=[f"{j.protocol}-{j.expect}" for j in BROKEN])
def test_broken_variant_counterexample_is_caught(job):
    from groupspec.cli.check import parse_faults

    proto, res = explore(job.protocol, job.assignor, job.members, job.partitions, job.topics,
                         parse_faults(job.faults), job.budget, engine="python", with_symmetry_factor=False,
                         max_states=job.max_states)
    v = res.verdicts[job.expect]
    assert v.held is False and v.trace
    events = path_to_events(proto, v.trace, unroll_until_ms=40_000, loop_start=v.loop_start)
    r = check_events(events, source=job.protocol)
    if job.protocol == "cooperative-flappy":
        # The model's first counterexample is a deadlock in which both members own a complete, balanced
        # and unchanging assignment that the (flappy) assignor would change if it ran again. No trace can
        # show that: the same actions in the correct cooperative model (sticky assignor) write the very
        # same trace, and end in a state that model calls converged (docs/trace-check.md). The variant's
        # livelock (test_flappy_livelock_is_caught) is what a trace shows of it, and it is caught.
        assert v.explanation.startswith("deadlock")
        assert r.ok
        good = make("cooperative", Config(members=job.members, partitions=job.partitions, budget=job.budget,
                                          assignor="sticky"))
        s = v.trace[0].state
        steps = [Step(None, s)]
        for st in v.trace[1:]:
            assert st.action in good.enabled(s)
            s = good.step(s, st.action)
            steps.append(Step(st.action, s))
        assert path_to_events(good, steps) == path_to_events(proto, v.trace)
        assert good.converged(s) and not proto.converged(v.trace[-1].state)
        return
    assert job.expect in violated(r), json.dumps(r.to_dict(), indent=1)[:2000]
    assert not r.ok


def _livelock(proto):
    """The model's fair cycle among non-converged states (the explorer reports a deadlock first)."""
    import networkx as nx

    from groupspec.checker.explorer import Explorer

    ex = Explorer(proto)
    ex.run()
    conv, fair = ex._converged, ex._fair
    g = nx.DiGraph()
    g.add_nodes_from(n for n in range(len(conv)) if not conv[n])
    g.add_edges_from((n, t) for n in range(len(conv)) if not conv[n] for _a, t in fair[n] if not conv[t])
    comps = [c for c in nx.strongly_connected_components(g) if len(c) > 1 or g.has_edge(next(iter(c)), next(iter(c)))]
    return ex.judge_cycles(iter(comps))


def test_flappy_livelock_is_caught():
    """cooperative-flappy's livelock, replayed (rounds that keep moving a partition between the same
    members, generations growing): the group never converges within the bound; its sticky twin has no livelock."""
    flappy = make("cooperative-flappy", Config(members=2, partitions=2, budget=0))
    v = _livelock(flappy)
    assert v is not None and v.held is False and v.explanation.startswith("livelock")
    events = path_to_events(flappy, v.trace, unroll_until_ms=60_000, loop_start=v.loop_start)
    r = check_events(events, source="cooperative-flappy")
    assert violated(r) == ["convergence"], json.dumps(r.to_dict(), indent=1)[:2000]
    assert check_events(events, converge_within_s=120).ok  # within a longer bound than the trace: no verdict
    sticky = _livelock(make("cooperative", Config(members=2, partitions=2, budget=0, assignor="sticky")))
    assert sticky is None or sticky.held is not False


def test_flappy_rounds_do_not_converge():
    t = [TOPIC, ev(0, "a", "joined", gen=-1), ev(0, "b", "joined", gen=-1)]
    owner = {0: "a", 1: "b"}
    for k in range(30):  # every second partition 0 moves to the other member
        ts = 1000 + 1000 * k
        old = owner[0]
        new = "b" if old == "a" else "a"
        if k:
            t.append(ev(ts, old, "revoked", [0], gen=k, protocol="cooperative"))
        t.append(ev(ts + 500, new if k else "a", "assigned", [0] if k else [0], gen=k + 1, protocol="cooperative"))
        if not k:
            t.append(ev(ts + 500, "b", "assigned", [1], gen=1, protocol="cooperative"))
            new = "a"
        owner[0] = new
    r = check_events(t)
    assert violated(r) == ["convergence"]
    stable = t[:8]  # the same group that stops after a few rounds converges
    assert check_events(stable, converge_within_s=20).ok


def _random_walk(proto, rng, steps):
    s = rng.choice(proto.init_states())
    path = [Step(None, s)]
    for _ in range(steps):
        acts = proto.enabled(s)
        if not acts:
            break
        a = rng.choice(acts)
        s = proto.step(s, a)
        path.append(Step(a, s))
    return path


@pytest.mark.parametrize("variant,faults", [
    ("eager", "crash,leave,zombie"), ("cooperative", "crash,timeout,zombie,leave"), ("static", "join,crash"),
    ("zookeeper", "join,leave,crash"),
])
def test_correct_variant_walks_hold(variant, faults):
    """Random walks of correct variants, written as traces, violate no safety property."""
    proto = make(variant, Config(members=3, partitions=3, faults=frozenset(faults.split(",")), budget=2,
                                 assignor="range" if variant == "zookeeper" else "sticky"))
    rng = random.Random(12)
    for _ in range(40):
        events = path_to_events(proto, _random_walk(proto, rng, 40))
        bad = [x for x in violated(check_events(events))
               if x in ("exclusive_ownership", "commit_fencing", "generation_monotonic", "well_formed")]
        assert bad == [], events


# ------------------------------------------------------------------------------------- planted defects
def test_clean_trace_holds_and_reports_periods():
    r = check_events(clean())
    assert r.ok
    _v, g = verdicts(r)
    assert g["members"] == ["a", "b"]
    assert [(w["partition"], w["from_ms"], w["to_ms"]) for w in g["unowned_windows"]] == [
        (0, 0, 1000), (1, 0, 1000), (0, 5000, 6000), (1, 5000, 6000)]
    assert g["periods"][-1]["converged_at_ms"] == 6000


def test_double_owner_is_a_violation_unless_a_zombie():
    t = clean()[:4] + [ev(2000, "b", "assigned", [1], gen=2), ev(3000, "a", "revoked", [1], gen=2)]
    r = check_events(t)
    assert "exclusive_ownership" in violated(r)
    _v, g = verdicts(r)
    x = next(p for p in g["properties"] if p["id"] == "exclusive_ownership")["violations"][0]
    assert (x["members"], x["from_ms"], x["to_ms"], x["zombie"]) == (["a", "b"], 2000, 3000, None)
    assert x["timeline"] and any("b receives its SyncGroup answer" in line for line in x["timeline"])
    zombie = clean()[:4] + [ev(2000, "b", "assigned", [1], gen=2), ev(3000, "a", "fenced", gen=-1, error="UNKNOWN_MEMBER_ID"),
                            ev(3000, "a", "lost", [0, 1], gen=-1)]
    r = check_events(zombie)
    assert "exclusive_ownership" not in violated(r)
    _v, g = verdicts(r)
    assert g["zombie_overlaps"][0]["zombie"] == "a"


def test_clock_ties_are_no_overlap():
    """b's assigned written before a's revoked in the same millisecond: a hand-over, not an overlap."""
    t = clean()[:4] + [ev(2000, "b", "assigned", [1], gen=2, protocol="cooperative"),
                       ev(2000, "a", "revoked", [1], gen=1, protocol="cooperative")]
    assert "exclusive_ownership" not in violated(check_events(t))


def test_zombie_commit_accepted_is_commit_fencing():
    base = clean()[:4] + [ev(2000, "b", "assigned", [1], gen=2)]
    late = base + [ev(2500, "a", "commit", gen=1, partitions=[["t", 1, 7]], accepted=True, sent_ms=2400),
                   ev(3000, "a", "fenced", gen=-1, error="ILLEGAL_GENERATION"), ev(3000, "a", "lost", [0, 1], gen=-1)]
    assert violated(check_events(late)) == ["commit_fencing"]
    _v, g = verdicts(check_events(late))
    assert g["zombie_overlaps"][0]["zombie_commits_accepted"][0]["offset"] == 7
    early = [dict(e) for e in late]
    early[-3]["sent_ms"] = 1500  # sent before b got it: the answer was only logged late
    assert violated(check_events(early)) == []
    rejected = [dict(e) for e in late]
    rejected[-3]["accepted"] = False
    assert violated(check_events(rejected)) == []


def test_commit_after_removed_is_commit_fencing():
    t = clean()[:4] + [ev(2000, "a", "removed"), ev(2500, "a", "commit", partitions=[["t", 0, 3]], accepted=True)]
    assert violated(check_events(t)) == ["commit_fencing"]
    t[-1]["accepted"] = False
    assert violated(check_events(t)) == []


def test_generation_going_down():
    t = clean() + [ev(7000, "b", "assigned", [1], gen=1, protocol="cooperative")]
    assert "generation_monotonic" in violated(check_events(t))
    reset = clean() + [ev(6500, "b", "fenced", gen=-1, error="UNKNOWN_MEMBER_ID"), ev(6500, "b", "lost", [1], gen=-1),
                       ev(7000, "b", "assigned", [1], gen=1)]
    assert "generation_monotonic" not in violated(check_events(reset))


def _late_commits() -> dict[str, list[dict]]:
    """a (generation 1 until 6000 ms, then 2) commits partition 0; each trace ends with one commit line."""
    base = clean()
    c = dict(partitions=[["t", 0, 5]], accepted=True, protocol="consumer")
    return {
        # sent in generation 1, answered after a reached generation 2 (a network delay longer than a step)
        "late": base + [ev(6100, "a", "commit", gen=1, sent_ms=5900, **c)],
        "same-tick": base + [ev(6300, "a", "commit", gen=1, sent_ms=6000, **c)],  # sent at the change's tick
        # sent after a reached generation 2 but carrying generation 1: a real regression
        "regressed": base + [ev(6100, "a", "commit", gen=1, sent_ms=6050, **c)],
        "regressed-unsent": base + [ev(6100, "a", "commit", gen=1, **c)],  # no sent_ms: judged when answered
        "sent-after-answer": base + [ev(6100, "a", "commit", gen=1, sent_ms=6200, **c)],  # not read: judged now
    }


def _gen_verdicts() -> dict[str, bool]:
    return {k: "generation_monotonic" in violated(check_events(t)) for k, t in _late_commits().items()}


GEN_EXPECTED = {"late": False, "same-tick": False, "regressed": True, "regressed-unsent": True, "sent-after-answer": True}


def test_commit_generation_is_the_one_it_was_sent_in():
    """A commit line with ``sent_ms`` carries the generation the member had when it sent it (the trace contract's
    ``generation``: "the generation the member was in when it saw the event"; a commit is seen when sent):
    an answer that arrives after the member's next epoch is no regression; a commit sent after it is."""
    assert _gen_verdicts() == GEN_EXPECTED
    _v, g = verdicts(check_events(_late_commits()["regressed"]))
    (finding,) = [p for p in g["properties"] if p["id"] == "generation_monotonic"][0]["violations"]
    assert (finding["from_generation"], finding["to_generation"], finding["ts_ms"]) == (2, 1, 6100)


def test_commit_sent_before_every_remembered_change_is_not_judged():
    """The checker remembers GEN_HISTORY changes of a member's generation: a commit sent before all of them is
    not judged (unknown), one sent between two of them is judged against the generation of that time."""
    from groupspec.trace.checker import GEN_HISTORY
    t = clean()
    for k in range(GEN_HISTORY + 1):  # a goes through generations 3, 4, ... every 100 ms from 7000 ms
        t.append(ev(7000 + 100 * k, "a", "assigned", [], gen=3 + k, protocol="cooperative"))
    c = dict(partitions=[["t", 0, 5]], accepted=True, protocol="consumer")
    old = t + [ev(8000, "a", "commit", gen=1, sent_ms=5900, **c)]  # before every remembered change
    assert "generation_monotonic" not in violated(check_events(old))
    mid = t + [ev(8000, "a", "commit", gen=3, sent_ms=7350, **c)]  # a had generation 6 then
    assert "generation_monotonic" in violated(check_events(mid))
    ok = t + [ev(8000, "a", "commit", gen=5, sent_ms=7250, **c)]
    assert "generation_monotonic" not in violated(check_events(ok))


@pytest.mark.parametrize("mutant", ["ignores-sent_ms", "never-judges-sent"])
def test_commit_generation_mutants_are_caught(monkeypatch, mutant):
    """The rule's two ways to be wrong: judging by arrival (the false alarm) or not judging sent commits at all
    (a real regression missed) each change a verdict above."""
    import groupspec.trace.checker as checker
    broken = {"ignores-sent_ms": lambda m, ev, ts: m.generation, "never-judges-sent": lambda m, ev, ts: (
        m.generation if "sent_ms" not in ev else None)}[mutant]
    monkeypatch.setattr(checker, "_gen_then", broken)
    assert _gen_verdicts() != GEN_EXPECTED


def test_long_unowned_window_and_no_convergence():
    t = clean()[:5] + [ev(40_000, "a", "assigned", [0, 1], gen=2)]
    r = check_events(t)
    assert violated(r) == ["completeness", "convergence"]
    _v, g = verdicts(r)
    comp = next(p for p in g["properties"] if p["id"] == "completeness")["violations"]
    assert {(w["partition"], w["from_ms"], w["to_ms"], w["seconds"]) for w in comp} == {(0, 5000, 40000, 35.0), (1, 5000, 40000, 35.0)}
    assert comp[0]["members_alive"] == ["a", "b"]
    assert check_events(t, converge_within_s=60).ok


def test_well_formedness_defects_and_robustness():
    t = clean() + [
        ev(7000, "b", "revoked", [0], gen=2),  # not owned
        ev(7100, "a", "assigned", [0], gen=2, protocol="cooperative"),  # already owned
        ev(7200, "b", "left"), ev(7300, "b", "revoked", [1], gen=2),  # after left
    ]
    r = check_events(t)
    assert violated(r) == ["well_formed"]
    _v, g = verdicts(r)
    msgs = [d["message"] for d in next(p for p in g["properties"] if p["id"] == "well_formed")["violations"]]
    assert len(msgs) == 3 and "does not own" in msgs[0] and "already owns" in msgs[1] and "after left" in msgs[2]
    # what real clients do is not a defect: empty listener calls, a revoke on first join, a restart
    ok = [TOPIC, ev(0, "a", "joined", gen=-1), ev(0, "a", "revoked", [], gen=-1), ev(500, "a", "assigned", [], gen=1),
          ev(1000, "a", "assigned", [0, 1], gen=2), ev(3000, "a", "joined", gen=-1), ev(3500, "a", "assigned", [0, 1], gen=3),
          {"ts_ms": 3600, "group": "g", "member": "a", "event": "snapshot", "partitions": [["t", 0]]}]
    assert check_events(ok).ok


def test_unsorted_input_and_several_groups():
    t = clean() + [dict(e, group="h") for e in clean()]
    shuffled = list(t)
    random.Random(3).shuffle(shuffled)
    r = check_events(shuffled)
    assert r.ok and sorted(g.group for g in r.groups) == ["g", "h"]
    bad = clean() + [dict(e, group="h") for e in clean()[:4]] + [ev(2000, "b", "assigned", [1], gen=2, group="h"),
                                                                 ev(3000, "a", "revoked", [1], gen=2, group="h")]
    r = check_events(bad)
    assert violated(r, "g") == [] and violated(r, "h") == ["exclusive_ownership"]


# ------------------------------------------------------------------------------------- files and CLI
def test_files_gzip_directories_and_malformed_lines(tmp_path: Path):
    (tmp_path / "d").mkdir()
    plain = tmp_path / "d" / "a.jsonl"
    plain.write_text(dumps_jsonl(clean()))
    with gzip.open(tmp_path / "d" / "b.jsonl.gz", "wt") as f:
        f.write(dumps_jsonl(clean()))
    rep = check_paths([str(tmp_path / "d")])
    assert rep.ok and len(rep.traces) == 2
    bad = tmp_path / "bad.jsonl"
    lines = dumps_jsonl(clean()).splitlines()
    lines.insert(3, "{not json")
    lines.insert(5, "[1, 2]")
    lines.insert(6, '{"group": "g", "member": "a", "event": "joined"}')
    bad.write_text("\n".join(lines) + "\n")
    rep = check_paths([str(bad)])
    assert not rep.ok
    defects = next(p for p in rep.traces[0].to_dict()["groups"][0]["properties"] if p["id"] == "well_formed")["violations"]
    assert [d["line"] for d in defects] == [4, 6, 7]
    assert "not JSON" in defects[0]["message"]
    assert defects[0]["message"].startswith("not JSON")  # the line is its own field: the message does not repeat it
    # where in the line: a column, not the parser's "line 2 column 1 (char 9)" (its line 2: after the line's newline)
    assert defects[0]["message"] == "not JSON (unexpected character, expected a string key at column 2)", defects[0]["message"]
    # the same defect in a file read sorted (time goes back): the same message
    lines.insert(2, lines[-1])  # the last event early: time goes back
    back = tmp_path / "back.jsonl"
    back.write_text("\n".join(lines) + "\n")
    doc = check_paths([str(back)]).traces[0].to_dict()
    assert doc.get("sorted") is True
    sorted_defects = [v for g in doc["groups"]
                      for p in g["properties"] if p["id"] == "well_formed" for v in p["violations"]]
    assert any(d["message"].startswith("not JSON") for d in sorted_defects)


def test_unsorted_file_is_read_sorted(tmp_path: Path):
    p = tmp_path / "u.jsonl"
    p.write_text(dumps_jsonl(list(reversed(clean()))))
    rep = check_paths([str(p)])
    assert rep.ok and rep.traces[0].to_dict().get("sorted") is True


def run(args, stdin=None):
    return subprocess.run(GS + args, capture_output=True, text=True, input=stdin)


def test_cli_json_shape_and_exit_status(tmp_path: Path):
    good = tmp_path / "good.jsonl"
    good.write_text(dumps_jsonl(clean()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps_jsonl(clean()[:4] + [ev(2000, "b", "assigned", [1], gen=2), ev(3000, "a", "revoked", [1], gen=2)]))
    p = run(["trace", "check", "--json", str(good), str(bad)])
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert set(doc) == {"ok", "traces"} and doc["ok"] is False
    t0 = doc["traces"][0]
    assert t0["trace"] == str(good) and t0["events"] == 7
    g = t0["groups"][0]
    assert g["group"] == "g" and g["members"] == ["a", "b"]
    assert [p_["id"] for p_ in g["properties"]] == list(PROPERTY_IDS)
    assert {"exclusive_ownership", "generation_monotonic", "completeness", "convergence", "well_formed"} <= set(PROPERTY_IDS)
    for w in g["unowned_windows"]:
        assert {"topic", "partition", "from_ms", "to_ms", "seconds"} <= set(w)
    for per in g["periods"]:
        assert {"from_ms", "to_ms", "members", "converged_at_ms", "seconds_to_converge"} <= set(per)
    assert run(["trace", "check", str(good)]).returncode == 0
    p = run(["trace", "check", "-"], stdin=good.read_text())
    assert p.returncode == 0, p.stderr
    p = run(["trace", "check", "--json", "-"], stdin=bad.read_text())
    assert p.returncode == 1 and json.loads(p.stdout)["traces"][0]["trace"] == "-"


@pytest.mark.parametrize("args,needle", [
    (["trace", "check", "/nonexistent/x.jsonl"], "/nonexistent/x.jsonl: no such file"),
    (["trace", "check", "--converge-within", "0", "x"], "--converge-within"),
])
def test_cli_bad_input(args, needle):
    p = run(args)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("groupspec: error") and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_cli_unreadable_gzip(tmp_path: Path):
    p = tmp_path / "x.jsonl.gz"
    p.write_text("plain text\n")
    r = run(["trace", "check", str(p)])
    assert r.returncode == 2 and r.stdout == "" and f"{p}: line 1" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(["trace", "check", str(empty)])
    assert r.returncode == 2 and "holds no .jsonl" in r.stderr


def test_period_ended_by_a_clean_leave_converged():
    """A leaver revokes before its left line: the period it ends had converged all the same."""
    # (--converge-within 8 s: the assignment, complete from 6 s, is disturbed at 9 s, before it held 4 s)
    t = clean() + [ev(9_000, "b", "revoked", [1], gen=2), ev(9_002, "b", "left")]
    r = check_events(t, converge_within_s=8)
    assert r.ok
    _v, g = verdicts(r)
    per = next(p for p in g["periods"] if p["to_ms"] == 9_002)
    assert per["converged_at_ms"] == 6000
    # someone else's revocation just before the leave is not excused
    t2 = clean() + [ev(9_000, "a", "revoked", [0], gen=2), ev(9_002, "b", "left"), ev(10_000, "a", "assigned", [0, 1], gen=3)]
    assert "convergence" in violated(check_events(t2, converge_within_s=8))
    # an assignment that held for half of --converge-within had converged: its next change starts a period
    t3 = clean() + [ev(40_000, "a", "revoked", [0], gen=2), ev(40_002, "b", "left"), ev(41_000, "a", "assigned", [0, 1], gen=3)]
    r3 = check_events(t3)
    assert "convergence" not in violated(r3)
    _v, g = verdicts(r3)
    assert [(p["from_ms"], p["to_ms"], p["converged_at_ms"]) for p in g["periods"]][-3:] == [
        (0, 40_000, 6000), (40_000, 40_002, None), (40_002, 41_000, 41_000)]


# ------------------------------------------------------------------------------------- against the model
def _am(result, group="g"):
    return next(g for g in result.to_dict()["groups"] if g["group"] == group)["against_model"]


@pytest.mark.parametrize("name", ["new-consumer-joins", "rolling-restart", "static-member-restart",
                                  "upgrade-eager-to-cooperative"])
def test_simulator_traces_are_explained_by_model_steps(name):
    rep = run_scenario(name, ScenarioOptions(seed=2))
    am = _am(check_events(rep.sim.trace, against_model=True))
    assert am["explained"], am


@pytest.mark.parametrize("variant,faults", [("eager", "crash,leave,zombie"), ("cooperative", "crash,timeout,leave")])
def test_model_walks_are_explained_by_model_steps(variant, faults):
    proto = make(variant, Config(members=3, partitions=3, faults=frozenset(faults.split(",")), budget=2))
    rng = random.Random(5)
    for _ in range(30):
        am = _am(check_events(path_to_events(proto, _random_walk(proto, rng, 40)), against_model=True))
        assert am["explained"], am


def test_against_model_finds_the_first_unexplained_event():
    from groupspec.cli.check import parse_faults

    proto, res = explore("eager-no-revoke", "sticky", 2, 2, 1, parse_faults(""), 0, engine="python",
                         with_symmetry_factor=False)
    events = path_to_events(proto, res.verdicts["exclusive_ownership"].trace)
    r = check_events(events, against_model=True)
    am = _am(r)
    assert not am["explained"] and "live member owns" in am["first_unexplained"]["reason"]
    assert am["first_unexplained"]["member"] == "c2"
    assert not r.ok
    rep = run_scenario("new-consumer-joins", ScenarioOptions(protocol="eager", seed=0,
                                                             faults=frozenset({"skip_revoke_before_join"})))
    am = _am(check_events(rep.sim.trace, against_model=True))
    assert not am["explained"] and am["first_unexplained"]["event"] == "assigned"
    # a stopped process that still reports, a revoke of what it does not own
    t = clean() + [ev(7000, "b", "left"), ev(7100, "b", "revoked", [1], gen=2)]
    assert "not running" in _am(check_events(t, against_model=True))["first_unexplained"]["reason"]
    assert _am(check_events(clean(), against_model=True))["explained"]


def test_cli_against_model(tmp_path: Path):
    good = tmp_path / "good.jsonl"
    good.write_text(dumps_jsonl(clean()))
    p = run(["trace", "check", "--against-model", "--json", str(good)])
    assert p.returncode == 0 and json.loads(p.stdout)["traces"][0]["groups"][0]["against_model"]["explained"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps_jsonl(clean()[:4] + [ev(2000, "a", "assigned", [0], gen=2)]))
    assert run(["trace", "check", str(bad)]).returncode == 0
    p = run(["trace", "check", "--against-model", str(bad)])
    assert p.returncode == 1 and "explained by no model step" in p.stdout


def test_end_line_measures_open_windows_until_the_end_of_the_recording():
    t = clean()[:5]  # a revokes at 5000 and nothing follows
    assert check_events(t).ok  # the trace ends at 5000: nothing was unowned for long
    ended = t + [{"ts_ms": 40_000, "group": "g", "event": "end"}]
    assert violated(check_events(ended)) == ["completeness", "convergence"]


def test_period_broken_by_an_unobserved_removal_converged():
    """b stops polling; the coordinator removes it (unobserved) and a takes its partition; b learns at
    its next poll (fenced, lost). The long period before b's fenced line had converged."""
    t = clean() + [ev(30_000, "a", "revoked", [0], gen=2), ev(33_000, "a", "assigned", [0, 1], gen=3),
                   ev(40_000, "b", "fenced", gen=-1, error="_MAX_POLL_EXCEEDED"), ev(40_000, "b", "lost", [1], gen=-1)]
    r = check_events(t)
    assert "convergence" not in violated(r)
    assert "convergence" not in violated(check_events([e for e in t if e.get("event") != "fenced"]))  # lost says it too
    # (disturbances before the assignment held for 10 s, half of --converge-within)
    unfenced = clean() + [ev(12_000, "a", "revoked", [0], gen=2), ev(13_000, "a", "assigned", [0], gen=3),
                          ev(20_000, "b", "revoked", [1], gen=2), ev(20_500, "a", "assigned", [1], gen=3,
                                                                      protocol="cooperative")]
    assert "convergence" in violated(check_events(unfenced))  # b was never fenced: nothing excuses it


# ------------------------------------------------------------------------------------ starved members
STO = {"session_timeout_ms": 6000}


def _subscription_change(starved=True, sto=STO):
    """kafka-python's subscription change (docs/findings.md, finding 7), the recorded trace cut down: c3 revokes
    for the rejoin its new subscription needs at 10054 ms; with ``starved`` it is never assigned again while c1
    and c2 go through generations 3-5, otherwise all three are assigned in generation 3."""
    t = [{"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 6},
         ev(300, "c1", "joined", gen=-1, **sto), ev(800, "c2", "joined", gen=-1, **sto),
         ev(1300, "c3", "joined", gen=-1, **sto),
         ev(7908, "c2", "assigned", [2, 3], gen=2), ev(7909, "c3", "assigned", [4, 5], gen=2),
         ev(7915, "c1", "assigned", [0, 1], gen=2),
         {"ts_ms": 10000, "group": "g", "event": "topic", "topic": "u", "partitions": 2},
         ev(10054, "c3", "revoked", [4, 5], gen=2), ev(10954, "c1", "revoked", [0, 1], gen=2),
         ev(10998, "c2", "revoked", [2, 3], gen=2)]
    if starved:
        t += [ev(11004, "c2", "assigned", [2, 3], gen=3), ev(11006, "c1", "assigned", [0, 1], gen=3),
              ev(11055, "c1", "revoked", [0, 1], gen=3), ev(12509, "c2", "revoked", [2, 3], gen=3),
              ev(17010, "c2", "assigned", [3, 4, 5], gen=4), ev(18521, "c2", "revoked", [3, 4, 5], gen=4),
              ev(18525, "c2", "assigned", [3, 4, 5], gen=5), ev(18526, "c1", "assigned", [0, 1, 2], gen=5)]
    else:
        t += [ev(11004, "c2", "assigned", [2, 3], gen=3), ev(11006, "c1", "assigned", [0, 1], gen=3),
              ev(11007, "c3", "assigned", gen=3, partitions=[["t", 4], ["t", 5], ["u", 0], ["u", 1]])]
    return t + [{"ts_ms": 26000, "group": "g", "event": "end"}]


def _starved(result):
    return [{k: v for k, v in s.items() if k != "timeline"} for g in result.to_dict()["groups"]
            for s in g["starved_members"]]


def test_starved_member_is_a_notice():
    """A member alive and kept out of every generation for longer than its session timeout is listed; the
    verdicts are those of the trace without the notice (c3 owns nothing: safety holds)."""
    r = check_events(_subscription_change())
    assert _starved(r) == [{"member": "c3", "waiting_from_ms": 10054, "others_assigned_ms": 11004, "to_ms": 26000,
                            "seconds": 14.996, "session_timeout_ms": 6000, "open": True}]
    timeline = r.to_dict()["groups"][0]["starved_members"][0]["timeline"]
    assert any("c1 receives its SyncGroup answer" in x for x in timeline) and any("the recording ends" in x for x in timeline)
    assert "        c3: generation 2, owns {}" in timeline
    assert verdicts(r)[0] == verdicts(check_events(_subscription_change(sto={})))[0]


def test_starved_member_notice_needs_a_generation_without_it_and_its_session_timeout():
    assert _starved(check_events(_subscription_change(starved=False))) == []  # all three in generation 3
    assert _starved(check_events(_subscription_change(sto={}))) == []  # Kafka's default, 45 s: not yet
    assert _starved(check_events(_subscription_change(sto={"session_timeout_ms": 15000}))) == []
    assert _starved(check_events(_subscription_change(sto={"session_timeout_ms": 14995})))[0]["seconds"] == 14.996
    # a wait that ends: by a left line (the member gave up), just within and just past its session timeout
    cut = [e for e in _subscription_change() if e["ts_ms"] <= 12509]
    assert _starved(check_events(cut + [ev(17004, "c3", "left")])) == []
    got = _starved(check_events(cut + [ev(17005, "c3", "left")]))
    assert got == [{"member": "c3", "waiting_from_ms": 10054, "others_assigned_ms": 11004, "to_ms": 17005,
                    "seconds": 6.001, "session_timeout_ms": 6000}]
    # a restart starts afresh: the new process has waited for nobody yet
    assert _starved(check_events(cut + [ev(16000, "c3", "joined", gen=-1, **STO)])) == []


@pytest.mark.parametrize("proto", ["eager", "cooperative"])
def test_simulator_traces_starve_nobody(proto):
    """Every simulator story (its members' session timeout, 10 s, on their joined lines): no notice."""
    for name in sorted(SCENARIOS):
        try:
            report = run_scenario(name, ScenarioOptions(protocol=proto, seed=1))
        except (ValueError, KeyError):
            continue
        events = [dict(e, session_timeout_ms=10_000) if e["event"] == "joined" else e for e in report.sim.trace]
        r = check_events(events, source=name)
        assert _starved(r) == [], name
        assert r.ok == check_events(report.sim.trace).ok, name


def test_cli_shows_starved_members(tmp_path: Path):
    p = tmp_path / "s.jsonl"
    p.write_text(dumps_jsonl(_subscription_change()))
    r = run(["trace", "check", str(p)])
    assert r.returncode == 0 and "starved (notice)" in r.stdout
    assert "c3 took no part" in r.stdout and "14.996 s" in r.stdout
