"""`groupspec realstack run|matrix|list`: real Kafka clients against real coordinators, traced and checked."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, ParamSpec, TypeVar

import click

from ._common import EXIT_OK, EXIT_VIOLATION, CommandGroup, OutputPath, UserError, emit_json, make_console

_P = ParamSpec("_P")
_R = TypeVar("_R")

EXIT_STACK = 3  # the stack could not run (a coordinator did not start)


def register(group: click.Group) -> None:
    group.add_command(realstack)


@click.group(cls=CommandGroup)
def realstack() -> None:
    """Real clients × real coordinators: run a scenario, record a trace, check it."""


def _choices() -> tuple[list[str], list[str], list[str]]:
    from groupspec.realstack import CLIENTS, COORDINATORS, SCENARIOS

    return list(SCENARIOS), list(CLIENTS), list(COORDINATORS)


_MADE: list[Path] = []  # --out folders this run created (removed again if the run is stopped or fails)


def _out_dir(out: str | Path | None) -> str | None:
    if out is None:
        return None
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    if not p.exists():
        _MADE.append(p)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--out {out}: cannot create ({e.strerror})") from None
    return str(p)


def _unmake_on_failure(work: Callable[_P, _R]) -> Callable[_P, _R]:  # a decorator of the commands' callbacks
    """An --out folder the command created is removed when the run is stopped (Ctrl-C, SIGTERM) or crashes: a
    folder left behind would hold half a run. A run that ends, well or not (its logs say why), keeps it."""
    import functools

    @functools.wraps(work)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _MADE.clear()
        try:
            return work(*args, **kwargs)
        except click.exceptions.Exit:  # the normal end (exit status 0 or 1)
            raise
        except (KeyboardInterrupt, Exception):
            import shutil

            for d in _MADE:
                shutil.rmtree(d, ignore_errors=True)
            raise
        finally:
            _MADE.clear()

    return wrapper


def _check(value: str, allowed: list[str], what: str, option: str = "") -> str:
    """``value`` if it is one of ``allowed``; else one line led by the option it came from (``--client: ...``)."""
    if value not in allowed:
        lead = f"{option}: " if option else ""
        raise UserError(f"{lead}unknown {what} {value!r}; choose from {', '.join(allowed)}")
    return value


@realstack.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_(as_json: bool) -> None:
    """List scenarios, clients and coordinators.

    \b
    Examples:
      groupspec realstack list
    """
    from groupspec.realstack import CLIENTS, COORDINATORS, SCENARIOS

    doc: dict[str, list[Any]] = {"scenarios": [{"name": s.name, "summary": s.summary, "default_protocol": s.default_protocol}
                         for s in SCENARIOS.values()],
           "clients": list(CLIENTS),
           "coordinators": [{"name": k, "summary": v.summary} for k, v in COORDINATORS.items()]}
    if as_json:
        emit_json(doc)
        return
    for s in doc["scenarios"]:
        click.echo(f"scenario    {s['name']:30} {s['summary']} (default protocol: {s['default_protocol']})")
    for c in doc["clients"]:
        click.echo(f"client      {c}")
    for k in doc["coordinators"]:
        click.echo(f"coordinator {k['name']:30} {k['summary']}")


def _row_table(rows: list[dict[str, Any]], title: str) -> Any:
    from rich.table import Table

    t = Table(title=title)
    for col in ("scenario", "client", "protocol", "coordinator", "verdict", "violated", "seconds", "ended"):
        t.add_column(col)
    for r in rows:
        if r.get("error"):
            verdict = "[yellow]cannot run[/yellow]"
            viol = r["error"][:80]
        else:
            verdict = "[green]held[/green]" if r["ok"] else "[bold red]VIOLATED[/bold red]"
            viol = ", ".join(r["violated"])
            if r.get("silent"):
                verdict += f" [yellow](silent: {', '.join(r['silent'])})[/yellow]"
        ended = r.get("ended", "")
        t.add_row(r["scenario"], r["client"], r["protocol"], r["coordinator"], verdict, viol, str(r.get("seconds", "")),
                  "[yellow]limit[/yellow]" if ended == "limit" else ended)
    return t


def _broker_config(items: tuple[str, ...], coordinator: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise UserError(f"--broker-config {item!r}: expected KEY=VALUE")
        settings[key.strip()] = value.strip()
    if settings and coordinator != "apache-kafka":
        raise UserError(f"--broker-config: only the apache-kafka coordinator takes broker settings (not {coordinator})")
    return settings


@realstack.command("run")
@click.argument("scenario")
@click.option("--client", required=True, help="confluent-kafka | kafka-python | aiokafka | kafkajs | java | franz-go | sarama")
@click.option("--coordinator", required=True, help="librdkafka-mock | tansu | groupspec | apache-kafka")
@click.option("--protocol", type=click.Choice(["eager", "cooperative", "static", "consumer", "consumer-range",
                                               "consumer-static", "static-cooperative"]), default=None,
              help="eager (range), cooperative (cooperative-sticky), static (range + group.instance.id) or consumer "
                   "(group.protocol=consumer, KIP-848, the broker's uniform assignor; consumer-range: "
                   "group.remote.assignor=range; consumer-static: with group.instance.id; confluent-kafka and java "
                   "only), static-cooperative (cooperative-sticky + group.instance.id); default: the scenario's")
@click.option("--broker-config", "broker_config", multiple=True, metavar="KEY=VALUE",
              help="A broker setting for apache-kafka (repeatable), e.g. group.consumer.migration.policy=upgrade; "
                   "written in the trace's header.")
@click.option("--out", "out", type=OutputPath(kind="dir"), default=None, help="Directory for the trace (.jsonl) and its verdict (.verdict.json).")
@click.option("--coordinator-log", is_flag=True,
              help="Ask the coordinator for its debug log of the group protocol (Tansu: RUST_LOG) and keep it as RUN.coordinator.log.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_unmake_on_failure
def run_cmd(scenario: str, client: str, coordinator: str, protocol: str | None, out: str | None,
            coordinator_log: bool, as_json: bool, broker_config: tuple[str, ...] = ()) -> None:
    """Run SCENARIO with CLIENT consumers against COORDINATOR; record and check the trace.

    Exit status: 0 every invariant held, 1 one was violated, 2 bad arguments, 3 the stack could not run.

    \b
    Examples:
      groupspec realstack run new-consumer-joins --client java --coordinator apache-kafka
      groupspec realstack run consumer-crashes --client confluent-kafka --coordinator tansu
      groupspec realstack run new-consumer-joins --client confluent-kafka --coordinator apache-kafka --protocol consumer
    """
    from groupspec.realstack import HarnessError, run
    from groupspec.realstack import ClientMissing, supported

    scenarios, clients, coords = _choices()
    _check(scenario, scenarios, "scenario")
    _check(client, clients, "client", "--client")
    _check(coordinator, coords, "coordinator", "--coordinator")
    why = supported(client, protocol or "eager")
    if why:
        raise UserError(f"--protocol {protocol}: {why}")
    settings = _broker_config(broker_config, coordinator)
    out_dir = _out_dir(out)
    err = make_console(to_stderr=True)
    try:
        with err.status(f"running {scenario} ({client} against {coordinator})") as status:
            res = run(scenario, client, coordinator, protocol, out_dir, progress=lambda m: status.update(f"{scenario}: {m}"),
                      coordinator_log=coordinator_log, **({"coordinator_settings": settings} if settings else {}))
    except ClientMissing as e:
        click.echo(f"groupspec: error: {e}", err=True)
        sys.exit(EXIT_STACK)
    except HarnessError as e:
        click.echo(f"groupspec: error: {coordinator}: {e}", err=True)
        sys.exit(EXIT_STACK)
    row = res.summary()
    if as_json:
        emit_json(row)
    else:
        console = make_console()
        console.print(_row_table([row], "groupspec realstack run"))
        console.print(f"trace {res.trace_path}\nverdict {res.verdict_path}", highlight=False)
        for n in res.notes:
            console.print(f"note: {n}", highlight=False, markup=False)
        console.print(f"check it again: groupspec trace check {res.trace_path}", highlight=False)
    if not res.judged:
        click.echo(f"groupspec: error: {client} against {coordinator}: no consumer recorded anything "
                   f"(see {Path(res.trace_path or '').with_suffix('.log')})", err=True)
        sys.exit(EXIT_STACK)
    raise click.exceptions.Exit(EXIT_OK if res.ok else EXIT_VIOLATION)


@realstack.command("matrix")
@click.option("--out", "out", type=OutputPath(kind="dir"), default="realstack-out", show_default=True, help="Directory for traces, verdicts and matrix.json.")
@click.option("--scenarios", default=None, help="Comma list (default: all).")
@click.option("--clients", default=None, help="Comma list of CLIENT or CLIENT:PROTOCOL (default: every client, "
                                             "confluent-kafka also cooperative).")
@click.option("--coordinators", "--coordinator", "coordinators", default=None, help="Comma list (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_unmake_on_failure
def matrix(out: str, scenarios: str | None, clients: str | None, coordinators: str | None, as_json: bool) -> None:
    """Every scenario for every client × coordinator pair: traces, verdicts and a summary (matrix.json).

    \b
    Examples:
      groupspec realstack matrix --coordinator apache-kafka --out out/matrix
      groupspec realstack matrix --clients java,confluent-kafka --scenarios new-consumer-joins --out out/m
    """
    from groupspec.realstack import PROTOCOLS
    from groupspec.realstack import default_cells, run_matrix

    all_sc, all_cl, all_co = _choices()
    for option, given in (("--scenarios", scenarios), ("--clients", clients), ("--coordinators", coordinators)):
        if given is not None and not given.strip(", "):  # `--clients "$CLIENTS"` with the variable unset: not all
            raise UserError(f"{option} {given!r}: names none (leave the option out for all of them)")
    scenarios, clients, coordinators = scenarios or "", clients or "", coordinators or ""
    sc = [_check(s, all_sc, "scenario", "--scenarios") for s in scenarios.split(",") if s] or all_sc
    co = [_check(c, all_co, "coordinator", "--coordinators") for c in coordinators.split(",") if c] or all_co
    cl: list[tuple[str, str | None]] = []
    for item in [c for c in clients.split(",") if c]:
        name, _, proto = item.partition(":")
        _check(name, all_cl, "client", "--clients")
        if proto and proto not in PROTOCOLS:
            raise UserError(f"--clients {item}: unknown protocol {proto!r}; choose from {', '.join(PROTOCOLS)}")
        cl.append((name, proto or None))
    cl = cl or default_cells()
    out_dir = _out_dir(out)
    assert out_dir is not None
    from rich.progress import Progress

    err = make_console(to_stderr=True)
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("realstack matrix", total=len(sc) * len(cl) * len(co))
        rows = run_matrix(sc, cl, co, out_dir, progress=lambda d: bar.update(task, description=d, advance=0),
                          done=lambda: bar.advance(task))
    ok = all(r.get("ok") or r.get("error") for r in rows)
    if as_json:
        emit_json({"ok": ok, "runs": rows})
    else:
        console = make_console()
        console.print(_row_table(rows, f"groupspec realstack matrix ({out_dir}/matrix.json)"))
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)
