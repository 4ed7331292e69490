"""Eager rebalancing: client-side assignment with JoinGroup / SyncGroup (Kafka 0.9+).

The protocol
------------
Every rebalance is a *global barrier*. When a member learns that the group is rebalancing it runs
``onJoinPrepare``, which calls ``onPartitionsRevoked`` with **everything** it owns, and only then sends
JoinGroup. The coordinator waits (``PREPARING_REBALANCE``) until every member has rejoined or the
rebalance timeout drops the ones that did not, bumps the **generation** and answers: the **leader**
(the first member to join, kept while it stays a member) receives every member's subscription and
computes the assignment with the group's assignor. The leader's SyncGroup carries it; the coordinator
stores it (``STABLE``) and hands every member its share in the SyncGroup answers.

Because everyone revoked before joining, and the new assignment is only handed out after the join
phase completed, a partition is released by its old owner *before* it can be given to its new one:
the revoke happens-before the assign, for every partition, in every rebalance. That is why no
partition is ever owned twice (the *exclusive ownership* invariant) — and also why every partition
stops being processed during every rebalance ("stop the world").

Sticky eager assignors (StickyAssignor) still see what each member had: the member reports its
previous assignment in its subscription's userData, although it no longer owns it. The model
reports it the same way (``Record.owned`` for an eager member is that userData claim).
"""
from __future__ import annotations

from .classic import ClassicProtocol


class Eager(ClassicProtocol):
    name = "eager"
    summary = "client-side assignment, revoke everything before JoinGroup (Kafka 0.9+)"
    rebalance = "eager"
