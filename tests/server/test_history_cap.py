"""What ``TaskManager`` keeps is bounded: a stored task's history (#16 item 3:
``server(max_history_length=N)`` keeps the newest N messages, trimmed in steps of N/10) on every
backend, and the snapshots it remembers for blocking answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from simple_a2a.protocol.models import (
    Message,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server.tasks import TaskManager
from simple_a2a.storage import MemoryStorage, Storage
from simple_a2a.storage.sqlite import SQLiteStorage


@pytest.fixture(params=["memory", "sqlite"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    store: Storage = (
        MemoryStorage() if request.param == "memory" else SQLiteStorage(tmp_path / "t.db")
    )
    await store.open()
    return store


async def test_a_task_keeps_at_most_the_newest_messages(storage: Storage) -> None:
    manager = TaskManager(storage, max_history=10)
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING))
    await manager.create(task, owner=None)
    for i in range(40):
        message = Message.user(f"m{i}", task_id="t1", context_id="c1")
        await manager.record("t1", StreamResponse(message=message))
        stored = await storage.tasks.get("t1")
        assert stored is not None and len(stored.task.history) <= 11  # 10 + a tenth
    fresh = await TaskManager(storage).get("t1")  # as stored, not as remembered
    assert fresh is not None
    texts = [m.text for m in fresh.task.history]
    assert texts == [f"m{i}" for i in range(40 - len(texts), 40)]
    assert len(await storage.events.read("t1", 0)) == 41  # the log keeps every event
    await storage.close()


async def test_the_snapshot_remembered_for_a_blocking_answer_is_forgotten_once_terminal(
    storage: Storage,
) -> None:
    """``TaskManager.latest`` answers a blocking send from memory (no read back); a terminal
    task is then forgotten (it has no more writers), so finished tasks are not kept alive as
    objects for the garbage collector to walk. A running one stays remembered."""
    manager = TaskManager(storage)
    for task_id in ("done", "running"):
        task = Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.WORKING))
        await manager.create(task, owner=None)
    completed = TaskStatusUpdateEvent(
        task_id="done", context_id="c", status=TaskStatus(state=TaskState.COMPLETED)
    )
    await manager.record("done", StreamResponse(status_update=completed))
    stored = await manager.latest("done")
    assert stored is not None and stored.task.status.state == TaskState.COMPLETED
    assert "done" not in manager._latest  # forgotten once answered
    again = await manager.latest("done")  # still answered, from the store
    assert again is not None and again.task.status.state == TaskState.COMPLETED
    running = await manager.latest("running")
    assert running is not None and "running" in manager._latest
    await storage.close()
