"""The pinned Kafka release is stated where docs/versions.md says it is: the model's and the reference's front
doors, the versions page, and the pom the jars are resolved from, all equal to groupspec.kafka.KAFKA_VERSION."""
from __future__ import annotations

import pathlib
import re

import groupspec.model
import groupspec.reference
from groupspec.kafka import KAFKA_VERSION

ROOT = pathlib.Path(__file__).parents[1]


def _stated(text: str) -> set[str]:
    return set(re.findall(r"Apache Kafka (\d+\.\d+\.\d+)", text))


def test_the_model_and_the_reference_state_the_pinned_release():
    assert _stated(groupspec.model.__doc__ or "") == {KAFKA_VERSION}
    assert _stated(groupspec.reference.__doc__ or "") == {KAFKA_VERSION}


def test_the_versions_page_and_the_pom_follow_the_pinned_release():
    page = (ROOT / "docs" / "versions.md").read_text()
    assert f"**{KAFKA_VERSION}**" in page and "`KAFKA_VERSION`" in page
    pom = (ROOT / "groupspec" / "kafka" / "pom.xml").read_text()
    assert f"<kafka.version>{KAFKA_VERSION}</kafka.version>" in pom or f"<version>{KAFKA_VERSION}</version>" in pom
    # every row of the consumer-protocol table that names a release the project only observed says so
    for line in page.splitlines():
        if line.startswith("| ") and "present in" in line:
            assert f"present in {KAFKA_VERSION}" in line, line
