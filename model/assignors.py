"""The assignor is a parameter of the specification: a function from the group's metadata to a target.

The leader runs the group's selected assignor over what every member reported in its JoinGroup
(subscription, owned partitions, generation) and the partitions that exist. The specification only
needs *some* function with the right shape; these four are small, readable stand-ins for Kafka's
(the real ones live in ``groupspec.reference.assignors``):

* ``sticky``     — balanced and sticky: keep every valid claim (conflicts resolved by generation, as
  Kafka's AbstractStickyAssignor: the higher generation wins, equal generations drop the partition
  from both), place the rest on the least-loaded eligible member, then move partitions one at a
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


def sticky(cfg: Config, members: Sequence[MemberMeta], existing: int) -> dict[int, int]:
    elig = _eligible(cfg, members, existing)
    out = {slot: 0 for slot in elig}
    if not members:
        return out
    # 1. Resolve claims by generation (AbstractStickyAssignor.allSubscriptionsEqual, KAFKA-12984).
    claim: dict[int, tuple[int, int]] = {}
    dropped = 0
    for slot, _t, owned, gen, _s in members:
        for p in bits(owned & existing):
            if p not in claim:
                claim[p] = (slot, gen)
            else:
                _o, og = claim[p]
                if gen > og:
                    claim[p] = (slot, gen)
                    dropped &= ~(1 << p)
                elif gen == og:
                    dropped |= 1 << p
    for p, (slot, _g) in claim.items():
        if not (dropped >> p & 1) and elig[slot] >> p & 1:
            out[slot] |= 1 << p
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
