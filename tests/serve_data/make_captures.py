"""Regenerate captured_requests.jsonl: the request bytes real clients send to `groupspec serve`.

Run from the repository root: ``.venv/bin/python tests/serve_data/make_captures.py [CLIENT...]``
(default: every client; named clients' rows are replaced, the others kept). Each of kafka-python,
confluent-kafka (librdkafka) and aiokafka runs the scenario of ``tests/serve_clients.py`` (three
consumers, a producer) against a served group, and ``confluent-kafka-consumer-protocol`` runs the
KIP-848 scenario (``group.protocol=consumer`` against ``--protocol consumer``); the first frame of
every (client, API, version) is written as hex. ``tests/test_serve_wire.py`` checks that the codec
decodes each one and encodes it back to the same bytes.
"""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import serve_clients  # noqa: E402


NEXT = "confluent-kafka-consumer-protocol"


def main() -> None:
    from groupspec.serve import Cluster

    wanted = sys.argv[1:] or [*serve_clients.CLIENTS, NEXT]
    path = HERE / "captured_requests.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    rows = [r for r in rows if r["client"] not in wanted]
    original = Cluster.__post_init__

    def capturing(self: Cluster) -> None:
        original(self)
        self.capture = {}
        captures.append(self)

    Cluster.__post_init__ = capturing  # type: ignore[method-assign]
    for client in wanted:
        captures: list[Cluster] = []
        if client == NEXT:
            serve_clients.run_consumer_protocol_scenario()
        else:
            serve_clients.run_scenario(client)
        for (client_id, api_key, version), frame in sorted(captures[0].capture.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2])):
            rows.append({"client": client, "client_id": client_id, "api_key": api_key, "version": version,
                         "hex": frame.hex()})
    Cluster.__post_init__ = original  # type: ignore[method-assign]
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{len(rows)} frames")


if __name__ == "__main__":
    main()
