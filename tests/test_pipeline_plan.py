"""The sweep's tasks (pipeline/sweep.py: point_cost, plan_tasks) and the local daemon's socket option
(pipeline/daemon.py); no Spark here (the Spark tests compare the rows the tasks give with the rows
computed without Spark)."""
from __future__ import annotations

import os
import socket

import pytest

from groupspec.pipeline.daemon import acknowledge_now
from groupspec.pipeline.grid import PRESETS, preset
from groupspec.pipeline.sweep import FIRST_SHARE, SMALLEST_SHARE, plan_tasks, point_cost


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("slots", [1, 2, 5])
def test_every_point_goes_to_exactly_one_task(name: str, slots: int) -> None:
    g = preset(name)
    tasks = plan_tasks(list(g.points), slots)
    ids = [p.point_id for t in tasks for p in t]
    assert sorted(ids) == sorted(p.point_id for p in g.points)
    assert all(tasks)


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_tasks_shrink_and_the_last_ones_are_small(slots: int) -> None:
    points = list(preset("history").points)
    tasks = plan_tasks(points, slots)
    cost = [sum(point_cost(p) for p in t) for t in tasks]
    total = sum(cost)
    # the first task takes its share of everything; none is more than that (but a single point)
    assert cost[0] <= total / (FIRST_SHARE * slots) or len(tasks[0]) == 1
    # later tasks never outgrow an earlier one by more than one point's cost
    dearest = max(point_cost(p) for p in points)
    assert all(b <= a + dearest for a, b in zip(cost, cost[1:]))
    # the tasks at the end, which decide when the job ends, are small
    assert cost[-1] <= total / (SMALLEST_SHARE * slots) + dearest
    assert max(cost[-slots:]) < total / (4 * slots)
    # and there are few of them: a task's fixed cost stays small against its work
    assert len(tasks) <= 3 * FIRST_SHARE * slots + SMALLEST_SHARE * slots


def test_the_dearest_points_come_first() -> None:
    points = list(preset("history").points)
    tasks = plan_tasks(points, 2)
    flat = [p for t in tasks for p in t]
    costs = [point_cost(p) for p in flat]
    assert costs == sorted(costs, reverse=True)


def test_the_cost_estimate_ranks_what_costs_more() -> None:
    by_id = {p.point_id: p for p in preset("history").points}
    sync = [p for p in by_id.values() if p.commit == "sync" and p.poll_interval_ms == 200 and p.members == 6]
    auto = [p for p in by_id.values() if p.commit == "auto" and p.poll_interval_ms == 200 and p.members == 6
            and p.churn == "rolling-restart"]
    zk = [p for p in by_id.values() if p.protocol == "zookeeper"]
    assert sync and auto and zk
    # a commit at every poll costs several times the run without; ZooKeeper's group is cheap
    assert min(map(point_cost, sync)) > 3 * max(map(point_cost, auto))
    assert max(map(point_cost, zk)) < min(map(point_cost, auto)) / 3


def test_quickack_is_set_on_a_tcp_connection_and_ignored_elsewhere() -> None:
    if not hasattr(socket, "TCP_QUICKACK"):
        pytest.skip("no TCP_QUICKACK on this platform")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname())
    conn, _ = srv.accept()
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) == 0
        with os.fdopen(os.dup(conn.fileno()), "rb") as f:
            acknowledge_now(f)
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) == 1
        conn.sendall(b"x")  # the connection is still open after the duplicate was closed
        assert cli.recv(1) == b"x"
    finally:
        for s in (cli, conn, srv):
            s.close()
    r, w = os.pipe()
    with os.fdopen(r, "rb") as f:
        acknowledge_now(f)  # not a socket: nothing happens
    os.close(w)
