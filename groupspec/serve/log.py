"""An in-memory partition log: enough for consumers to fetch real records and commit their offsets.

Record batches (magic v2) are stored as the producer sent them; the only byte the log changes is
the batch's base offset (the first 8 bytes, outside the CRC, which covers attributes onward), as a
Kafka leader does when it appends. Compression, headers and timestamps are the client's business.
Fetch answers with whole batches from the one holding the fetch offset (clients skip records
below the offset they asked for, as they do with a real broker).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

__all__ = ["PartitionLog", "Topics", "BadBatch", "split_batches"]

_HEADER = 61  # bytes in a v2 record batch header


class BadBatch(ValueError):
    """Produced bytes that are not a sequence of v2 record batches."""


def split_batches(data: bytes) -> list[bytes]:
    """Cut produced bytes into record batches; raises ``BadBatch`` naming the offset of the fault."""
    out = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < _HEADER:
            raise BadBatch(f"truncated record batch at byte {pos}")
        length = struct.unpack_from(">i", data, pos + 8)[0]
        magic = data[pos + 16]
        if magic != 2:
            raise BadBatch(f"record batch at byte {pos} has magic {magic} (only v2 is supported)")
        end = pos + 12 + length
        if length < _HEADER - 12 or end > len(data):
            raise BadBatch(f"record batch at byte {pos} has bad length {length}")
        out.append(data[pos:end])
        pos = end
    return out


@dataclass
class PartitionLog:
    batches: list[tuple[int, int, bytes]] = field(default_factory=list)  # (base, last, bytes)
    end_offset: int = 0

    def append(self, data: bytes) -> int:
        """Append produced bytes; returns the base offset of the first batch."""
        batches = split_batches(data)
        first = self.end_offset
        for b in batches:
            delta = struct.unpack_from(">i", b, 23)[0]
            base = self.end_offset
            self.batches.append((base, base + delta, struct.pack(">q", base) + b[8:]))
            self.end_offset = base + delta + 1
        return first

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding ``offset``, at least one, at most ``max_bytes`` otherwise."""
        out: list[bytes] = []
        size = 0
        for base, last, data in self.batches:
            if last < offset:
                continue
            if out and size + len(data) > max_bytes:
                break
            out.append(data)
            size += len(data)
        return b"".join(out)


@dataclass
class Topics:
    """Topics by name: partition count and one log per partition."""

    logs: dict[str, list[PartitionLog]] = field(default_factory=dict)

    def create(self, name: str, partitions: int) -> None:
        if name not in self.logs:
            self.logs[name] = [PartitionLog() for _ in range(partitions)]

    def partition(self, name: str, index: int) -> PartitionLog | None:
        parts = self.logs.get(name)
        if parts is None or not 0 <= index < len(parts):
            return None
        return parts[index]
