"""The simulated network: delay, loss, duplication and reordering as a parameter of the run.

Theory of operation
-------------------
Actors (consumers, brokers) never see the network: the simulator hands every outgoing message to
:meth:`Network.send`, which decides - with the run's single seeded ``random.Random`` - whether
and when copies of it are delivered, and returns the resulting :class:`Envelope` objects for the
simulator's event queue. This keeps network semantics out of the actors, as stateright's
``Network`` and kafka-tlaplus's ``network.tla`` do.

* **delay**: uniform integer in ``[min_delay_ms, max_delay_ms]``.
* **FIFO per channel** (a TCP connection is ordered): by default a copy is never delivered before an
  earlier message on the same ``(src, dst, conn)`` channel; with probability ``reorder`` a copy
  ignores that rule (it may overtake earlier messages), which models a reconnect racing an old
  connection or a multi-path broker.
* **loss**: with probability ``loss`` the message is dropped. The sender only notices through its
  own request timeout, as a real client does.
* **duplication**: with probability ``duplicate`` a second copy is delivered later. Kafka's
  request/response pairing makes duplicates visible only as repeated requests; the consumer ignores
  a second reply to the same correlation id.
* **connections**: every envelope carries the sender's connection number. The simulator drops a
  reply whose connection is older than the receiver's current one (a reply on a stale connection
  cannot arrive after a reconnect), as kafka-tlaplus does with ``connection_id``.

Counters (``sent``, ``delivered``, ``lost``, ``duplicated``, ``reordered``) are kept for the
bench and the CLI.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

__all__ = ["NetworkConfig", "Envelope", "Network"]


@dataclass(frozen=True)
class NetworkConfig:
    """Network semantics of one run."""

    min_delay_ms: int = 1
    max_delay_ms: int = 5
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.min_delay_ms <= self.max_delay_ms:
            raise ValueError(f"network delay range [{self.min_delay_ms}, {self.max_delay_ms}] is not valid")
        for name in ("loss", "duplicate", "reorder"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"network {name} probability {v} is not in [0, 1]")


@dataclass(slots=True)
class Envelope:
    """One copy of a message in flight (never changed once made: not ``frozen`` only because a frozen slotted
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, five times the cost, and a run makes
    one per message)."""

    deliver_at: int
    src: str
    dst: str
    conn: int
    corr: int
    payload: Any
    is_reply: bool
    copy: int = 0  # 0 = original, 1 = duplicate


class Network:
    """Decides the fate of each message; owns no actor state."""

    def __init__(self, config: NetworkConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self._last: dict[tuple[str, str, int], int] = {}
        self.sent = 0
        self.delivered = 0
        self.lost = 0
        self.duplicated = 0
        self.reordered = 0
        self.dropped_stale = 0

    def _delay(self) -> int:
        c = self.config
        if c.min_delay_ms == c.max_delay_ms:
            return c.min_delay_ms
        # uniform over [min, max]; one random() call (cheaper than randint)
        return c.min_delay_ms + int(self.rng.random() * (c.max_delay_ms - c.min_delay_ms + 1))

    def _schedule(self, now: int, src: str, dst: str, conn: int) -> int:
        at = now + self._delay()
        key = (src, dst, conn)
        last = self._last.get(key, 0)
        if self.config.reorder and self.rng.random() < self.config.reorder:
            self.reordered += 1
            return at
        at = max(at, last)
        self._last[key] = at
        return at

    def send(self, now: int, src: str, dst: str, conn: int, corr: int, payload: Any, is_reply: bool) -> list[Envelope]:
        """Envelopes to deliver for one message (0 if lost, 2 if duplicated)."""
        self.sent += 1
        c = self.config
        if c.loss and self.rng.random() < c.loss:
            self.lost += 1
            return []
        if not (c.reorder or c.duplicate):  # the common case: _delay and _schedule inlined, the same draws
            lo, hi = c.min_delay_ms, c.max_delay_ms
            at = now + (lo if lo == hi else lo + int(self.rng.random() * (hi - lo + 1)))
            key = (src, dst, conn)
            last = self._last.get(key, 0)
            if last > at:
                at = last
            self._last[key] = at
            return [Envelope(at, src, dst, conn, corr, payload, is_reply)]
        out = [Envelope(self._schedule(now, src, dst, conn), src, dst, conn, corr, payload, is_reply)]
        if c.duplicate and self.rng.random() < c.duplicate:
            self.duplicated += 1
            out.append(Envelope(self._schedule(now, src, dst, conn), src, dst, conn, corr, payload, is_reply, 1))
        return out

    def stats(self) -> dict[str, int]:
        return {
            "sent": self.sent,
            "delivered": self.delivered,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "reordered": self.reordered,
            "dropped_stale": self.dropped_stale,
        }
