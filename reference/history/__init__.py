"""Designs before the classic protocol, simulated for the pictures and the sweep: the ZooKeeper-era group and
the 0.9 draft's coordinator-side assignment.

Owns: ``zookeeper_group.py`` (``ZkGroup``: consumers coordinating through ZooKeeper watches, Kafka 0.8) and
``coordinator_side_group.py`` (``CoordinatorSideGroup``: the never-released 0.9 design draft).

May import: ``groupspec.reference.sim`` (the virtual clock).
"""
from __future__ import annotations

from .coordinator_side_group import CoordinatorSideGroup, CsConfig
from .zookeeper_group import ZkConfig, ZkGroup

__all__ = ["ZkGroup", "ZkConfig", "CoordinatorSideGroup", "CsConfig"]
