"""Test configuration: Hypothesis profiles and seed reporting.

Profiles (choose with HYPOTHESIS_PROFILE):
* ``ci``   — the CI profile: the whole suite well within 10 minutes on 2 cores.
* ``deep`` — nightly (`make test-deep`): at least ten times the examples, longer runs.
* ``dev``  — quick local runs.

Every run prints the seed Hypothesis uses; replay with ``pytest --hypothesis-seed=N``.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep",
    max_examples=1000,
    stateful_step_count=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=20, stateful_step_count=20, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Scale factor that non-Hypothesis randomised suites use for their own loops.
DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
