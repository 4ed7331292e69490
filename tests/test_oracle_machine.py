"""Differential testing against Apache Kafka 4.3.1's own group coordinator: generated request sequences (several
members, static members, joins, syncs, heartbeats, leaves, commits, fetches, expiries, store failures, failovers)
answered by the reference and by Kafka, compared after every step (groupspec/oracle/machine.py). A planted
difference in the reference (a fault switch) must be caught and shrunk to a script of a few requests."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from groupspec.oracle import KafkaOracle
from groupspec.oracle.compare import compare_script
from groupspec.oracle.machine import make_machine

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"


@pytest.fixture(scope="module")
def oracle():
    with KafkaOracle(fetch=True) as o:
        yield o


def test_the_reference_answers_as_kafka_does(oracle, tmp_path):
    # CI: a modest search (each step is one request to the JVM, on a machine shared by many jobs); deep: the
    # profile's own numbers
    here = settings() if DEEP else settings(max_examples=25, stateful_step_count=20)
    run_state_machine_as_test(make_machine(oracle, out_dir=tmp_path),
                              settings=settings(here, deadline=None, suppress_health_check=list(HealthCheck)))


def test_a_planted_difference_is_caught_and_shrunk(oracle, tmp_path):
    fault = frozenset({"heartbeat_none_in_prepare"})  # the reference answers NONE to a Heartbeat while rebalancing
    machine = make_machine(oracle, faults=fault, out_dir=tmp_path)
    with pytest.raises(AssertionError, match="differ at step"):
        # derandomized: the same search on every run (Kafka's random member ids can only move a leader choice,
        # which ends an example early, never the planted difference)
        run_state_machine_as_test(machine, settings=settings(max_examples=400, stateful_step_count=20, deadline=None,
                                                             derandomize=True, suppress_health_check=list(HealthCheck)))
    script = (tmp_path / "oracle-difference.jsonl").read_text()
    steps = [json.loads(ln) for ln in script.splitlines() if ln.strip() and not ln.startswith("#")]
    requests = [s for s in steps if "send" in s]
    assert 1 <= len(requests) <= 4, script              # shrunk: a join or two and the heartbeat
    assert requests[-1]["send"] == "Heartbeat", script
    # the written script replays: the difference is there with the fault and gone without it
    assert compare_script(script, oracle, faults=fault).unexplained
    assert not compare_script(script, oracle).unexplained
