"""Static membership with incremental cooperative rebalancing (KIP-345 with KIP-429).

What Kafka Streams and most modern consumers run: every member has a ``group.instance.id`` (see
:mod:`~groupspec.model.static`) and rebalances cooperatively (see :mod:`~groupspec.model.cooperative`).
Nothing else changes: the two switches together.

What Kafka does not guarantee here (the checker finds both; the reference simulator, which never
imports this package, reproduces both, so they are the protocol's and not the encoding's):

* **Two owners after a missed generation.** A static member that has not rejoined when the rebalance
  timeout completes the join phase is kept (KAFKA-8220) with the metadata of its previous JoinGroup,
  which does not list what it was given since; the new generation hands some of it to others. When
  the member comes back (a pause, or a slow poll loop, within ``max.poll.interval.ms`` of its last
  poll) it rejoins keeping and reporting those partitions at its old generation; the sticky
  assignor's claim resolution leaves them with the newer owners, and it revokes them at its next
  SyncGroup answer. Until then two members own them; it cannot commit them (not STABLE, stale
  generation). Scenario ``static-member-left-behind``.
* **Withheld partitions orphaned.** A static member that restarts between a cooperative round's
  SyncGroup and its answer is replaced without a rebalance, gets its stored assignment, has nothing
  to revoke, so nobody rejoins and the partitions that round withheld have no owner until another
  event rebalances the group (a deadlock of the model). Scenario ``static-restart-in-cooperative-round``.
"""
from __future__ import annotations

from .classic import ClassicProtocol


class StaticCooperative(ClassicProtocol):
    name = "static-cooperative"
    summary = "KIP-345 with KIP-429: static members that keep owned partitions and withhold moving ones"
    rebalance = "cooperative"
    static_members = True
