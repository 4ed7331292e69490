"""Incremental cooperative rebalancing (KIP-429, Kafka 2.4+): revoke in one round, assign in the next.

The protocol
------------
Members **keep** their partitions when they rejoin, and report them (``ownedPartitions``, with their
generation since Kafka 3.4) in their subscription. The assignor computes a target as usual, but any
partition that would *change owner* is **withheld**: in this round it is given to nobody. A member
that finds, in its SyncGroup answer, that it no longer has a partition it owned revokes just those
(``onPartitionsRevoked(owned - assigned)``) and immediately **rejoins**; in the follow-up round the
partition is no longer owned by anyone, so the assignor hands it to its new owner.

So the happens-before between release and acquisition that eager rebalancing buys with a global
barrier is kept *only for the partitions that move*: partitions that stay put are never revoked and
never paused. Convergence needs a *stable* assignor: one that, given the owned partitions it produced
itself, asks for nothing to move (a sticky one); with a non-sticky assignor the group can rebalance
forever (see the ``cooperative-flappy`` broken variant).
"""
from __future__ import annotations

from .classic import ClassicProtocol


class Cooperative(ClassicProtocol):
    name = "cooperative"
    summary = "KIP-429: keep owned partitions, withhold moving ones, revoke then rejoin"
    rebalance = "cooperative"
