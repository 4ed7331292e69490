"""Static membership (KIP-345, Kafka 2.3+): ``group.instance.id``.

The protocol
------------
Each consumer carries a stable ``group.instance.id`` (in the model: its slot). The coordinator keeps a
map from instance id to the member id it handed out. When a consumer restarts it joins with **no
member id but a known instance id**: the coordinator *replaces* the member — the record, its stored
assignment and its leadership move to a freshly generated member id — and the **old member id is
fenced**: any later request carrying the instance id with the old member id gets
``FENCED_INSTANCE_ID``, which is fatal for the old process.

If the group is ``STABLE`` and the selected assignor would not change, **there is no rebalance**: the
JoinGroup is answered at once with the current generation and the SyncGroup that follows returns the
stored assignment, so a restart within the session timeout costs nothing but the restart itself. In
``COMPLETING_REBALANCE`` a replacement always forces a new rebalance (KAFKA-9801), and while
``PREPARING_REBALANCE`` it just waits for the join phase like everyone else.

Static members never send LeaveGroup when they close (the Java client checks ``isDynamicMember``);
they leave only when their session times out. At the rebalance timeout, static members that did not
rejoin are **kept** in the new generation with their old metadata (KAFKA-8220).

In this model the static variant rebalances eagerly (as KIP-345's examples do, with the range
assignor's default eager protocol). The ``zombie`` fault shows the fencing: a paused process whose
instance id was taken over by a new process survives as a *ghost* that still believes it owns its
old partitions; it can neither commit nor stay (``GhostFenced``).
"""
from __future__ import annotations

from .classic import ClassicProtocol


class Static(ClassicProtocol):
    name = "static"
    summary = "KIP-345 static membership: a known instance rejoins with no rebalance; the old id is fenced"
    rebalance = "eager"
    static_members = True
