"""Static membership with incremental cooperative rebalancing (KIP-345 with KIP-429).

What Kafka Streams and most modern consumers run: every member has a ``group.instance.id`` (see
:mod:`~groupspec.model.static`) and rebalances cooperatively (see :mod:`~groupspec.model.cooperative`).
"""
from __future__ import annotations

from .classic import ClassicProtocol


class StaticCooperative(ClassicProtocol):
    name = "static-cooperative"
    summary = "KIP-345 with KIP-429: static members that keep owned partitions and withhold moving ones"
    rebalance = "cooperative"
    static_members = True
