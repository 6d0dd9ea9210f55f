"""SQLite's poll wakes followers only for events appended by another connection (issue #36):
``PRAGMA data_version`` also moves for this process's own writer thread (its checkpoints, the
batches that found the file busy) and for other processes' commits that append nothing; the
file's count of appended events (``event_appends``, migration 7) tells them apart."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from simple_a2a.storage.sqlite import MIGRATIONS, SQLiteStorage

from .conformance import make_task, status_event
from .conformance_wakeups import opened


async def _caught_up_waiter(store: SQLiteStorage, poll: float) -> asyncio.Task[bool]:
    """A waiter on t1 (log at seq 1, appended here), registered, the poll's first round done."""
    await store.record(make_task("t1"), status_event("t1"), expected_version=None)
    waiter = asyncio.create_task(store.events.wait("t1", 1, 30))
    await asyncio.sleep(poll * 3)
    return waiter


def _epoch(store: SQLiteStorage) -> int | None:
    return store._notifier.epoch("t1")


async def test_this_process_s_checkpoint_wakes_no_follower(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "t.db", poll_interval=0.05)
    async with opened(store):
        waiter = await _caught_up_waiter(store, 0.05)
        epoch = _epoch(store)
        assert epoch is not None
        for i in range(20):  # something in the WAL for the checkpoint to copy
            await store.tasks.create(make_task(f"other-{i}"))
        db = store._db
        assert db._writer is not None
        await asyncio.get_running_loop().run_in_executor(db._writer, db._checkpoint)
        await asyncio.sleep(0.3)  # several polls
        assert _epoch(store) == epoch, "the checkpoint was taken for another writer's append"
        assert not waiter.done()
        waiter.cancel()


async def test_another_connection_s_commit_without_an_event_wakes_no_follower(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStorage(path, poll_interval=0.05)
    async with opened(store):
        waiter = await _caught_up_waiter(store, 0.05)
        epoch = _epoch(store)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("UPDATE tasks SET owner = 'x' WHERE id = 't1'")
        finally:
            other.close()
        await asyncio.sleep(0.3)
        assert _epoch(store) == epoch
        assert not waiter.done()
        waiter.cancel()


async def test_an_append_between_two_batches_of_ours_is_seen(tmp_path: Path) -> None:
    """Another store appends, then this one commits before its next poll: the count that batch
    leaves includes the other's event, so the batch itself must notice it (the poll, comparing
    with that count, no longer can)."""
    path = tmp_path / "t.db"
    store, other = SQLiteStorage(path, poll_interval=1.0), SQLiteStorage(path)
    async with opened(store, other):
        waiter = await _caught_up_waiter(store, 0.2)
        assert await other.events.append("t1", status_event("t1", 1)) == 2
        await store.tasks.create(make_task("t2"))  # a batch of ours, before the next poll
        assert await asyncio.wait_for(waiter, 8) is True


async def test_a_version_6_file_is_migrated_to_counted_appends(tmp_path: Path) -> None:
    path = tmp_path / "v6.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statements in MIGRATIONS[:6]:
        for statement in statements:
            if isinstance(statement, str):
                conn.execute(statement)
            else:
                statement(conn)
    conn.execute("INSERT INTO tasks VALUES ('t1', 'ctx-1', 'TASK_STATE_WORKING', 0, NULL, 1, '{}')")
    conn.execute("INSERT INTO events (task_id, seq, doc) VALUES ('t1', 1, '{}')")
    conn.execute("PRAGMA user_version = 6")
    conn.close()
    store, other = SQLiteStorage(path, poll_interval=0.05), SQLiteStorage(path)
    async with opened(store, other):
        waiter = asyncio.create_task(store.events.wait("t1", 2, 30))
        assert await store.events.append("t1", status_event("t1", 1)) == 2
        await asyncio.sleep(0.2)
        assert await other.events.append("t1", status_event("t1", 2)) == 3
        assert await asyncio.wait_for(waiter, 8) is True
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("SELECT count FROM event_appends").fetchone()[0] == 2
        assert [r[0] for r in conn.execute("SELECT seq FROM events ORDER BY seq")] == [1, 2, 3]
    finally:
        conn.close()
