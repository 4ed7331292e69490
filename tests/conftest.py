"""Test configuration: Hypothesis profiles and seed reporting.

Profiles (choose with HYPOTHESIS_PROFILE):
* ``ci``   — the CI profile, the one ``make test`` runs (its time on 2 cores: the README).
* ``deep`` — nightly (`make test-deep`): at least ten times the examples, longer runs.
* ``dev``  — quick local runs.
* ``sweep`` — ``ci`` without shrinking (same examples for the same seed): for sweeping seeds.

Every run is seeded and prints its seed in the header (``hypothesis seed N``): without
``--hypothesis-seed`` one is drawn here (by the xdist controller, which hands it to its workers), so
every randomised Hypothesis test of the run replays with ``pytest --hypothesis-seed=N`` and the same
profile. The ``ci`` and ``deep`` profiles keep no example database, so a run depends on its seed alone
(not on failures an earlier run saved).
"""
from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "ci",
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep",
    max_examples=1000,
    stateful_step_count=200,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=20, stateful_step_count=20, deadline=None, print_blob=True)
# The CI profile without shrinking: for sweeping many seeds (a failure prints its unshrunk schedule,
# which replays as it is; shrinking a stateful conformance failure can take longer than the run).
settings.register_profile(
    "sweep",
    settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Scale factor that non-Hypothesis randomised suites use for their own loops.
DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"


SEED_OPTION = "--hypothesis-seed"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before Hypothesis's own plugin reads it: the run's seed (given, handed down, or drawn now)."""
    if config.getoption(SEED_OPTION, default=None) is not None:
        return
    worker = getattr(config, "workerinput", None)
    seed = worker.get("hypothesis_seed") if worker is not None else None
    if seed is None:
        seed = str(random.SystemRandom().randrange(2**32))
    config.option.hypothesis_seed = str(seed)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # pytest-xdist: the controller hands its seed to each worker
    node.workerinput["hypothesis_seed"] = node.config.getoption(SEED_OPTION)


def pytest_report_header(config: pytest.Config) -> str:
    seed = config.getoption(SEED_OPTION)
    profile = settings.get_current_profile_name()
    return f"hypothesis seed {seed}, profile {profile} (replay: HYPOTHESIS_PROFILE={profile} pytest --hypothesis-seed={seed})"


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """The seed again at the end: the header is not shown under ``-q`` (as ``make test`` runs)."""
    terminalreporter.write_line(pytest_report_header(config))
