"""Fencing (docs/cluster.md "Fencing", issue #34), with a real partition: replica A reaches
PostgreSQL through a proxy that the test freezes. A goes on running its task, cut off; replica B
takes the task over when A's lease expires and resumes it; then the partition heals and A's
writes — the one it had in flight and any after — reach the database. None of them may be
stored: A's executor is told it lost the task, and the event log has B's events only after B
took over, every step once.
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
from urllib.parse import urlsplit, urlunsplit

import pytest

from simple_a2a.server.background import free_port

from .conftest import _schema
from .partition import PartitionProxy
from .support import AGENT, PG_DSN, Cluster, Replica, result, send, sql, wait_state

STEPS = 40


def _via(port: int, dsn: str) -> str:
    parts = urlsplit(dsn)
    host = parts.hostname or "127.0.0.1"
    netloc = parts.netloc.replace(f"{host}:{parts.port}", f"{host}:{port}")
    return urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
def partitioned(tmp_path: Path) -> Iterator[tuple[Cluster, PartitionProxy, str, Path]]:
    for schema in _schema():
        upstream = urlsplit(PG_DSN)
        with PartitionProxy((upstream.hostname or "127.0.0.1", upstream.port or 5432)) as proxy:
            env = {"CLUSTER_RESUMABLE": "1"}
            cluster = Cluster(f"{PG_DSN}?schema={schema}", schema, env)
            cluster.replicas = [Replica(free_port()), Replica(free_port())]
            urls = [f"{_via(proxy.port, PG_DSN)}?schema={schema}", cluster.storage]
            log = tmp_path / "replica-a.log"
            try:
                for index, (replica, storage) in enumerate(
                    zip(cluster.replicas, urls, strict=True)
                ):
                    with log.open("ab") as out:
                        replica.proc = subprocess.Popen(
                            [sys.executable, str(AGENT), storage, str(replica.port)],
                            env={**os.environ, **env},
                            stderr=out if index == 0 else None,
                        )
                    cluster.wait_ready(index)
                yield cluster, proxy, schema, log
            finally:
                proxy.heal()
                for index in range(2):
                    cluster.kill(index)


def _artifact_writers(schema: str, task_id: str) -> list[tuple[str, int]]:
    """(artifact id, the port of the replica that wrote it) of each artifact event, in order."""
    rows = sql(schema, "SELECT doc FROM {s}.events WHERE task_id = $1 ORDER BY seq", task_id)
    found = []
    for (doc,) in rows:
        event: dict[str, Any] = json.loads(doc) if isinstance(doc, str) else doc
        update = event.get("artifactUpdate")
        if update is not None:
            artifact = update["artifact"]
            found.append((artifact["artifactId"], artifact["metadata"]["replica"]))
    return found


def _wait(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_partitioned_replica_writes_nothing_after_the_takeover(
    partitioned: tuple[Cluster, PartitionProxy, str, Path],
) -> None:
    cluster, proxy, schema, log = partitioned
    a, b = cluster.replicas
    sent = send(f"steps {STEPS} 0.1", returnImmediately=True)
    task_id = result(a.url, "SendMessage", sent)["task"]["id"]
    _wait(lambda: cluster.owner_index(task_id) == 0, 10, "replica A to lease the task")
    _wait(lambda: len(_artifact_writers(schema, task_id)) >= 5, 10, "A's first steps")

    proxy.freeze()  # A goes on running the task; nothing it writes reaches PostgreSQL
    _wait(lambda: cluster.owner_index(task_id) == 1, 15, "replica B to take the task over")
    written_by_a = {step for step, port in _artifact_writers(schema, task_id) if port == a.port}
    _wait(
        lambda: any(port == b.port for _, port in _artifact_writers(schema, task_id)),
        10,
        "B's first resumed step",
    )
    proxy.heal()  # A's write in flight, and the ones after, reach the database now

    done = wait_state(b.url, task_id, {"TASK_STATE_COMPLETED"}, 30)
    assert done["status"]["message"]["parts"][0]["text"] == f"finished on {b.port} (resumed)"
    said = ("lost the task lease", "its write is refused")  # the heartbeat's, or the fence's
    _wait(lambda: any(x in log.read_text(errors="replace") for x in said), 10, "A to see it")
    time.sleep(1.0)  # A had a step every 0.1 s: anything it could still write is in by now

    writers = _artifact_writers(schema, task_id)
    steps = [step for step, _ in writers]
    assert sorted(steps, key=lambda s: int(s.split("-")[1])) == steps  # in order
    assert steps == [f"step-{i}" for i in range(STEPS)], steps  # every step once
    ports = [port for _, port in writers]
    first_of_b = ports.index(b.port)
    assert set(ports[first_of_b:]) == {b.port}, writers  # nothing of A after the takeover
    assert {step for step, port in writers if port == a.port} == written_by_a
    stored = result(b.url, "GetTask", {"id": task_id})
    assert [x["artifactId"] for x in stored["artifacts"]] == steps
