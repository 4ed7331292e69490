"""A static leader's metadata refresh through its assignment snapshot (KIP-345 with KIP-814).

The protocol
------------
Only the leader watches the partition counts of the group's topics. When it computes an assignment it
keeps ``assignmentSnapshot``: the metadata it assigned with. Whenever its metadata changes it compares
(``ConsumerCoordinator.rejoinNeededOrPending``): a snapshot that no longer matches makes it rejoin, and the
new round hands the new partitions out.

A static leader that restarts into a ``STABLE`` group is answered, from JoinGroup v9 on (KIP-814, Kafka
3.2), with the member list and ``skipAssignment``: it does not assign (the group keeps the stored
assignment) and sets ``assignmentSnapshot = metadataSnapshot``, the metadata *as it is now*
(``ConsumerCoordinator.onLeaderElected``). A partition added while it was down is in that snapshot but in
nobody's assignment, and no later comparison will see a change: nobody rejoins for it. The group stays
``STABLE`` with the partition unassigned until something else rebalances it — the reference does the
same (docs/conformance.md, finding 3), and now so does the model.

In the model
------------
``Group.snapshot`` is the current leader's snapshot: the partitions of the group's subscribed topics, and above
them (bits ``cfg.partitions`` on) those topics, which the leader then watches (the leader is the only member that keeps one the
protocol reads; a new leader always assigns at the join completion that made it leader). It is taken at
each join completion (what the leader's assignor saw) and when the static leader is replaced in a
``STABLE`` group. ``NoticeMetadata`` is enabled when the partitions of the topics it was taken with differ from
it, not those the members subscribe to now (``ConsumerCoordinator``'s ``metadataSnapshot`` covers the leader's
group subscription, renewed only when it assigns: a static member back in a ``STABLE`` group with a narrower
subscription changes its record, not what the leader watches); the
``static`` variant instead lets the leader notice any partition nobody is assigned, which is why it
converges where Kafka does not.
"""
from __future__ import annotations

from .core import Client, Config, Group, GroupStatus as GS, State
from .static import Static
from .symmetry import Canonicalizer


class StaticLeaderSnapshot(Static):
    name = "static-leader-snapshot"
    summary = ("static, with the leader's assignment snapshot: a static leader back with skipAssignment "
               "never notices a partition added while it was down (as Kafka's)")
    python_only = True  # the compiled kernel has no snapshot (groupspec/checker/engines.py)
    z3 = False
    leader_snapshot = True  # the conformance abstraction reads the reference leader's snapshot

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.symmetric = False  # the symmetry-reduced key has no snapshot: explored without reduction
        self.canon = Canonicalizer(cfg, False)

    def _complete_join(self, g: Group, clients: list[Client]) -> Group:
        """The leader assigns with the metadata it has now: that is its snapshot."""
        g = super()._complete_join(g, clients)
        return g.but(snapshot=self._watched(g)) if g.status != GS.EMPTY else g.but(snapshot=0)

    def _static_replace(self, s: State, clients: list[Client], i: int, c: Client, meta: tuple[int, int, int]) -> State:
        """skipAssignment: a static leader back in a STABLE group takes the metadata as it is now."""
        skip = s.group.status == GS.STABLE and s.group.leader == i
        t = super()._static_replace(s, clients, i, c, meta)
        return t.but(group=t.group.but(snapshot=self._watched(t.group))) if skip else t

    def _watched(self, g: Group) -> int:
        """The snapshot the leader takes: the topics some member subscribes to (its group subscription,
        ``updateGroupSubscription`` in ``onLeaderElected``), above their existing partitions."""
        topics = 0
        for r in g.records:
            if r is not None:
                topics |= r.topics
        return self.cfg.subscribed_partitions(topics, g.partitions) | topics << self.cfg.partitions

    def _unassigned_new(self, s: State) -> bool:
        """rejoinNeededOrPending: the leader's snapshot no longer matches the metadata of the topics it was taken
        with (a member's subscription changed since, a static member back with other topics and answered without a
        rebalance, is not watched: the leader's group subscription is only renewed when it assigns)."""
        g = s.group
        topics = g.snapshot >> self.cfg.partitions
        return g.snapshot != self.cfg.subscribed_partitions(topics, g.partitions) | topics << self.cfg.partitions
