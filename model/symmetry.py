"""State keys for the explorer: generations up to a shift, members and partitions up to symmetry.

Theory of operation
-------------------
The explorer stores one state per *key*. Two reductions make keys coarser than states, and both are
sound for every property of the registry (they are all blind to the reduced detail):

1. **Generations up to a shift.** The protocol only ever compares generations for equality (a request
   carries the member's generation, the coordinator checks it against its own) and for order (the
   sticky assignor prefers the higher generation's claim). Shifting every generation in a state by the
   same amount therefore changes no behaviour, so the key records each generation *relative to the
   group's* (clamped a few generations back: older than that is just "old"). Without this, every
   rebalance would make a new state and the state space would be infinite.
2. **Member and partition symmetry** (only for assignors whose answer does not depend on labels, up to
   ties: ``sticky``). Member slots are interchangeable, and so are the partitions of one topic. The key
   sorts slots and, within each topic, partitions by what they look like, so that states that differ
   only by a renaming usually get the same key. The key is *sound* (it only ever merges states of the
   same orbit) but not guaranteed canonical (two states of one orbit can, through ties, get two keys);
   that costs a little reduction, never correctness.

   Where the assignor breaks a tie by slot or partition number, the explored system is the one whose
   tie-breaks are made in the labels of the first state of each orbit the explorer met. That is still a
   legitimate deterministic assignor, and the properties do not depend on tie-breaks.

3. **Dead fields forgotten** (opt-in: :func:`forget_dead_fields`, ``groupspec check --forget-dead``).
   Some fields can no longer influence any future step or any property; the key then records a fixed
   value for them (:func:`forget_dead`). Sound only where the argument below holds (see
   :func:`dead_fields_apply`): the classic protocol with fenced commits, clients that run the
   SyncGroup themselves (not ``coordinator-assigns``), no KIP-415 delay, no work kept across a reset.

   *A ghost* (a replaced static member's paused old process): its generation and owned set. Its only
   step (``GhostFenced``) drops it, a restart only copies another ghost over it, no step of anybody
   reads it, and with fenced commits ``commit_accepted(ghost=True)`` is False, so no property reads
   them either (only whether a ghost exists: convergence).

   *A client whose member id is stale* (the coordinator removed its record): the coordinator only ever
   answers a current id, so no new answer reaches it; no other slot's step reads it. Its own steps all
   end in a reset (``Id.NONE``, generation ``NO_GENERATION``, nothing owned) or in a fresh ``DOWN``
   client, except two: ``ReceiveSyncResponse`` (which sets ``owned`` and the ``rejoin`` flag and keeps
   the generation) and ``ReceiveError(REBALANCE_IN_PROGRESS)`` (sets ``rejoin``), and a restart of a
   paused one copies its generation and owned set into a ghost (dead, above). Hence:
   its *owned set* is read only by ``ReceiveSyncResponse`` (cooperative: revoked partitions set
   ``rejoin``), and by no property (``live_member`` and ``commit_accepted`` need a current id);
   its *generation* is read by no step, and by ``generation_monotonic`` only when it changes (to
   ``NO_GENERATION``, which the property exempts) or, when the group moves, to ask whether it is ahead
   of the group's: the key keeps it exactly when it is ahead, and otherwise records the group's own;
   the *generation of its inbox* (``JOIN``: received, it is at once reset by its SyncGroup's
   UNKNOWN_MEMBER_ID in the same step) is read by nothing; a ``SYNC`` answer's *assignment* is read
   only to compute the ``rejoin`` flag after it (``a`` outside the subscription, or, cooperative,
   revoked partitions), and while the answer is on its way no step and no property reads ``rejoin``
   (a client with an inbox only receives it, crashes or is restarted). So for such a client the key
   records: owned nothing, generation the group's (unless ahead), inbox generation the group's, a SYNC
   answer's assignment nothing and ``rejoin`` the value it will have after that answer.

   States with the same key are then bisimilar: the same steps are enabled (the forgotten fields
   guard none), their successors have the same keys, every property (state, action and convergence
   with its weak fairness, which depends on enabled steps only) gives the same verdict on both, and
   counterexamples are replayed from the representative the explorer stored, which is a reachable
   state. ``tests/test_dead_fields.py`` compares verdicts with and without it on every small instance
   of every variant it applies to, and shows a mutant (one that forgets the owned set of every
   client) changes them.

:func:`orbit_size` counts the states an orbit stands for, for the reduction factor the checker reports.
"""
from __future__ import annotations

from collections import Counter
from itertools import permutations
from math import factorial
from typing import Hashable, Protocol, TypeGuard, cast

from .core import NO_GENERATION, TIMING_FAULTS, Client, Config, Group, Id, Reply, State
from .spec import COMPILED_CLASSIC, SpecBase

OLDEST = 4  # generations more than this far behind the group's are all "old"


def _rel(gen: int, base: int) -> int:
    if gen == NO_GENERATION:
        return -1
    d = base - gen
    return d if d < OLDEST else OLDEST


def _remap(mask: int, perm: list[int] | tuple[int, ...]) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << perm[low.bit_length() - 1]
        mask ^= low
    return out


def _client_row(c: Client, base: int) -> tuple[object, ...]:
    ib = c.inbox
    inbox = (int(ib.reply), _rel(ib.generation, base), ib.assignment) if ib is not None else ()
    ghost = (_rel(c.ghost[0], base), c.ghost[1]) if c.ghost is not None else ()
    row: tuple[object, ...] = (int(c.proc), int(c.status), int(c.id), _rel(c.generation, base), c.owned, c.topics,
                               c.rejoin, inbox, ghost)
    if c.assignors:  # model/upgrade.py only: other keys unchanged
        row += (c.assignors,)
    return row + ("woke",) if c.woke else row  # late-expiry (model/formation.py); the same key without it


def _record_row(g: Group, i: int, base: int) -> tuple[object, ...]:
    r = g.records[i]
    if r is None:
        return ()
    return (r.static, r.joined, r.awaiting_sync, r.synced, r.topics, r.owned, _rel(r.generation, base), r.assignment)


def _masks_of_slot(s: State, i: int) -> tuple[int, ...]:
    """Every partition mask attached to slot ``i``, in a fixed order."""
    c = s.clients[i]
    r = s.group.records[i]
    t = s.group.target
    return (
        c.owned,
        c.inbox.assignment if c.inbox is not None else 0,
        c.ghost[1] if c.ghost is not None else 0,
        r.owned if r is not None else 0,
        r.assignment if r is not None else 0,
        t[i] if t is not None else 0,
    )


def _shape(s: State, i: int, base: int) -> tuple[object, ...]:
    """Slot ``i`` without its partition masks: what a renaming of partitions cannot change."""
    g = s.group
    c = s.clients[i]
    r = g.records[i]
    return (
        int(c.proc), int(c.status), int(c.id), _rel(c.generation, base), c.topics, c.rejoin,
        (int(c.inbox.reply), _rel(c.inbox.generation, base)) if c.inbox is not None else (),
        _rel(c.ghost[0], base) if c.ghost is not None else -2,
        () if r is None else (r.static, r.joined, r.awaiting_sync, r.synced, r.topics, _rel(r.generation, base)),
        i == g.leader, i == g.held_for,
    ) + _formation_shape(s, i)


def _formation_shape(s: State, i: int) -> tuple[object, ...]:
    """Slot ``i``'s part of the formation faults' state (model/formation.py): empty when none is on."""
    c = s.clients[i]
    if not (c.woke or s.group.pending):
        return ()
    return (c.woke, bool(s.group.pending >> i & 1))


def _formation_group(g: Group, symmetric: bool = False) -> tuple[object, ...]:
    """The group's part of the formation faults' state: empty without them, so every key is as before.

    Under symmetry the pending slots are in each slot's shape (:func:`_formation_shape`), not by number."""
    if not (g.forming or g.pending or g.stale_sync):
        return ()
    return ((g.forming, bool(g.pending) if symmetric else g.pending, g.stale_sync),)


def plain_key(s: State) -> Hashable:
    """The key with generations shifted, and no symmetry."""
    g = s.group
    base = g.generation
    rows = tuple((_client_row(c, base), _record_row(g, i, base)) for i, c in enumerate(s.clients))
    key = (int(g.status), g.leader, g.target, g.partitions, g.held, g.held_for, s.budget, rows) + _formation_group(g)
    if g.protocol or g.snapshot:  # model/upgrade.py, model/static_leader.py only: other keys unchanged
        key += (g.protocol, g.snapshot)
    return key


class ClassicSwitches(Protocol):
    """What the dead-field argument reads of a classic variant (model/classic.py's switches; this module cannot
    import that page, which imports it)."""

    cfg: Config
    canon: Canonicalizer
    rebalance: str
    fence_commits: bool
    coordinator_assigns: bool
    delayed: bool
    keep_work_on_reset: bool
    python_only: bool


def dead_fields_apply(proto: object) -> TypeGuard[ClassicSwitches]:
    """Whether the dead-field argument of this module's docstring holds for ``proto``."""
    # the classic protocol's rules are the ones the argument reads (the pages the classic kernel mirrors)
    if not (isinstance(proto, SpecBase) and proto.encoding == COMPILED_CLASSIC):
        return False
    classic = cast(ClassicSwitches, proto)  # encoding COMPILED_CLASSIC: a ClassicProtocol
    return (
        classic.fence_commits
        and not classic.coordinator_assigns
        and not classic.delayed
        and not classic.keep_work_on_reset
        # written before the protocol vote (model/upgrade.py) and the formation and timer faults
        # (model/formation.py): their fields are not in the argument, so it claims nothing for them
        and not classic.python_only
        and not (TIMING_FAULTS & set(classic.cfg.faults))
    )


def forget_dead_fields(proto: object) -> None:
    """Turn the dead-field reduction on for ``proto`` (its keys); ValueError where it is not sound."""
    if not dead_fields_apply(proto):
        raise ValueError(f"--forget-dead does not apply to {getattr(proto, 'name', proto)!r} (it needs a classic "
                         "variant with fenced commits, no coordinator-side assignment, no Connect delay, no "
                         "protocol vote, no formation or timer fault)")
    proto.canon.dead = True
    proto.canon.cooperative = proto.rebalance == "cooperative"


def forget_dead(s: State, cooperative: bool, cfg: Config) -> State:
    """``s`` with the fields that can no longer matter set to fixed values (module docstring, item 3)."""
    base = s.group.generation
    clients = list(s.clients)
    changed = False
    for i, c in enumerate(clients):
        d = c
        if d.ghost is not None and d.ghost != (base, 0):
            d = d.but(ghost=(base, 0))
        if d.id == Id.STALE:
            gen = d.generation if d.generation != NO_GENERATION and d.generation > base else base
            ib = d.inbox
            rejoin = d.rejoin
            if ib is not None:
                if ib.reply == Reply.SYNC:
                    a = ib.assignment
                    outside = a & ~cfg.subscribed_partitions(d.topics, s.group.partitions | a)
                    rejoin = bool(outside) or d.rejoin or (cooperative and bool(d.owned & ~a))
                    ib = ib.but(generation=base, assignment=0)
                else:
                    ib = ib.but(generation=base)
            d = d.but(owned=0, generation=gen, inbox=ib, rejoin=rejoin)
        if d is not c:
            clients[i] = d
            changed = True
    return s.but(clients=tuple(clients)) if changed else s


class Canonicalizer:
    """Computes symmetry-reduced keys for one configuration."""

    def __init__(self, cfg: Config, symmetric: bool) -> None:
        self.cfg = cfg
        self.symmetric = symmetric
        self.dead = False  # forget dead fields (forget_dead_fields)
        self.cooperative = False  # set with dead: the variant rebalances cooperatively
        self.topic_blocks = [
            [p for p in range(cfg.partitions) if cfg.topic_of[p] == t] for t in range(cfg.topics)
        ]

    def key(self, s: State) -> Hashable:
        if self.dead:
            s = forget_dead(s, self.cooperative, self.cfg)
        if not self.symmetric:
            return plain_key(s)
        return self._sym_key(s)

    def _sym_key(self, s: State) -> Hashable:
        g = s.group
        base = g.generation
        n = len(s.clients)
        masks = [_masks_of_slot(s, i) for i in range(n)]
        # 1. A label-free shape for each slot: its facts with partition masks replaced by their sizes.
        shapes = [_shape(s, i, base) + tuple(map(int.bit_count, masks[i])) for i in range(n)]
        order = sorted(range(n), key=shapes.__getitem__)
        # 2. Each partition's column: which slot (in that order) has it in which mask, as one integer.
        cols = [0] * self.cfg.partitions
        width = len(masks[0]) if masks else 0
        for j, i in enumerate(order):
            shift = (n - 1 - j) * width
            for k, m in enumerate(masks[i]):
                bit = 1 << (shift + width - 1 - k)
                while m:
                    low = m & -m
                    cols[low.bit_length() - 1] |= bit
                    m ^= low
        top = n * width
        for p in range(self.cfg.partitions):
            cols[p] |= ((g.partitions >> p & 1) << (top + 1)) | ((g.held >> p & 1) << top)
        perm = [0] * self.cfg.partitions
        identity = True
        for block in self.topic_blocks:
            for new, old in zip(block, sorted(block, key=cols.__getitem__)):
                perm[old] = new
                identity = identity and new == old
        # 3. Slots sorted by their full facts, partitions renamed.
        if identity:
            rows = [(shapes[i], masks[i]) for i in range(n)]
            rows.sort()
            return (int(g.status), g.partitions, g.held, g.target is None, s.budget, tuple(rows)) + _formation_group(g, True)
        rows = [(shapes[i], tuple([_remap(m, perm) for m in masks[i]])) for i in range(n)]
        rows.sort()
        return (int(g.status), _remap(g.partitions, perm), _remap(g.held, perm), g.target is None, s.budget,
                tuple(rows)) + _formation_group(g, True)


def orbit_size(s: State, cfg: Config, canon: Canonicalizer) -> int:
    """How many distinct states (member and partition renamings) this state stands for.

    |orbit| = |G| / |stabiliser|. For each member permutation that maps every slot onto a slot that
    looks the same (masks aside), count the partition permutations (within topics) that complete it to
    an automorphism: partitions must map onto partitions with the same column of facts, so the count
    is the product of the factorials of the column multiplicities, or 0 if the columns differ.
    """
    if not canon.symmetric:
        return 1
    n = len(s.clients)
    g = s.group
    base = g.generation
    masks = [_masks_of_slot(s, i) for i in range(n)]
    shapes = [_shape(s, i, base) for i in range(n)]

    def column(p: int, idx: tuple[int, ...]) -> tuple[object, ...]:
        bit = 1 << p
        return (bool(g.partitions & bit), bool(g.held & bit), tuple(tuple(bool(m & bit) for m in masks[i]) for i in idx))

    group_size = factorial(n)
    for block in canon.topic_blocks:
        group_size *= factorial(len(block))
    identity = tuple(range(n))
    stab = 0
    for pi in permutations(range(n)):
        if any(shapes[pi[i]] != shapes[i] for i in range(n)):
            continue
        count = 1
        for block in canon.topic_blocks:
            before = Counter(column(p, identity) for p in block)
            if before != Counter(column(p, pi) for p in block):
                count = 0
                break
            for mult in before.values():
                count *= factorial(mult)
        stab += count
    return group_size // max(stab, 1)
