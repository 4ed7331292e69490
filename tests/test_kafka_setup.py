"""The pinned Apache Kafka release: jars fetched once, Java found, the project's Java compiled against them."""
from __future__ import annotations

import os
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


def _interrupt_communicate(monkeypatch) -> list[subprocess.Popen]:
    """Make every ``communicate`` end the way CPython's own does on a Ctrl-C: it waits a quarter of a second for a
    child it assumes got the SIGINT too, then gives up waiting for good (``_sigint_wait_secs``) and raises. The
    children it was called on are returned (still running when it raises)."""
    started: list[subprocess.Popen] = []

    def interrupted(self, *args, **kwargs):
        started.append(self)
        self._sigint_wait_secs = 0  # what the real communicate leaves after its quarter of a second
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
    return started


def test_a_ctrl_c_while_asking_javas_version_leaves_no_jvm(monkeypatch):
    # Ctrl-C during `java -version` (a realstack run asks it right after making the broker's directory): the JVM,
    # which did not get the SIGINT, must still be killed and reaped before the KeyboardInterrupt goes on
    # (tests/test_realstack_kafka.py's Ctrl-C test once found one still exiting)
    java = kafka.java_binary()  # found first, its version asked the usual way
    started = _interrupt_communicate(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        jars.java_major(java)
    assert started and started[-1].returncode is not None  # killed and reaped: nothing left running


def test_a_ctrl_c_during_the_jar_fetch_leaves_no_maven_and_nothing_half_written(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))  # nothing fetched here: Maven is started
    started = _interrupt_communicate(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        kafka.ensure_jars()
    assert started and "dependency:copy-dependencies" in started[-1].args
    assert started[-1].returncode is not None  # killed and reaped
    assert not jars.jars_dir().exists() and not list(jars.release_dir().glob(".lib-*"))


def test_a_ctrl_c_while_compiling_leaves_no_javac_and_nothing_half_written(monkeypatch, tmp_path):
    lib = kafka.ensure_jars()  # the real cache's jars, seen from a new cache: only the compile is to do
    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))
    jars.release_dir().mkdir(parents=True)
    jars.jars_dir().symlink_to(lib)
    java = kafka.java_binary()  # found first: its `java -version` is the test above's
    monkeypatch.setattr(jars, "java_binary", lambda: java)
    started = _interrupt_communicate(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        jars.compiled_classes(fetch=False)
    assert started and os.path.basename(started[-1].args[0]) == "javac"
    assert started[-1].returncode is not None  # killed and reaped
    assert not list(jars.release_dir().glob("classes-*")) and not list(jars.release_dir().glob(".classes-*"))


def test_a_child_that_hangs_is_one_line(monkeypatch):
    java = kafka.java_binary()

    def hung(self, *args, **kwargs):
        raise subprocess.TimeoutExpired(self.args, kwargs.get("timeout"))

    monkeypatch.setattr(subprocess.Popen, "communicate", hung)
    with pytest.raises(kafka.KafkaSetupError, match=r"^`.*java -version` did not finish within 30 s$"):
        jars.java_major(java)


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
