"""Public Hypothesis strategies for consumer-group states (the public name of
:mod:`groupspec.assignorcheck.strategies`, where they live and are documented)."""
from __future__ import annotations

from groupspec.assignorcheck.strategies import *  # noqa: F403
from groupspec.assignorcheck.strategies import __all__  # noqa: F401
