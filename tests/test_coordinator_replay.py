"""`groupspec coordinator replay|find`: golden transcripts, malformed scripts, mutants.

Every script under tests/replay/ states, in its `#` comments, the Kafka facts (coordinator.md
section) each step exercises; the .expected transcript was checked by hand against those comments.
The mutant test runs every fault switch of the coordinator over all scripts and requires each one
to change at least one golden transcript, so the suite is shown to catch each broken variant.
"""
from __future__ import annotations

import json
import pathlib

import pytest

from groupspec.cli import main
from groupspec.reference.classic import COORDINATOR_FAULTS as FAULTS
from groupspec.reference.sim import ScriptError, parse_script, run_script

REPLAY = pathlib.Path(__file__).parent / "replay"
SCRIPTS = sorted(REPLAY.glob("*.jsonl"))


def _expected(script: pathlib.Path) -> list[str]:
    return script.with_suffix(".expected").read_text().splitlines()


def test_there_are_scripts_with_goldens() -> None:
    assert len(SCRIPTS) >= 20
    for s in SCRIPTS:
        assert s.with_suffix(".expected").exists(), s.name


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_golden_transcript(script: pathlib.Path) -> None:
    assert run_script(script.read_text()) == _expected(script)


def test_one_replay_driver_gives_each_script_to_its_family() -> None:
    """One replay: the driver asks the families' plug-ins in order; the consumer family claims the KIP-848
    scripts, the classic family (asked last) every other one."""
    from groupspec.reference.sim import FAMILIES, family_of

    assert [f.name for f in FAMILIES] == ["consumer", "classic"]
    assert {family_of(s.read_text()).name for s in SCRIPTS} == {"classic"}
    consumer = (REPLAY.parent / "serve_data" / "confluent-kafka-consumer-protocol.script.jsonl").read_text()
    assert family_of(consumer).name == "consumer"
    assert run_script(consumer) == FAMILIES[0].run(consumer, frozenset())
    # the order matters: the classic plug-in claims every script and refuses a KIP-848 one
    assert FAMILIES[-1].claims(consumer)
    with pytest.raises(ScriptError, match="unknown (config field 'group_protocol'|request)"):
        FAMILIES[-1].run(consumer, frozenset())


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_transcript_shape(script: pathlib.Path) -> None:
    """One state line after every step; response lines carry the contract's fields."""
    steps = [s for s in parse_script(script.read_text()) if s.at is not None]
    lines = [json.loads(x) for x in _expected(script)]
    assert sum(1 for x in lines if "state" in x) == len(steps)
    last = -1
    for x in lines:
        assert x["at"] >= last
        last = x["at"]
        if "request" in x:
            assert {"at", "to", "request", "error"} <= set(x)
            if x["request"] == "JoinGroup":
                assert set(x) == {"at", "to", "request", "error", "member", "generation", "leader", "protocol",
                                  "members", "skip_assignment"}
        else:
            assert set(x) == {"at", "state", "generation", "leader", "protocol", "members", "pending", "static"}


def test_cli_replay_prints_transcript_byte_for_byte(capsys: pytest.CaptureFixture[str]) -> None:
    script = REPLAY / "01_two_step_join.jsonl"
    for _ in range(2):
        with pytest.raises(SystemExit) as exit_info:
            main(["coordinator", "replay", str(script)])
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        assert out == script.with_suffix(".expected").read_text()


def test_contract_example_lines() -> None:
    """The contract's own example steps run, and print the contract's shapes."""
    text = "\n".join([
        '{"config": {"initial_rebalance_delay_ms": 3000, "group_max_size": null, "min_session_timeout_ms": 6000,'
        ' "max_session_timeout_ms": 1800000, "offsets_partitions": 50, "group_id": "g"}}',
        '{"at": 0, "from": "A", "send": "JoinGroup", "member_id": "", "instance_id": null, "protocol_type": "consumer",'
        ' "protocols": ["range"], "metadata": {"range": {"topics": ["t"], "owned": [], "generation": -1}},'
        ' "session_timeout_ms": 10000, "rebalance_timeout_ms": 60000, "version": 9}',
        '{"at": 6000, "advance": true}',
        '{"at": 7000, "fault": "store_fails", "error": "NOT_ENOUGH_REPLICAS"}',
        '{"at": 7000, "config": {"group_max_size": 1}}',
        '{"at": 7000, "fault": "unload"}',
        '{"at": 7000, "fault": "load"}',
    ])
    lines = [json.loads(x) for x in run_script(text)]
    assert lines[0]["error"] == "MEMBER_ID_REQUIRED" and lines[0]["member"] == "A"
    states = [x["state"] for x in lines if "state" in x]
    # A never came back: the group only ever had a pending id, so nothing was persisted and the
    # group does not survive the failover
    assert states == ["Empty", "Empty", "Empty", "Empty", None, None]


# ---------------------------------------------------------------------------------------------
# malformed scripts: one line on stderr naming the line, exit 2
# ---------------------------------------------------------------------------------------------

J = '{"at": 0, "from": "A", "send": "JoinGroup", "member_id": ""}'
MALFORMED = [
    ("{not json", "line 1: bad JSON"),
    ('[1, 2]', "line 1: a step must be a JSON object"),
    ('{"at": 0, "from": "A", "send": "Frobnicate"}', "line 1: unknown request \"Frobnicate\""),
    ('{"at": 0, "hello": 1}', "line 1: a step needs exactly one of"),
    ('{"at": 0, "advance": true, "fault": "unload"}', "line 1: a step needs exactly one of"),
    (J + '\n{"at": 1, "from": "A", "send": "Heartbeat", "member_id": "$self"}', "line 2: Heartbeat step is missing field 'generation'"),
    ('{"from": "A", "send": "JoinGroup", "member_id": ""}', "line 1: step is missing field 'at'"),
    ('{"at": 0, "send": "JoinGroup", "member_id": ""}', "line 1: JoinGroup step is missing field 'from'"),
    ('{"at": 5, "advance": true}\n{"at": 4, "advance": true}', "line 2: 'at' goes backwards (4 < 5)"),
    ('{"at": -1, "advance": true}', "line 1: field 'at' must be an integer >= 0"),
    (J + '\n{"at": 1, "from": "A", "send": "Heartbeat", "member_id": "$Z", "generation": 0}', "line 2: unknown alias 'Z'"),
    ('{"at": 1, "from": "A", "send": "Heartbeat", "member_id": "$self", "generation": 0}',
     "line 1: alias 'A' (in 'member_id') has not been given a member id yet"),
    (J + '\n# comment\n\n{"at": 1, "from": "A", "send": "SyncGroup", "member_id": "", "generation": 0, "assignments": {"Q": []}}',
     "line 4: unknown alias 'Q' in 'assignments'"),
    (J + '\n{"at": 1, "from": "B", "send": "LeaveGroup", "members": [{"member_id": "$A", "bogus": 1}]}', "line 2: unknown field 'bogus'"),
    ('{"at": 0, "fault": "meteor"}', "line 1: unknown fault \"meteor\""),
    ('{"at": 0, "fault": "store_fails", "error": "OOPS"}', "line 1: field 'error' is not a Kafka error name"),
    ('{"at": 0, "fault": "store_fails"}', "line 1: store_fails step is missing field 'error'"),
    ('{"config": {"group_size": 3}}', "line 1: unknown config field 'group_size'"),
    ('{"config": {"offsets_partitions": 0}}', "line 1: config field 'offsets_partitions' must be an integer >= 1"),
    # a ceiling (offsets.topic.num.partitions has none in Kafka): 2**70 ran out of memory in the coordinator's set
    # (just past the ceiling here, so that a regression fails the test rather than exhaust the machine's memory)
    ('{"config": {"offsets_partitions": 1000001}}',
     "line 1: config field 'offsets_partitions' is 1000001, more than the 1,000,000 a script may give"),
    # and the topics of a consumer-protocol script (2**70 was a numpy traceback; 2**40 exhausts memory)
    ('{"config": {"group_protocol": "consumer", "topics": {"t": 6, "u": 1000001}}}',
     "line 1: config.topics: topic 'u' has 1000001 partitions, more than the 1,000,000 a script may give"),
    ('{"config": {"group_protocol": "consumer", "topics": {"t": 2}}}\n{"at": 1, "metadata": {"t": %d}}' % 2**70,
     "line 2: metadata: topic 't' has %d partitions, more than the 1,000,000" % (2**70)),
    (J + '\n{"at": 1, "config": {"group_id": "h"}}', "line 2: config field 'group_id' can only be set in the first line"),
    ('{"at": 0, "from": "A", "send": "JoinGroup", "member_id": "", "session_timeout_ms": "10s"}',
     "line 1: field 'session_timeout_ms' has the wrong type"),
    ('{"at": 0, "from": "A", "send": "JoinGroup", "member_id": "", "protocols": ["range"], "metadata": {"sticky": {}}}',
     "line 1: field 'metadata' names protocol 'sticky'"),
    ('{"at": 0, "from": "A", "send": "OffsetCommit", "offsets": [["t", 0]]}', "line 1: field 'offsets' entries must be"),
    ('{"at": 0, "from": "$A", "send": "JoinGroup", "member_id": ""}', "line 1: field 'from' must be an alias"),
    ('{"at": 0, "from": "A", "send": "LeaveGroup", "members": [{"member_id": "x"}, {"member_id": "y"}], "version": 1}',
     "line 1: LeaveGroupRequest: LeaveGroup v0-2 carries exactly one member"),
    ('{"at": 0, "from": "A", "send": "JoinGroup", "member_id": "", "unknown": 1}', "line 1: unknown field 'unknown'"),
    # a name looked up in a table must be a string (an object or an array there was a TypeError: unhashable)
    ('{"at": 0, "fault": {"x": 1}}', "line 1: field 'fault' must be a string, not an object"),
    ('{"at": 0, "fault": ["a"]}', "line 1: field 'fault' must be a string, not an array"),
    ('{"at": 0, "from": "A", "send": ["JoinGroup"], "member_id": ""}',
     "line 1: field 'send' must be a string, not an array"),
    ('{"at": 0, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 0, "instance_id": ["i"]}',
     "line 1: field 'instance_id' must be a string or null, not an array"),
    ('{"at": 0, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 0, "subscribed_topic_regex": "("}',
     "line 1: field 'subscribed_topic_regex' is not a regular expression"),
]


@pytest.mark.parametrize("text,message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_script_is_one_line_exit_2(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                             text: str, message: str) -> None:
    with pytest.raises(ScriptError) as err:
        run_script(text)
    assert message in str(err.value)
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "replay", str(path)])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err_lines = captured.err.strip().splitlines()
    assert len(err_lines) == 1 and message in err_lines[0] and str(path) in err_lines[0]


def test_a_malformed_script_on_stdin_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``coordinator replay -`` reads the same parser: a field of the wrong type is refused the same way."""
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"at": 0, "fault": {"x": 1}}\n'))
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "replay", "-"])
    cap = capsys.readouterr()
    assert (exit_info.value.code, cap.out) == (2, "")
    assert cap.err == "groupspec: error: -: line 1: field 'fault' must be a string, not an object\n"


def test_missing_file_is_one_line_exit_2(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "replay", str(tmp_path / "nope.jsonl")])
    assert exit_info.value.code == 2
    assert "no such file" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# mutants: every fault switch changes at least one golden transcript
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_goldens_catch_each_mutant(fault: str) -> None:
    caught = [s.stem for s in SCRIPTS if run_script(s.read_text(), faults={fault}) != _expected(s)]
    assert caught, f"no golden transcript notices the mutant {fault!r}"


# ---------------------------------------------------------------------------------------------
# find
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n\n", "# a comment\n", "# only comments\n\n  # and blank lines\n"])
def test_cli_replay_refuses_a_script_without_steps(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                   text: str) -> None:
    """A script of comments only printed nothing and exited 0, where an empty file was refused."""
    script = tmp_path / "s.jsonl"
    script.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "replay", str(script)])
    cap = capsys.readouterr()
    assert (exit_info.value.code, cap.out) == (2, "")
    assert cap.err == (f"groupspec: error: {script}: empty script: no steps to replay (JSON Lines, one step per "
                       "line: docs/coordinator.md)\n")


@pytest.mark.parametrize("group,partition", [
    ("my-group", 12), ("test-group", 12), ("connect-cluster", 13), ("", 0),
    ("polygenelubricants", 0), ("GydZG_", 0), ("DESIGNING WORKHOUSES", 0),
])
def test_cli_find(capsys: pytest.CaptureFixture[str], group: str, partition: int) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "find", group])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"{partition}\n"


def test_cli_find_json_and_bad_partitions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["coordinator", "find", "my-group", "--offsets-partitions", "7", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"group_id": "my-group", "hash": -1906497762, "offsets_partitions": 7,
                   "partition": 1906497762 % 7}
    with pytest.raises(SystemExit) as exit_info:
        main(["coordinator", "find", "g", "--offsets-partitions", "0"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exit_info:  # the ceiling of a script's offsets_partitions (docs/coordinator.md)
        main(["coordinator", "find", "g", "--offsets-partitions", "1000001"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "groupspec: error: --offsets-partitions must be at most 1,000,000, got 1000001\n"


def test_the_reference_coordinator_refuses_offsets_partitions_past_the_ceiling() -> None:
    from groupspec.reference.classic import MAX_OFFSETS_PARTITIONS, CoordinatorConfig

    assert CoordinatorConfig(offsets_partitions=MAX_OFFSETS_PARTITIONS).offsets_partitions == 1_000_000
    with pytest.raises(ValueError, match="offsets_partitions must be from 1 to 1,000,000"):
        CoordinatorConfig(offsets_partitions=MAX_OFFSETS_PARTITIONS + 1)


# ---------------------------------------------------------------------------------------------
# robustness: any script either runs or is reported as malformed, never a crash
# ---------------------------------------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_aliases = st.sampled_from(["A", "B", "C"])
_member = st.sampled_from(["", "$self", "$A", "$B", "literal-id"])
_instance = st.sampled_from([None, None, "i1", "i2"])
_request = st.one_of(
    st.fixed_dictionaries({"send": st.just("JoinGroup"), "from": _aliases, "member_id": _member},
                          optional={"instance_id": _instance, "version": st.sampled_from([3, 4, 8, 9]),
                                    "protocols": st.sampled_from([["range"], ["roundrobin", "range"], ["sticky"], []]),
                                    "session_timeout_ms": st.sampled_from([5000, 6000, 10000]),
                                    "rebalance_timeout_ms": st.sampled_from([100, 5000, 60000])}),
    st.fixed_dictionaries({"send": st.just("SyncGroup"), "from": _aliases, "member_id": _member,
                           "generation": st.integers(-1, 3)},
                          optional={"instance_id": _instance, "assignments": st.sampled_from([{}, {"A": [["t", 0]]}]),
                                    "protocol_name": st.sampled_from(["range", "roundrobin"])}),
    st.fixed_dictionaries({"send": st.just("Heartbeat"), "from": _aliases, "member_id": _member,
                           "generation": st.integers(-1, 3)}, optional={"instance_id": _instance}),
    st.fixed_dictionaries({"send": st.just("LeaveGroup"), "from": _aliases,
                           "members": st.lists(st.fixed_dictionaries({"member_id": _member},
                                                                     optional={"instance_id": _instance}),
                                               min_size=1, max_size=2)}),
    st.fixed_dictionaries({"send": st.just("OffsetCommit"), "from": _aliases,
                           "offsets": st.just([["t", 0, 1]])},
                          optional={"member_id": _member, "generation": st.integers(-1, 3), "instance_id": _instance}),
    st.fixed_dictionaries({"send": st.just("OffsetFetch"), "from": _aliases}),
    st.fixed_dictionaries({"advance": st.just(True)}),
    st.fixed_dictionaries({"fault": st.sampled_from(["unload", "load", "load_start", "load_finish", "mark_dead"])}),
    st.fixed_dictionaries({"fault": st.just("store_fails"),
                           "error": st.sampled_from(["NOT_ENOUGH_REPLICAS", "NOT_LEADER_OR_FOLLOWER", "NONE"])}),
    st.fixed_dictionaries({"config": st.fixed_dictionaries({}, optional={
        "group_max_size": st.sampled_from([None, 1, 2]), "initial_rebalance_delay_ms": st.sampled_from([0, 100])})}),
)


_PROLOGUE = [(0, {"send": "JoinGroup", "from": a, "member_id": "", "instance_id": i})
             for a, i in (("A", None), ("B", None), ("C", "i1"))]


@given(st.lists(st.tuples(st.sampled_from([0, 10, 100, 3000, 20000]), _request), max_size=40))
def test_any_script_runs_or_is_malformed(steps: list[tuple[int, dict[str, object]]]) -> None:
    at = 0
    lines = []
    for delta, step in _PROLOGUE + steps:
        at += delta
        lines.append(json.dumps({"at": at, **step}))
    text = "\n".join(lines)
    try:
        first = run_script(text)
    except ScriptError as e:
        assert str(e).startswith("line ")
        return
    assert run_script(text) == first  # byte-for-byte deterministic


# Every field of a step, of either family, given a value of every JSON type: the script runs or is refused with
# a ScriptError naming the line, never another exception (an object or array where a name was looked up was a
# TypeError; a list of topic names given as a number, another).
_BASE_STEPS = [
    {"at": 0, "from": "A", "send": "JoinGroup", "member_id": ""},
    {"at": 0, "from": "A", "send": "SyncGroup", "member_id": "$self", "generation": 1, "assignments": {"A": [["t", 0]]}},
    {"at": 0, "from": "A", "send": "Heartbeat", "member_id": "$self", "generation": 1},
    {"at": 0, "from": "A", "send": "LeaveGroup", "members": [{"member_id": "$A"}]},
    {"at": 0, "from": "A", "send": "OffsetCommit", "offsets": [["t", 0, 1]]},
    {"at": 0, "fault": "store_fails", "error": "NOT_COORDINATOR"},
    {"at": 0, "config": {"initial_rebalance_delay_ms": 0}},
    {"at": 0, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 0, "subscribed_topic_names": ["t"],
     "rebalance_timeout_ms": 1000, "owned": [], "instance_id": None, "subscribed_topic_regex": None,
     "member_id": "A", "server_assignor": None},
    {"at": 1, "from": "A", "send": "OffsetCommit", "member_epoch": 1, "offsets": [["t", 0, 1]], "member_id": "A"},
    {"at": 2, "metadata": {"t": 5}},
]
_ANY_JSON = [{"x": 1}, ["a"], [], [["t", 0]], [1, 2], "s", "$self", "(", 1, -1, 1.5, True, None]


def test_a_field_of_any_json_type_is_run_or_refused() -> None:
    crashes = []
    for index, base in enumerate(_BASE_STEPS):
        consumer = base.get("send") == "ConsumerGroupHeartbeat" or "member_epoch" in base or "metadata" in base
        first = _BASE_STEPS[7] if consumer else _BASE_STEPS[0]
        for name in sorted(base):
            for value in _ANY_JSON:
                lines = [{**base, name: value}] if index in (0, 7) else [first, {**base, name: value}]
                text = "\n".join(json.dumps(s) for s in lines)
                try:
                    run_script(text)
                except ScriptError as e:
                    assert str(e).startswith("line ")
                except Exception as e:  # noqa: BLE001 - what this looks for
                    crashes.append(f"{text}: {type(e).__name__}: {e}")
    assert crashes == []
