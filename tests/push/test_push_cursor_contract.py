"""The push outbox contract (storage.base.PushCursorStore), run against every backend that has
one (``new_storage`` in conftest.py: memory, SQLite, PostgreSQL). ``check_push_cursor_store``
is reusable for any other ``PushCursorStore``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from simple_a2a.storage import PushCursor, PushCursorStore, Storage


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


async def test_push_cursor_store(new_storage: Callable[[], Storage]) -> None:
    storage = new_storage()
    await storage.open()
    try:
        assert storage.push_cursors is not None
        await check_push_cursor_store(storage.push_cursors)
    finally:
        await storage.close()


async def test_push_cursors_survive_reopen(new_storage: Callable[[], Storage]) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    kept = PushCursor("t1", "c1", 3, "active", 2, "ConnectError: refused", when)
    storage = new_storage()
    await storage.open()
    try:
        assert storage.push_cursors is not None
        await storage.push_cursors.put(kept)
    finally:
        await storage.close()
    reopened = new_storage()
    await reopened.open()
    try:
        assert reopened.push_cursors is not None
        assert await reopened.push_cursors.pending() == [kept]
    finally:
        await reopened.close()
