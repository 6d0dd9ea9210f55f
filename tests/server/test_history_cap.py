"""The history a stored task keeps is bounded (#16 item 3): ``server(max_history_length=N)``
keeps the newest N messages (trimmed in steps of N/10), on every backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from simple_a2a.protocol.models import Message, Task, TaskState, TaskStatus
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
