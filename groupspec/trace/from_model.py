"""A path of the model (a counterexample of ``groupspec check``, or any walk) written as a trace.

The model knows what every process believes; a trace records what each process *saw*. Between two
consecutive states of a path, for each consumer: it started (``joined``); it stopped (``left``);
the coordinator dropped it (``removed``, a line the project adds: the coordinator's side, for
traces that have it); its member id was reset — it learned it had been fenced out (``fenced``, then ``lost`` for what it
owned); partitions it gave up (``revoked``); partitions it gained (``assigned``: the whole new
assignment for an eager variant, the ones added for a cooperative one), with the generation it is
in. Step ``k`` happens at ``k * step_ms``.

At the end of the path every consumer that owns partitions and would commit (it believes it is
stable) writes a ``commit`` line saying whether the model's coordinator accepts it (with
``sent_ms``: it was sent then). A process the coordinator no longer counts as a member but which
still believes it owns partitions (a zombie) is then shown learning it, as it would at its next
heartbeat: ``fenced`` and ``lost``. A static member's replaced old process (the model's *ghost*) is
not written: a trace names processes, and the model does not name that one.

Used by the tests (every broken variant's counterexample must be caught by the trace checker) and by
``groupspec trace check --against-model`` (as the vocabulary of model steps).
"""
from __future__ import annotations

from typing import Any

from groupspec.model import Id, Proc, bits

__all__ = ["path_to_events", "partition_pair"]


def partition_pair(proto: Any, p: int) -> list[Any]:
    name = proto.partition_name(p)
    topic, num = name.rsplit("-", 1)
    return [topic, int(num)]


def _clients(s: Any) -> tuple[Any, ...]:
    clients: tuple[Any, ...] = s.clients if hasattr(s, "clients") else s.consumers  # (zookeeper: consumers)
    return clients


def _existing(proto: Any, s: Any) -> int:
    g = getattr(s, "group", None)
    if g is not None:
        existing: int = g.partitions
        return existing
    return (1 << int(proto.cfg.partitions)) - 1


def _topic_events(proto: Any, mask: int, ts: int, group: str) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for p in range(proto.cfg.partitions):
        t, _n = partition_pair(proto, p)
        counts.setdefault(t, 0)
        if mask >> p & 1:
            counts[t] += 1
    return [{"ts_ms": ts, "group": group, "event": "topic", "topic": t, "partitions": n} for t, n in counts.items()]


def path_to_events(proto: Any, steps: list[Any], step_ms: int = 1000, group: str = "g",
                   unroll_until_ms: int | None = None, loop_start: int | None = None) -> list[dict[str, Any]]:
    """The trace of ``steps`` (``groupspec.checker.explorer.Step`` list: action, state; the first has no action).

    With ``unroll_until_ms`` and no ``loop_start`` the path ends in a state the run stays in (a deadlock
    stutters): an ``end`` event at that time says the recording went on until then with nothing new.
    With ``loop_start`` (a livelock's cycle starts after that step) the cycle's actions are taken again,
    from where the last round ended, until ``unroll_until_ms``: generations keep growing, as they do in
    the run the lasso stands for (repeating the stored states would make them go down at every turn).
    """
    if proto.name.startswith("consumer"):  # the next-generation protocol: assigned lists what is added
        protocol = "consumer"
    else:
        protocol = "cooperative" if "cooperative" in proto.name or getattr(proto, "incremental", False) else "eager"
    states = [st.state for st in steps]
    if loop_start is not None and unroll_until_ms is not None and loop_start + 1 < len(states):
        cycle = [st.action for st in steps[loop_start + 1:]]
        while (len(states) - 1) * step_ms < unroll_until_ms:
            for act in cycle:
                states.append(proto.step(states[-1], act))
    out: list[dict[str, Any]] = []
    first = states[0]
    out.extend(_topic_events(proto, _existing(proto, first), 0, group))
    prev = first
    for i, c in enumerate(_clients(first)):
        if c.proc != Proc.DOWN:
            out.append(_ev(0, group, proto.member_name(i), "joined", protocol))
            if c.owned:
                out.append(_ev(0, group, proto.member_name(i), "assigned", protocol,
                               parts=[partition_pair(proto, p) for p in bits(c.owned)], gen=_gen(c)))
    for k, s in enumerate(states[1:], 1):
        ts = k * step_ms
        if _existing(proto, s) != _existing(proto, prev):
            out.extend(_topic_events(proto, _existing(proto, s), ts, group))
        for i, (a, b) in enumerate(zip(_clients(prev), _clients(s))):
            out.extend(_diff(proto, i, a, b, ts, group, protocol))
            if _member_dropped(prev, s, i) and b.proc != Proc.DOWN:
                out.append(_ev(ts, group, proto.member_name(i), "removed", protocol))
        prev = s
    end = (len(states) - 1) * step_ms + step_ms
    last = states[-1]
    live = {i for i, _o in proto.live_ownership(last)}
    for i, c in enumerate(_clients(last)):
        name = proto.member_name(i)
        stable = getattr(c, "status", None)
        if c.proc == Proc.UP and c.owned and (stable is None or stable.name == "STABLE"):
            out.append({"ts_ms": end, "group": group, "member": name, "event": "commit", "generation": _gen(c),
                        "protocol": protocol, "sent_ms": end, "accepted": bool(proto.commit_accepted(last, i)),
                        "partitions": [partition_pair(proto, p) + [0] for p in bits(c.owned)]})
    for i, c in enumerate(_clients(last)):
        if c.proc != Proc.DOWN and c.owned and i not in live:
            name = proto.member_name(i)
            out.append(_ev(end + step_ms, group, name, "fenced", protocol, gen=-1, error="UNKNOWN_MEMBER_ID"))
            out.append(_ev(end + step_ms, group, name, "lost", protocol,
                           parts=[partition_pair(proto, p) for p in bits(c.owned)], gen=-1))
    if unroll_until_ms is not None and loop_start is None:
        out.append({"ts_ms": max(unroll_until_ms, end + 2 * step_ms), "group": group, "event": "end"})
    return out


def _gen(c: Any) -> int | None:
    return getattr(c, "generation", getattr(c, "epoch", None))


def _member_dropped(prev: Any, s: Any, i: int) -> bool:
    """The next-generation coordinator dropped slot ``i``'s member record (session or rebalance timeout,
    fencing); its process may not know yet. (Classic states say so through the client's id: ``_diff``.)"""
    a, b = getattr(getattr(prev, "group", None), "members", None), getattr(getattr(s, "group", None), "members", None)
    return a is not None and b is not None and i < len(a) and a[i] is not None and b[i] is None


def _ev(ts: int, group: str, member: str, event: str, protocol: str, parts: list[Any] | None = None,
        gen: int | None = None, **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"ts_ms": ts, "group": group, "member": member, "event": event}
    if parts is not None:
        e["partitions"] = parts
    if gen is not None:
        e["generation"] = gen
    e["protocol"] = protocol
    e.update(extra)
    return e


def _diff(proto: Any, i: int, a: Any, b: Any, ts: int, group: str, protocol: str) -> list[dict[str, Any]]:
    name = proto.member_name(i)
    out: list[dict[str, Any]] = []

    def pp(mask: int) -> list[list[Any]]:
        return [partition_pair(proto, p) for p in bits(mask)]

    if a.proc == Proc.DOWN and b.proc != Proc.DOWN:
        out.append(_ev(ts, group, name, "joined", protocol, gen=-1))
        a = type(a)()  # a fresh process owns nothing
    if b.proc == Proc.DOWN:
        if a.proc != Proc.DOWN:
            out.append(_ev(ts, group, name, "left", protocol))
        return out
    dropped = (getattr(a, "id", None) == Id.CURRENT and getattr(b, "id", None) == Id.STALE) or (
        getattr(a, "registered", False) and not getattr(b, "registered", True))
    if dropped:  # the coordinator removed it (session expired...); the process does not know yet
        out.append(_ev(ts, group, name, "removed", protocol))
    removed = a.owned & ~b.owned
    added = b.owned & ~a.owned
    reset = getattr(a, "id", None) in (Id.CURRENT, Id.STALE) and getattr(b, "id", None) == Id.NONE
    if reset:
        out.append(_ev(ts, group, name, "fenced", protocol, gen=-1, error="UNKNOWN_MEMBER_ID"))
    if removed:
        if reset or (_gen(a) is not None and _gen(a) != -1 and _gen(b) == -1):
            out.append(_ev(ts, group, name, "lost", protocol, parts=pp(removed), gen=-1))
        elif not (added and protocol == "eager"):
            out.append(_ev(ts, group, name, "revoked", protocol, parts=pp(removed), gen=_gen(a)))
    if added:
        out.append(_ev(ts, group, name, "assigned", protocol, parts=pp(b.owned if protocol == "eager" else added),
                       gen=_gen(b)))
    return out
