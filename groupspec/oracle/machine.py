"""Differential testing: a Hypothesis state machine sends the same generated requests to the reference coordinator
and to Kafka's, and compares the answers and the group's state after every step.

The machine writes coordinator-script steps (the contract format), so a difference is a script: it is written
out (``oracle-difference.jsonl`` in the output directory, overwritten while Hypothesis shrinks, so it ends up
holding the minimal one) and replays with ``groupspec coordinator replay FILE --against kafka``.

Members: dynamic ``A``, ``B``, ``C`` and static ``S1``, ``S2`` (instance ids ``i1``, ``i2``). Rules: joins (new,
``$self``; JoinGroup v9 or v3; three protocol lists), SyncGroup (the leader with an assignment for every member),
Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch with the current or a stale generation, time passing (expiring
sessions, rebalance and join timeouts), a failed group-metadata write, a failover (unload and load). A difference
that a diverging abstraction explains (the leader choice) ends the comparison of that example.
"""
from __future__ import annotations

import json
import os
import pathlib
import tempfile
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from groupspec.reference.sim import parse_script

from .compare import TrackingReplayer, compare_step, step_chunks, write_points_differ
from .process import KafkaOracle
from .script import KafkaScriptRunner

__all__ = ["make_machine", "DYNAMIC", "STATIC"]

DYNAMIC = ("A", "B", "C")
STATIC = {"S1": "i1", "S2": "i2"}
MEMBERS = DYNAMIC + tuple(STATIC)
PROTOCOLS = (["range"], ["roundrobin"], ["range", "roundrobin"])


def default_out_dir() -> pathlib.Path:
    env = os.environ.get("GROUPSPEC_ORACLE_OUT")
    return pathlib.Path(env) if env else pathlib.Path(tempfile.gettempdir()) / "groupspec-oracle"


def make_machine(oracle: KafkaOracle, faults: frozenset[str] = frozenset(),
                 out_dir: pathlib.Path | None = None) -> type[RuleBasedStateMachine]:
    """A state machine class comparing the reference (with ``faults`` switched on) against ``oracle``."""
    out = out_dir or default_out_dir()

    class OracleMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.now = 0
            self.script: list[str] = []
            self.diverged = False
            self.ref = TrackingReplayer(faults=faults)
            self.kafka = KafkaScriptRunner(oracle)
            self.state: dict[str, Any] = {}

        # ------------------------------------------------------------ running one step on both sides
        def _send(self, step: dict[str, Any]) -> None:
            line = json.dumps(step)
            self.script.append(line)
            parsed = replace(parse_script(line)[0], line=len(self.script))
            r0, k0 = len(self.ref.lines), len(self.kafka.lines)
            self.ref.run([parsed])  # always: the rules read the reference's state, which must not depend on Kafka
            if parsed.kind == "config" and parsed.at is None:
                self.kafka.run([parsed])
                return
            (r,) = step_chunks(self.ref.lines[r0:])
            self.state = r[1]
            if self.diverged:
                return
            self.kafka.run([parsed])
            (k,) = step_chunks(self.kafka.lines[k0:])
            found, stopped = compare_step(parsed, r, k, write_points=write_points_differ(self.ref, self.kafka, parsed))
            bad = [d for d in found if d.explained_by is None]
            if bad:
                path = self._write(bad[0])
                raise AssertionError(f"the reference and Kafka's coordinator differ at step {len(self.script)} "
                                     f"({', '.join(bad[0].fields)}); the script is {path}\n"
                                     f"replay: groupspec coordinator replay {path} --against kafka\n"
                                     + "\n".join(self.script))
            if stopped:
                self.diverged = True

        def _write(self, d: Any) -> pathlib.Path:
            out.mkdir(parents=True, exist_ok=True)
            path = out / "oracle-difference.jsonl"
            head = [f"# a difference between the reference and Kafka's coordinator at line {d.line} "
                    f"({d.what}: {', '.join(d.fields)})",
                    f"# reference: {json.dumps(d.reference)}", f"# Kafka:     {json.dumps(d.kafka)}"]
            if faults:
                head.append(f"# the reference ran with --fault {' --fault '.join(sorted(faults))}")
            # the comment lines come first: the script's config line stays the first step
            path.write_text("\n".join(head + self.script) + "\n")
            return path

        def _tick(self, gap: int) -> int:
            self.now += gap
            return self.now

        def _has_id(self, alias: str) -> bool:
            c = self.ref.coordinator
            return c is not None and alias in c.id_owner.values()

        def _generation(self, stale: bool) -> int:
            gen = self.state.get("generation") or 0
            return gen - 1 if stale else gen

        def _identity(self, alias: str) -> dict[str, Any]:
            member = "$self" if self._has_id(alias) else "ghost"
            return {"member_id": member, "instance_id": STATIC.get(alias)}

        # ------------------------------------------------------------ rules
        @initialize(delay=st.sampled_from([0, 100, 3000]), max_size=st.sampled_from([None, None, 2]))
        def configure(self, delay: int, max_size: int | None) -> None:
            self._send({"config": {"initial_rebalance_delay_ms": delay, "group_max_size": max_size}})

        @rule(alias=st.sampled_from(MEMBERS), rejoin=st.booleans(), version=st.sampled_from([9, 9, 3]),
              protocols=st.sampled_from(PROTOCOLS), gap=st.sampled_from([0, 1, 10]),
              session=st.sampled_from([10000, 6000]))
        def join(self, alias: str, rejoin: bool, version: int, protocols: list[str], gap: int, session: int) -> None:
            member = "$self" if rejoin and self._has_id(alias) else ""
            self._send({"at": self._tick(gap), "from": alias, "send": "JoinGroup", "member_id": member,
                        "instance_id": STATIC.get(alias), "protocols": protocols, "version": version,
                        "session_timeout_ms": session, "rebalance_timeout_ms": 20000})

        @precondition(lambda self: bool(self.state.get("members")))
        @rule(alias=st.sampled_from(MEMBERS), stale=st.booleans(), gap=st.sampled_from([0, 1, 10]))
        def sync(self, alias: str, stale: bool, gap: int) -> None:
            step: dict[str, Any] = {"at": self._tick(gap), "from": alias, "send": "SyncGroup",
                                    **self._identity(alias), "generation": self._generation(stale)}
            if self.state.get("leader") == alias:
                members = [m for m in self.state.get("members", []) if self._has_id(m)]
                step["assignments"] = {m: [["t", i]] for i, m in enumerate(members)}
            self._send(step)

        @rule(alias=st.sampled_from(MEMBERS), stale=st.booleans(), gap=st.sampled_from([0, 1, 10, 1000]))
        def heartbeat(self, alias: str, stale: bool, gap: int) -> None:
            self._send({"at": self._tick(gap), "from": alias, "send": "Heartbeat", **self._identity(alias),
                        "generation": self._generation(stale)})

        @rule(alias=st.sampled_from(MEMBERS), gap=st.sampled_from([0, 1, 10]))
        def leave(self, alias: str, gap: int) -> None:
            self._send({"at": self._tick(gap), "from": alias, "send": "LeaveGroup",
                        "members": [self._identity(alias)]})

        @rule(alias=st.sampled_from(MEMBERS), stale=st.booleans(), offset=st.integers(0, 9),
              gap=st.sampled_from([0, 1, 10]))
        def commit(self, alias: str, stale: bool, offset: int, gap: int) -> None:
            self._send({"at": self._tick(gap), "from": alias, "send": "OffsetCommit", **self._identity(alias),
                        "generation": self._generation(stale), "offsets": [["t", 0, offset]]})

        @rule(gap=st.sampled_from([0, 5]))
        def fetch(self, gap: int) -> None:
            self._send({"at": self._tick(gap), "from": "X", "send": "OffsetFetch"})

        @rule(gap=st.sampled_from([100, 3000, 6001, 10001, 20001, 300001]))
        def advance(self, gap: int) -> None:
            self._send({"at": self._tick(gap), "advance": True})

        @rule(error=st.sampled_from(["NOT_ENOUGH_REPLICAS", "NOT_LEADER_OR_FOLLOWER"]))
        def store_fails(self, error: str) -> None:
            self._send({"at": self._tick(0), "fault": "store_fails", "error": error})

        @rule()
        def failover(self) -> None:
            self._send({"at": self._tick(1), "fault": "unload"})
            self._send({"at": self._tick(1), "fault": "load"})

    return OracleMachine
