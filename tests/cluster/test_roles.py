"""Roles (docs/cluster.md, "Roles and caps"), as real processes: 2 web + 2 worker replicas on
one PostgreSQL schema, and a web + a worker process on one SQLite file.

A message to any web replica runs on a worker (the agent's answer names the port of the process
that ran it); streaming and blocking sends through a web replica follow the worker's events;
a cancel served by a web replica stops the worker's run (its cancel hook leaves a mark); a
follow-up goes through the queue too; with a cap of N per worker the (2N+1)-th slow task waits
``submitted`` until a slot frees; killing a worker mid-task lets the other recover it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from simple_a2a.server.background import free_port

from .conftest import _schema
from .support import PG_DSN, RECOVERY_BOUND, Cluster, Replica, result, send, wait_state

AGENT = Path(__file__).with_name("roles_agent.py")
CAP = 2  #: executions per worker


def _start(cluster: Cluster, roles: list[str], env: dict[str, str]) -> None:
    cluster.replicas = [Replica(free_port()) for _ in roles]
    for replica, role in zip(cluster.replicas, roles, strict=True):
        replica.proc = subprocess.Popen(
            [sys.executable, str(AGENT), cluster.storage, str(replica.port), role, str(CAP)],
            env={**os.environ, **env},
        )
    for index in range(len(roles)):
        cluster.wait_ready(index)


@pytest.fixture(scope="module")
def roles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    marks = tmp_path_factory.mktemp("role-marks")
    env = {"CLUSTER_RESUMABLE": "1", "CLUSTER_MARKS": str(marks)}
    for schema in _schema():
        cluster = Cluster(f"{PG_DSN}?schema={schema}", schema, env)
        try:
            _start(cluster, ["web", "web", "worker", "worker"], env)
            yield cluster, marks
        finally:
            cluster.stop_all()


def _urls(cluster: Cluster) -> tuple[list[str], list[int]]:
    webs = [r.url for r in cluster.replicas[:2]]
    return webs, [r.port for r in cluster.replicas[2:]]


def _ran_on(task: dict[str, Any]) -> int:
    text = task["status"]["message"]["parts"][0]["text"]
    return int(text.split(" on ")[1].split()[0])


def _stream(url: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params}
    events = []
    headers = {"Accept": "text/event-stream"}
    with httpx.stream("POST", url + "/", json=body, headers=headers, timeout=20) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                data = json.loads(line[5:])
                assert "result" in data, data
                events.append(data["result"])
    return events


def test_a_message_to_a_web_replica_runs_on_a_worker(roles: tuple[Cluster, Path]) -> None:
    cluster, _ = roles
    webs, workers = _urls(cluster)
    for url in webs:
        task = result(url, "SendMessage", send("hello"))["task"]  # blocking (spec §3.2.2)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert _ran_on(task) in workers
    # A worker serves no A2A operation: only its card, /healthz and metrics.
    worker = cluster.replicas[2].url
    assert httpx.post(worker + "/", json={"jsonrpc": "2.0", "id": 1}).status_code == 404
    health = httpx.get(worker + "/healthz").json()
    assert health["role"] == "worker" and isinstance(health["running"], int)


def test_streaming_from_a_web_replica_follows_the_worker(roles: tuple[Cluster, Path]) -> None:
    cluster, _ = roles
    webs, workers = _urls(cluster)
    events = _stream(webs[1], send("steps 3 0.05"))
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    artifacts = [
        e["artifactUpdate"]["artifact"]["artifactId"] for e in events if "artifactUpdate" in e
    ]
    assert artifacts == ["step-0", "step-1", "step-2"]
    final = events[-1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_COMPLETED"
    assert int(final["message"]["parts"][0]["text"].split(" on ")[1]) in workers


def test_follow_up_goes_through_the_queue(roles: tuple[Cluster, Path]) -> None:
    cluster, _ = roles
    webs, workers = _urls(cluster)
    task = result(webs[0], "SendMessage", send("ask"))["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = result(webs[1], "SendMessage", send("answer blue", task_id=task["id"]))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _ran_on(done) in workers


def test_cancel_through_a_web_replica_stops_the_worker(roles: tuple[Cluster, Path]) -> None:
    cluster, marks = roles
    webs, workers = _urls(cluster)
    task = result(webs[0], "SendMessage", send("hang", returnImmediately=True))["task"]
    wait_state(webs[0], task["id"], {"TASK_STATE_WORKING"}, 10)
    canceled = result(webs[1], "CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    mark = marks / f"cancel-{task['id']}"
    deadline = time.monotonic() + 5
    while not mark.exists():  # the worker's cancel hook ran (lease watch, every 0.5 s)
        assert time.monotonic() < deadline, "the worker never saw the cancel"
        time.sleep(0.05)
    assert int(mark.read_text().split()[0]) in workers


def test_caps_keep_the_extra_task_submitted(roles: tuple[Cluster, Path]) -> None:
    cluster, _ = roles
    webs, _workers = _urls(cluster)
    ids = [
        result(webs[n % 2], "SendMessage", send("hang", returnImmediately=True))["task"]["id"]
        for n in range(2 * CAP + 1)
    ]
    deadline = time.monotonic() + 10
    while True:
        states = [result(webs[0], "GetTask", {"id": i})["status"]["state"] for i in ids]
        if states.count("TASK_STATE_WORKING") == 2 * CAP:
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.1)
    time.sleep(0.5)  # several polls later the extra one still waits
    states = [result(webs[0], "GetTask", {"id": i})["status"]["state"] for i in ids]
    assert states.count("TASK_STATE_SUBMITTED") == 1, states
    waiting = ids[states.index("TASK_STATE_SUBMITTED")]
    result(webs[1], "CancelTask", {"id": ids[states.index("TASK_STATE_WORKING")]})
    wait_state(webs[0], waiting, {"TASK_STATE_WORKING"}, 10)  # a slot freed: it runs
    for task_id in ids:
        if result(webs[0], "GetTask", {"id": task_id})["status"]["state"] == "TASK_STATE_WORKING":
            result(webs[0], "CancelTask", {"id": task_id})


def test_killing_a_worker_mid_task_lets_the_other_recover_it(
    roles: tuple[Cluster, Path],
) -> None:
    cluster, _ = roles
    webs, workers = _urls(cluster)
    task = result(webs[0], "SendMessage", send("steps 8 0.3", returnImmediately=True))["task"]
    wait_state(webs[0], task["id"], {"TASK_STATE_WORKING"}, 10)
    owner = None
    deadline = time.monotonic() + 5
    while owner is None:  # the claim took the lease at once
        owner = cluster.owner_index(task["id"])
        assert time.monotonic() < deadline, "no worker holds the task's lease"
        time.sleep(0.05)
    assert owner in (2, 3)
    cluster.kill(owner)
    done = wait_state(webs[1], task["id"], {"TASK_STATE_COMPLETED"}, RECOVERY_BOUND + 5)
    survivor = cluster.replicas[5 - owner].port
    assert (
        _ran_on(done) == survivor and "(resumed)" in done["status"]["message"]["parts"][0]["text"]
    )
    assert [a["artifactId"] for a in done["artifacts"]] == [f"step-{i}" for i in range(8)]
    assert survivor in workers


def test_sqlite_web_and_worker_processes_share_one_file(tmp_path: Path) -> None:
    cluster = Cluster(f"sqlite:///{tmp_path}/roles.db", "", {"CLUSTER_RESUMABLE": "0"})
    try:
        _start(cluster, ["web", "worker"], cluster.env)
        web, worker = cluster.replicas
        task = result(web.url, "SendMessage", send("hello"))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert _ran_on(task) == worker.port
        events = _stream(web.url, send("steps 2 0.05"))
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        cluster.stop_all()
