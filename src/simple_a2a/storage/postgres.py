"""PostgreSQL storage for production and for several replicas sharing one database (asyncpg).

``asyncpg`` is an optional dependency (``pip install simple-a2a[postgres]``); this module imports
it only when a :class:`PostgresStorage` is opened.

Layout. Everything lives in one schema (``schema=``, default ``a2a``), created if missing:

- ``tasks``: the exact ``Task.to_json()`` text in a ``json`` column (``json``, not ``jsonb``:
  ``jsonb`` re-orders object keys and rewrites numbers, so metadata would not come back
  byte-identical; ``json`` keeps the text and still supports the JSON operators), plus the
  indexed columns ListTasks filters and sorts on: ``state``, ``context_id``, ``owner``, ``ts``
  (status timestamp) and ``id``. Each filter has a composite index ``(filter, ts, id)`` and the
  unfiltered listing ``(ts, id)``, matching ``ORDER BY ts DESC, id DESC``; the keyset condition
  ``(ts, id) < ($ts, $id)`` is a row comparison the index scan applies directly, so a page costs
  ``O(log n + limit)`` at any depth. The ``total`` of a page is a ``count(*)`` over the same
  index (index-only once vacuumed): the one part whose cost grows with the matching tasks.
- ``task_artifacts`` / ``task_history`` (migration 3, ``_layout``): one row per artifact and per
  history message, keyed ``(task_id, position)``; the ``tasks`` document holds the rest, so an
  artifact chunk rewrites one artifact row (and bumps the version), not the task.
- ``events``: ``(task_id, seq)`` primary key; ``event_seqs`` holds each task's last sequence
  number. An append is one statement: ``INSERT .. ON CONFLICT DO UPDATE .. RETURNING`` bumps the
  counter row (row-locked until commit, so concurrent appenders, in any process, get 1, 2, 3 ..
  without gaps or duplicates), inserts the event and ``pg_notify``-s the task id.
- ``push_configs``: ``(task_id, id)`` primary key.
- ``push_cursors`` (migration 2): the push outbox, one row per ``(task_id, config_id)``; a
  partial index on the ``active`` rows serves the restart scan (``pending()``).
- ``schema_version``: the migrations applied (``_pg_schema.migrations``, in order), applied at
  ``open()`` under a transaction-scoped advisory lock, so replicas starting together migrate once.

``wait()``: one dedicated connection LISTENs on the schema's channel and wakes waiters of the
notified task at once. As a fallback (the listening connection dropped, a notification lost)
the waiters of a task re-check it every ``poll_interval`` seconds (default 1 s), one read of the
database per task and interval shared by all of them; a dropped listener is re-established by
the next ``wait()``. With an event fan-out (``fanout.py``) there is no NOTIFY nor LISTEN for
events: the appender publishes after its commit; the poll fallback stays.
"""

from __future__ import annotations

import asyncio
import builtins
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.logcontext import library_logger
from ..protocol.models import Task, TaskPushNotificationConfig
from ..protocol.requests import StreamResponse
from ._common import (
    ACTIVE_STATES,
    ChangeNotifier,
    as_utc,
    cursor_row,
    cursor_sql,
    event_doc,
    list_sql,
    logged_event,
    push_config,
    push_cursor,
    push_doc,
    task_row,
)
from ._conversations import ConversationStore, PostgresConversationStore
from ._layout import assemble, core_doc, full_plan, write_plan
from ._leases import PostgresLeaseStore
from ._pg_layout import TaskSQL, event_ctes, notifying
from ._pg_schema import migrations
from ._pg_sessions import OwnSessions
from ._queue import PostgresWorkQueue, WorkQueue
from ._recent import RecentEvents
from .base import (
    ConcurrentUpdateError,
    EventLog,
    LeaseStore,
    LoggedEvent,
    PushConfigStore,
    PushCursor,
    PushCursorStore,
    RecentTasks,
    RecordStep,
    Storage,
    StorageError,
    StoredTask,
    TaskChange,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from .fanout import EventFanout, fanout_from

if TYPE_CHECKING:
    import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

log = library_logger("simple_a2a.storage.postgres")

_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


class _Database:
    """The pool, the listening connection and the qualified names of one schema."""

    def __init__(
        self, dsn: str, schema: str, pool_options: dict[str, Any], listens: bool = True
    ) -> None:
        if not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"invalid PostgreSQL schema name {schema!r}")
        self.dsn = dsn
        self.schema = schema
        self.s = f'"{schema}"'
        self.channel = f"a2a_events.{schema}"[:63]
        #: NOTIFY carries the wake-ups (no fan-out): the channel ends the append statements
        self.listens = listens
        self.notify_args: tuple[str, ...] = (self.channel,) if listens else ()
        self.pool_options = pool_options
        self._pool: asyncpg.Pool | None = None
        self._listener: asyncpg.Connection | None = None
        self._listener_retry_at = 0.0
        self.sessions = OwnSessions()  # which NOTIFYs are this process's own
        self._opening = asyncio.Lock()

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StorageError(f"PostgreSQL storage (schema {self.schema}) is not open")
        return self._pool

    async def open(self) -> None:
        async with self._opening:  # two concurrent open() calls set up once
            await self._open()

    async def _open(self) -> None:
        if self._pool is not None:
            return
        try:
            import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise StorageError(
                "PostgreSQL storage needs asyncpg: pip install 'simple-a2a[postgres]'"
            ) from exc
        pool = await asyncpg.create_pool(self.dsn, **self.sessions.pool_options(self.pool_options))
        try:
            async with pool.acquire() as conn:
                await self._migrate(conn)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        await self.ensure_listener()

    async def _migrate(self, conn: asyncpg.Connection) -> None:
        steps = migrations(self.s)
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", self.channel)
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.s}")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.s}.schema_version ("
                "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            version = await conn.fetchval(
                f"SELECT coalesce(max(version), 0) FROM {self.s}.schema_version"
            )
            if version > len(steps):
                raise StorageError(
                    f"schema {self.schema}: version {version} is newer than this library knows "
                    f"({len(steps)}); upgrade simple-a2a"
                )
            for number, statements in enumerate(steps[version:], version + 1):
                for statement in statements:
                    if isinstance(statement, str):
                        await conn.execute(statement)
                    else:
                        await statement(conn, self.s)
                await conn.execute(
                    f"INSERT INTO {self.s}.schema_version (version) VALUES ($1)", number
                )

    async def ensure_listener(self) -> None:
        """(Re-)establish the LISTEN connection; failures leave waiters on the poll fallback."""
        if self._listener is not None or self._pool is None or not self.listens:
            return
        if time.monotonic() < self._listener_retry_at:
            return
        import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

        try:
            conn = await asyncpg.connect(self.dsn)
            await conn.add_listener(self.channel, self.sessions.notified)
        except (OSError, asyncpg.PostgresError) as exc:
            self._listener_retry_at = time.monotonic() + 5
            log.warning("cannot LISTEN on %s (polling instead): %r", self.channel, exc)
            return
        conn.add_termination_listener(self._listener_lost)
        self._listener = conn

    def _listener_lost(self, conn: Any) -> None:
        if conn is self._listener:
            log.warning("LISTEN connection on %s lost; polling until it is back", self.channel)
            self._listener = None

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        pool, self._pool = self._pool, None
        if listener is not None:
            await listener.close()
        if pool is not None:
            await pool.close()


class PostgresTaskStore(TaskStore):
    accepts_change = True

    def __init__(self, db: _Database) -> None:
        self._db = db
        self._sql = TaskSQL(db.s, notify=db.listens)
        # The last tasks read: a read finding the same version answers with that snapshot,
        # as (id, version) names one content for the database's life (docs/storage.md).
        self._known = RecentTasks(256)

    async def create(self, task: Task, *, owner: str | None = None) -> int:
        async with self._db.pool.acquire() as conn:
            return (await self.create_on(conn, task, owner))[0]

    async def _written(
        self,
        conn: asyncpg.Connection,
        sqls: tuple[str, str],
        args: tuple[Any, ...],
        event: StreamResponse | None,
    ) -> tuple[int, int] | None:
        """A task write (``sqls[0]``), or with an event its ``*_logged`` form (``sqls[1]``: the
        event appended and notified in the same statement). ``(version, seq)`` (seq 0 without
        an event); None when the version guard (or the existing id) refused it."""
        if event is None:
            version = await conn.fetchval(sqls[0], *args)
            return None if version is None else (int(version), 0)
        found = await conn.fetchrow(sqls[1], *args, event_doc(event), *self._db.notify_args)
        return None if found is None else (int(found[0]), int(found[1]))

    async def create_on(
        self,
        conn: asyncpg.Connection,
        task: Task,
        owner: str | None,
        event: StreamResponse | None = None,
    ) -> tuple[int, int]:
        """:meth:`create` on a given connection; with ``event``, also its first event, in one
        statement (``PostgresStorage.record``). Returns the version and the event's seq."""
        row = task_row(task)
        plan = full_plan(task)
        head = (row.id, row.context_id, row.state, row.ts, owner, core_doc(task))
        sqls = (self._sql.create, self._sql.create_logged)
        written = await self._written(conn, sqls, (*head, *self._sql.row_args(plan)), event)
        if written is None:
            raise TaskExistsError(task.id)
        return written

    async def get(self, task_id: str) -> StoredTask | None:
        known = self._known.get(task_id)
        if known is None:
            found = await self._db.pool.fetchrow(self._sql.get, task_id)
        else:
            found = await self._db.pool.fetchrow(self._sql.get_unless, task_id, known.version)
        if found is None:
            self._known.pop(task_id, None)
            return None
        # (unchanged since read: no child rows aggregated, no model built). The snapshot known
        # *before* the query decides, not one looked up after it (``_known_or_assembled``): the
        # children came back empty for that version, and another read may have replaced it.
        stored = known if known is not None and found[2] == known.version else assemble(*found[1:])
        self._known.keep(stored)
        return stored

    async def update(
        self, task: Task, *, expected_version: int, change: TaskChange | None = None
    ) -> int:
        async with self._db.pool.acquire() as conn:
            return (await self.update_on(conn, task, expected_version, change))[0]

    async def update_on(
        self,
        conn: asyncpg.Connection,
        task: Task,
        expected_version: int,
        change: TaskChange | None,
        event: StreamResponse | None = None,
    ) -> tuple[int, int]:
        """:meth:`update` on a given connection; with ``event``, also appended in the same
        statement (``PostgresStorage.record``). Returns the version and the event's seq."""
        row = task_row(task)
        plan = write_plan(task, change)
        rows = self._sql.row_args(plan)
        sql = self._sql
        if plan.core:
            core = (row.context_id, row.state, row.ts, core_doc(task))
            args = (row.id, expected_version, *rows, *core)
            written = await self._written(conn, (sql.update, sql.update_logged), args, event)
        else:
            args = (row.id, expected_version, *rows)
            written = await self._written(conn, (sql.bump, sql.bump_logged), args, event)
        if written is not None:
            return written
        current = await conn.fetchval(
            f"SELECT version FROM {self._db.s}.tasks WHERE id = $1", row.id
        )
        if current is None:
            raise KeyError(task.id)
        raise ConcurrentUpdateError(
            f"task {task.id} is at version {current}, not {expected_version}"
        )

    async def list(self, query: TaskQuery) -> TaskPage:
        sql = list_sql(
            f"{self._db.s}.tasks", query, numbered=True, ts=as_utc, columns=self._sql.columns
        )
        async with (
            self._db.pool.acquire() as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            total = await conn.fetchval(sql.count_sql, *sql.count_args)
            rows = await conn.fetch(sql.page_sql, *sql.page_args)
        limit = max(query.limit, 0)
        tasks = [self._known_or_assembled(row) for row in rows[:limit]]
        return TaskPage(tasks, int(total), len(rows) > limit)

    def _known_or_assembled(self, row: asyncpg.Record) -> StoredTask:
        """A listed row at the version of a snapshot read before is that snapshot (no model
        built; the database still aggregated its child rows: a page is one statement)."""
        known = self._known.get(row[0])
        stored = known if known is not None and known.version == row[2] else assemble(*row[1:])
        self._known.keep(stored)
        return stored

    async def delete(self, task_id: str) -> bool:
        self._known.pop(task_id, None)
        return bool(await self._db.pool.fetchval(self._sql.delete, task_id))

    async def active_tasks(self) -> builtins.list[StoredTask]:
        rows = await self._db.pool.fetch(
            f"SELECT {self._sql.columns} FROM {self._db.s}.tasks WHERE state = ANY($1::text[])",
            list(ACTIVE_STATES),
        )
        return [assemble(*row[1:]) for row in rows]


class PostgresEventLog(EventLog):
    def __init__(
        self,
        db: _Database,
        notifier: ChangeNotifier,
        max_events_per_task: int | None,
        fanout: EventFanout | None = None,
    ) -> None:
        self._db = db
        self._notifier = notifier
        self._fanout = fanout
        self.max_events_per_task = max_events_per_task
        channel = 3 if db.listens else None
        self._append_sql = f"WITH {event_ctes(db.s, 2)} SELECT ins.seq FROM ins{notifying(channel)}"
        #: what this process appended last, for the streams following it (``_recent``)
        self.recent = RecentEvents(trimmed_to=max_events_per_task, epoch=notifier.epoch)
        self._last_seq = self.recent.reader(self.last_seq)

    async def append(self, task_id: str, event: StreamResponse) -> int:
        db, doc, epoch = self._db, event_doc(event), self.recent.epoch(task_id)
        seq = int(await db.pool.fetchval(self._append_sql, task_id, doc, *db.notify_args))
        await self.appended(task_id, [seq], [event], epoch)
        return seq

    async def appended(
        self, task_id: str, seqs: Sequence[int], events: Sequence[StreamResponse], epoch: int | None
    ) -> None:
        """After appends committed: keep them for followers (``epoch``: the task's before the
        commit), trim the log, wake this process's waiters (with a fan-out, other replicas')."""
        self.recent.add(task_id, seqs, events, epoch)
        seq = seqs[-1]
        db = self._db
        keep = self.max_events_per_task
        if keep is not None and seq > keep:
            await db.pool.execute(
                f"DELETE FROM {db.s}.events WHERE task_id = $1 AND seq <= $2", task_id, seq - keep
            )
        self._notifier.notify(task_id, seq)
        if self._fanout is not None:
            self._fanout.publish(task_id, seq)

    async def read(self, task_id: str, after: int, limit: int | None = None) -> list[LoggedEvent]:
        recent = self.recent.read(task_id, after, limit)
        if recent is not None:
            return recent
        rows = await self._db.pool.fetch(
            f"SELECT seq, doc FROM {self._db.s}.events WHERE task_id = $1 AND seq > $2"
            " ORDER BY seq LIMIT $3",
            task_id,
            after,
            limit,
        )
        return [logged_event(seq, doc) for seq, doc in rows]

    async def last_seq(self, task_id: str) -> int:
        value = await self._db.pool.fetchval(
            f"SELECT last_seq FROM {self._db.s}.event_seqs WHERE task_id = $1", task_id
        )
        return int(value or 0)

    async def first_seq(self, task_id: str) -> int:
        value = await self._db.pool.fetchval(
            f"SELECT min(seq) FROM {self._db.s}.events WHERE task_id = $1", task_id
        )
        return int(value or 0)

    async def wait(self, task_id: str, after: int, timeout: float) -> bool:
        await self._db.ensure_listener()
        return await self._notifier.wait(task_id, after, timeout, self._last_seq)

    async def delete(self, task_id: str) -> None:
        self.recent.forget(task_id)
        s = self._db.s
        async with self._db.pool.acquire() as conn, conn.transaction():
            await conn.execute(f"DELETE FROM {s}.events WHERE task_id = $1", task_id)
            await conn.execute(f"DELETE FROM {s}.event_seqs WHERE task_id = $1", task_id)


class PostgresPushConfigStore(PushConfigStore):
    def __init__(self, db: _Database) -> None:
        self._db = db

    async def count_for_owner(self, owner: str) -> int | None:
        s = self._db.s
        count = await self._db.pool.fetchval(
            f"SELECT count(*) FROM {s}.push_configs p JOIN {s}.tasks t ON t.id = p.task_id"
            " WHERE t.owner = $1",
            owner,
        )
        return int(count)

    async def put(self, config: TaskPushNotificationConfig) -> None:
        task_id, config_id, doc = push_doc(config)
        await self._db.pool.execute(
            f"INSERT INTO {self._db.s}.push_configs (task_id, id, doc) VALUES ($1, $2, $3::json)"
            " ON CONFLICT (task_id, id) DO UPDATE SET doc = excluded.doc",
            task_id,
            config_id,
            doc,
        )

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        doc = await self._db.pool.fetchval(
            f"SELECT doc FROM {self._db.s}.push_configs WHERE task_id = $1 AND id = $2",
            task_id,
            config_id,
        )
        return None if doc is None else push_config(doc)

    async def list(self, task_id: str) -> builtins.list[TaskPushNotificationConfig]:
        rows = await self._db.pool.fetch(
            f"SELECT doc FROM {self._db.s}.push_configs WHERE task_id = $1 ORDER BY n", task_id
        )
        return [push_config(row[0]) for row in rows]

    async def delete(self, task_id: str, config_id: str) -> bool:
        status = await self._db.pool.execute(
            f"DELETE FROM {self._db.s}.push_configs WHERE task_id = $1 AND id = $2",
            task_id,
            config_id,
        )
        return bool(status != "DELETE 0")


class PostgresPushCursorStore(PushCursorStore):
    def __init__(self, db: _Database) -> None:
        self._db = db
        self._sql = cursor_sql(f"{db.s}.push_cursors", numbered=True)

    async def get(self, task_id: str, config_id: str) -> PushCursor | None:
        row = await self._db.pool.fetchrow(self._sql.get, task_id, config_id)
        return None if row is None else push_cursor(row, as_utc)

    async def put(self, cursor: PushCursor) -> None:
        await self._db.pool.execute(self._sql.put, *cursor_row(cursor, as_utc))

    async def list(self, task_id: str) -> builtins.list[PushCursor]:
        rows = await self._db.pool.fetch(self._sql.list, task_id)
        return [push_cursor(row, as_utc) for row in rows]

    async def pending(self) -> builtins.list[PushCursor]:
        rows = await self._db.pool.fetch(self._sql.pending)
        return [push_cursor(row, as_utc) for row in rows]

    async def delete(self, task_id: str, config_id: str) -> bool:
        status = await self._db.pool.execute(self._sql.delete, task_id, config_id)
        return bool(status != "DELETE 0")


async def _keep_session(conn: Any) -> None:
    """The pool's reset of a released connection: nothing to undo.

    asyncpg's default reset is a round trip per release (``pg_advisory_unlock_all(); CLOSE
    ALL; UNLISTEN *; RESET ALL``): it made 2 of a SendMessage's 12 round trips (issue #19,
    bench/README.md round 8). The pool's connections run only this module's statements, which
    leave no session state: the one advisory lock is transaction-scoped, LISTEN has a connection
    of its own, nothing SETs or opens a cursor. asyncpg still rolls back a transaction left
    open before calling this. A ``reset=`` passed to :class:`PostgresStorage` replaces it.
    """


class PostgresStorage(Storage):
    """Tasks, events, push configs and the push outbox in one PostgreSQL schema (see the
    module docstring).

    ``dsn`` is an asyncpg DSN (``postgresql://user:pw@host:5432/db``); ``pool_options`` go to
    ``asyncpg.create_pool`` (``min_size``, ``max_size``, ...). ``max_events_per_task`` trims each
    task's log to its newest events (None keeps all). ``fanout`` (a ``redis://`` URL or an
    :class:`~simple_a2a.storage.fanout.EventFanout`) carries the cross-replica wake-ups instead
    of NOTIFY (docs/cluster.md, "Event fan-out"); every replica of the schema must use it.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "a2a",
        max_events_per_task: int | None = None,
        poll_interval: float = 1.0,
        fanout: str | EventFanout | None = None,
        **pool_options: Any,
    ) -> None:
        pool_options.setdefault("min_size", 1)
        pool_options.setdefault("max_size", 10)
        pool_options.setdefault("reset", _keep_session)
        self.fanout = fanout_from(fanout)
        self._db = _Database(dsn, schema, pool_options, listens=self.fanout is None)
        signal = self.fanout.delivering if self.fanout else lambda: self._db._listener
        self._notifier = ChangeNotifier(poll_interval, signal=signal)
        self._db.sessions.on_foreign = self._notifier.notify_foreign
        self._tasks = self.tasks = PostgresTaskStore(self._db)
        self._events = self.events = PostgresEventLog(
            self._db, self._notifier, max_events_per_task, self.fanout
        )
        self.push_configs = PostgresPushConfigStore(self._db)
        self.push_cursors: PushCursorStore | None = PostgresPushCursorStore(self._db)
        self.leases: LeaseStore | None = (leases := PostgresLeaseStore(self._db))
        self.queue: WorkQueue | None = PostgresWorkQueue(self._db, leases)
        self.conversations: ConversationStore | None = PostgresConversationStore(self._db)

    @property
    def schema(self) -> str:
        return self._db.schema

    async def open(self) -> None:
        await self._db.open()
        if self.fanout is not None:
            notifier = self._notifier
            await self.fanout.start(self._db.channel, notifier.notify_foreign, notifier.notify_all)

    async def record(
        self,
        task: Task,
        event: StreamResponse,
        *,
        expected_version: int | None,
        change: TaskChange | None = None,
        owner: str | None = None,
    ) -> tuple[int, int]:
        """The snapshot and its event in one transaction: a process killed between the two
        never leaves a task change that no subscriber or webhook will ever see."""
        # One statement (``*_logged`` in _pg_layout.py): atomic without BEGIN and COMMIT.
        epoch = self._events.recent.epoch(task.id)  # before the commit (``_recent``)
        async with self._db.pool.acquire() as conn:
            if expected_version is None:
                version, seq = await self._tasks.create_on(conn, task, owner, event)
            else:
                version, seq = await self._tasks.update_on(
                    conn, task, expected_version, change, event
                )
        await self._events.appended(task.id, [seq], [event], epoch)
        return version, seq

    atomic_steps = True

    async def record_steps(
        self, steps: Sequence[RecordStep], *, expected_version: int
    ) -> list[int]:
        """All the steps in one transaction (one round trip of statements on one connection)."""
        seqs, epoch = [], self._events.recent.epoch(steps[0].task.id) if steps else None
        async with self._db.pool.acquire() as conn, conn.transaction():
            for i, step in enumerate(steps):
                _, seq = await self._tasks.update_on(
                    conn, step.task, expected_version + i, step.change, step.event
                )
                seqs.append(seq)
        if seqs:
            await self._events.appended(steps[0].task.id, seqs, [s.event for s in steps], epoch)
        return seqs

    async def close(self) -> None:
        if self.fanout is not None:
            await self.fanout.close()
        await self._notifier.close()
        await self._db.close()

    def __repr__(self) -> str:
        return f"PostgresStorage(schema={self._db.schema!r})"
