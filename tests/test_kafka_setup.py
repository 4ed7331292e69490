"""The pinned Apache Kafka release: jars fetched once, Java found, the project's Java compiled against them."""
from __future__ import annotations

import subprocess
import sys

import pytest

from groupspec import kafka
from groupspec.kafka import jars


def test_the_java_side_runs_the_pinned_release():
    cp = kafka.classpath()
    out = subprocess.run([kafka.java_binary(), "-cp", cp, "groupspec.kafka.Version"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == kafka.KAFKA_VERSION


def test_a_second_fetch_reuses_the_jars(monkeypatch):
    kafka.ensure_jars()
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)  # no Maven: only a cached fetch can succeed
    assert kafka.ensure_jars() == jars.jars_dir()


def test_missing_java_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(kafka.KafkaSetupError, match=r"^Java not found on JAVA_HOME=.*no-jdk: Apache Kafka 4\.\d+\.\d+ needs"):
        kafka.java_binary()


def test_jars_not_fetched_and_no_maven_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))
    monkeypatch.setattr(jars.shutil, "which", lambda name: None)
    with pytest.raises(kafka.KafkaSetupError, match=r"^Maven \(mvn\) not found"):
        kafka.ensure_jars()
    with pytest.raises(kafka.KafkaSetupError, match=r"not fetched yet"):
        kafka.ensure_jars(fetch=False)
    assert not (tmp_path / f"kafka-{kafka.KAFKA_VERSION}" / "lib").exists()  # nothing half-written


def test_module_command_reports_bad_setup_in_one_line(tmp_path):
    env = {"GROUPSPEC_CACHE": str(tmp_path), "PATH": "/nonexistent", "HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "groupspec.kafka", "path"], capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("groupspec: error: ") and "not fetched yet" in r.stderr
