"""The group's protocol vote, and the eager -> cooperative upgrade by two rolling bounces (KIP-429).

The protocol
------------
A consumer lists, in its JoinGroup, one *protocol* per assignor it is configured with
(``partition.assignment.strategy``), in its order of preference. Two things follow from that list
(coordinator.md §3.2, §5.3):

* **The member's rebalance protocol** is the highest one that *every* assignor in its list supports
  (EAGER < COOPERATIVE). ``range``, ``roundrobin`` and ``sticky`` support only EAGER;
  ``cooperative-sticky`` supports both. So a consumer that lists ``[range, cooperative-sticky]`` still
  rebalances eagerly: it revokes everything before it joins and reports no owned partitions.
* **The group's assignor** is chosen by a vote at each join completion: the candidates are the
  protocols *every* member lists; each member votes for the first candidate in its own list; most
  votes wins (a tie goes to the leader's preference, as in the reference; Kafka leaves it to hash
  order). A member that lists no protocol every current member lists is refused at JoinGroup with
  ``INCONSISTENT_GROUP_PROTOCOL``, which is fatal: the consumer stops.

The upgrade (docs/upgrade.html 2.4 notes; coordinator.md §5.3) takes two rolling bounces. Every
consumer starts with ``[old]`` (the eager assignor chosen with ``--assignor``). In the **first bounce**
each consumer in turn closes (LeaveGroup) and comes back with ``[old, cooperative-sticky]``: it is
still EAGER, and while every member lists ``old`` first the group keeps voting ``old``. In the
**second bounce** each consumer comes back with ``[cooperative-sticky]`` alone: it is COOPERATIVE,
the only candidate left is ``cooperative-sticky``, and the group switches. During the second bounce
the group mixes eager members (still ``[old, cooperative-sticky]``: they revoke everything before
joining and report nothing owned) with cooperative ones (they keep and report what they own); the
cooperative-sticky assignor withholds every partition that changes owner, so the mix is safe.

Kafka's second line of defence: a leader that runs the COOPERATIVE protocol with an assignor other
than ``cooperative-sticky`` checks the assignor's output (``validateCooperativeAssignment``): a
partition added to one member while still owned by (revoked from) another is an
``IllegalStateException`` thrown from ``poll``; no SyncGroup is sent, and the consumer stops.

In the model
------------
* ``Client.assignors`` is the consumer's configured list: ``OLD`` = ``[old]``, ``BOTH`` =
  ``[old, cooperative-sticky]``, ``NEW`` = ``[cooperative-sticky]``. It is configuration: it survives
  a crash and a restart; only a bounce changes it.
* ``Group.protocol`` is the assignor the last join completion selected (``OLD`` or ``NEW``).
* ``Bounce(i)`` is the operator's rolling-bounce step for one consumer: it closes (revokes, sends
  LeaveGroup) and restarts at once with the next list. It is a perturbation (never forced) but not
  budgeted: every consumer can be bounced twice at most, in any order, so the search also covers an
  operator who starts the second bounce before the first is over (the consumer then meets
  ``INCONSISTENT_GROUP_PROTOCOL``).
* The old assignor's own metadata (the eager ``sticky`` assignor's userData) is not modelled: an eager
  member reports nothing owned, which is what its cooperative-sticky entry carries; eager safety does
  not depend on stickiness.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from . import actions as A
from .assignors import ASSIGNORS
from .classic import ClassicProtocol
from .core import AssignFn, Client, Config, Group, GroupStatus as GS, Id, MemberStatus as MS, Proc, State
from .properties import Kind, Property
from .symmetry import Canonicalizer

OLD, BOTH, NEW = 1, 2, 3  # configured lists; as Group.protocol: OLD = the old assignor, NEW = cooperative-sticky
COOPERATIVE_STICKY = "cooperative-sticky"


@dataclass(frozen=True, slots=True, repr=False)
class Bounce(A.Action):
    fair = False
    verb = "is bounced: closes (LeaveGroup) and restarts with the next assignor list of the upgrade"


class EagerToCooperative(ClassicProtocol):
    name = "eager-to-cooperative"
    summary = "the protocol vote and KIP-429's upgrade: [old] -> [old, cooperative-sticky] -> [cooperative-sticky]"
    rebalance = "eager"  # per member: see member_rebalance
    assignors = ("range", "roundrobin", "sticky")  # the old, eager-only assignor
    # The engine choice (groupspec/checker/engines.py): the compiled kernel has no protocol vote.
    python_only = True
    z3 = False
    # Switches that break the upgrade on purpose (see the broken variants below).
    protocol_rule = "every"  # a member is COOPERATIVE when every assignor it lists supports it ("any": one does)
    validate_assignment = True  # validateCooperativeAssignment on a cooperative leader

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.symmetric = False  # members differ by their configured lists; the old assignor may be range
        self.canon = Canonicalizer(cfg, False)
        self._bounce = tuple(Bounce(i) for i in range(cfg.members))
        self._lists = {OLD: (self.assignor_name,), BOTH: (self.assignor_name, COOPERATIVE_STICKY),
                       NEW: (COOPERATIVE_STICKY,)}

    def protocols(self, code: int) -> tuple[str, ...]:
        """The protocols (assignor names) a consumer configured with list ``code`` sends, preferred first."""
        return self._lists[code]

    # -- the member's rebalance protocol ----------------------------------------------------------
    def member_rebalance(self, c: Client) -> str:
        """EAGER unless every (``protocol_rule``: any) assignor the member lists supports COOPERATIVE."""
        coop = [p == COOPERATIVE_STICKY for p in self.protocols(c.assignors)]
        return "cooperative" if (all(coop) if self.protocol_rule == "every" else any(coop)) else "eager"

    # -- the group's assignor ---------------------------------------------------------------------
    def group_assignor(self, g: Group) -> AssignFn:
        return ASSIGNORS["sticky"] if g.protocol == NEW else self.assignor

    def withholds(self, g: Group) -> bool:
        """cooperative-sticky withholds a partition that changes owner; the old assignor does not."""
        return g.protocol == NEW

    def vote(self, g: Group, clients: list[Client] | tuple[Client, ...], members: list[int]) -> int:
        """``selectProtocol``: the candidates every member lists; each votes its first candidate; most wins."""
        candidates = set(self.protocols(clients[members[0]].assignors))
        for k in members[1:]:
            candidates &= set(self.protocols(clients[k].assignors))
        assert candidates, "a join phase completed with members that share no protocol"
        votes: dict[str, int] = {}
        for k in members:
            choice = next(p for p in self.protocols(clients[k].assignors) if p in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        leader = g.leader if g.leader in members else members[0]
        chosen = next(p for p in self.protocols(clients[leader].assignors) if votes.get(p) == best)
        return NEW if chosen == COOPERATIVE_STICKY else OLD

    def _complete_join(self, g: Group, clients: list[Client]) -> Group:
        # The members that stay (dynamic members that did not rejoin are dropped first) vote.
        stay = [k for k, r in enumerate(g.records) if r is not None and (r.joined or r.static)]
        if stay:
            g = g.but(protocol=self.vote(g, clients, stay))
        return super()._complete_join(g, clients)

    # -- JoinGroup: the protocol check ------------------------------------------------------------
    def _join(self, s: State, i: int) -> State:
        """``supportsProtocols``: a joining member must list a protocol every current member lists."""
        c = s.clients[i]
        g = s.group
        if c.id != Id.CURRENT or g.records[i] is None:
            common = set(self.protocols(c.assignors))
            others = False
            for k, r in enumerate(g.records):
                if r is not None and k != i:
                    others = True
                    common &= set(self.protocols(s.clients[k].assignors))
            if others and not common:
                # INCONSISTENT_GROUP_PROTOCOL: fatal, the consumer stops (having run onJoinPrepare).
                dead = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost, assignors=c.assignors)
                return self._with(s, clients=self._set(s.clients, i, dead))
        if self.member_rebalance(c) == "eager" and c.owned:
            # An eager member revokes everything in onJoinPrepare, so its subscription lists nothing owned
            # (the core's eager member reports its previous assignment, the old sticky assignor's userData).
            s = s.but(clients=self._set(s.clients, i, c.but(owned=0)))
        return super()._join(s, i)

    # -- the leader: validateCooperativeAssignment ------------------------------------------------
    def _receive_join(self, s: State, i: int) -> State:
        g = s.group
        c = s.clients[i]
        if (self.validate_assignment and i == g.leader and self.member_rebalance(c) == "cooperative"
                and g.protocol != NEW and g.target is not None and g.status == GS.COMPLETING_REBALANCE
                and c.inbox is not None and c.inbox.generation == g.generation):
            added = revoked = 0
            for k, r in enumerate(g.records):
                if r is not None:
                    added |= g.target[k] & ~r.owned
                    revoked |= r.owned & ~g.target[k]
            if added & revoked:
                # IllegalStateException from poll: no SyncGroup; the consumer stops.
                dead = Client(proc=Proc.DOWN, topics=c.topics, ghost=c.ghost, assignors=c.assignors)
                return self._with(s, clients=self._set(s.clients, i, dead))
        return super()._receive_join(s, i)

    # -- initial states and the bounce ------------------------------------------------------------
    def init_states(self) -> list[State]:
        """Every consumer is configured with the old assignor alone."""
        return [s.but(clients=tuple(c.but(assignors=OLD) for c in s.clients)) for s in super().init_states()]

    def successors(self, s: State) -> Iterator[tuple[A.Action, State]]:
        for a, t in super().successors(s):
            yield a, self._keep_config(s, t)
        for i, c in enumerate(s.clients):
            if c.proc == Proc.UP and c.assignors < NEW:
                yield self._bounce[i], self._bounced(s, i)

    def _bounced(self, s: State, i: int) -> State:
        """Close (revoke, LeaveGroup) and start again at once with the next list; no budget spent."""
        c = s.clients[i]
        t = self._leave(s, i)
        fresh = Client(proc=Proc.UP, topics=c.topics, assignors=c.assignors + 1)
        return State(group=t.group, clients=self._set(t.clients, i, fresh), budget=s.budget)

    @staticmethod
    def _keep_config(s: State, t: State) -> State:
        """The configured list is configuration: a crash or a restart keeps it (the core forgets it)."""
        if t.clients is s.clients:
            return t
        fixed = None
        for i, (a, b) in enumerate(zip(s.clients, t.clients)):
            if b.assignors != a.assignors:
                fixed = fixed or list(t.clients)
                fixed[i] = b.but(assignors=a.assignors)
        return t if fixed is None else t.but(clients=tuple(fixed))


def cooperative_assignor(proto: EagerToCooperative, s: State) -> str | None:
    """No member runs the cooperative protocol in a generation whose assignor supports only eager.

    A live member that is ``COMPLETING_REBALANCE`` or ``STABLE`` in the group's current generation and
    rebalances cooperatively (it keeps what it owns across a rejoin) must be in a generation whose
    selected assignor is ``cooperative-sticky``: an eager-only assignor hands a still-owned partition
    straight to its new owner. Kafka guarantees it by two rules together: a consumer is COOPERATIVE only
    when every assignor it lists supports it, and the vote picks an assignor every member lists.
    """
    g = s.group
    if g.status not in (GS.COMPLETING_REBALANCE, GS.STABLE) or g.protocol == NEW:
        return None
    for i, c in enumerate(s.clients):
        if (proto.live_member(s, i) and c.generation == g.generation
                and c.status in (MS.COMPLETING_REBALANCE, MS.STABLE)
                and proto.member_rebalance(c) == "cooperative"):
            return (f"{proto.member_name(i)} rebalances cooperatively ({', '.join(proto.protocols(c.assignors))}) "
                    f"in generation {g.generation}, whose assignor {proto.assignor_name} supports only eager")
    return None


COOPERATIVE_ASSIGNOR = Property("cooperative_assignor", Kind.ALWAYS, cooperative_assignor.__doc__ or "",
                                cooperative_assignor)
EagerToCooperative.extra_safety = (COOPERATIVE_ASSIGNOR,)


def upgraded(proto: EagerToCooperative, s: State) -> bool:
    """The upgrade is over: converged, every member in the group, all on cooperative-sticky alone."""
    return (proto.converged(s) and s.group.protocol == NEW
            and proto.members_in_group(s) == proto.cfg.members
            and all(c.assignors == NEW for c in s.clients))

