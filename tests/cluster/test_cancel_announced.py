"""A CancelTask served by a replica that does not run the task reaches the one that does by an
announcement (``LeaseStore.announce_ended``: a PostgreSQL NOTIFY on ``a2a_ended.<schema>``),
not only by the runner's poll of its leased tasks (docs/cluster.md, "Cancel across replicas").

The replicas here poll every 60 s, so a hook that runs within seconds was told by the
announcement; the bound is generous for a loaded 2-core machine, and far below the poll.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import _schema
from .support import Cluster, RoundRobinProxy, result, send, sql, wait_state

#: far below the 60 s poll: only the announcement can make it
ANNOUNCED_BOUND = 5.0


@pytest.fixture(scope="module")
def slow_poll_cluster(marks: Path) -> Iterator[tuple[Cluster, RoundRobinProxy]]:
    from .support import running_cluster

    env = {"CLUSTER_WATCH_INTERVAL": "60"}
    for schema in _schema():
        with running_cluster(schema, 2, resumable=False, marks=marks, env=env) as running:
            yield running


def _cancel_elsewhere_and_wait_for_the_hook(cluster: Cluster, marks: Path, *, young: bool) -> None:
    runner, other = cluster.replicas
    task = result(runner.url, "SendMessage", send("hang", returnImmediately=True))["task"]
    wait_state(runner.url, task["id"], {"TASK_STATE_WORKING"}, 10)
    if not young:  # leased: it has run past the lease keeper's claim_after (0.5 s)
        deadline = time.monotonic() + 10
        while cluster.owner_index(task["id"]) is None:
            assert time.monotonic() < deadline, "the runner never leased the task"
            time.sleep(0.05)
    started = time.monotonic()
    canceled = result(other.url, "CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    mark = marks / f"cancel-{task['id']}"
    while not mark.exists():
        assert time.monotonic() - started < ANNOUNCED_BOUND, "the announcement did not arrive"
        time.sleep(0.01)
    assert mark.read_text().split()[0] == str(runner.port)  # the hook ran where the task ran


def test_the_runner_hears_of_a_cancel_elsewhere_at_once(
    slow_poll_cluster: tuple[Cluster, RoundRobinProxy], marks: Path
) -> None:
    cluster, _ = slow_poll_cluster
    _cancel_elsewhere_and_wait_for_the_hook(cluster, marks, young=False)


def test_a_task_too_young_to_be_leased_hears_of_it_too(
    slow_poll_cluster: tuple[Cluster, RoundRobinProxy], marks: Path
) -> None:
    """Before its lease (the first 0.5 s) no lease row names the runner, so the poll could not
    find the task at all; the announcement goes to every replica."""
    cluster, _ = slow_poll_cluster
    _cancel_elsewhere_and_wait_for_the_hook(cluster, marks, young=True)


def test_a_lost_listening_connection_is_opened_again(
    slow_poll_cluster: tuple[Cluster, RoundRobinProxy], marks: Path
) -> None:
    cluster, _ = slow_poll_cluster
    # Only this cluster's listeners (its schema names the channel): other test processes on
    # the same database (pytest-xdist workers) keep theirs.
    channel = f"a2a_ended.{cluster.schema}"[:63]
    listening = f"SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN \"{channel}\"'"
    assert sql(cluster.schema, listening), "no replica listens for ended tasks"
    sql(cluster.schema, f"SELECT pg_terminate_backend(pid) FROM ({listening}) AS l")
    deadline = time.monotonic() + 10
    while len(sql(cluster.schema, listening)) < len(cluster.replicas):
        assert time.monotonic() < deadline, "the replicas did not listen again"
        time.sleep(0.1)
    _cancel_elsewhere_and_wait_for_the_hook(cluster, marks, young=False)
