"""The real-stack harness with `groupspec serve` as its third coordinator (`--coordinator groupspec`)."""
from __future__ import annotations

import pytest

from groupspec.realstack import COORDINATORS
from groupspec.realstack.harness import run


def test_groupspec_is_a_registered_coordinator():
    assert "groupspec" in COORDINATORS


@pytest.mark.parametrize("scenario, client", [
    ("consumer-leaves-permanently", "confluent-kafka"),  # the small subset in `make test`
    pytest.param("new-consumer-joins", "kafka-python", marks=pytest.mark.deep),
    pytest.param("consumer-crashes", "aiokafka", marks=pytest.mark.deep),
    pytest.param("rolling-restart", "confluent-kafka", marks=pytest.mark.deep),
    pytest.param("static-member-restart", "kafka-python", marks=pytest.mark.deep),
])
def test_harness_scenario_against_groupspec(scenario, client, tmp_path):
    result = run(scenario, client, "groupspec", out_dir=str(tmp_path))
    assert result.partitions == 6, result.notes
    assert result.ok, result.summary()
