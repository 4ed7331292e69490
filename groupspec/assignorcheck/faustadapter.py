"""Adapter for faust-streaming's partition assignor (``faust.assignor.PartitionAssignor``).

Theory of operation
-------------------
faust's assignor cannot be loaded directly: its constructor needs the faust ``app`` (``PartitionAssignor(app,
replicas=0)``), and it reads the app's table manager, its ``canonical_url``, its sensors and its tracer. This
module builds it around the smallest app that does what a worker without tables does:

* no tables (``app.tables.data`` is empty, no changelog topics), so the assignment concerns source topics only;
* each member is a worker with its own ``canonical_url`` (``http://<member id>:6066/``);
* no tracer, and sensors that record nothing.

Members are driven as faust's consumer does through aiokafka: each member's instance learns its previous active
partitions (the ``ClientAssignment`` faust keeps between rebalances) and writes its JoinGroup metadata with
``metadata(topics)``, encoded and decoded as on the wire; a fresh leader instance runs ``assign(cluster,
members)``; the result is decoded from ``ConsumerProtocolMemberAssignment``.

Use it as the target: ``groupspec assignor check groupspec.assignorcheck.faustadapter:assignor`` (faust-streaming
must be importable; with ``replicas`` standby replicas: ``...faustadapter:assignor_with_standbys``). faust assigns
co-subscribed topics with the same partition count together (co-partitioning), so a member subscribes to its
topics as a unit; declare ``--topics-per-member 1`` to keep to the inputs faust's own tests use.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class _Sensors:
    def on_assignment_start(self, assignor: Any) -> dict[str, Any]:
        return {}

    def on_assignment_error(self, assignor: Any, state: Any, exc: BaseException) -> None:
        return None

    def on_assignment_completed(self, assignor: Any, state: Any) -> None:
        return None


def _app(member_id: str) -> Any:
    from yarl import URL

    tables = SimpleNamespace(data={}, changelog_topics=set())
    return SimpleNamespace(tables=tables, tracer=None, sensors=_Sensors(),
                           conf=SimpleNamespace(canonical_url=URL(f"http://{_host(member_id)}:6066/")))


def _host(member_id: str) -> str:
    return "m" + member_id.encode("utf-8").hex()


class FaustAssignor:
    """A form-1 candidate driving faust's ``PartitionAssignor`` (eager; faust has no cooperative protocol)."""

    protocol = "eager"

    def __init__(self, replicas: int = 0):
        self.replicas = replicas
        self.name = f"faust (replicas={replicas})"

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        from aiokafka.coordinator.protocol import ConsumerProtocol
        from faust.assignor.client_assignment import ClientAssignment
        from faust.assignor.partition_assignor import PartitionAssignor

        from .load import FakeCluster, decode_legacy

        members: dict[str, Any] = {}
        for mid, sub in subs.items():
            inst = PartitionAssignor(_app(mid), replicas=self.replicas)
            actives: dict[str, list[int]] = {}
            for t, p in sub.get("owned") or ():
                actives.setdefault(t, []).append(int(p))
            inst._assignment = ClientAssignment(actives=actives, standbys={})
            meta = inst.metadata(set(sub.get("topics") or ()))
            members[mid] = ConsumerProtocol.METADATA.decode(meta.encode())
        leader = PartitionAssignor(_app(next(iter(subs), "leader")), replicas=self.replicas)
        raw = leader.assign(FakeCluster(ppt), members)
        return decode_legacy(raw, "aiokafka")


assignor = FaustAssignor()
assignor_with_standbys = FaustAssignor(replicas=1)
