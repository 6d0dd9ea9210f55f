"""The conformance suite against a real PostgreSQL, plus what is particular to it.

Every test gets its own schema (random name, dropped afterwards), so runs never collide.
The server is ``$SIMPLE_A2A_TEST_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
when it cannot be reached the tests are skipped with the connection error.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from simple_a2a.storage import (
    ConcurrentUpdateError,
    PushCursor,
    Storage,
    StorageError,
    TaskQuery,
    open_storage,
)
from simple_a2a.storage._pg_schema import migrations
from simple_a2a.storage.postgres import PostgresStorage

from .conformance import (
    StorageConformance,
    StorageFactory,
    check_unchanged_reads_share_the_snapshot,
    make_task,
    status_event,
)
from .conformance_wakeups import WakeupConformance

asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed (simple-a2a[postgres])")

DSN = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture
def schema(postgres_schema: str) -> str:
    return postgres_schema


class TestPostgresStorage(StorageConformance):
    durable = True

    @pytest.fixture
    def make_storage(self, schema: str) -> StorageFactory:
        def make(**options: Any) -> Storage:
            options.setdefault("max_size", 4)
            return PostgresStorage(DSN, schema=schema, **options)

        return make


class TestPostgresNotifyWakeups(WakeupConformance):
    """Cross-instance wake-ups by LISTEN/NOTIFY (the Redis fan-out's run: test_fanout_redis.py)."""

    @pytest.fixture
    def make_storage(self, schema: str) -> StorageFactory:
        def make(**options: Any) -> Storage:
            return PostgresStorage(DSN, schema=schema, max_size=4, **options)

        return make


def test_import_does_not_need_asyncpg() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['asyncpg'] = None\n"
        "from simple_a2a.storage import open_storage\n"
        "s = open_storage('postgresql://x@localhost/db?schema=s1')\n"
        "assert s.schema == 's1', s.schema\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_open_storage_url() -> None:
    store = open_storage("postgres://u@h:5432/db?schema=tenant_1&sslmode=disable")
    assert isinstance(store, PostgresStorage) and store.schema == "tenant_1"
    assert store._db.dsn == "postgres://u@h:5432/db?sslmode=disable"
    with pytest.raises(ValueError, match="schema"):
        PostgresStorage(DSN, schema='x"; DROP TABLE y; --')


async def test_schema_version_and_indexes(schema: str) -> None:
    store = PostgresStorage(DSN, schema=schema)
    await store.open()
    await store.open()  # idempotent, and a second migration run is a no-op
    try:
        async with store._db.pool.acquire() as conn:
            version = await conn.fetchval(f'SELECT max(version) FROM "{schema}".schema_version')
            assert version == len(migrations('"x"'))
            await conn.execute(
                f'INSERT INTO "{schema}".tasks (id, context_id, state, ts, owner, version, doc)'
                " SELECT 't' || n, 'c' || (n % 100), CASE WHEN n % 50 = 0"
                " THEN 'TASK_STATE_WORKING' ELSE 'TASK_STATE_COMPLETED' END,"
                " now() - n * interval '1 second', NULL, 1,"
                " json_build_object('id', 't' || n, 'status',"
                " json_build_object('state', 'TASK_STATE_WORKING'))"
                " FROM generate_series(1, 20000) AS n"
            )
            await conn.execute(f'ANALYZE "{schema}".tasks')
            plan = "\n".join(
                r[0]
                for r in await conn.fetch(
                    f'EXPLAIN SELECT doc FROM "{schema}".tasks WHERE state = $1'
                    " AND (ts, id) < ($2, $3) ORDER BY ts DESC, id DESC LIMIT 51",
                    "TASK_STATE_WORKING",
                    datetime.now(timezone.utc) - timedelta(seconds=10000),
                    "t10000",
                )
            )
        # The keyset row comparison is an index condition of the composite index: no sort.
        assert "Index Scan Backward using tasks_by_state" in plan, plan
        assert "ROW(ts, id) <" in plan and "Sort" not in plan, plan
        page = await store.tasks.list(TaskQuery(limit=5, state=make_task("x").status.state))
        assert page.total == 400 and len(page.tasks) == 5 and page.has_more
        async with store._db.pool.acquire() as conn:
            await conn.execute(f'INSERT INTO "{schema}".schema_version (version) VALUES (99)')
    finally:
        await store.close()
    with pytest.raises(StorageError, match="newer"):
        await PostgresStorage(DSN, schema=schema).open()


async def test_a_version_1_schema_is_migrated_to_the_push_outbox(schema: str) -> None:
    conn = await asyncpg.connect(DSN)
    try:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
        await conn.execute(
            f'CREATE TABLE "{schema}".schema_version (version integer PRIMARY KEY,'
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for statement in migrations(f'"{schema}"')[0]:
            await conn.execute(statement)
        await conn.execute(f'INSERT INTO "{schema}".schema_version (version) VALUES (1)')
    finally:
        await conn.close()
    store = PostgresStorage(DSN, schema=schema)
    await store.open()
    try:
        assert store.push_cursors is not None
        await store.push_cursors.put(PushCursor("t1", "c1", 2))
        assert await store.push_cursors.pending() == [PushCursor("t1", "c1", 2)]
        async with store._db.pool.acquire() as conn:
            version = await conn.fetchval(f'SELECT max(version) FROM "{schema}".schema_version')
        assert version == len(migrations('"x"'))
    finally:
        await store.close()


async def _writes_log(conn: Any, s: str) -> None:
    """Triggers logging every row write of a task: the core row (``doc`` when the document is
    in the SET list), and each artifact and history row by position."""
    await conn.execute(f"CREATE TABLE {s}.writes (n serial, tbl text, op text, pos int)")
    await conn.execute(
        f"CREATE FUNCTION {s}.log_core() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO {s}.writes (tbl, op) VALUES ('tasks', TG_ARGV[0]); RETURN NULL; END $$"
    )
    await conn.execute(
        f"CREATE FUNCTION {s}.log_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO {s}.writes (tbl, op, pos) VALUES (TG_TABLE_NAME, TG_OP, NEW.position);"
        " RETURN NULL; END $$"
    )
    await conn.execute(
        f"CREATE TRIGGER w_doc AFTER UPDATE OF doc ON {s}.tasks"
        f" FOR EACH ROW EXECUTE FUNCTION {s}.log_core('doc')"
    )
    await conn.execute(
        f"CREATE TRIGGER w_core AFTER UPDATE ON {s}.tasks"
        f" FOR EACH ROW EXECUTE FUNCTION {s}.log_core('row')"
    )
    for table in ("task_artifacts", "task_history"):
        await conn.execute(
            f"CREATE TRIGGER w_rows AFTER INSERT OR UPDATE ON {s}.{table}"
            f" FOR EACH ROW EXECUTE FUNCTION {s}.log_row()"
        )


async def _take(conn: Any, s: str) -> list[tuple[Any, ...]]:
    rows = await conn.fetch(f"DELETE FROM {s}.writes RETURNING tbl, op, pos")
    return sorted((tuple(r) for r in rows), key=repr)


async def test_an_artifact_chunk_rewrites_one_row_not_the_task(schema: str) -> None:
    from simple_a2a.protocol.models import Message, Part, TaskState
    from simple_a2a.protocol.reducer import apply_event
    from simple_a2a.protocol.requests import StreamResponse
    from simple_a2a.storage import TaskChange

    from .conformance import rich_task
    from .conformance_changes import chunk, status

    s = f'"{schema}"'
    store = PostgresStorage(DSN, schema=schema)
    await store.open()
    conn = await asyncpg.connect(DSN)
    try:
        task = apply_event(rich_task("t"), chunk("a-2", Part.from_text("start "), append=False))
        await store.tasks.create(task)  # two artifacts, two history messages
        await _writes_log(conn, s)
        untouched = f"SELECT xmin::text FROM {s}.task_artifacts WHERE position = 0"
        xmin_before = await conn.fetchval(untouched)
        version = 1
        for n in range(3):
            event = chunk("a-2", Part.from_text(f"word {n} "))
            after = apply_event(task, event)
            change = TaskChange.for_event(event, task, after)
            version = await store.tasks.update(after, expected_version=version, change=change)
            task = after
            assert await _take(conn, s) == [("task_artifacts", "UPDATE", 1), ("tasks", "row", None)]
        assert await conn.fetchval(untouched) == xmin_before

        message = StreamResponse.of(Message.user("more", message_id="u-9"))
        after = apply_event(task, message)
        change = TaskChange.for_event(message, task, after)
        version = await store.tasks.update(after, expected_version=version, change=change)
        task = after
        assert await _take(conn, s) == [("task_history", "INSERT", 2), ("tasks", "row", None)]

        event = status(TaskState.WORKING, "status text", 7)
        after = apply_event(task, event)
        change = TaskChange.for_event(event, task, after)
        version = await store.tasks.update(after, expected_version=version, change=change)
        task = after
        assert await _take(conn, s) == [
            ("task_history", "INSERT", 3),
            ("tasks", "doc", None),
            ("tasks", "row", None),
        ]
        await store.tasks.update(task, expected_version=version)  # the probe sees a full write
        assert len(await _take(conn, s)) == 2 + 2 + 4
        stored = await store.tasks.get("t")
        assert stored is not None and stored.task.to_json() == task.to_json()
    finally:
        await conn.close()
        await store.close()


async def test_a_version_2_schema_is_migrated_to_task_rows(schema: str) -> None:
    from .conformance import rich_task

    s = f'"{schema}"'
    rich, bare = rich_task("rich"), make_task("bare")
    conn = await asyncpg.connect(DSN)
    try:
        await conn.execute(f"CREATE SCHEMA {s}")
        await conn.execute(
            f"CREATE TABLE {s}.schema_version (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for statements in migrations(s)[:2]:
            for statement in statements:
                assert isinstance(statement, str)
                await conn.execute(statement)
        await conn.execute(f"INSERT INTO {s}.schema_version (version) VALUES (1), (2)")
        for task in (rich, bare):
            await conn.execute(
                f"INSERT INTO {s}.tasks VALUES ($1, $2, $3, now(), 'o', 3, $4::json)",
                task.id,
                task.context_id,
                task.status.state.value,
                task.to_json().decode(),
            )
    finally:
        await conn.close()
    store = PostgresStorage(DSN, schema=schema)
    await store.open()
    try:
        for task in (rich, bare):
            stored = await store.tasks.get(task.id)
            assert stored is not None and (stored.version, stored.owner) == (3, "o")
            assert stored.task.to_json() == task.to_json()
        assert store.leases is not None  # migration 4 (#14): the leases table
        assert await store.leases.acquire("task", "rich", "replica-a", 5)
        async with store._db.pool.acquire() as conn:
            latest = len(migrations(s))  # every later migration applied too
            assert await conn.fetchval(f"SELECT max(version) FROM {s}.schema_version") == latest
            assert await conn.fetchval(f"SELECT count(*) FROM {s}.task_artifacts") == 1
            assert await conn.fetchval(f"SELECT count(*) FROM {s}.task_history") == 2
            core = await conn.fetchval(f"SELECT doc::text FROM {s}.tasks WHERE id = 'rich'")
            assert '"artifacts"' not in core and '"history"' not in core
    finally:
        await store.close()


async def test_a_task_change_and_its_event_are_one_statement_without_a_session_reset(
    schema: str,
) -> None:
    """``record`` is one statement (the task row, its event, the notification), so no BEGIN
    and COMMIT; and the pool's connections carry no session state, so releasing one costs no
    reset round trip (asyncpg's default: ``pg_advisory_unlock_all(); CLOSE ALL; ...``). With
    both, a SendMessage makes 5 round trips instead of 12 (issue #19). A transaction left open
    is still rolled back on release."""
    store = PostgresStorage(DSN, schema=schema, min_size=1, max_size=1)
    await store.open()
    queries: list[str] = []
    try:
        async with store._db.pool.acquire() as conn:
            conn.add_query_logger(lambda logged: queries.append(logged.query))
        version, seq = await store.record(make_task("t"), status_event("t"), expected_version=None)
        assert (version, seq) == (1, 1)
        version, seq = await store.record(make_task("t"), status_event("t"), expected_version=1)
        assert (version, seq) == (2, 2)
        await store.tasks.get("t")
        ours = [q for q in queries if schema in q]  # (not asyncpg's type introspection)
        assert len(ours) == 3, ours  # create + event, update + event, get
        assert [q.split()[:3] for q in ours[:2]] == [["WITH", "core", "AS"]] * 2
        assert not [q for q in queries if "BEGIN" in q or "unlock_all" in q or "RESET" in q]
        with pytest.raises(ConcurrentUpdateError):  # refused: neither the task nor the log moved
            await store.record(make_task("t"), status_event("t"), expected_version=1)
        assert await store.events.last_seq("t") == 2

        async with store._db.pool.acquire() as conn:  # left in a transaction: rolled back
            await conn.execute("BEGIN")
            await conn.execute(f'DELETE FROM "{schema}".tasks')
        async with store._db.pool.acquire() as conn:
            assert not conn.is_in_transaction()
        assert await store.tasks.get("t") is not None
    finally:
        await store.close()


async def test_an_unchanged_task_is_answered_with_the_snapshot_read_before(schema: str) -> None:
    """(At a known version the statement aggregates no child rows either.)"""
    store = PostgresStorage(DSN, schema=schema)
    await store.open()
    try:
        await check_unchanged_reads_share_the_snapshot(store)
    finally:
        await store.close()
