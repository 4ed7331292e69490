"""The KIP-848 protocol's view for people: names, the parties of a timeline, one line per step (a mixin of
:class:`groupspec.model.consumer.Consumer`; no rule of the protocol lives here)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Generic

from . import actions as A
from .consumer_flight import FENCED, OK, UNRELEASED
from .consumer_state import S
from .core import Proc, bits

if TYPE_CHECKING:
    from .consumer_state import Answer, ConsumerGroup, KIP848State
    from .core import Config


class ConsumerView(Generic[S]):
    """``member_name``, ``partition_name``, ``parties`` and ``explain`` for ``Consumer``."""

    if TYPE_CHECKING:  # what it uses of Consumer
        cfg: Config
        in_flight: bool

        def handle(self, s: KIP848State, i: int) -> tuple[ConsumerGroup, Answer]: ...

    def member_name(self, i: int) -> str:
        return f"c{i + 1}"

    def partition_name(self, p: int) -> str:
        cfg = self.cfg
        t = cfg.topic_of[p]
        first = cfg.topic_of.index(t)
        return f"{chr(ord('t') + t) if cfg.topics > 1 else 't'}-{p - first}"

    # -- the timeline's view --------------------------------------------------------------------------
    def _parts(self, mask: int) -> str:
        return "{" + ", ".join(self.partition_name(p) for p in bits(mask)) + "}"

    def parties(self, s: S) -> list[tuple[str, str]]:
        g = s.group
        coord = f"group epoch {g.epoch}, assignment epoch {g.target_epoch}"
        ms: list[str] = []
        for i, r in enumerate(g.members):
            if r is None:
                continue
            d = f"{self.member_name(i)}: {r.state.name} epoch {r.epoch} assigned {self._parts(r.assigned)}"
            if r.revoking:
                d += f" revoking {self._parts(r.revoking)}"
            if r.left:
                d += " (left, epoch -2)"
            if self.in_flight:
                d += f" (previous epoch {r.previous_epoch})"
            d += f" target {self._parts(g.target[i])}"
            ms.append(d)
        coord += "; " + ("; ".join(ms) if ms else "no members")
        out = [("coordinator", coord)]
        for i, c in enumerate(s.clients):
            if c.proc == Proc.DOWN:
                out.append((self.member_name(i), "not running"))
                continue
            facts = [c.proc.name.lower(), "joining (epoch 0)" if c.epoch == 0 else f"epoch {c.epoch}",
                     f"owns {self._parts(c.owned)}"]
            if c.assigned != c.owned:
                facts.append(f"reconciling towards {self._parts(c.assigned)}")
            if c.answer is not None:
                facts.append(f"heartbeat answer on its way (epoch {c.answer[1]}, {self._parts(c.answer[2])})")
            if c.commit is not None:
                facts.append(f"OffsetCommit on its way (epoch {c.commit[0]}, {self._parts(c.commit[1])})")
            out.append((self.member_name(i), ", ".join(facts)))
        return out

    def explain(self, before: S, action: A.Action, after: S) -> str:
        who = self.member_name(action.member) if action.member >= 0 else ""
        if action.name == "ConsumerGroupHeartbeat":  # (this view is imported by the protocol's page)
            c0, c1 = before.clients[action.member], after.clients[action.member]
            err = self.handle(before, action.member)[1][0]
            if err == UNRELEASED:
                return f"{who} heartbeats with epoch 0: UNRELEASED_INSTANCE_ID — fatal, the process stops"
            if err != OK:
                r = before.group.members[action.member]
                kept = f" (member epoch {r.epoch}, previous {r.previous_epoch}; the record is kept)" if r is not None and err == FENCED else ""
                return f"{who} heartbeats with epoch {c0.epoch}: {err}{kept} — it loses its partitions and rejoins with epoch 0"
            return f"{who} heartbeats (epoch {c0.epoch}, owns {self._parts(c0.owned)}): answer epoch {c1.epoch}, assignment {self._parts(c1.assigned)}"
        return action.describe(who).strip()
