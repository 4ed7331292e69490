"""Classic members inside a consumer group, and the online upgrade and downgrade of one group.

Owns: ``mixed_group.py`` (``MixedConsumerGroup``: Kafka 4.x's conversion of a classic group into a consumer
group and back, and the classic requests answered from a consumer group).

May import: ``groupspec.reference.classic``, ``groupspec.reference.consumer``, ``groupspec.reference.errors``.
The simulation of an upgrade is ``groupspec.reference.sim.migration_sim``.
"""
from __future__ import annotations

from .mixed_group import MIGRATION_FAULTS, POLICIES, ClassicSeed, MigrationRefused, MixedConsumerGroup

__all__ = ["MixedConsumerGroup", "ClassicSeed", "MigrationRefused", "POLICIES", "MIGRATION_FAULTS"]
