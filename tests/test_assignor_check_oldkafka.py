"""kafka-python 2.0.2 and kafka-python-ng (the 2.0 protocol layout) driven without user code, from packages
installed once under .venv-cache/ (``pip install --target``, a few seconds from PyPI; reused afterwards) and put
first on PYTHONPATH, so the project's own kafka-python 3.x stays untouched. An unknown layout is exit 2.
faust-streaming through groupspec.assignorcheck.faustadapter (deep profile: its install takes about a minute).

Marker ``oldkafka``: these run in ``make test`` (the kafka-python installs are quick); ``-m "not oldkafka"``
leaves them out where PyPI cannot be reached."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CACHE = ROOT / ".venv-cache"
BIN = str(pathlib.Path(sys.executable).with_name("groupspec"))
A = "kafka.coordinator.assignors"

pytestmark = pytest.mark.oldkafka


def _installed(dist: str, spec: str) -> pathlib.Path:
    where = CACHE / dist
    if not (where / "kafka" / "coordinator" / "protocol.py").exists():
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(where),
                            spec], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"pip install {spec} failed: {r.stderr[-500:]}"
    return where


def _check(path: pathlib.Path, target: str, *extra: str) -> tuple[int, dict | None, str]:
    env = dict(os.environ, PYTHONPATH=str(path))
    r = subprocess.run([BIN, "assignor", "check", target, "--examples", "30", "--seed", "1", "--json", *extra],
                       capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr


@pytest.mark.parametrize("dist, spec", [("kafka-python-2.0.2", "kafka-python==2.0.2"),
                                        ("kafka-python-ng", "kafka-python-ng==2.2.3")])
def test_range_and_roundrobin_run_and_miss_static_membership(dist, spec):
    path = _installed(dist, spec)
    for name in ("range:RangePartitionAssignor", "roundrobin:RoundRobinPartitionAssignor"):
        code, doc, err = _check(path, f"{A}.{name}", "--only", "I1", "--only", "I4", "--only", "I7")
        assert code == 1, err
        verdicts = {p["id"]: p["verdict"] for p in doc["properties"]}
        assert verdicts == {"I1": "held", "I4": "held", "I7": "violated"}
        # the 2.0 protocol has no group.instance.id: static members are ordered like dynamic ones
        assert any(s["instance_id"] for s in doc["properties"][2]["counterexample"]["input"]["subscriptions"].values())


def test_kafka_python_2_0_2_sticky_crashes_once_a_member_has_an_assignment():
    path = _installed("kafka-python-2.0.2", "kafka-python==2.0.2")
    code, doc, err = _check(path, f"{A}.sticky.sticky_assignor:StickyPartitionAssignor", "--only", "I11")
    assert code == 1, err
    cx = doc["properties"][0]["counterexample"]
    assert "dict_itemiterator" in cx["explanation"]
    assert any(s["owned"] or s["generation"] >= 0 for s in cx["input"]["subscriptions"].values())


def test_kafka_python_ng_sticky_shares_class_state_between_consumers():
    path = _installed("kafka-python-ng", "kafka-python-ng==2.2.3")
    code, doc, err = _check(path, f"{A}.sticky.sticky_assignor:StickyPartitionAssignor", "--only", "I10i")
    assert code == 1, err
    assert doc["properties"][0]["verdict"] == "violated"
    assert "one process" in doc["properties"][0]["counterexample"]["explanation"]


def test_unknown_kafka_layout_is_exit_2_with_one_line(tmp_path):
    pkg = tmp_path / "kafka"
    (pkg / "coordinator" / "assignors").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '9.9.9'\n")
    (pkg / "coordinator" / "__init__.py").write_text("")
    (pkg / "coordinator" / "assignors" / "__init__.py").write_text("")
    (pkg / "coordinator" / "assignors" / "abstract.py").write_text(
        "class AbstractPartitionAssignor:\n    name = 'x'\n")
    (tmp_path / "mine.py").write_text(
        "from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor\n"
        "class Mine(AbstractPartitionAssignor):\n    name = 'mine'\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = subprocess.run([BIN, "assignor", "check", "mine:Mine"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupspec: error:") and "9.9.9 is not supported" in lines[0]


def _faust() -> pathlib.Path:
    where = CACHE / "faust"
    if not (where / "faust" / "assignor" / "partition_assignor.py").exists():
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(where),
                            "faust-streaming==0.15.3"], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"pip install faust-streaming failed: {r.stderr[-500:]}"
    return where


@pytest.mark.deep  # installing faust-streaming and its dependencies takes about a minute: deep profile only
def test_faust_adapter_drives_faust_and_finds_its_crash_on_out_of_range_claims():
    path = _faust()
    code, doc, err = _check(path, "groupspec.assignorcheck.faustadapter:assignor",
                            "--only", "I1", "--only", "I2", "--only", "I4", "--only", "I11")
    assert code == 1, err
    verdicts = {p["id"]: p["verdict"] for p in doc["properties"]}
    assert verdicts == {"I1": "held", "I2": "held", "I4": "held", "I11": "violated"}
    cx = next(p for p in doc["properties"] if p["id"] == "I11")["counterexample"]
    assert "AssertionError" in cx["explanation"]
    ppt = cx["input"]["partitions_per_topic"]
    assert any(not 0 <= p < ppt.get(t, 0) for s in cx["input"]["subscriptions"].values() for t, p in s["owned"])
