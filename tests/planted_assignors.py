"""Assignors with one planted bug each, and their correct controls (tests/test_assignor_check_planted.py).

Each bug is one that the smaller strategies or the in-process checks could not see:

* ``StringGenerations``: a cooperative assignor that compares generations as strings ("9" > "10");
* ``string_sorted_range``: Range laying partitions out in string order ("10" < "2"), as pykafka did;
* ``ClassStateAssignor``: an aiokafka-style assignor keeping the member's previous assignment in a class
  attribute (as aiokafka's sticky assignor does), so two consumers in one process mix their states;
* ``hash_seed_roundrobin``: deals partitions topic by topic in the iteration order of a ``set`` of topic names,
  which depends on the process's ``PYTHONHASHSEED`` (as faust-streaming's assignor does).

The controls differ from their planted twin in exactly the buggy line.
"""
from __future__ import annotations

import json
from typing import Any

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata

from groupspec.reference.assignors import get


def _valid(ppt: dict[str, int], topic: str, part: int) -> bool:
    return topic in ppt and 0 <= part < ppt[topic]


def _least_loaded(out: dict[str, list], members: list[str]) -> str:
    return min(members, key=lambda m: (len(out[m]), m))


# ------------------------------------------------------------------------------ generations as strings


class _GenerationCooperative:
    """Cooperative: the unique top-generation claimant keeps a partition; contested or orphaned claims are
    withheld for one round; unclaimed partitions go to the least-loaded subscriber."""

    protocol = "cooperative"
    as_string = False

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in subs}
        claims: dict[tuple[str, int], list[tuple[Any, str]]] = {}
        for m in sorted(subs):
            gen = subs[m].get("generation", -1)
            for t, p in subs[m].get("owned") or ():
                if _valid(ppt, t, p):
                    claims.setdefault((t, p), []).append((str(gen) if self.as_string else gen, m))
        topics = sorted({t for s in subs.values() for t in s.get("topics") or () if t in ppt})
        for t in topics:
            takers = sorted(m for m, s in subs.items() if t in (s.get("topics") or ()))
            for p in range(ppt[t]):
                cs = claims.get((t, p))
                if not cs:
                    out[_least_loaded(out, takers)].append((t, p))
                    continue
                top = max(g for g, _ in cs)
                winners = [m for g, m in cs if g == top]
                if len(winners) == 1 and winners[0] in takers:
                    out[winners[0]].append((t, p))
        return out


class StringGenerations(_GenerationCooperative):
    name = "string-generations"
    as_string = True


class IntGenerations(_GenerationCooperative):
    name = "int-generations"


string_generations = StringGenerations()
int_generations = IntGenerations()


# ------------------------------------------------------------------------- partitions sorted as strings


class _RangeLayout:
    """Kafka's Range (the project's), with partition *positions* mapped onto a layout order of partitions."""

    name = "range"
    protocol = "eager"
    key: Any = int

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        base = get("range").assign(ppt, subs)
        layout = {t: sorted(range(max(0, n)), key=self.key) for t, n in ppt.items()}
        return {m: [(t, layout[t][p]) for t, p in parts] for m, parts in base.items()}


class StringSortedRange(_RangeLayout):
    key = str


class NumberSortedRange(_RangeLayout):
    key = int


string_sorted_range = StringSortedRange()
number_sorted_range = NumberSortedRange()


# ------------------------------------------------------------------------------ class-level shared state


class _RememberingAssignor(AbstractPartitionAssignor):
    """aiokafka-style eager assignor: each member reports its previous assignment in its user data; the leader
    lets members keep what they report (first in member-id order wins), then deals the rest."""

    name = "remembering"
    version = 0
    class_level = False
    _owned: list[list[Any]] = []

    def on_assignment(self, assignment: Any) -> None:
        owned = [[t, p] for t, ps in assignment.assignment for p in ps]
        if self.class_level:
            type(self)._owned = owned   # the bug: every instance in the process shares it
        else:
            self._owned = owned

    def metadata(self, topics: Any) -> Any:
        return ConsumerProtocolMemberMetadata(self.version, sorted(topics), json.dumps(self._owned).encode())

    @classmethod
    def assign(cls, cluster: Any, members: dict[str, Any]) -> dict[str, Any]:
        subs = {m: set(md.subscription) for m, md in members.items()}
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        taken: set[tuple[str, int]] = set()
        for m in sorted(members):
            for t, p in json.loads(members[m].user_data or b"[]"):
                parts = cluster.partitions_for_topic(t)
                if t in subs[m] and parts and p in parts and (t, p) not in taken:
                    out[m].append((t, p))
                    taken.add((t, p))
        for t in sorted(set().union(*subs.values())):
            takers = sorted(m for m in members if t in subs[m])
            for p in sorted(cluster.partitions_for_topic(t) or ()):
                if (t, p) not in taken:
                    out[_least_loaded(out, takers)].append((t, p))
        res = {}
        for m, parts in out.items():
            by_topic: dict[str, list[int]] = {}
            for t, p in sorted(parts):
                by_topic.setdefault(t, []).append(p)
            res[m] = ConsumerProtocolMemberAssignment(cls.version, sorted(by_topic.items()), b"")
        return res


class ClassStateAssignor(_RememberingAssignor):
    class_level = True
    _owned: list[list[Any]] = []


class InstanceStateAssignor(_RememberingAssignor):
    class_level = False


# ------------------------------------------------------------------------------- hash-seed iteration


def _deal(ppt: dict[str, int], subs: dict[str, dict[str, Any]], topic_order: list[str],
          rotate: int = 0) -> dict[str, list]:
    out: dict[str, list[tuple[str, int]]] = {m: [] for m in subs}
    members = sorted(subs)
    i = rotate
    for t in topic_order:
        for p in range(ppt.get(t, 0)):
            for _ in range(len(members)):
                m = members[i % len(members)]
                i += 1
                if t in (subs[m].get("topics") or ()):
                    out[m].append((t, p))
                    break
    return out


def hash_seed_roundrobin(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    topics = set(sorted({t for s in subs.values() for t in s.get("topics") or ()}))  # the bug: set order
    return _deal(ppt, subs, list(topics))


def sorted_roundrobin(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    topics = sorted({t for s in subs.values() for t in s.get("topics") or ()})
    return _deal(ppt, subs, topics)


# ---------------------------------------------------------------------------------------- racks (KIP-881)
# Rack-aware range variants, each built on the project's rack-aware range by changing what it is told, so the
# planted bug is exactly one rule of KIP-881 broken.

_PHANTOM = "~phantom"  # a rack no consumer and no replica is in


class _RackRange:
    name = "range"
    protocol = "eager"
    rack_aware = True

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]],
               partition_racks: dict[str, list[list[str]]] | None = None) -> dict[str, list]:
        return get("range").assign(ppt, subs, partition_racks=partition_racks)


class RackAwareRange(_RackRange):
    """The correct twin: the project's rack-aware range as it is."""


class RackModeAlwaysRange(_RackRange):
    """Uses its rack logic even when every partition sits on the same racks (KIP-881's third condition
    ignored): planted by adding a rack nobody is in to partition 0's replicas, which turns the mode on."""

    def assign(self, ppt, subs, partition_racks=None):
        racks = {t: [list(r) for r in rows] for t, rows in (partition_racks or {}).items()}
        for rows in racks.values():
            if rows:
                rows[0] = rows[0] + [_PHANTOM]
        return super().assign(ppt, subs, racks if partition_racks is not None else None)


class RacklessMatchesNothingRange(_RackRange):
    """Treats a consumer without a rack as matching no partition (Kafka: it matches every partition)."""

    def assign(self, ppt, subs, partition_racks=None):
        any_rack = any(s.get("rack") for s in subs.values())
        told = {m: {**s, "rack": s.get("rack") or (_PHANTOM if any_rack else None)} for m, s in subs.items()}
        return super().assign(ppt, told, partition_racks)


class LocalityOverBalanceRange(_RackRange):
    """Moves a mis-aligned partition to a consumer on its rack even past that consumer's quota (KIP-881:
    balance wins over rack alignment)."""

    def assign(self, ppt, subs, partition_racks=None):
        out = {m: list(ps) for m, ps in super().assign(ppt, subs, partition_racks).items()}
        for m, ps in out.items():
            for t, p in ps:
                rows = (partition_racks or {}).get(t, [])
                here = set(rows[p]) if p < len(rows) else set()
                if subs[m].get("rack") and subs[m]["rack"] not in here:
                    to = next((o for o in sorted(out) if o != m and subs[o].get("rack") in here
                               and t in (subs[o].get("topics") or [])), None)
                    if to is not None:
                        ps.remove((t, p))
                        out[to] = sorted(out[to] + [(t, p)])
                        return out
        return out


# ---------------------------------------------------------------------- issue #34: the generator's blind spots
# Each planted bug below fires only on inputs the earlier generator drew never or almost never (issue #34); its
# correct twin differs in exactly the buggy rule.


class _ArrivalCooperative:
    """Cooperative, resolving each partition's claims walking the members in the order they arrive (the
    subscription map's order, as Java's sticky assignors do): the unique top-generation claimant keeps it;
    contested or orphaned claims are withheld for one round; unclaimed partitions go to the least-loaded
    subscriber."""

    protocol = "cooperative"
    name = "arrival-cooperative"

    def resolve(self, subs: dict[str, dict[str, Any]], tp: tuple[str, int], cs: list[tuple[int, str]]) -> str | None:
        """The member that keeps ``tp`` (claims ``(generation, member)`` in arrival order), or None."""
        top = max(g for g, _ in cs)
        winners = [m for g, m in cs if g == top]
        return winners[0] if len(winners) == 1 else None

    def generation(self, sub: dict[str, Any]) -> int:
        return sub.get("generation", -1)

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in subs}
        claims: dict[tuple[str, int], list[tuple[int, str]]] = {}
        for m, s in subs.items():
            for t, p in s.get("owned") or ():
                if _valid(ppt, t, p):
                    claims.setdefault((t, p), []).append((self.generation(s), m))
        topics = sorted({t for s in subs.values() for t in s.get("topics") or () if t in ppt})
        for t in topics:
            takers = sorted(m for m, s in subs.items() if t in (s.get("topics") or ()))
            for p in range(ppt[t]):
                cs = claims.get((t, p))
                if not cs:
                    out[_least_loaded(out, takers)].append((t, p))
                    continue
                keeper = self.resolve(subs, (t, p), cs)
                if keeper in takers:
                    out[keeper].append((t, p))
        return out


class ArrivalCooperative(_ArrivalCooperative):
    """The correct twin of the three below."""


class UnknownGenerationTrusted(_ArrivalCooperative):
    """Treats a claim sent with generation -1 (a member that reset its generation but kept its partitions) as
    the newest, so it keeps the partition against the current owner."""

    def generation(self, sub: dict[str, Any]) -> int:
        g = sub.get("generation", -1)
        return 2**31 if g < 0 else g  # the bug: unknown counts as newest


class FirstClaimCompared(_ArrivalCooperative):
    """Compares each later claim with the *first* claim's generation, not with the best so far: wrong only when
    claims arrive oldest, newest, middle (two missed rebalances, members in join order)."""

    def resolve(self, subs, tp, cs):
        first_gen, keeper = cs[0]
        best, contested = first_gen, False
        for g, m in cs[1:]:
            if g == best:
                contested = True
            elif g > first_gen:  # the bug: should be g > best
                keeper, best, contested = m, g, False
        return None if contested else keeper


class StaleUnsubscribedDropsTop(_ArrivalCooperative):
    """Cleaning up a partition with several stale claims, one from a member that no longer subscribes to the
    topic, it drops the last claim in generation order (meaning the unsubscribed one): the current owner's."""

    def resolve(self, subs, tp, cs):
        top = max(g for g, _ in cs)
        stale = [(g, m) for g, m in cs if g < top]
        if len(stale) >= 2 and any(tp[0] not in (subs[m].get("topics") or ()) for _, m in stale):
            cs = sorted(cs)[:-1]  # the bug
        return super().resolve(subs, tp, cs)


arrival_cooperative = ArrivalCooperative()
unknown_generation_trusted = UnknownGenerationTrusted()
first_claim_compared = FirstClaimCompared()
stale_unsubscribed_drops_top = StaleUnsubscribedDropsTop()


class _MemberCountSticky:
    """Eager sticky: the project's sticky assignor, with a planted quota slip when a member holds exactly as
    many partitions as there are members (it compares the member count where it meant the quota)."""

    name = "member-count-sticky"
    protocol = "eager"
    planted = False

    def assign(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        out = {m: list(ps) for m, ps in get("sticky").assign(ppt, subs).items()}
        if self.planted and len(subs) >= 2:
            for m, s in subs.items():
                held = {(t, p) for t, p in s.get("owned") or () if _valid(ppt, t, p)}
                if len(held) == len(subs) and out[m]:
                    out[m] = out[m][:-1]  # the bug: one partition too many "revoked", given to nobody
                    break
        return out


class MemberCountSticky(_MemberCountSticky):
    planted = True


class PlainSticky(_MemberCountSticky):
    name = "plain-sticky"


member_count_sticky = MemberCountSticky()
plain_sticky = PlainSticky()

#: ``hash(SALT) & 1`` is 0 under PYTHONHASHSEED 1, 2, 3 and 5 and 1 under 4, 6, 7 and 8 (found by a search
#: over ``rotate-0``, ``rotate-1``, ...; CPython's SipHash of str)
SALT = "rotate-48"


def hash_parity_roundrobin(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    """Round robin starting at a member picked by a salted hash: the same under hash seeds 1 and 2."""
    topics = sorted({t for s in subs.values() for t in s.get("topics") or ()})
    return _deal(ppt, subs, topics, rotate=hash(SALT) & 1)


def layout_assign(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    """A plain function, named for nothing, that is Kafka's Range with partitions laid out in string order (as
    ``string_sorted_range``): only its behaviour says it is a Range."""
    return StringSortedRange().assign(ppt, subs)


def plain_assign(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    """``layout_assign``'s correct twin: Kafka's Range, named for nothing."""
    return NumberSortedRange().assign(ppt, subs)


def hangs_when_idle(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    """Range with partitions in string order (an I7 bug on topics of 11+ partitions) that also loops forever
    when a member would get nothing (more members than partitions): a hang does not hide the other bug."""
    out = StringSortedRange().assign(ppt, subs)
    if any(not ps for ps in out.values()):
        while True:
            pass
    return out


hangs_when_idle.name = "hangs-when-idle-range"  # type: ignore[attr-defined]


def pairwise_balance_roundrobin(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list]:
    """Kafka's RoundRobin, then a balance check that compares every pair of each topic's subscribers: fast at
    200 members, past any sensible budget at 2,000 (the shape of KAFKA-15106's useless reassignment loops)."""
    out = get("roundrobin").assign(ppt, subs)
    load = {m: len(ps) for m, ps in out.items()}
    unbalanced = 0
    for _ in range(4):  # "until stable": a fixed number of passes over every pair
        for t in sorted({t for s in subs.values() for t in s.get("topics") or ()}):
            takers = [m for m, s in subs.items() if t in (s.get("topics") or ())]
            for a in takers:
                for b in takers:
                    if load[a] > load[b] + 1:
                        unbalanced += 1  # noted, nothing done about it
    return out
