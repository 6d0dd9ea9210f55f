"""How the SQLite store writes (``storage/_sqlite_db.py``): group commit, writes committed on
the event loop, and what is kept off the loop (a file locked by another process, checkpoints)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.storage import Storage, TaskExistsError, _sqlite_db
from simple_a2a.storage._sqlite_db import _Database
from simple_a2a.storage.sqlite import SQLiteStorage

from .conformance import StorageConformance, StorageFactory, make_task, status_event


class TestSQLiteThreadWrites(StorageConformance):
    """The whole conformance suite with every write on the writer thread (``loop_writes=False``,
    the setting for a slow or network file system)."""

    durable = True

    @pytest.fixture
    def make_storage(self, tmp_path: Path) -> StorageFactory:
        def make(**options: Any) -> Storage:
            return SQLiteStorage(tmp_path / "tasks.db", loop_writes=False, **options)

        return make


@pytest.fixture(params=[True, False], ids=["loop-writes", "thread-writes"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    storage = SQLiteStorage(tmp_path / "t.db", loop_writes=request.param)
    await storage.open()
    yield storage
    await storage.close()


async def test_a_failing_write_in_a_group_commit_is_undone_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrent writes share one transaction (group commit), run first without savepoints;
    one that raises sends the batch round again with a savepoint each, so it alone fails and
    every other write of the batch is stored, with its event."""
    batches: list[tuple[int, bool]] = []  # (size, went through without a replay)
    optimistic = _Database._optimistic

    def spy(conn: sqlite3.Connection, batch: Any, on_loop: bool = False) -> Any:
        committed = optimistic(conn, batch, on_loop)
        batches.append((len(batch), committed is not None))
        return committed

    monkeypatch.setattr(_Database, "_optimistic", staticmethod(spy))
    for loop_writes in (True, False):
        store = SQLiteStorage(tmp_path / f"{loop_writes}.db", loop_writes=loop_writes)
        await store.open()
        batches.clear()
        try:
            await store.tasks.create(make_task("dup"))
            ids = [f"t{i}" if i % 4 else "dup" for i in range(1, 25)]
            results = await asyncio.gather(
                *(store.record(make_task(i), status_event(i), expected_version=None) for i in ids),
                return_exceptions=True,
            )
            for task_id, result in zip(ids, results, strict=True):
                if task_id == "dup":
                    assert isinstance(result, TaskExistsError)
                else:
                    assert result == (1, 1), (task_id, result)
                    stored = await store.tasks.get(task_id)
                    assert stored is not None and stored.version == 1
                    assert [e.seq for e in await store.events.read(task_id, 0)] == [1]
            assert await store.events.read("dup", 0) == []  # the failed writes left no event
            assert any(size > 1 and not clean for size, clean in batches), batches  # a replay
        finally:
            await store.close()


async def test_a_file_locked_by_another_process_is_waited_for_off_the_loop(
    tmp_path: Path,
) -> None:
    """Another connection holds the write lock for 0.4 s: the write waits for it on the writer
    thread (busy_timeout) while the loop goes on; writes made meanwhile queue behind it in
    order; once the lock is free, writes are committed on the loop again."""
    path = tmp_path / "t.db"
    store = SQLiteStorage(path)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        started = time.monotonic()
        first = asyncio.create_task(store.events.append("t", status_event("t", 1)))
        await asyncio.sleep(0.05)
        second = asyncio.create_task(store.events.append("t", status_event("t", 2)))
        await asyncio.sleep(0.35)
        assert not first.done() and not second.done()
        assert ticks >= 20  # the loop was not blocked by the wait
        other.execute("COMMIT")
        assert (await first, await second) == (1, 2)  # in the order they were made
        assert time.monotonic() - started >= 0.4
        ticking.cancel()
        assert [e.event.status_update.metadata for e in await store.events.read("t", 0)] == [
            {"n": 1},
            {"n": 2},
        ]
        # the thread is done: the loop commits again (the thread clears the flag just after
        # it resolves the writes' futures, so the loop may look before it has: wait, bounded)
        for _ in range(200):
            if not store._db._draining:
                break
            await asyncio.sleep(0.01)
        assert not store._db._draining
        assert await store.events.append("t", status_event("t", 3)) == 3
        assert not store._db._draining
    finally:
        other.close()
        await store.close()


async def test_the_wal_is_checkpointed_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's connection never checkpoints; the writer thread does once the WAL reaches
    WAL_CHECKPOINT_BYTES (1 MiB here), with TRUNCATE, so the WAL file is emptied again and again
    instead of growing: each commit here adds two to four pages, which 800 commits would make
    ~10 MB without the checkpoints. (PASSIVE or RESTART ones never shrink the file; they left it
    at 3-3.5 MB.)

    When the thread runs is the OS's choice (a loaded machine left it unscheduled for 5 MB of
    commits), so the test does not bound the size reached while the loop keeps committing: past
    the threshold it stops and waits (bounded) for the thread to empty the file, every time."""
    monkeypatch.setattr(_sqlite_db, "WAL_CHECKPOINT_BYTES", 1 << 20)
    path = tmp_path / "t.db"
    store = SQLiteStorage(path)
    await store.open()
    try:
        emptied = 0
        for n in range(800):  # one commit each
            await store.events.append(f"t{n}", status_event(f"t{n}", n))
            size = os.path.getsize(f"{path}-wal")
            if size < 1 << 20:
                continue
            for _ in range(1000):  # the checkpoint is on its way: up to 10 s for the thread
                await asyncio.sleep(0.01)
                if os.path.getsize(f"{path}-wal") < size:
                    break
            assert os.path.getsize(f"{path}-wal") == 0, (n, size)  # TRUNCATE: emptied
            emptied += 1
        assert emptied >= 5, emptied  # ~10 MB of WAL in 1 MiB checkpoints
        conn = sqlite3.connect(path)
        try:  # the early commits are in the database file itself
            assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 800
        finally:
            conn.close()
    finally:
        await store.close()


async def test_close_commits_the_writes_of_the_current_iteration(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStorage(path)
    await store.open()
    pending = [asyncio.ensure_future(store.tasks.create(make_task(f"t{n}"))) for n in range(5)]
    await asyncio.sleep(0)  # the writes are queued for this iteration's commit
    await store.close()
    assert [await write for write in pending] == [1] * 5
    again = SQLiteStorage(path)
    await again.open()
    try:
        assert len(await again.tasks.active_tasks()) == 5
    finally:
        await again.close()


async def test_the_change_probe_counts_other_connections_appends_only(
    store: SQLiteStorage,
) -> None:
    """The change probe of waiters: this process's own commits do not move it (they wake
    their waiters directly), another connection's append does."""
    before = await store._db.foreign_appends()
    await store.record(make_task("mine"), status_event("mine"), expected_version=None)
    assert await store._db.foreign_appends() == before
    other = sqlite3.connect(store.path)
    try:
        other.execute("INSERT INTO events (task_id, seq, doc) VALUES ('x', 1, '{}')")
        other.commit()
    finally:
        other.close()
    assert await store._db.foreign_appends() != before


async def test_a_point_read_runs_on_the_loop_and_falls_back_to_a_reader_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GetTask's read runs on the loop's connection: another connection holding the write
    lock does not stop it (WAL), it sees every commit; a busy answer sends it to a reader
    thread instead of failing."""
    path = tmp_path / "t.db"
    store = SQLiteStorage(path)
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await store.tasks.create(make_task("t1"))
        other.execute("BEGIN IMMEDIATE")
        stored = await asyncio.wait_for(store.tasks.get("t1"), 1)
        assert stored is not None and stored.task.id == "t1"
        other.execute("COMMIT")

        threads: list[str] = []
        read_on = _Database._read_on

        def busy_on_the_loop(conn: sqlite3.Connection, fn: Any, snapshot: bool) -> Any:
            threads.append(threading.current_thread().name)
            if conn is store._db._loop_conn:
                raise sqlite3.OperationalError("database is locked")
            return read_on(conn, fn, snapshot)

        monkeypatch.setattr(_Database, "_read_on", staticmethod(busy_on_the_loop))
        stored = await store.tasks.get("t1")
        assert stored is not None and stored.task.id == "t1"
        assert threads[0] == threading.current_thread().name
        assert threads[1].startswith("a2a-sqlite-reader")
    finally:
        other.close()
        await store.close()


async def test_two_connections_appending_to_one_task_take_consecutive_seqs(
    tmp_path: Path,
) -> None:
    """A streamed chunk takes its seq in the INSERT itself (``_APPEND_ONE``): two stores on one
    file (as two processes) appending in turn, several per group commit, never share a seq."""
    first, second = SQLiteStorage(tmp_path / "t.db"), SQLiteStorage(tmp_path / "t.db")
    await first.open()
    await second.open()
    try:
        await first.tasks.create(make_task("t1"))
        seqs: list[int] = []
        for _ in range(5):
            for store in (first, second):
                batch = [store.events.append("t1", status_event("t1")) for _ in range(3)]
                seqs += await asyncio.gather(*batch)
        assert sorted(seqs) == list(range(1, 31))
        assert await second.events.last_seq("t1") == 30
        assert [e.seq for e in await first.events.read("t1", 0)] == list(range(1, 31))
    finally:
        await first.close()
        await second.close()
