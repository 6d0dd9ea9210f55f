"""Retention (issue #7): terminal tasks older than the TTL go, with events, push configs and
push cursors."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from simple_a2a.protocol import (
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server.retention import RetentionSweeper
from simple_a2a.storage import PushCursor, Storage, open_storage

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def task(task_id: str, state: TaskState, age: timedelta) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=NOW - age))


@pytest.fixture(params=["memory", "sqlite"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    url = "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 'r.db'}"
    store = open_storage(url)
    await store.open()
    yield store  # type: ignore[misc]
    await store.close()


async def test_sweep_deletes_only_old_terminal_tasks(storage: Storage) -> None:
    day = timedelta(days=1)
    tasks = [
        task("old-done", TaskState.COMPLETED, 3 * day),
        task("old-failed", TaskState.FAILED, 3 * day),
        task("new-done", TaskState.COMPLETED, timedelta(hours=1)),
        task("old-working", TaskState.WORKING, 3 * day),
        task("old-waiting", TaskState.INPUT_REQUIRED, 3 * day),
    ]
    for t in tasks:
        await storage.tasks.create(t)
        await storage.events.append(t.id, StreamResponse(task=t))
        await storage.push_configs.put(
            TaskPushNotificationConfig(id="p", task_id=t.id, url="https://example.com/hook")
        )
        assert storage.push_cursors is not None
        await storage.push_cursors.put(PushCursor(t.id, "p", 1, "done"))
    sweeper = RetentionSweeper(storage, ttl=2 * day)
    assert await sweeper.sweep_once(now=NOW) == 2
    remaining = {t.id for t in tasks if await storage.tasks.get(t.id) is not None}
    assert remaining == {"new-done", "old-working", "old-waiting"}
    assert await storage.events.last_seq("old-done") == 0
    assert await storage.push_configs.list("old-done") == []
    assert len(await storage.push_configs.list("new-done")) == 1
    assert storage.push_cursors is not None
    assert await storage.push_cursors.list("old-done") == []
    assert len(await storage.push_cursors.list("new-done")) == 1
    assert await sweeper.sweep_once(now=NOW) == 0


def test_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError):
        RetentionSweeper(open_storage("memory"), ttl=timedelta(0))


async def test_server_option_sweeps_in_the_background() -> None:
    import asyncio

    from simple_a2a.protocol import AgentCard, GetTaskRequest, Message, SendMessageRequest
    from simple_a2a.protocol.errors import TaskNotFoundError
    from simple_a2a.server import CallContext, server

    srv = server(
        AgentCard(name="r", description="r", version="1"),
        lambda ctx: "done",
        retention=0.2,
        retention_interval=0.05,
    )
    await srv.startup()
    try:
        sent = await srv.handler.send_message(
            SendMessageRequest(message=Message.user("x")), CallContext()
        )
        assert isinstance(sent.task, Task)
        for _ in range(100):
            await asyncio.sleep(0.05)
            try:
                await srv.handler.get_task(GetTaskRequest(id=sent.task.id), CallContext())
            except TaskNotFoundError:
                break
        else:
            pytest.fail("the completed task was not swept")
    finally:
        await srv.shutdown()
