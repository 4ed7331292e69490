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


def test_a_ctrl_c_while_asking_javas_version_leaves_no_jvm(monkeypatch):
    # Ctrl-C during `java -version` (a realstack run asks it right after making the broker's directory): Python's
    # communicate waits a quarter of a second for a child it assumes got the SIGINT too, then gives up waiting for
    # good (CPython's _sigint_wait_secs); the JVM, which did not get it, must still be killed and reaped before the
    # KeyboardInterrupt goes on (tests/test_realstack_kafka.py's Ctrl-C test once found one still exiting)
    java = kafka.java_binary()  # found first, its version asked the usual way
    started: list[subprocess.Popen] = []

    def interrupted(self, *args, **kwargs):
        started.append(self)
        self._sigint_wait_secs = 0  # what the real communicate leaves after its quarter of a second
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        jars.java_major(java)
    assert started and started[-1].returncode is not None  # killed and reaped: nothing left running


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
