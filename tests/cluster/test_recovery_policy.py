"""Recovery policy per agent (issue #34, docs/cluster.md "Recovery policy"), with real
processes: two replicas of ``policy_agent.py`` on one SQLite file or one PostgreSQL schema; the
replica running a task is killed with SIGKILL and the other takes the task over.

- ``Rerun``: the task runs again on the survivor (``ctx.attempt == 2``, ``ctx.resumed``), the
  first attempt's events stay in its history, the attempt count is in its metadata;
- attempts spent (the count survives the second replica dying too): failed, saying how many;
- ``Fail`` (the default): failed with ``RESTART_MESSAGE``, never run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from simple_a2a import Fail, Rerun
from simple_a2a.protocol import AgentCard
from simple_a2a.protocol.models import Message, Task, TaskState, TaskStatus
from simple_a2a.protocol.requests import CancelTaskRequest
from simple_a2a.server import AgentExecutor, CallContext, RequestHandler
from simple_a2a.server.background import free_port
from simple_a2a.server.policy import (
    ATTEMPT_KEY,
    RESUME,
    attempts_made,
    exhausted_message,
    policy_of,
)
from simple_a2a.server.recovery import RESTART_MESSAGE
from simple_a2a.storage import MemoryStorage

from .conftest import _schema
from .support import PG_DSN, RECOVERY_BOUND, TERMINAL, Cluster, Replica, result, send, wait_state

AGENT = Path(__file__).with_name("policy_agent.py")
BACKOFF = 0.3


class PolicyCluster(Cluster):
    def start(self, index: int) -> None:
        replica = self.replicas[index]
        replica.proc = subprocess.Popen(
            [sys.executable, str(AGENT), self.storage, str(replica.port)],
            env={**os.environ, **self.env},
        )


@contextlib.contextmanager
def _running(kind: str, policy: str, root: Path) -> Iterator[PolicyCluster]:
    marks = root / "marks"
    marks.mkdir()
    env = {"POLICY": policy, "POLICY_MARKS": str(marks)}
    with contextlib.ExitStack() as stack:
        if kind == "sqlite":
            schema, storage = "", f"sqlite:///{root / 'tasks.db'}"
        else:
            schemas = _schema()
            schema = next(schemas)
            stack.callback(lambda: next(schemas, None))  # drops the schema
            storage = f"{PG_DSN}?schema={schema}"
        cluster = PolicyCluster(storage, schema, env)
        cluster.replicas = [Replica(free_port()) for _ in range(2)]
        stack.callback(cluster.stop_all)
        for index in range(2):  # at once: they migrate the new storage together
            cluster.start(index)
        for index in range(2):
            cluster.wait_ready(index)
        yield cluster


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def rerun_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyCluster]:
    root = tmp_path_factory.mktemp(f"rerun-{request.param}")
    with _running(request.param, f"rerun:2:{BACKOFF}", root) as cluster:
        yield cluster


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fail_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyCluster]:
    root = tmp_path_factory.mktemp(f"fail-{request.param}")
    with _running(request.param, "fail", root) as cluster:
        yield cluster


# --- helpers ----------------------------------------------------------------------------------


def _mark(cluster: Cluster, task_id: str, attempt: int) -> Path:
    return Path(cluster.env["POLICY_MARKS"], f"attempt-{task_id}-{attempt}")


def _wait_mark(cluster: Cluster, task_id: str, attempt: int, timeout: float) -> list[str]:
    """The attempt's mark (``PORT RESUMED``), once that execution started."""
    mark = _mark(cluster, task_id, attempt)
    deadline = time.monotonic() + timeout
    while not mark.exists():
        assert time.monotonic() < deadline, f"attempt {attempt} of {task_id} never started"
        time.sleep(0.05)
    return mark.read_text().split()


def _wait_owner(cluster: Cluster, task_id: str, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while (index := cluster.owner_index(task_id)) is None:
        assert time.monotonic() < deadline, "no replica holds the task's lease"
        time.sleep(0.05)
    return index


def _start_task(cluster: Cluster, text: str) -> tuple[str, int]:
    """Send ``text`` to replica 0; returns the task id and the replica running it (leased)."""
    task = result(cluster.replicas[0].url, "SendMessage", send(text, returnImmediately=True))
    task_id = str(task["task"]["id"])
    port, resumed = _wait_mark(cluster, task_id, 1, 10)
    assert (port, resumed) == (str(cluster.replicas[0].port), "False")
    return task_id, _wait_owner(cluster, task_id)


def _revive(cluster: Cluster, index: int) -> None:
    """Start the replica again if it is dead (the next test has two)."""
    proc = cluster.replicas[index].proc
    if proc is None or proc.poll() is not None:
        cluster.restart(index)


def _texts(task: dict[str, Any]) -> list[str]:
    return [m["parts"][0].get("text", "") for m in task.get("history", []) if m.get("parts")]


# --- Rerun ------------------------------------------------------------------------------------


def test_rerun_runs_the_task_again_after_kill_9(rerun_cluster: PolicyCluster) -> None:
    cluster = rerun_cluster
    task_id, victim = _start_task(cluster, "finish-at 2")
    survivor = 1 - victim
    cluster.kill(victim)
    try:
        port, resumed = _wait_mark(cluster, task_id, 2, RECOVERY_BOUND + BACKOFF)
        survivor_url = cluster.replicas[survivor].url
        done = wait_state(survivor_url, task_id, TERMINAL, RECOVERY_BOUND)
    finally:
        cluster.restart(victim)

    assert (port, resumed) == (str(cluster.replicas[survivor].port), "True")
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
    final = done["status"]["message"]["parts"][0]["text"]
    assert final == f"finished attempt 2 on {cluster.replicas[survivor].port}"
    # The count is persisted in the task's metadata, for this client message.
    user = next(m for m in done["history"] if m["role"] == "ROLE_USER")
    assert done["metadata"][ATTEMPT_KEY] == {"attempt": 2, "messageId": user["messageId"]}
    # The first attempt's events stay: a client sees its status, then the attempt marker.
    texts = _texts(done)
    first = f"attempt 1 working on {cluster.replicas[victim].port}"
    marker = "Attempt 2 of 2: the server running this task stopped; running it again."
    assert first in texts and marker in texts, texts
    assert texts.index(first) < texts.index(marker) < texts.index(final)
    assert not _mark(cluster, task_id, 3).exists()


def test_rerun_attempts_spent_fail_the_task_saying_how_many(rerun_cluster: PolicyCluster) -> None:
    """Both attempts die (each replica killed in turn): the count survives in storage, and the
    replica taking over after the second death fails the task instead of a third run."""
    cluster = rerun_cluster
    task_id, first = _start_task(cluster, "finish-at 99")
    second = 1 - first
    cluster.kill(first)
    try:
        port, _ = _wait_mark(cluster, task_id, 2, RECOVERY_BOUND + BACKOFF)
        assert port == str(cluster.replicas[second].port)
        deadline = time.monotonic() + 10
        while cluster.owner_index(task_id) != second:
            assert time.monotonic() < deadline, "the survivor did not hold the lease"
            time.sleep(0.05)
        running = result(cluster.replicas[second].url, "GetTask", {"id": task_id})
        assert running["status"]["state"] == "TASK_STATE_WORKING"
        cluster.restart(first)
        cluster.kill(second)
        done = wait_state(cluster.replicas[first].url, task_id, TERMINAL, RECOVERY_BOUND)
    finally:
        for index in (first, second):
            _revive(cluster, index)

    assert done["status"]["state"] == "TASK_STATE_FAILED", done["status"]
    assert done["status"]["message"]["parts"][0]["text"] == exhausted_message(2)
    assert "2 attempts" in exhausted_message(2)
    assert not _mark(cluster, task_id, 3).exists()


# --- Fail (the default) -----------------------------------------------------------------------


def test_fail_policy_fails_the_task_with_the_restart_message(fail_cluster: PolicyCluster) -> None:
    cluster = fail_cluster
    task_id, victim = _start_task(cluster, "finish-at 2")
    cluster.kill(victim)
    try:
        done = wait_state(cluster.replicas[1 - victim].url, task_id, TERMINAL, RECOVERY_BOUND)
    finally:
        cluster.restart(victim)
    assert done["status"]["state"] == "TASK_STATE_FAILED", done["status"]
    assert done["status"]["message"]["parts"][0]["text"] == RESTART_MESSAGE
    assert ATTEMPT_KEY not in (done.get("metadata") or {})
    assert not _mark(cluster, task_id, 2).exists()


# --- the policy values (no processes) ---------------------------------------------------------


def test_policy_mapping_defaults_and_back_off() -> None:
    class Plain(AgentExecutor):
        pass

    class Resumable(AgentExecutor):
        resumable = True

    class Both(AgentExecutor):
        resumable = True
        recovery = Fail()  # explicit: wins over resumable

    class Reruns(AgentExecutor):
        recovery = Rerun(attempts=5, backoff=2.0, max_backoff=5.0)

    assert policy_of(Plain()) == Fail()
    assert policy_of(Resumable()) is RESUME
    assert policy_of(Both()) == Fail()
    assert policy_of(Reruns()) == Rerun(5, 2.0, 5.0)
    assert Rerun() == Rerun(attempts=3, backoff=1.0, max_backoff=30.0)
    assert [Rerun(5, 2.0, 5.0).delay(n) for n in (2, 3, 4, 5)] == [2.0, 4.0, 5.0, 5.0]
    assert Rerun(backoff=0).delay(3) == 0.0
    for bad in ({"attempts": 0}, {"backoff": -1.0}, {"max_backoff": -1.0}):
        with pytest.raises(ValueError):
            Rerun(**bad)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        Rerun().attempts = 2  # type: ignore[misc]


def test_attempts_count_per_client_message() -> None:
    first, later = Message.user("go"), Message.user("again")
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.WORKING),
        history=[first],
        metadata={ATTEMPT_KEY: {"attempt": 2, "messageId": first.message_id}},
    )
    assert attempts_made(task, first) == 2
    assert attempts_made(task, later) == 1  # a later turn starts again at 1
    assert attempts_made(task.model_copy(update={"metadata": None}), first) == 1


# --- the back-off, in process (no leases: the startup recovery of a storage without them) ----


class _Counting(AgentExecutor):
    recovery = Rerun(attempts=3, backoff=0.3)

    def __init__(self) -> None:
        self.runs: list[tuple[str, int, bool, float]] = []

    async def execute(self, ctx: Any) -> None:
        loop = asyncio.get_running_loop()
        self.runs.append((ctx.task_id, ctx.attempt, ctx.resumed, loop.time()))
        await ctx.complete(f"attempt {ctx.attempt}")


async def _orphan(handler: RequestHandler, task_id: str) -> None:
    """A task left ``working`` by a process that died (stored; nothing runs it here)."""
    user = Message.user("go", task_id=task_id, context_id="ctx")
    working = Task(
        id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.WORKING), history=[user]
    )
    await handler.tasks.create(working, owner=None)


async def _settle(handler: RequestHandler, timeout: float = 10) -> None:
    """Until the back-off waits and the executions they started are over (bounded)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while handler._background or handler._executions:
        assert asyncio.get_running_loop().time() < deadline, "recovery did not settle"
        pending = [*handler._background, *(x.runner for x in handler._executions.values())]
        await asyncio.wait(pending, timeout=deadline - asyncio.get_running_loop().time())


async def test_rerun_waits_its_back_off_and_a_cancel_meanwhile_stops_it() -> None:
    executor = _Counting()
    card = AgentCard(name="p", description="p", version="1")
    storage = MemoryStorage()
    handler = RequestHandler(card, executor, storage)
    await _orphan(handler, "reran")
    await _orphan(handler, "canceled")
    loop = asyncio.get_running_loop()
    taken_at = loop.time()
    assert await handler.recover() == 2
    assert executor.runs == []  # both wait their back-off (0.3 s before attempt 2)
    canceled = await handler.cancel_task(CancelTaskRequest(id="canceled"), CallContext())
    assert canceled.status.state is TaskState.CANCELED
    await _settle(handler)

    assert [(t, a, r) for t, a, r, _ in executor.runs] == [("reran", 2, True)]
    assert executor.runs[0][3] - taken_at >= 0.3 * 0.95  # asyncio's timer granularity
    done = await handler.tasks.get("reran")
    assert done is not None and done.task.status.state is TaskState.COMPLETED
    assert done.task.metadata == {ATTEMPT_KEY: {"attempt": 2, "messageId": ANY}}
    after = await handler.tasks.get("canceled")
    assert after is not None and after.task.status.state is TaskState.CANCELED
    assert not any(ATTEMPT_KEY in (m.metadata or {}) for m in after.task.history)
