"""The real-broker traces the docs quote (docs/traces/apache-kafka/) keep the verdicts the docs give them.

docs/findings.md ("Claims checked against Apache Kafka") and docs/migration.md confirm or correct claims with
these recorded runs of Apache Kafka 4.3.1. If the trace checker changes so that one of them reads otherwise, the
claim in the docs changes with it: this test says which.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.trace import check_events

TRACES = Path(__file__).resolve().parent.parent / "docs" / "traces" / "apache-kafka"

# file -> the properties the docs say the run violates (every other property held)
VERDICTS: dict[str, set[str]] = {
    "downgrade-then-upgrade--java--apache-kafka--cooperative.jsonl": set(),  # migration path 2: zombie overlaps only
    "expired-while-rejoining--java--apache-kafka--cooperative.jsonl": {"exclusive_ownership"},  # path 3, readmitted
    "expired-while-rejoining--java--apache-kafka--cooperative--lost-first.jsonl": set(),  # path 3, lost first
    # Kafka refuses the upgrade (assignment userData) and librdkafka stops with _FATAL: finding 10
    "online-upgrade--confluent-kafka--apache-kafka--cooperative--refused.jsonl": {"convergence"},
    "static-member-left-behind--confluent-kafka--apache-kafka--static-cooperative.jsonl": {"convergence"},
    "static-member-left-behind--java--apache-kafka--static-cooperative.jsonl": {"convergence", "exclusive_ownership"},
    "static-member-restart--confluent-kafka--apache-kafka--consumer-static--session-20s.jsonl": set(),
    "static-member-restart--java--apache-kafka--consumer-static--session-20s.jsonl": set(),
    "subscription-change--kafka-python--apache-kafka--eager.jsonl": set(),  # starved: a notice, not a violation
    "upgrade-mid-round--java--apache-kafka--cooperative.jsonl": {"exclusive_ownership"},  # migration path 1
}


def test_every_recorded_trace_is_listed() -> None:
    assert sorted(p.name for p in TRACES.glob("*.jsonl")) == sorted(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_a_recorded_trace_reads_as_the_docs_say(name: str) -> None:
    path = TRACES / name
    result = check_events([json.loads(line) for line in path.read_text().splitlines() if line.strip()],
                          source=str(path)).to_dict()
    violated = {p["id"] for g in result["groups"] for p in g["properties"] if p["verdict"] == "violated"}
    assert violated == VERDICTS[name]
