"""How the migration page's states and steps read in a timeline (``groupspec check`` counterexamples)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import actions as A
from .consumer import NOT_MEMBER, ConsumerGroupHeartbeat
from .core import Proc, bits
from .migration_state import ClassicHeartbeat, JoinGroup, Kind, MigrationState, Phase, SyncGroup

if TYPE_CHECKING:
    from .consumer import ConsumerState

__all__ = ["MigrationTimeline"]


class MigrationTimeline:
    """The timeline's view of :class:`~groupspec.model.migration.ClassicToConsumer` (a mixin)."""

    if TYPE_CHECKING:  # what it uses of ClassicToConsumer (and of the KIP-848 page's view after it in the MRO)
        def member_name(self, i: int) -> str: ...
        def _parts(self, mask: int) -> str: ...
        @staticmethod
        def _consumer_view(s: MigrationState) -> ConsumerState: ...

    # -- the timeline's view --------------------------------------------------------------------------
    def parties(self, s: MigrationState) -> list[tuple[str, str]]:
        if s.kind == Kind.CONSUMER:
            # (super(): the KIP-848 page's view, next in ClassicToConsumer's MRO; mypy sees only this mixin's bases)
            coord: str = super().parties(self._consumer_view(s))[0][1]  # type: ignore[misc]
            kinds = ", ".join(f"{self.member_name(i)} {'classic' if getattr(r, 'classic', False) else 'consumer'}"
                              for i, r in enumerate(s.group.members) if r is not None)
            out = [("coordinator", "consumer group: " + coord + (f" ({kinds})" if kinds else ""))]
        else:
            cg = s.classic
            ms = "; ".join(f"{self.member_name(i)}{' joined' if cg.joined >> i & 1 else ''} stored {self._parts(cg.assignment[i])}"
                           for i in bits(cg.members))
            lead = f", leader {self.member_name(cg.leader)}" if cg.members else ""
            out = [("coordinator", f"classic group: {cg.status.name} generation {cg.generation}{lead}; {ms or 'no members'}")]
        for i, c in enumerate(s.clients):
            proto = "classic" if c.classic else "consumer"
            if c.proc == Proc.DOWN:
                d = f"not running ({proto} protocol)"
            elif c.classic:
                d = f"{c.proc.name.lower()}, classic protocol, {c.phase.name}, generation {c.epoch}, owns {self._parts(c.owned)}"
            else:
                d = f"{c.proc.name.lower()}, consumer protocol, epoch {c.epoch}, owns {self._parts(c.owned)}"
                if c.assigned != c.owned:
                    d += f", reconciling towards {self._parts(c.assigned)}"
            out.append((self.member_name(i), d))
        return out

    def explain(self, before: MigrationState, action: A.Action, after: MigrationState) -> str:
        who = self.member_name(action.member) if action.member >= 0 else ""
        if isinstance(action, ConsumerGroupHeartbeat):
            if before.kind == Kind.CLASSIC and after.kind == Kind.CONSUMER:
                return (f"{who} heartbeats with epoch 0: the coordinator converts the classic group (generation "
                        f"{before.classic.generation}) into a consumer group and adds {who} (group epoch {after.group.epoch})")
            if before.kind == Kind.CONSUMER and after.kind == Kind.CLASSIC:
                return f"{who} heartbeats and is fenced: only classic members remain, the group is converted to a classic group"
            if before.kind == Kind.CLASSIC:
                e = before.clients[action.member].epoch
                why = "" if e else " (the classic group has a member without a stored assignment: the conversion fails)"
                return f"{who} heartbeats with epoch {e}: GROUP_ID_NOT_FOUND{why}, fatal for the client: it stops"
            told: str = super().explain(self._consumer_view(before), action, self._consumer_view(after))  # type: ignore[misc]  # (as above)
            return told
        c0, c1 = before.clients[action.member] if action.member >= 0 else None, after.clients[action.member] if action.member >= 0 else None
        if isinstance(action, (JoinGroup, SyncGroup, ClassicHeartbeat)) and c0 is not None:
            assert c1 is not None  # (the same member, after the step)
            if c1.epoch == NOT_MEMBER and c0.epoch != NOT_MEMBER:
                return f"{who} {action.verb.split(' ')[1]}: UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION — it loses {self._parts(c0.owned)} and rejoins"
            if isinstance(action, JoinGroup):
                if c1.phase == Phase.SYNC:
                    return f"{who} sends JoinGroup (owns {self._parts(c0.owned)}): answered at once with generation {c1.epoch} (its member epoch)"
                return f"{who} sends JoinGroup (owns {self._parts(c0.owned)})" + (
                    f"; the join phase completes: generation {after.classic.generation}" if after.kind == Kind.CLASSIC and after.classic.generation != before.classic.generation else "")
            if isinstance(action, SyncGroup):
                if c1.phase == Phase.JOIN and c1.owned == c0.owned:
                    return f"{who} sends SyncGroup (generation {c0.epoch}): REBALANCE_IN_PROGRESS — it rejoins"
                return f"{who} sends SyncGroup (generation {c0.epoch}): gets {self._parts(c1.owned)}" + (
                    f", revokes {self._parts(c0.owned & ~c1.owned)} and rejoins" if c0.owned & ~c1.owned else "")
            return f"{who} heartbeats (generation {c0.epoch}): REBALANCE_IN_PROGRESS — it rejoins"
        if after.kind != before.kind:
            return f"{action.describe(who).strip()}; only classic members remain: the group is converted to a classic group (generation {after.classic.generation}, a rebalance begins)"
        return action.describe(who).strip()
