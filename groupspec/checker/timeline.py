"""Counterexamples as numbered timelines: who did what, and what each party then believed.

One printer serves the explorer, the proofs and the tests. A timeline is a list of
:class:`groupspec.checker.explorer.Step`; each line names the actor and the step, then lists the parties whose
beliefs changed (the coordinator, then each consumer), marking with ``*`` what is new.
"""
from __future__ import annotations

from typing import Any, Iterable

from groupspec.model import GroupStatus, Id, Proc, Reply, State
from groupspec.model import ZkState


def _names(mask: int, name: Any) -> list[str]:
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(name(i))
        mask >>= 1
        i += 1
    return out


def _parts(proto: Any, mask: int) -> str:
    return "{" + ", ".join(_names(mask, proto.partition_name)) + "}"


def _members(proto: Any, mask: int) -> str:
    return "[" + ", ".join(_names(mask, proto.member_name)) + "]"


def parties(proto: Any, s: Any) -> list[tuple[str, str]]:
    """(party, belief) pairs describing a state, coordinator first."""
    if hasattr(proto, "parties"):  # a variant family that describes its own states
        out: list[tuple[str, str]] = proto.parties(s)
        return out
    if isinstance(s, ZkState):
        out = [("zookeeper", f"consumers {_members(proto, s.registry)}, owners "
                + ", ".join(f"{proto.partition_name(p)}:{proto.member_name(o) if o >= 0 else '-'}" for p, o in enumerate(s.owners)))]
        for i, c in enumerate(s.consumers):
            if c.proc == Proc.DOWN and not c.registered and not c.owned:
                out.append((proto.member_name(i), "not running"))
                continue
            bits_ = [c.proc.name.lower(), "registered" if c.registered else "no session",
                     f"view {_members(proto, c.view)}", f"owns {_parts(proto, c.owned)}"]
            if c.pending:
                bits_.append(f"retrying claims ({c.retries} retries left)")
            if c.failed:
                bits_.append("gave up: retries used up")
            out.append((proto.member_name(i), ", ".join(bits_)))
        return out
    assert isinstance(s, State)
    g = s.group
    members = [proto.member_name(i) for i, r in enumerate(g.records) if r is not None]
    coord = f"{g.status.name} generation {g.generation}"
    if g.leader >= 0:
        coord += f", leader {proto.member_name(g.leader)}"
    coord += f", members [{', '.join(members)}]"
    if g.status in (GroupStatus.STABLE, GroupStatus.PREPARING_REBALANCE) and any(r is not None and r.assignment for r in g.records):
        coord += ", assignment " + " ".join(
            f"{proto.member_name(i)}={_parts(proto, r.assignment)}" for i, r in enumerate(g.records) if r is not None
        )
    if g.held:
        coord += f", holding {_parts(proto, g.held)} for {proto.member_name(g.held_for)}"
    out = [("coordinator", coord)]
    for i, cl in enumerate(s.clients):  # (not ``c``: the ZooKeeper loop's)
        if cl.proc == Proc.DOWN and cl.ghost is None:
            out.append((proto.member_name(i), "not running"))
            continue
        desc = [cl.proc.name.lower() if cl.proc != Proc.UP else cl.status.name]
        if cl.id == Id.STALE:
            desc.append("stale member id")
        elif cl.id == Id.NONE:
            desc.append("no member id")
        desc.append(f"generation {cl.generation}")
        desc.append(f"owns {_parts(proto, cl.owned)}")
        if cl.rejoin:
            desc.append("will rejoin")
        if cl.inbox is not None:
            ib = cl.inbox
            if ib.reply == Reply.JOIN:
                desc.append(f"JoinGroup answer on its way (generation {ib.generation})")
            elif ib.reply == Reply.SYNC:
                desc.append(f"SyncGroup answer on its way: {_parts(proto, ib.assignment)}")
            else:
                desc.append(f"{ib.reply.name} on its way")
        if cl.ghost is not None:
            desc.append(f"its replaced old process still believes it owns {_parts(proto, cl.ghost[1])}")
        out.append((proto.member_name(i), ", ".join(desc)))
    return out


def actor(proto: Any, action: Any) -> str:
    return proto.member_name(action.member) if action.member >= 0 else ""


def explain(proto: Any, before: Any, action: Any, after: Any) -> str:
    """One line for a step; for answers, say which answer it was."""
    if hasattr(proto, "explain"):  # a variant family that explains its own steps
        line: str = proto.explain(before, action, after)
        return line
    text = _explain_step(proto, before, action, after)
    if isinstance(before, State) and isinstance(after, State):  # Connect's hold (KIP-415), in the history's words
        h0, h1 = before.group.held, after.group.held
        if h1 & ~h0:
            text += (f" — scheduled rebalance delay: the coordinator holds {_parts(proto, h1 & ~h0)} back for "
                     f"{proto.member_name(after.group.held_for)}")
        elif h0 and not h1:
            text += " — the scheduled rebalance delay is over: the held work is handed out"
    return text


def _explain_step(proto: Any, before: Any, action: Any, after: Any) -> str:
    who = actor(proto, action)
    name = action.name
    if isinstance(before, State) and action.member >= 0:
        c0, c1 = before.clients[action.member], after.clients[action.member]
        if name == "Heartbeat":
            if c1.proc == Proc.DOWN:
                return f"{who} heartbeats: FENCED_INSTANCE_ID, which is fatal — the process stops"
            if c1.rejoin and not c0.rejoin:
                return f"{who} heartbeats: REBALANCE_IN_PROGRESS, so it will rejoin"
            lose = "keeps running its work (a Connect worker)" if c1.owned else "loses its partitions"
            if c1.id == Id.NONE and c0.id != Id.NONE:
                return f"{who} heartbeats: UNKNOWN_MEMBER_ID — it resets to a fresh member and {lose}"
            return f"{who} heartbeats: ILLEGAL_GENERATION — it resets its generation and {lose}"
        if name == "ReceiveJoinResponse" and c0.inbox is not None:
            told = _join_response(proto, before, action.member, who, c0.inbox.generation)
            if told:
                return told
        if name == "ReceiveError" and c0.inbox is not None:
            return f"{who} receives {c0.inbox.reply.name} for its parked request"
        if name == "SendJoinGroup" and c1.id == Id.NONE and c0.id == Id.STALE:
            return f"{who} sends JoinGroup with its stale member id: UNKNOWN_MEMBER_ID, it resets"
        # the history's words (docs/learn/): what the step means for who reads what
        if name == "SendJoinGroup" and c0.owned and not c1.owned:
            return (f"{who} prepares to join (onJoinPrepare): stop-the-world, it revokes everything it owns "
                    f"{_parts(proto, c0.owned)}, and sends JoinGroup")
        if name == "ReceiveSyncResponse" and c0.owned & ~c1.owned and c1.rejoin:
            return (f"{who} receives its SyncGroup response: two-phase revoke/assign, it revokes only what moves "
                    f"{_parts(proto, c0.owned & ~c1.owned)} and rejoins so the next round can assign it")
    described: str = action.describe(who).strip()
    return described


def _join_response(proto: Any, before: State, i: int, who: str, generation: int) -> str:
    """A JoinGroup response received, naming the leader the response named (the group's, when the response is of the
    group's generation; ``""`` otherwise: the action's own words, which name nobody)."""
    if getattr(proto, "coordinator_assigns", False):
        return (f"{who} receives its JoinGroup response with the assignment the coordinator computed and applies it "
                "(no SyncGroup round)")
    g = before.group
    if generation != g.generation or g.leader < 0:
        return ""
    if i != g.leader:
        leader = proto.member_name(g.leader)
        return f"{who} receives its JoinGroup response and sends SyncGroup (a follower: the leader is {leader})"
    if g.status == GroupStatus.STABLE:  # back without a rebalance (a static member): nothing to assign
        return (f"{who} receives its JoinGroup response as the leader and sends SyncGroup (the group is STABLE: "
                "no new assignment)")
    return f"{who} receives its JoinGroup response as the leader and sends SyncGroup with the assignment"


def render(proto: Any, steps: Iterable[Any], loop_start: int | None = None) -> list[str]:
    """The timeline as plain lines (the CLI colours them)."""
    lines: list[str] = []
    prev: dict[str, str] = {}
    before = None
    for k, st in enumerate(steps):
        if st.action is None:
            lines.append(" 0. initial state")
        else:
            mark = "   (the loop starts here)" if loop_start is not None and k == loop_start + 1 else ""
            lines.append(f"{k:2d}. {explain(proto, before, st.action, st.state)}{mark}")
        before = st.state
        for party, belief in parties(proto, st.state):
            if prev.get(party) != belief:
                star = "*" if party in prev else " "
                lines.append(f"      {star} {party}: {belief}")
                prev[party] = belief
    if loop_start is not None:
        lines.append(f"    ... and from step {loop_start} the same steps repeat forever")
    return lines


def to_json(proto: Any, steps: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for k, st in enumerate(steps):
        out.append({
            "step": k,
            "action": None if st.action is None else st.action.name,
            "actor": None if st.action is None else (actor(proto, st.action) or None),
            "beliefs": dict(parties(proto, st.state)),
        })
    return out
