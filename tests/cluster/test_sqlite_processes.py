"""Several processes on one SQLite file (issue #14 item 6): the same lease semantics as on
PostgreSQL — the lease is a row, so ``uvicorn --workers N`` on SQLite is safe. Two replica
processes behind the round-robin proxy; kill -9 of the one running a task, and a cancel served
by the other.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import (
    RECOVERY_BOUND,
    TERMINAL,
    Cluster,
    RoundRobinProxy,
    result,
    running_cluster,
    send,
    wait_state,
)

Running = tuple[Cluster, RoundRobinProxy]


@pytest.fixture(scope="module")
def sqlite_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    root = tmp_path_factory.mktemp("sqlite-cluster")
    storage = f"sqlite:///{root / 'tasks.db'}"
    with running_cluster("", 2, resumable=True, marks=root, storage=storage) as running:
        yield running


def _owner(cluster: Cluster, task_id: str) -> int:
    deadline = time.monotonic() + 10
    while (index := cluster.owner_index(task_id)) is None:
        assert time.monotonic() < deadline, "no process holds the task's lease"
        time.sleep(0.05)
    return index


def test_sqlite_kill_9_mid_task_is_finished_by_the_other_process(sqlite_cluster: Running) -> None:
    cluster, proxy = sqlite_cluster
    # 3 s of work: the kill lands mid-task even on a loaded machine (the lease is taken at 0.5 s)
    task = result(proxy.url, "SendMessage", send("steps 30 0.1", returnImmediately=True))["task"]
    victim = _owner(cluster, task["id"])
    time.sleep(0.3)
    cluster.kill(victim)
    done = wait_state(proxy.url, task["id"], TERMINAL, RECOVERY_BOUND + 5)
    cluster.restart(victim)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "(resumed)" in done["status"]["message"]["parts"][0]["text"]
    assert [a["artifactId"] for a in done["artifacts"]] == [f"step-{i}" for i in range(30)]


def test_sqlite_cancel_from_the_other_process_reaches_the_executor(
    sqlite_cluster: Running,
) -> None:
    cluster, _ = sqlite_cluster
    runner, other = cluster.replicas
    marks = Path(cluster.env["CLUSTER_MARKS"])
    task = result(runner.url, "SendMessage", send("hang", returnImmediately=True))["task"]
    wait_state(runner.url, task["id"], {"TASK_STATE_WORKING"}, 10)
    started = time.monotonic()
    assert result(other.url, "CancelTask", {"id": task["id"]})["status"]["state"] == (
        "TASK_STATE_CANCELED"
    )
    mark = marks / f"cancel-{task['id']}"
    while not mark.exists():
        assert time.monotonic() - started < 3.0, "the cancel hook did not run"  # see test_cluster
        time.sleep(0.02)
    assert mark.read_text().split()[0] == str(runner.port)
