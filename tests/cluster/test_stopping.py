"""Stopping a replica (docs/cluster.md "Stopping", issue #34), as real processes on one SQLite
file: the first signal says what it waits for, a second one stops at once (SIGINT or SIGTERM),
and a replica running tasks of a ``resumable`` executor hands them over to another replica at
once — well before its grace period or its lease ttl would let them go.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.server.background import free_port

from .support import AGENT, Cluster, Replica, result, send, wait_state

#: Far above what the tests allow for stopping: a replica that waited it out would fail them.
GRACE = 30.0
LEASE_TTL = 30.0


def _start(cluster: Cluster, index: int, stderr: Path) -> None:
    replica = cluster.replicas[index]
    with stderr.open("ab") as log:
        replica.proc = subprocess.Popen(
            [sys.executable, str(AGENT), cluster.storage, str(replica.port)],
            env={**os.environ, **cluster.env},
            stderr=log,
        )
    cluster.wait_ready(index)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Any]:
    def make(count: int, *, resumable: bool) -> Cluster:
        env = {
            "CLUSTER_RESUMABLE": "1" if resumable else "0",
            "CLUSTER_GRACE": str(GRACE),
            "CLUSTER_LEASE_TTL": str(LEASE_TTL),
        }
        cluster = Cluster(f"sqlite:///{tmp_path / 'tasks.db'}", "", env)
        cluster.replicas = [Replica(free_port()) for _ in range(count)]
        for index in range(count):
            _start(cluster, index, tmp_path / f"replica-{index}.log")
        made.append(cluster)
        return cluster

    made: list[Cluster] = []
    yield make
    for cluster in made:  # kill -9: a graceful stop would wait out GRACE
        for index in range(len(cluster.replicas)):
            cluster.kill(index)


def _stopped_within(proc: subprocess.Popen[bytes] | None, seconds: float) -> float:
    assert proc is not None
    start = time.monotonic()
    proc.wait(seconds)  # TimeoutExpired: it did not stop in time
    return time.monotonic() - start


def _wait_for_log(path: Path, text: str, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = path.read_text(errors="replace")
        if text in said:
            return said
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never said {text!r}: {path.read_text(errors='replace')}")


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_says_what_it_waits_for_and_a_second_stops_at_once(
    replicas: Any, tmp_path: Path, second: signal.Signals
) -> None:
    cluster = replicas(1, resumable=False)
    url = cluster.replicas[0].url
    task = result(url, "SendMessage", send("hang", returnImmediately=True))["task"]
    wait_state(url, task["id"], {"TASK_STATE_WORKING"}, 10)
    proc = cluster.replicas[0].proc
    assert proc is not None
    proc.send_signal(signal.SIGINT)
    said = _wait_for_log(tmp_path / "replica-0.log", "stopping: waiting for 1 running task(s)")
    assert f"up to {GRACE:g} s (press Ctrl-C again to stop now)" in said
    assert proc.poll() is None  # it waits: the task still runs
    proc.send_signal(second)
    assert _stopped_within(proc, 5) < 5
    assert "cancelling 1 task(s) (stopping now)" in (tmp_path / "replica-0.log").read_text()
    _start(cluster, 0, tmp_path / "replica-0.log")  # the task's record, read back
    assert result(url, "GetTask", {"id": task["id"]})["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_task_ending_within_the_grace_is_waited_for(replicas: Any, tmp_path: Path) -> None:
    cluster = replicas(1, resumable=False)
    url = cluster.replicas[0].url
    task = result(url, "SendMessage", send("steps 10 0.1", returnImmediately=True))["task"]
    wait_state(url, task["id"], {"TASK_STATE_WORKING"}, 10)
    proc = cluster.replicas[0].proc
    assert proc is not None
    proc.send_signal(signal.SIGTERM)
    _stopped_within(proc, 10)
    _start(cluster, 0, tmp_path / "replica-0.log")
    done = result(url, "GetTask", {"id": task["id"]})
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["artifactId"] for a in done["artifacts"]] == [f"step-{i}" for i in range(10)]


def test_a_stopping_replica_hands_its_tasks_over(replicas: Any, tmp_path: Path) -> None:
    cluster = replicas(2, resumable=True)
    first, second = cluster.replicas
    steps = 30
    sent = send(f"steps {steps} 0.1", returnImmediately=True)
    task = result(first.url, "SendMessage", sent)["task"]
    deadline = time.monotonic() + 10
    while len(result(first.url, "GetTask", {"id": task["id"]}).get("artifacts", [])) < 3:
        assert time.monotonic() < deadline, "the task made no progress"
        time.sleep(0.05)
    assert first.proc is not None
    first.proc.send_signal(signal.SIGTERM)
    stopped_in = _stopped_within(first.proc, 10)  # not GRACE: nothing is waited for
    said = (tmp_path / "replica-0.log").read_text()
    assert "stopping: handed 1 running task(s) over to the other replicas" in said, said
    handed_at = time.monotonic()
    done = wait_state(second.url, task["id"], {"TASK_STATE_COMPLETED"}, 15)
    took = time.monotonic() - handed_at
    # Taken over by the next scan (0.5 s) and finished (at most 3 s of steps), long before a
    # lease ttl of 30 s would have let it go.
    assert took < LEASE_TTL / 2, took
    assert done["status"]["message"]["parts"][0]["text"] == f"finished on {second.port} (resumed)"
    ids = [a["artifactId"] for a in done["artifacts"]]
    assert ids == [f"step-{i}" for i in range(steps)]  # none lost, none twice
    assert stopped_in < 10
