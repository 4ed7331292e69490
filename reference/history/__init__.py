"""Designs before the classic protocol, simulated for the pictures and the sweep: the ZooKeeper-era group and
the 0.9 draft's coordinator-side assignment, each a family plug-in of the one actor driver.

Owns: ``zookeeper_group.py`` (``ZkGroup``: consumers coordinating through ZooKeeper watches, Kafka 0.8; its
actors ``ZooKeeper`` and ``ZkConsumer``) and ``coordinator_side_group.py`` (``CoordinatorSideGroup``: the
never-released 0.9 design draft; its actors ``CsCoordinator`` and ``CsConsumer``). Every actor is on the one
contract (``reference/actor.py``); the runs are ``reference/sim/actor_sim.py``'s driver (clock, network,
timers, trace lines), and their traces go to the one trace checker (``groupspec.trace``).

May import: ``groupspec.reference.sim`` (the actor driver, the network, the clock) and the actor contract.
"""
from __future__ import annotations

from .coordinator_side_group import CoordinatorSideGroup, CsConfig, CsConsumer, CsCoordinator
from .zookeeper_group import ZkConfig, ZkConsumer, ZkGroup, ZkRecord, ZooKeeper

__all__ = ["ZkGroup", "ZkConfig", "ZooKeeper", "ZkConsumer", "ZkRecord",
           "CoordinatorSideGroup", "CsConfig", "CsCoordinator", "CsConsumer"]
