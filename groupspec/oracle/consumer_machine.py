"""Differential testing of the next-generation protocol (KIP-848): a Hypothesis state machine sends generated
ConsumerGroupHeartbeat and OffsetCommit requests to the reference's ``ConsumerGroupCoordinator`` and to Kafka's,
and compares after every step (``consumer.ConsumerPair``; epochs as the reference counts them, ``epoch-origin``).

Members ``A``, ``B``, ``C`` (dynamic) and ``S`` (static, instance ``s``): joins, heartbeats with the member's
current epoch (``"$self"``, resolved on each side) or a stale one, with the partitions the member owns, full or
partial; leaves (epoch -1, a static member's -2); commits; time passing past the session timeout. A difference
is written out as a script (``oracle-consumer-difference.jsonl``) that replays with
``groupspec coordinator replay FILE --against kafka``.
"""
from __future__ import annotations

import json
import pathlib
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from .consumer import ConsumerPair, compare_consumer_step
from .machine import default_out_dir
from .process import KafkaOracle

__all__ = ["make_consumer_machine"]

MEMBERS = ("A", "B", "C", "S")
CONFIG = {"group_protocol": "consumer", "topics": {"t": 4}, "session_timeout_ms": 45000,
          "heartbeat_interval_ms": 5000}


def make_consumer_machine(oracle: KafkaOracle, faults: frozenset[str] = frozenset(),
                          out_dir: pathlib.Path | None = None) -> type[RuleBasedStateMachine]:
    out = out_dir or default_out_dir()

    class ConsumerOracleMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.now = 0
            self.script = [json.dumps({"config": CONFIG})]
            self.pair: ConsumerPair | None = None
            self.state: dict[str, Any] = {"members": {}}
            self.diverged = False

        @initialize()
        def start(self) -> None:
            self.pair = ConsumerPair(CONFIG, oracle, faults)

        def _send(self, step: dict[str, Any]) -> None:
            if self.pair is None:
                return
            self.script.append(json.dumps(step))
            if self.diverged:  # the reference still runs: the rules read its state, which must not depend on Kafka
                self.state = json.loads(self.pair._ref_step(step)[-1])
                return
            ref_lines, kafka_lines = self.pair.step(step)
            self.state = json.loads(ref_lines[-1])
            found, stopped = compare_consumer_step(len(self.script), step, ref_lines, kafka_lines)
            bad = [d for d in found if d.explained_by is None]
            if bad:
                out.mkdir(parents=True, exist_ok=True)
                path = out / "oracle-consumer-difference.jsonl"
                d = bad[0]
                head = [f"# a difference between the reference and Kafka's coordinator at step {len(self.script)} "
                        f"({d.what}: {', '.join(d.fields)})",
                        f"# reference: {json.dumps(d.reference)}", f"# Kafka:     {json.dumps(d.kafka)}"]
                path.write_text("\n".join(head + self.script) + "\n")
                raise AssertionError(f"the reference and Kafka's coordinator differ at step {len(self.script)} "
                                     f"({', '.join(d.fields)}); the script is {path}\n"
                                     f"replay: groupspec coordinator replay {path} --against kafka\n"
                                     + "\n".join(self.script))
            if stopped:
                self.diverged = True

        def _tick(self, gap: int) -> int:
            self.now += gap
            return self.now

        def _owned(self, alias: str) -> list[list[Any]]:
            owned: list[list[Any]] = self.state.get("members", {}).get(alias, {}).get("assigned", [])
            return owned

        @rule(alias=st.sampled_from(MEMBERS), gap=st.sampled_from([0, 1, 100]))
        def join(self, alias: str, gap: int) -> None:
            self._send({"at": self._tick(gap), "from": alias, "send": "ConsumerGroupHeartbeat", "member_epoch": 0,
                        "instance_id": "s" if alias == "S" else None, "rebalance_timeout_ms": 60000,
                        "subscribed_topic_names": ["t"], "owned": []})

        @rule(alias=st.sampled_from(MEMBERS), full=st.booleans(), with_owned=st.booleans(),
              gap=st.sampled_from([0, 1, 100, 3000]))
        def heartbeat(self, alias: str, full: bool, with_owned: bool, gap: int) -> None:
            # a client heartbeats only with an epoch it was given (epoch 0 is a join, with nothing owned: the
            # join rule); the request validation of Kafka's service is not what this machine explores
            if self.pair is None or self.pair.ref_epoch.get(alias, 0) == 0:
                return
            step: dict[str, Any] = {"at": self._tick(gap), "from": alias, "send": "ConsumerGroupHeartbeat",
                                    "member_epoch": "$self"}
            if alias == "S":
                step["instance_id"] = "s"
            if with_owned or full:
                step["owned"] = self._owned(alias)
            if full:
                step.update({"rebalance_timeout_ms": 60000, "subscribed_topic_names": ["t"]})
            self._send(step)

        @rule(alias=st.sampled_from(MEMBERS), delta=st.sampled_from([-1, 1]))
        def stale_heartbeat(self, alias: str, delta: int) -> None:
            epoch = self.state.get("members", {}).get(alias, {}).get("epoch")
            if epoch is None or epoch + delta <= 0:
                return
            self._send({"at": self._tick(1), "from": alias, "send": "ConsumerGroupHeartbeat",
                        "member_epoch": epoch + delta, "owned": self._owned(alias)})

        @rule(alias=st.sampled_from(MEMBERS), static_leave=st.booleans())
        def leave(self, alias: str, static_leave: bool) -> None:
            epoch = -2 if static_leave and alias == "S" else -1
            self._send({"at": self._tick(1), "from": alias, "send": "ConsumerGroupHeartbeat", "member_epoch": epoch,
                        "instance_id": "s" if alias == "S" else None})

        @rule(alias=st.sampled_from(MEMBERS), stale=st.booleans())
        def commit(self, alias: str, stale: bool) -> None:
            epoch = self.state.get("members", {}).get(alias, {}).get("epoch", 0)
            self._send({"at": self._tick(1), "from": alias, "send": "OffsetCommit",
                        "member_epoch": epoch - 1 if stale and epoch > 1 else "$self", "offsets": [["t", 0, 5]]})

        @rule(gap=st.sampled_from([1000, 10001, 45001, 60001]))
        def advance(self, gap: int) -> None:
            self._send({"at": self._tick(gap), "advance": True})

    return ConsumerOracleMachine
