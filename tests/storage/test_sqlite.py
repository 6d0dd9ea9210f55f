"""The conformance suite against SQLite, plus what is particular to the file backend."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.protocol.models import Message, Part, TaskState
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.storage import (
    PushCursor,
    Storage,
    StorageError,
    TaskChange,
    TaskQuery,
    open_storage,
)
from simple_a2a.storage.sqlite import MIGRATIONS, SQLiteStorage

from .conformance import (
    StorageConformance,
    StorageFactory,
    check_unchanged_reads_share_the_snapshot,
    make_task,
    status_event,
)


class TestSQLiteStorage(StorageConformance):
    durable = True

    @pytest.fixture
    def make_storage(self, tmp_path: Path) -> StorageFactory:
        path = tmp_path / "tasks.db"

        def make(**options: Any) -> Storage:
            return SQLiteStorage(path, **options)

        return make


async def test_open_storage_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_storage(f"sqlite:///{tmp_path}/a.db")  # sqlite:////abs/path
    assert isinstance(store, SQLiteStorage) and store.path == f"{tmp_path}/a.db"
    monkeypatch.chdir(tmp_path)
    relative = open_storage("sqlite:///data/b.db")
    assert isinstance(relative, SQLiteStorage) and relative.path == "data/b.db"
    await relative.open()
    await relative.close()
    assert (tmp_path / "data" / "b.db").exists()
    for bad in ("sqlite:///:memory:", "sqlite://", "sqlite:///"):
        with pytest.raises(ValueError, match="file"):
            open_storage(bad)


async def test_file_settings_and_schema_version(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "t.db")
    await store.open()
    await store.tasks.create(make_task("t1"))
    await store.close()
    conn = sqlite3.connect(tmp_path / "t.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        plan = " ".join(
            str(row)
            for row in conn.execute(
                "EXPLAIN QUERY PLAN SELECT doc FROM tasks WHERE state = ? AND (ts, id) < (?, ?)"
                " ORDER BY ts DESC, id DESC LIMIT 10",
                ("TASK_STATE_WORKING", 10**15, "x"),
            )
        )
        assert "tasks_by_state" in plan and "TEMP B-TREE" not in plan, plan
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
    finally:
        conn.close()
    with pytest.raises(StorageError, match="newer"):
        await SQLiteStorage(tmp_path / "t.db").open()


async def test_use_before_open_is_a_clear_error(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "t.db")
    with pytest.raises(StorageError, match="open"):
        await store.tasks.get("t1")


async def test_event_loop_is_not_blocked_by_a_locked_file(tmp_path: Path) -> None:
    # Another connection holds the write lock: our write waits (busy_timeout) in its thread
    # while the event loop keeps running.
    store = SQLiteStorage(tmp_path / "t.db", busy_timeout=5)
    await store.open()
    try:
        other = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        write = asyncio.create_task(store.tasks.create(make_task("t1")))
        ticks = 0
        started = time.monotonic()
        while time.monotonic() - started < 0.3:
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks > 10 and not write.done()
        other.execute("COMMIT")
        other.close()
        assert await write == 1
    finally:
        await store.close()


async def test_another_process_sees_writes_and_wakes_waiters(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = SQLiteStorage(path, poll_interval=0.05)
    await store.open()
    try:
        await store.tasks.create(make_task("t1"))
        script = textwrap.dedent(
            f"""
            import asyncio
            from simple_a2a.storage.sqlite import SQLiteStorage
            from simple_a2a.protocol.models import Task
            from simple_a2a.protocol.requests import StreamResponse

            async def main():
                store = SQLiteStorage({str(path)!r})
                await store.open()
                await asyncio.sleep(0.3)
                task = (await store.tasks.get("t1")).task
                await store.tasks.update(task, expected_version=1)
                await store.events.append("t1", StreamResponse.of(task))
                await store.close()

            asyncio.run(main())
            """
        )
        child = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
        assert await store.events.wait("t1", 0, timeout=20) is True
        assert await child.wait() == 0
        stored = await store.tasks.get("t1")
        assert stored is not None and stored.version == 2
        assert await store.events.append("t1", status_event("t1")) == 2
        page = await store.tasks.list(TaskQuery())
        assert page.total == 1
    finally:
        await store.close()


def test_kill_nine_loses_no_committed_write(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal
        from simple_a2a.storage.sqlite import SQLiteStorage
        from simple_a2a.protocol.models import Task

        async def main():
            store = SQLiteStorage({str(path)!r})
            await store.open()
            for n in range(20):
                await store.tasks.create(Task.from_dict(
                    {{"id": f"t{{n}}", "status": {{"state": "TASK_STATE_WORKING"}}}}))
            os.kill(os.getpid(), signal.SIGKILL)

        asyncio.run(main())
        """
    )
    result = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert result.returncode == -9

    async def check() -> None:
        store = SQLiteStorage(path)
        await store.open()
        try:
            assert len(await store.tasks.active_tasks()) == 20
        finally:
            await store.close()

    asyncio.run(check())


async def test_a_version_1_file_is_migrated_to_the_push_outbox(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO tasks VALUES ('t1', NULL, 'TASK_STATE_WORKING', 0, NULL, 1, '{}')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = SQLiteStorage(path)
    await store.open()
    try:
        assert store.push_cursors is not None
        await store.push_cursors.put(PushCursor("t1", "c1", 2))
        assert await store.push_cursors.pending() == [PushCursor("t1", "c1", 2)]
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1
        plan = str(
            conn.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM push_cursors WHERE state = "
                "'active' ORDER BY task_id, config_id"
            ).fetchall()
        )
        assert "push_cursors_pending" in plan, plan
    finally:
        conn.close()


def _writes_log(path: Path) -> sqlite3.Connection:
    """Triggers (made by another connection, so the store's writer fires them) logging every
    row write of a task: the core row (``doc`` when the document is in the SET list), and
    each artifact and history row by position."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE writes (tbl TEXT, op TEXT, pos INTEGER)")
    conn.execute(
        "CREATE TRIGGER w_doc AFTER UPDATE OF doc ON tasks"
        " BEGIN INSERT INTO writes VALUES ('tasks', 'doc', NULL); END"
    )
    conn.execute(
        "CREATE TRIGGER w_core AFTER UPDATE ON tasks"
        " BEGIN INSERT INTO writes VALUES ('tasks', 'row', NULL); END"
    )
    for table in ("task_artifacts", "task_history"):
        for op in ("INSERT", "UPDATE"):
            conn.execute(
                f"CREATE TRIGGER w_{table}_{op} AFTER {op} ON {table}"
                f" BEGIN INSERT INTO writes VALUES ('{table}', '{op}', new.position); END"
            )
    return conn


def _take(conn: sqlite3.Connection) -> list[tuple[str, str, int | None]]:
    rows = conn.execute("SELECT tbl, op, pos FROM writes").fetchall()
    conn.execute("DELETE FROM writes")
    return sorted(rows, key=repr)


async def test_an_artifact_chunk_rewrites_one_row_not_the_task(tmp_path: Path) -> None:
    from simple_a2a.protocol.reducer import apply_event

    from .conformance import rich_task
    from .conformance_changes import chunk, status

    path = tmp_path / "w.db"
    store = SQLiteStorage(path)
    await store.open()
    try:
        task = apply_event(rich_task("t"), chunk("a-2", Part.from_text("start "), append=False))
        await store.tasks.create(task)  # two artifacts, two history messages
        log = _writes_log(path)
        core_before = log.execute("SELECT doc FROM tasks").fetchone()[0]
        version = 1
        for n in range(3):
            event = chunk("a-2", Part.from_text(f"word {n} "))
            after = apply_event(task, event)
            change = TaskChange.for_event(event, task, after)
            version = await store.tasks.update(after, expected_version=version, change=change)
            task = after
            assert _take(log) == [("task_artifacts", "UPDATE", 1), ("tasks", "row", None)]
        assert log.execute("SELECT doc FROM tasks").fetchone()[0] == core_before

        message = StreamResponse.of(Message.user("more", message_id="u-9"))
        after = apply_event(task, message)
        change = TaskChange.for_event(message, task, after)
        version = await store.tasks.update(after, expected_version=version, change=change)
        task = after
        assert _take(log) == [("task_history", "INSERT", 2), ("tasks", "row", None)]

        event = status(TaskState.WORKING, "status text", 7)
        after = apply_event(task, event)
        change = TaskChange.for_event(event, task, after)
        version = await store.tasks.update(after, expected_version=version, change=change)
        task = after
        assert _take(log) == [
            ("task_history", "INSERT", 3),
            ("tasks", "doc", None),
            ("tasks", "row", None),
        ]
        # the probe sees everything a full rewrite does
        await store.tasks.update(task, expected_version=version)
        assert len(_take(log)) == 2 + 2 + 4
        stored = await store.tasks.get("t")
        assert stored is not None and stored.task.to_json() == task.to_json()
        log.close()
    finally:
        await store.close()


async def test_a_version_2_file_is_migrated_to_task_rows(tmp_path: Path) -> None:
    from .conformance import rich_task

    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    for statements in MIGRATIONS[:2]:
        for statement in statements:
            assert isinstance(statement, str)
            conn.execute(statement)
    rich, bare = rich_task("rich"), make_task("bare")
    for task in (rich, bare):
        conn.execute(
            "INSERT INTO tasks VALUES (?, ?, ?, 0, 'o', 3, ?)",
            (task.id, task.context_id, task.status.state.value, task.to_json().decode()),
        )
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = SQLiteStorage(path)
    await store.open()
    try:
        for task in (rich, bare):
            stored = await store.tasks.get(task.id)
            assert stored is not None and (stored.version, stored.owner) == (3, "o")
            assert stored.task.to_json() == task.to_json()
        assert store.leases is not None  # migration 4 (#14): the leases table
        assert await store.leases.acquire("task", "rich", "replica-a", 5)
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("SELECT count(*) FROM task_artifacts").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM task_history").fetchone()[0] == 2
        core = conn.execute("SELECT doc FROM tasks WHERE id = 'rich'").fetchone()[0]
        assert '"artifacts"' not in core and '"history"' not in core
    finally:
        conn.close()


async def test_an_unchanged_task_is_answered_with_the_snapshot_read_before(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "t.db")
    await store.open()
    try:
        await check_unchanged_reads_share_the_snapshot(store)
    finally:
        await store.close()
