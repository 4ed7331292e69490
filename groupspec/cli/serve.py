"""`groupspec serve`: the reference group coordinator on the Kafka wire protocol, for real clients."""
from __future__ import annotations

import json
import os
import signal
import socket
import sys

import click

from ._common import FiniteFloat, OutputPath, UserError, atomic_output, make_console, read_text


def register(group: click.Group) -> None:
    group.add_command(serve)


MAX_PARTITIONS = 1_000_000  # partitions of one topic given with --partitions (a consumer script takes as many: it replays)
INT32_MAX = 2**31 - 1  # Kafka's INT configs; the heartbeat interval is an int32 of ConsumerGroupHeartbeat's answer


def _parse_partitions(text: str) -> dict[str, int]:
    topics: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, sep, count = item.partition("=")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise UserError(f"--partitions {text!r}: expected TOPIC=COUNT[,TOPIC=COUNT...] with COUNT >= 1, e.g. t=6")
        if name in topics:
            raise UserError(f"--partitions {text!r}: topic {name!r} is given twice")
        if int(count) > MAX_PARTITIONS:  # every partition is served (a typo of 10^11 hung the start-up)
            raise UserError(f"--partitions {text!r}: {name} has more partitions than the {MAX_PARTITIONS:,} served")
        topics[name] = int(count)
    return topics  # "" = no topics at start (clients make them with CreateTopics)


def _check_port(host: str, port: int, brokers: int) -> None:
    if port == 0:
        return
    for node in range(brokers):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port + node))
            except OSError as e:
                raise UserError(f"--port {port}: cannot listen on {host}:{port + node} (node {node}): {e.strerror}") from None


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=9092, show_default=True,
              help="Port of node 0 (node N listens on PORT+N); 0 picks free ports.")
@click.option("--partitions", "partitions_text", default="t=6", show_default=True,
              help="Topics and their partition counts, e.g. t=6,u=3 ('' for none: clients create them).")
@click.option("--protocol", type=click.Choice(["classic", "consumer", "both"]), default="classic", show_default=True,
              help="Group protocols served: classic (JoinGroup/SyncGroup/Heartbeat), consumer (KIP-848 "
                   "ConsumerGroupHeartbeat), or both.")
@click.option("--consumer-heartbeat-interval-ms", type=click.IntRange(1, INT32_MAX), default=5000, show_default=True,
              help="group.consumer.heartbeat.interval.ms (the consumer protocol's heartbeat interval; an int32 on the "
                   "wire); below --consumer-session-timeout-ms, as Kafka requires.")
@click.option("--consumer-session-timeout-ms", type=click.IntRange(1, INT32_MAX), default=45000, show_default=True,
              help="group.consumer.session.timeout.ms (the consumer protocol's session timeout).")
@click.option("--brokers", type=click.IntRange(1, 16), default=2, show_default=True,
              help="Nodes in the cluster (the coordinator moves between them on failover).")
@click.option("--initial-rebalance-delay-ms", type=click.IntRange(0, None), default=3000, show_default=True,
              help="group.initial.rebalance.delay.ms of the coordinator.")
@click.option("--fault", "faults", multiple=True, metavar="JSON",
              help='A fault rule, e.g. \'{"on": {"api": "Heartbeat", "nth": 5}, "do": "error", "error": "REBALANCE_IN_PROGRESS"}\'. Repeatable.')
@click.option("--fault-script", type=click.Path(dir_okay=False), default=None,
              help="Fault rules from a file (JSON Lines, one rule a line, # comments).")
@click.option("--failover-at", type=click.IntRange(0, None), default=None, metavar="MS",
              help="Shortcut: move the coordinator to the next node at MS after start.")
@click.option("--transcript", "transcript_dir", type=OutputPath(kind="dir"), default=None,
              help="On exit, write DIR/script.jsonl (replayable with `groupspec coordinator replay`) and DIR/transcript.jsonl.")
@click.option("--record-group", default=None, help="Group whose state lines the transcript shows (default: the first group).")
@click.option("--duration", type=FiniteFloat(0, None, min_open=True), default=None, metavar="SECONDS",
              help="Stop after SECONDS (default: run until interrupted).")
@click.option("--connections-max-idle-ms", type=click.IntRange(1, None), default=600_000, show_default=True,
              help="connections.max.idle.ms: a connection with no traffic that long is closed (Kafka's default).")
@click.option("--max-connections", type=click.IntRange(1, 2**31 - 1), default=2**31 - 1, show_default=True,
              help="max.connections: connections open at once; past it new ones wait to be accepted, as with Kafka.")
@click.option("--member-id-seed", type=click.IntRange(0, 2**63 - 1), default=None, metavar="SEED",
              help="Seed of the random member ids (default: a fresh one per start, printed and recorded; give "
                   "it again only to replay a session: ids then repeat).")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines on stdout: one line with the listeners at start, one with the statistics at exit.")
def serve(port: int, partitions_text: str, protocol: str, consumer_heartbeat_interval_ms: int,
          consumer_session_timeout_ms: int, brokers: int, initial_rebalance_delay_ms: int,
          faults: tuple[str, ...], fault_script: str | None, failover_at: int | None, transcript_dir: str | None,
          record_group: str | None, duration: float | None, connections_max_idle_ms: int, max_connections: int,
          member_id_seed: int | None, as_json: bool) -> None:
    """Serve the reference group coordinator to real Kafka clients on loopback.

    \b
    Examples:
      groupspec serve --port 9092 --partitions t=6
      groupspec serve --port 9092 --partitions t=6,u=3 --protocol both --transcript out/
    """
    import asyncio
    import gc

    from groupspec.reference.classic import CoordinatorConfig
    from groupspec.serve import Cluster, FaultError, FaultPlan, Server
    from groupspec.serve import run_loop

    if consumer_heartbeat_interval_ms >= consumer_session_timeout_ms:  # Kafka's GroupCoordinatorConfig refuses it too
        raise UserError(f"--consumer-heartbeat-interval-ms {consumer_heartbeat_interval_ms}: must be less than "
                        f"--consumer-session-timeout-ms ({consumer_session_timeout_ms}), as Kafka requires of "
                        "group.consumer.heartbeat.interval.ms and group.consumer.session.timeout.ms")
    topics = _parse_partitions(partitions_text)
    plan = FaultPlan()
    origins: list[str] = []  # where each rule of the plan was given, for the messages
    try:
        if fault_script is not None:
            text = read_text(fault_script, name=f"--fault-script {fault_script}", dash=False)
            try:
                plan = FaultPlan.parse_lines(text, source=fault_script)
            except FaultError as e:
                raise UserError(f"--fault-script {e}") from None
            origins += [f"--fault-script {fault_script}: line {n}" for n, raw in enumerate(text.splitlines(), start=1)
                        if raw.strip() and not raw.strip().startswith("#")]  # (the lines parse_lines made rules of)
        for i, raw in enumerate(faults, start=1):
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as e:
                raise UserError(f"--fault #{i}: bad JSON: {e.msg} (column {e.colno})") from None
            try:
                plan.add(FaultPlan.parse_rule(obj))
            except FaultError as e:
                raise UserError(f"--fault #{i}: {e}") from None
            origins.append(f"--fault #{i}")
        if failover_at is not None:
            plan.add(FaultPlan.parse_rule({"on": {"at_ms": failover_at}, "do": "failover"}))
            origins.append(f"--failover-at {failover_at}")
    except FaultError as e:
        raise UserError(f"fault rule: {e}") from None
    for rule, origin in zip(plan.rules, origins):
        if rule.action == "failover" and brokers == 1:  # it would "move" the coordinator onto the node it is on
            raise UserError(f"{origin}: a failover moves the coordinator to another node, and --brokers 1 has none "
                            "(give --brokers 2 or more)")
    if transcript_dir is not None:
        transcript_dir = os.fspath(transcript_dir)  # checked while parsing (OutputPath); created at exit
    _check_port("127.0.0.1", port, brokers)

    cluster = Cluster(topics=topics, brokers=brokers, plan=plan, record_group=record_group,
                      record=transcript_dir is not None, protocol=protocol,
                      consumer_session_timeout_ms=consumer_session_timeout_ms,
                      consumer_heartbeat_interval_ms=consumer_heartbeat_interval_ms, member_id_seed=member_id_seed,
                      config=CoordinatorConfig(initial_rebalance_delay_ms=initial_rebalance_delay_ms))
    server = Server(cluster, port=port, connections_max_idle_ms=connections_max_idle_ms,
                    max_connections=max_connections)
    console = make_console(to_stderr=as_json)

    def ready() -> None:
        listeners = [{"node": n, "host": cluster.host, "port": p} for n, p in enumerate(cluster.ports)]
        if as_json:
            _json_line({"listening": listeners, "bootstrap": server.bootstrap, "member_id_seed": cluster.member_id_seed})
        else:
            console.print(f"groupspec serve: bootstrap [bold]{server.bootstrap}[/bold]; nodes "
                          + ", ".join(f"{x['node']}={x['host']}:{x['port']}" for x in listeners)
                          + f"; topics {', '.join(f'{t}({n})' for t, n in topics.items())}; "
                          + f"{len(plan.rules)} fault rule(s); member id seed {cluster.member_id_seed}. Ctrl-C stops.")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        task = asyncio.create_task(server.run(ready))
        try:
            await asyncio.wait_for(stop.wait(), timeout=duration)
        except asyncio.TimeoutError:
            pass
        server._stopping.set()  # type: ignore[union-attr]
        await task

    # what is loaded by now (modules, the codec's tables, the cluster) lives as long as the process: out of the
    # collector's full scans, which serving would otherwise pay for again and again (issue 32: 8 % of a heartbeat)
    gc.freeze()
    try:
        run_loop(main())
    except OSError as e:
        raise UserError(f"--port {port}: cannot listen ({e.strerror})") from None
    if transcript_dir is not None and cluster.recorder is not None:
        # the recorded group: a consumer-protocol group's script when there is one, else the classic one
        rec = cluster.consumer if cluster.consumer.script else cluster.recorder
        try:  # (checked while parsing; the directory may have gone since, or be one nothing can be made in)
            if not os.path.isdir(transcript_dir):
                os.mkdir(transcript_dir)  # (not its parents: as OutputPath checked it)
            # as every output of the command line: a whole file or none, with the mode the umask gives (a
            # temporary file of mkstemp's made them 0600, by accident: a transcript holds nothing secret)
            for name, text in (("script.jsonl", rec.script_text()), ("transcript.jsonl", rec.transcript_text())):
                with atomic_output(os.path.join(transcript_dir, name)) as tmp:
                    tmp.write_text(text, encoding="utf-8")
        except OSError as e:
            raise UserError(f"--transcript {transcript_dir}: cannot write ({e.strerror or e})") from None
        except UserError as e:  # (atomic_output's: the file named)
            raise UserError(f"--transcript {e}") from None
    if as_json:
        _json_line({"stats": cluster.stats})
    else:
        from rich.table import Table

        table = Table(title="requests served")
        table.add_column("API")
        table.add_column("count", justify="right")
        for name, count in sorted(cluster.stats.items()):
            table.add_row(name, str(count))
        console.print(table)


def _json_line(doc: dict[str, object]) -> None:
    """``--json``: stdout is JSON Lines, one document a line, each parseable alone and flushed at once (a program
    reads the listening line while the server runs, the statistics when it stops)."""
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()
