"""The push outbox contract (storage.base.PushCursorStore), reusable by every backend:
call ``check_push_cursor_store(store)`` from a backend's tests."""

from __future__ import annotations

from datetime import datetime, timezone

from simple_a2a.storage.base import PushCursor, PushCursorStore
from simple_a2a.storage.memory import MemoryPushCursorStore, MemoryStorage


async def check_push_cursor_store(store: PushCursorStore) -> None:
    assert await store.get("t1", "c1") is None
    assert await store.pending() == []
    when = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    first = PushCursor("t1", "c1", 0, updated_at=when)
    await store.put(first)
    assert await store.get("t1", "c1") == first
    moved = PushCursor("t1", "c1", 7, "suspended", 3, "HTTP 500", when)
    await store.put(moved)  # replace
    assert await store.get("t1", "c1") == moved
    await store.put(PushCursor("t1", "c2", None))
    await store.put(PushCursor("t2", "c1", 4, "done"))
    assert sorted(c.config_id for c in await store.list("t1")) == ["c1", "c2"]
    assert [(c.task_id, c.config_id) for c in await store.pending()] == [("t1", "c2")]
    assert await store.delete("t1", "c1") is True
    assert await store.delete("t1", "c1") is False
    assert await store.get("t1", "c1") is None
    assert [c.config_id for c in await store.list("t1")] == ["c2"]


async def test_memory_push_cursor_store() -> None:
    await check_push_cursor_store(MemoryPushCursorStore())
    assert isinstance(MemoryStorage().push_cursors, MemoryPushCursorStore)
