"""Stored tasks are snapshots: replaced by every event, never changed in place.

``server/http.py`` ``result_json`` reuses the encoded JSON of a GetTask answer for the same task
object, so a stored ``Task`` changed in place would be served stale. This records every task
object handed to the memory store, with its JSON at that moment, drives the agent through every
kind of change over real HTTP (new task, artifacts streamed, multi-turn, cancel, history read,
polls), and checks that no recorded object changed afterwards.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from simple_a2a.protocol.models import Task
from simple_a2a.server import server
from simple_a2a.storage.memory import MemoryStorage
from tests.support import rpc
from tests.support.agents import TestAgent, make_card, user

H = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def recording(storage: MemoryStorage) -> list[tuple[Task, bytes]]:
    """Every task object the storage's task store is given, with its JSON at that moment."""
    store = storage.tasks
    stored: list[tuple[Task, bytes]] = []
    create, update = store.create, store.update

    async def recording_create(task: Task, *, owner: str | None = None) -> int:
        stored.append((task, task.to_json()))
        return await create(task, owner=owner)

    async def recording_update(task: Task, *, expected_version: int, change: Any = None) -> int:
        stored.append((task, task.to_json()))
        return await update(task, expected_version=expected_version, change=change)

    store.create = recording_create  # type: ignore[method-assign]
    store.update = recording_update  # type: ignore[method-assign]
    return stored


def test_no_stored_task_changes_after_it_is_stored(serve: Any) -> None:
    storage = MemoryStorage()
    stored = recording(storage)
    url = serve(server(make_card(streaming=True), TestAgent(), storage=storage).app)

    def call(method: str, **params: Any) -> Any:
        answer = httpx.post(url, json=rpc(method, params), headers=H, timeout=10).json()
        assert "result" in answer, answer
        return answer["result"]

    echoed = call("SendMessage", message=user("hello"))["task"]
    asked = call("SendMessage", message=user("ask"))["task"]
    for _ in range(3):
        call("GetTask", id=asked["id"])
    follow = user("ask large", taskId=asked["id"], contextId=asked["contextId"])
    call("SendMessage", message=follow)
    call("GetTask", id=asked["id"], historyLength=1)
    with httpx.stream(
        "POST", url, json=rpc("SendStreamingMessage", {"message": user("steps 3")}), headers=H
    ) as stream:
        assert b"TASK_STATE_COMPLETED" in b"".join(stream.iter_bytes())
    slow = call("SendMessage", message=user("slow"), configuration={"returnImmediately": True})
    time.sleep(0.1)
    call("CancelTask", id=slow["task"]["id"])
    for task_id in (echoed["id"], asked["id"], slow["task"]["id"]):
        call("GetTask", id=task_id)
    call("ListTasks")

    assert len(stored) >= 10
    changed = [task.id for task, doc in stored if task.to_json() != doc]
    assert changed == []
