"""The assignor is a parameter of the specification: a function from the group's metadata to a target.

The leader runs the group's selected assignor over what every member reported in its JoinGroup
(subscription, owned partitions, generation) and the partitions that exist. The specification only
needs *some* function with the right shape; these four are small, readable stand-ins for Kafka's
(the real ones live in ``groupspec.reference.assignors``):

* ``sticky``     — balanced and sticky: keep every valid claim (conflicts resolved by generation as
  Kafka's AbstractStickyAssignor resolves them, :func:`resolve_claims`; which of them count,
  :func:`kept_claims`), place the rest on the least-loaded eligible member, then move partitions one at a
  time from the most- to the least-loaded member while the counts differ by more than one.
  Re-running it on its own output changes nothing (it is *stable*), which cooperative rebalancing
  needs in order to converge.
* ``roundrobin`` — Kafka's RoundRobinAssignor: partitions in (topic, partition) order dealt around
  the members in member order, skipping members not subscribed to the topic.
* ``range``      — Kafka's RangeAssignor: per topic, contiguous ranges, the first members in member
  order getting one extra partition.
* ``flappy``     — BROKEN on purpose: round-robin that starts one member further than whoever owns
  partition 0 now. It is not stable: under cooperative rebalancing every round moves partitions
  again, so the group never converges (the endless-rebalance failure KIP-429 warns about).

Member order is slot order (slots stand for member ids; static members' slots are their
instance ids). All functions are deterministic.
"""
from __future__ import annotations

from typing import Sequence

from .core import AssignFn, Config, MemberMeta, bits

# Assignors that support the COOPERATIVE rebalance protocol (``supportedProtocols``): Kafka's
# RangeAssignor and RoundRobinAssignor support only EAGER, so a consumer configured with them runs the
# eager protocol, and a group cannot run KIP-429 with them (coordinator.md §5.6; a custom assignor
# that claims COOPERATIVE but moves a still-owned partition is refused by validateCooperativeAssignment).
# ``sticky`` stands for CooperativeStickyAssignor; ``flappy`` is the broken one that claims it.
COOPERATIVE_CAPABLE = {"sticky", "flappy"}
EQUIVARIANT = {"sticky"}  # assignors whose result does not depend on member or partition labels
# (up to ties), so the explorer may reduce by symmetry; see groupspec.model.symmetry.


def _eligible(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    return {slot: cfg.subscribed_partitions(topics, existing) for slot, topics, _o, _g, _s in members}


def resolve_claims(members: Sequence[MemberMeta], claimable: int) -> tuple[dict[int, int], int]:
    """Conflicting ownership claims resolved as Kafka 4.3.1's ``AbstractStickyAssignor.allSubscriptionsEqual``
    resolves them (per partition since KAFKA-14639; assignors.md, "Resolving conflicting ownership claims").

    Members are walked in slot order (Kafka walks its ``HashMap`` of member ids; slots stand for member ids),
    each member's claims on ``claimable`` partitions (Kafka: topics that exist and that somebody subscribes
    to) one by one. Per partition Kafka remembers its *current claimant*:

    * the first claimant keeps the partition and becomes its current claimant;
    * a later claimant of the *same* generation marks it multiply claimed (KAFKA-12984), takes it away from the
      current claimant, does not keep it either, and becomes the current claimant;
    * a later claimant of a *higher* generation takes it over (from whoever holds it) and becomes the current
      claimant;
    * a later claimant of a *lower* generation is ignored.

    The multiply-claimed mark is never cleared: generation 5, then 5, then 7 leaves the generation-7 member
    keeping the partition *and* the mark set (what the mark then does depends on the path: :func:`kept_claims`).

    Returns ``(kept, multiply_claimed)``: per slot the partitions it keeps (Kafka's
    ``consumerToOwnedPartitions``), and the multiply-claimed partitions (``partitionsWithMultiplePreviousOwners``).
    """
    kept = {slot: 0 for slot, *_ in members}
    current: dict[int, tuple[int, int]] = {}  # partition -> (slot, generation) of its current claimant
    multi = 0
    for slot, _t, owned, generation, _s in members:
        for p in bits(owned & claimable):
            if p not in current:  # the first claimant
                kept[slot] |= 1 << p
                current[p] = (slot, generation)
                continue
            other, other_generation = current[p]
            if generation > other_generation:  # a higher generation takes it over
                kept[other] &= ~(1 << p)
                kept[slot] |= 1 << p
                current[p] = (slot, generation)
            elif generation == other_generation:  # the same generation: nobody keeps it, and it is marked
                multi |= 1 << p
                kept[other] &= ~(1 << p)
                current[p] = (slot, generation)
    return kept, multi


def kept_claims(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    """What the sticky assignor keeps of the members' claims before it places anything (its step 1).

    The claims resolved by :func:`resolve_claims` over the existing partitions of the topics somebody subscribes
    to; then, as Kafka 4.3.1's two paths do:

    * every member subscribes to the same topics (Kafka's constrained path, ``ConstrainedAssignmentBuilder.
      assignOwnedPartitions``): a multiply-claimed partition is removed from every member's owned partitions,
      even from a higher generation's that took it over after the mark was set;
    * otherwise (the general path, ``GeneralAssignmentBuilder``, which is not given the multiply-claimed set):
      each member keeps what it resolved to, less the partitions of topics it no longer subscribes to.

    (On the constrained path every claimable partition is of a topic every member subscribes to.)
    """
    elig = _eligible(cfg, members, existing)
    everything = 0
    for m in elig.values():
        everything |= m
    kept, multi = resolve_claims(members, everything)
    constrained = len({topics for _slot, topics, *_ in members}) == 1  # Kafka's allSubscriptionsEqual
    out = {slot: 0 for slot in elig}
    for slot, mask in kept.items():
        for p in bits(mask):
            if constrained and multi >> p & 1:
                continue  # the constrained path drops a multiply-claimed partition from every member
            if elig[slot] >> p & 1:
                out[slot] |= 1 << p
    return out


def sticky(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    elig = _eligible(cfg, members, existing)
    if not members:
        return {}
    # 1. Keep the valid claims: conflicts resolved by generation (resolve_claims), then Kafka's path's rule.
    out = kept_claims(cfg, members, existing)
    # 2. Place unassigned partitions: fewest candidates first, then the least-loaded eligible member.
    everything = 0
    for m in elig.values():
        everything |= m
    taken = 0
    for m in out.values():
        taken |= m
    free = bits(everything & ~taken)
    free.sort(key=lambda p: (sum(1 for m in elig.values() if m >> p & 1), p))
    for p in free:
        slot = min((s for s in elig if elig[s] >> p & 1), key=lambda s: (out[s].bit_count(), s))
        out[slot] |= 1 << p
    # 3. Balance: move one partition at a time from a member holding 2+ more than an eligible one.
    while True:
        moved = False
        order = sorted(out, key=lambda s: (-out[s].bit_count(), s))
        for a in order:
            for b in sorted(out, key=lambda s: (out[s].bit_count(), s)):
                if out[a].bit_count() <= out[b].bit_count() + 1:
                    break
                movable = out[a] & elig[b]
                if movable:
                    p = movable.bit_length() - 1
                    out[a] &= ~(1 << p)
                    out[b] |= 1 << p
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return out


def roundrobin(cfg: Config, members: Sequence[MemberMeta], existing: int, start: int = 0) -> dict[int, int]:
    elig = _eligible(cfg, members, existing)
    order = [slot for slot, *_ in members]
    out = {slot: 0 for slot in order}
    if not order:
        return out
    everything = 0
    for m in elig.values():
        everything |= m
    i = start % len(order)
    for p in bits(everything):
        while not (elig[order[i]] >> p & 1):
            i = (i + 1) % len(order)
        out[order[i]] |= 1 << p
        i = (i + 1) % len(order)
    return out


def range_(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    out = {slot: 0 for slot, *_ in members}
    for t, tmask in enumerate(cfg.topic_masks):
        subs = [slot for slot, topics, *_ in members if topics >> t & 1]
        parts = bits(tmask & existing)
        if not subs or not parts:
            continue
        q, r = divmod(len(parts), len(subs))
        i = 0
        for k, slot in enumerate(subs):
            n = q + (1 if k < r else 0)
            for p in parts[i : i + n]:
                out[slot] |= 1 << p
            i += n
    return out


def flappy(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    order = [slot for slot, *_ in members]
    owner0 = next((k for k, (_s, _t, owned, _g, _x) in enumerate(members) if owned & 1), -1)
    return roundrobin(cfg, members, existing, start=owner0 + 1)


ASSIGNORS: dict[str, AssignFn] = {
    "sticky": sticky,
    "roundrobin": roundrobin,
    "range": range_,
    "flappy": flappy,
}
