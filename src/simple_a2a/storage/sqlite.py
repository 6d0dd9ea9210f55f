"""SQLite storage: embedded and persistent (stdlib :mod:`sqlite3`, no dependency); not the
default of ``server()`` (memory is), the store to pass for tasks that survive a restart.

Connections. SQLite admits one writer at a time; this process writes through one connection,
so its writes never contend for the lock among themselves (no ``SQLITE_BUSY`` storms):

- **writes** are batched (group commit) into short ``BEGIN IMMEDIATE`` transactions, so the
  version check of ``update`` and the sequence number of ``append`` are atomic even against
  other processes writing the same file. By default a batch is the writes of one event-loop
  iteration, committed on the loop (a WAL append to the page cache, no fsync: cheaper than a
  thread hand-off); a file locked by another process, and every checkpoint (its fsync), go to
  the **writer thread** instead, so the loop never waits on a lock or a disk flush.
  ``loop_writes=False`` sends every batch to the writer thread (``_sqlite_db``);
- **a few reader threads** (``readers``, default 4), each with its own connection. In WAL mode
  readers never block the writer nor each other, so reads (ListTasks, replays) proceed while
  a write is in flight. Each read that runs more than one statement (ListTasks: count and
  page) runs in one transaction, i.e. one snapshot. A read by key (``get``, GetTask; the
  ``last_seq`` of ``wait``'s re-checks) runs on the loop with the writes (``loop_writes``).

Pragmas: ``journal_mode=WAL``, ``synchronous=NORMAL`` (durable across a process crash such as
kill -9; the last transactions may be lost only on power failure or an OS crash) and
``busy_timeout`` (other processes holding the write lock are waited for, not failed).

Schema. ``PRAGMA user_version`` is the schema version; :data:`MIGRATIONS` is the ordered list of
steps, applied at ``open()`` in one ``BEGIN IMMEDIATE`` transaction (so two processes opening the
same new file migrate it once). A file from a newer library version is refused.

A task is a core row (indexed columns: state, context, owner, status timestamp in µs since the
epoch, id; and the task's JSON without artifacts and history) plus one row per artifact and per
history message (migration 3, ``_layout``): an artifact chunk rewrites that artifact's row, a
message inserts one row. Events are their own table keyed by ``(task_id, seq)``.
``push_cursors`` (migration 2) is the push outbox: one row per (task, webhook config), so
pending deliveries survive a restart.

``wait()`` wakes at once for appends made through this object, and polls ``PRAGMA
data_version`` (one cheap probe for all waiters, every ``poll_interval`` seconds, default 0.2 s,
only while someone waits) to see commits by other connections, e.g. another process; a move
wakes the waiters only if the file's count of appended events (migration 7, ``event_appends``)
says another connection appended (``_Database.foreign_appends``).
"""

from __future__ import annotations

import builtins
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ..protocol.models import Task, TaskPushNotificationConfig
from ..protocol.requests import StreamResponse
from ._common import (
    ACTIVE_STATES,
    ChangeNotifier,
    cursor_row,
    cursor_sql,
    event_doc,
    from_micros,
    list_sql,
    logged_event,
    push_config,
    push_cursor,
    push_doc,
    task_row,
    to_micros,
)
from ._conversations import ConversationStore, SQLiteConversationStore
from ._layout import WritePlan, core_doc, full_plan, write_plan
from ._leases import SQLiteLeaseStore
from ._queue import SQLiteWorkQueue, WorkQueue
from ._recent import RecentEvents
from ._sqlite_db import _Database
from ._sqlite_layout import assemble_rows, write_rows
from ._sqlite_schema import MIGRATIONS, Conn
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
    StoredTask,
    TaskChange,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
)

_COLUMNS = "id, doc, version, owner"
#: One event appended at the task's next seq, which it answers (RETURNING: SQLite 3.35+).
_APPEND_ONE = (
    "INSERT INTO events (task_id, seq, doc)"
    " SELECT ?, coalesce(max(seq), 0) + 1, ? FROM events WHERE task_id = ? RETURNING seq"
)


# The writes of a streamed chunk are objects, not closures: a write waits for its group commit
# (the rest of the loop iteration) with every other write of it, and three closures with ten
# cells between them were that many more objects in flight for the collector to walk and
# promote (issue #36; bench/round3-sqlite.md).


class _Update:
    """A version-checked update of a task's core row, then its artifact and history rows
    (``SQLiteTaskStore.updating_all``); answers the new version."""

    __slots__ = ("_args", "_plans", "_sql", "_task_id", "_version")

    def __init__(
        self, sql: str, args: tuple[Any, ...], plans: list[WritePlan], task_id: str, version: int
    ) -> None:
        self._sql, self._args, self._plans = sql, args, plans
        self._task_id, self._version = task_id, version

    def __call__(self, conn: Conn) -> int:
        task_id = self._task_id
        if conn.execute(self._sql, self._args).rowcount == 1:
            for plan in self._plans:
                write_rows(conn, task_id, plan)
            return self._version
        current = conn.execute("SELECT version FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if current is None:
            raise KeyError(task_id)
        expected = self._version - len(self._plans)
        raise ConcurrentUpdateError(f"task {task_id} is at version {current[0]}, not {expected}")


class _AppendOne:
    """One event at its task's next seq, in one statement (``_APPEND_ONE``); answers ``[seq]``."""

    __slots__ = ("_args",)

    def __init__(self, args: tuple[str, str, str]) -> None:
        self._args = args

    def __call__(self, conn: Conn) -> builtins.list[int]:
        # fetchall: steps the statement to its end (a RETURNING row left unread keeps the
        # statement running inside the transaction)
        return [row[0] for row in conn.execute(_APPEND_ONE, self._args).fetchall()]


class _Record:
    """A snapshot's write and its event's, one write (``SQLiteStorage.record``)."""

    __slots__ = ("_append", "_store")

    def __init__(
        self, store: Callable[[Conn], int], append: Callable[[Conn], builtins.list[int]]
    ) -> None:
        self._store, self._append = store, append

    def __call__(self, conn: Conn) -> tuple[int, int]:
        return self._store(conn), self._append(conn)[0]


class SQLiteTaskStore(TaskStore):
    accepts_change = True

    def __init__(self, db: _Database) -> None:
        self._db = db
        # The last tasks read: a read finding the same version answers with that snapshot,
        # as (id, version) names one content for the database's life (docs/storage.md).
        self._known = RecentTasks(256)

    async def create(self, task: Task, *, owner: str | None = None) -> int:
        return await self._db.write(self.creating(task, owner))

    @staticmethod
    def creating(task: Task, owner: str | None) -> Callable[[Conn], int]:
        """The statements of :meth:`create`, to run inside a write (``SQLiteStorage.record``)."""
        row = task_row(task)
        core = core_doc(task)
        plan = full_plan(task)

        def run(conn: Conn) -> int:
            try:
                conn.execute(
                    "INSERT INTO tasks (id, context_id, state, ts, owner, version, doc)"
                    " VALUES (?, ?, ?, ?, ?, 1, ?)",
                    (row.id, row.context_id, row.state, to_micros(row.ts), owner, core),
                )
            except sqlite3.IntegrityError:
                raise TaskExistsError(task.id) from None
            write_rows(conn, task.id, plan)
            return 1

        return run

    async def get(self, task_id: str) -> StoredTask | None:
        known = self._known.get(task_id)

        def run(conn: Conn) -> builtins.list[StoredTask]:
            sql = "SELECT id, doc, version, owner FROM tasks WHERE id = ?"
            rows = conn.execute(sql, (task_id,)).fetchall()
            if known is not None and rows and rows[0][2] == known.version:
                return [known]  # unchanged since read: no child rows, no model built
            return assemble_rows(conn, rows)

        found = await self._db.read(run, snapshot=True, point=True)
        if not found:
            self._known.pop(task_id, None)
            return None
        self._known.keep(found[0])
        return found[0]

    async def update(
        self, task: Task, *, expected_version: int, change: TaskChange | None = None
    ) -> int:
        return await self._db.write(self.updating(task, expected_version, change))

    @staticmethod
    def updating(
        task: Task, expected_version: int, change: TaskChange | None
    ) -> Callable[[Conn], int]:
        """The statements of :meth:`update`, to run inside a write (``SQLiteStorage.record``)."""
        return SQLiteTaskStore.updating_all([(task, change)], expected_version)

    @staticmethod
    def updating_all(
        changes: Sequence[tuple[Task, TaskChange | None]], expected_version: int
    ) -> Callable[[Conn], int]:
        """Consecutive updates of one task (``record_steps``) as one version-checked UPDATE of
        the core row, to the last snapshot's columns and ``version + len(changes)``, then each
        update's artifact and history rows in order: the rows and version that updating one
        by one would leave, with one UPDATE (an executor's artifact and final status: two)."""
        plans = [write_plan(task, change) for task, change in changes]
        last = changes[-1][0]
        task_id = last.id
        count = len(changes)
        # The last snapshot's core is every later one's: an update that does not rewrite the
        # core (an artifact, a message) leaves it as the one before wrote it. An artifact chunk
        # (no core) builds no row of indexed columns: only the version moves.
        if any(plan.core for plan in plans):
            row = task_row(last)
            sql = (
                "UPDATE tasks SET context_id = ?, state = ?, ts = ?, doc = ?,"
                " version = version + ? WHERE id = ? AND version = ?"
            )
            args: tuple[Any, ...] = (
                row.context_id, row.state, to_micros(row.ts), core_doc(last), count, task_id,
                expected_version,
            )  # fmt: skip
        else:
            sql = "UPDATE tasks SET version = version + ? WHERE id = ? AND version = ?"
            args = (count, task_id, expected_version)
        return _Update(sql, args, plans, task_id, expected_version + count)

    async def list(self, query: TaskQuery) -> TaskPage:
        sql = list_sql("tasks", query, numbered=False, ts=to_micros, columns=_COLUMNS)
        known = dict(self._known)  # a copy: the read may run in the writer's thread

        def run(conn: Conn) -> TaskPage:
            total = conn.execute(sql.count_sql, sql.count_args).fetchone()[0]
            rows = conn.execute(sql.page_sql, sql.page_args).fetchall()
            limit = max(query.limit, 0)
            tasks = assemble_rows(conn, rows[:limit], known)  # (a page polled again: known)
            return TaskPage(tasks, int(total), len(rows) > limit)

        page = await self._db.read(run, snapshot=True)
        for stored in page.tasks:
            self._known.keep(stored)
        return page

    async def delete(self, task_id: str) -> bool:
        def run(conn: Conn) -> bool:
            conn.execute("DELETE FROM task_artifacts WHERE task_id = ?", (task_id,))
            conn.execute("DELETE FROM task_history WHERE task_id = ?", (task_id,))
            return conn.execute("DELETE FROM tasks WHERE id = ?", (task_id,)).rowcount > 0

        self._known.pop(task_id, None)
        return await self._db.write(run)

    async def active_tasks(self) -> builtins.list[StoredTask]:
        def run(conn: Conn) -> builtins.list[StoredTask]:
            sql = f"SELECT {_COLUMNS} FROM tasks WHERE state IN (?, ?)"
            return assemble_rows(conn, conn.execute(sql, ACTIVE_STATES).fetchall())

        return await self._db.read(run, snapshot=True)


class SQLiteEventLog(EventLog):
    def __init__(
        self, db: _Database, notifier: ChangeNotifier, max_events_per_task: int | None
    ) -> None:
        self._db = db
        self._notifier = notifier
        self.max_events_per_task = max_events_per_task
        #: what this process appended last, for the streams following it (``_recent``)
        self.recent = RecentEvents(trimmed_to=max_events_per_task, epoch=notifier.epoch)
        self._last_seq = self.recent.reader(self.last_seq)

    async def append(self, task_id: str, event: StreamResponse) -> int:
        epoch = self.recent.epoch(task_id)  # before the commit (``_recent``)
        (seq,) = await self._db.write(self.appending(task_id, [event]))
        self.recent.add(task_id, [seq], [event], epoch)
        self._notifier.notify(task_id, seq)
        return seq

    def appending(
        self, task_id: str, events: Sequence[StreamResponse]
    ) -> Callable[[Conn], builtins.list[int]]:
        """The statements of :meth:`append` for consecutive events of one task (their seqs),
        to run inside a write (``SQLiteStorage.record``); the caller wakes the waiters
        (``notify``) once it is committed."""
        docs = [event_doc(event) for event in events]
        keep = self.max_events_per_task
        if len(docs) == 1 and keep is None:  # a streamed chunk: one statement, not two
            return _AppendOne((task_id, docs[0], task_id))

        def run(conn: Conn) -> builtins.list[int]:
            sql = "SELECT coalesce(max(seq), 0) FROM events WHERE task_id = ?"
            last = int(conn.execute(sql, (task_id,)).fetchone()[0])
            rows = [(task_id, last + i, doc) for i, doc in enumerate(docs, 1)]
            conn.executemany("INSERT INTO events (task_id, seq, doc) VALUES (?, ?, ?)", rows)
            last += len(rows)
            if keep is not None and last > keep:
                sql = "DELETE FROM events WHERE task_id = ? AND seq <= ?"
                conn.execute(sql, (task_id, last - keep))
            return [row[1] for row in rows]

        return run

    def notify(self, task_id: str, seq: int) -> None:
        self._notifier.notify(task_id, seq)

    async def read(self, task_id: str, after: int, limit: int | None = None) -> list[LoggedEvent]:
        recent = self.recent.read(task_id, after, limit)
        if recent is not None:
            return recent

        def run(conn: Conn) -> list[Any]:
            sql = "SELECT seq, doc FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?"
            return conn.execute(sql, (task_id, after, -1 if limit is None else limit)).fetchall()

        return [logged_event(seq, doc) for seq, doc in await self._db.read(run)]

    async def _seq(self, task_id: str, func: str) -> int:
        def run(conn: Conn) -> int:
            sql = f"SELECT coalesce({func}(seq), 0) FROM events WHERE task_id = ?"
            return int(conn.execute(sql, (task_id,)).fetchone()[0])

        # One descent of the primary key: on the loop (a follower asks at every event it
        # waits for; a reader thread's hand-off cost more than the read, issue #36).
        return await self._db.read(run, point=True)

    async def last_seq(self, task_id: str) -> int:
        return await self._seq(task_id, "max")

    async def first_seq(self, task_id: str) -> int:
        return await self._seq(task_id, "min")

    async def wait(self, task_id: str, after: int, timeout: float) -> bool:
        return await self._notifier.wait(task_id, after, timeout, self._last_seq)

    async def delete(self, task_id: str) -> None:
        def run(conn: Conn) -> None:
            conn.execute("DELETE FROM events WHERE task_id = ?", (task_id,))

        self.recent.forget(task_id)
        await self._db.write(run)


class SQLitePushConfigStore(PushConfigStore):
    def __init__(self, db: _Database) -> None:
        self._db = db

    async def count_for_owner(self, owner: str) -> int | None:
        def run(conn: Conn) -> int:
            sql = (
                "SELECT count(*) FROM push_configs p JOIN tasks t ON t.id = p.task_id"
                " WHERE t.owner = ?"
            )
            return int(conn.execute(sql, (owner,)).fetchone()[0])

        return await self._db.read(run)

    async def put(self, config: TaskPushNotificationConfig) -> None:
        task_id, config_id, doc = push_doc(config)

        def run(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO push_configs (task_id, id, doc) VALUES (?, ?, ?)"
                " ON CONFLICT (task_id, id) DO UPDATE SET doc = excluded.doc",
                (task_id, config_id, doc),
            )

        await self._db.write(run)

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        def run(conn: Conn) -> Any:
            sql = "SELECT doc FROM push_configs WHERE task_id = ? AND id = ?"
            return conn.execute(sql, (task_id, config_id)).fetchone()

        found = await self._db.read(run)
        return None if found is None else push_config(found[0])

    async def list(self, task_id: str) -> list[TaskPushNotificationConfig]:
        def run(conn: Conn) -> list[Any]:
            sql = "SELECT doc FROM push_configs WHERE task_id = ? ORDER BY rowid"
            return conn.execute(sql, (task_id,)).fetchall()

        return [push_config(doc) for (doc,) in await self._db.read(run)]

    async def delete(self, task_id: str, config_id: str) -> bool:
        def run(conn: Conn) -> bool:
            sql = "DELETE FROM push_configs WHERE task_id = ? AND id = ?"
            return conn.execute(sql, (task_id, config_id)).rowcount > 0

        return await self._db.write(run)


class SQLitePushCursorStore(PushCursorStore):
    """The push outbox; ``updated_at`` is stored as µs since the epoch, like task timestamps."""

    def __init__(self, db: _Database) -> None:
        self._db = db
        self._sql = cursor_sql("push_cursors", numbered=False)

    async def get(self, task_id: str, config_id: str) -> PushCursor | None:
        def run(conn: Conn) -> Any:
            return conn.execute(self._sql.get, (task_id, config_id)).fetchone()

        found = await self._db.read(run)
        return None if found is None else push_cursor(found, from_micros)

    async def put(self, cursor: PushCursor) -> None:
        row = cursor_row(cursor, to_micros)

        def run(conn: Conn) -> None:
            conn.execute(self._sql.put, row)

        await self._db.write(run)

    async def _select(self, sql: str, *args: Any) -> builtins.list[PushCursor]:
        def run(conn: Conn) -> builtins.list[Any]:
            return conn.execute(sql, args).fetchall()

        return [push_cursor(row, from_micros) for row in await self._db.read(run)]

    async def list(self, task_id: str) -> builtins.list[PushCursor]:
        return await self._select(self._sql.list, task_id)

    async def pending(self) -> builtins.list[PushCursor]:
        return await self._select(self._sql.pending)

    async def delete(self, task_id: str, config_id: str) -> bool:
        def run(conn: Conn) -> bool:
            return conn.execute(self._sql.delete, (task_id, config_id)).rowcount > 0

        return await self._db.write(run)


class SQLiteStorage(Storage):
    """Tasks, events, push configs and the push outbox in one SQLite file (module docstring).

    ``max_events_per_task`` trims each task's log to its newest events (None keeps all);
    ``poll_interval`` is how often waiters look for commits made by other processes;
    ``loop_writes`` commits on the event loop (default; ``False``: on the writer thread, for a
    slow or network file system; see the module docstring).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_events_per_task: int | None = None,
        poll_interval: float = 0.2,
        readers: int = 4,
        busy_timeout: float = 5.0,
        loop_writes: bool = True,
    ) -> None:
        path = os.fspath(path)
        if not path or path == ":memory:" or path.startswith("file::memory:"):
            raise ValueError(
                "SQLiteStorage needs a file path: an in-memory SQLite database is private to "
                "one connection; use MemoryStorage (open_storage('memory')) instead"
            )
        self.path = path
        self._db = _Database(path, readers, busy_timeout, MIGRATIONS, loop_writes=loop_writes)
        self._notifier = ChangeNotifier(poll_interval, marker=self._db.foreign_appends)
        self.tasks = SQLiteTaskStore(self._db)
        self._events = SQLiteEventLog(self._db, self._notifier, max_events_per_task)
        self.events = self._events
        self.push_configs = SQLitePushConfigStore(self._db)
        self.push_cursors: PushCursorStore | None = SQLitePushCursorStore(self._db)
        self.leases: LeaseStore | None = SQLiteLeaseStore(self._db)
        self.queue: WorkQueue | None = SQLiteWorkQueue(self._db)
        self.conversations: ConversationStore | None = SQLiteConversationStore(self._db)

    async def open(self) -> None:
        await self._db.open()

    async def record(
        self,
        task: Task,
        event: StreamResponse,
        *,
        expected_version: int | None,
        change: TaskChange | None = None,
        owner: str | None = None,
    ) -> tuple[int, int]:
        """The snapshot and its event in one transaction: one trip to the writer, not two."""
        store = (
            SQLiteTaskStore.creating(task, owner)
            if expected_version is None
            else SQLiteTaskStore.updating(task, expected_version, change)
        )
        append = self._events.appending(task.id, [event])
        epoch = self._events.recent.epoch(task.id)  # before the commit (``_recent``)
        version, seq = await self._db.write(_Record(store, append))
        self._events.recent.add(task.id, [seq], [event], epoch)
        self._events.notify(task.id, seq)
        return version, seq

    atomic_steps = True

    async def record_steps(
        self, steps: Sequence[RecordStep], *, expected_version: int
    ) -> list[int]:
        """All the steps in one write (one savepoint of the writer's transaction): one trip
        to the writer thread for an executor's artifacts and its final status."""
        if not steps:
            return []
        store = SQLiteTaskStore.updating_all(
            [(step.task, step.change) for step in steps], expected_version
        )
        append = self._events.appending(steps[0].task.id, [step.event for step in steps])
        epoch = self._events.recent.epoch(steps[0].task.id)  # before the commit (``_recent``)

        def run(conn: Conn) -> list[int]:
            store(conn)
            return append(conn)

        seqs = await self._db.write(run)
        self._events.recent.add(steps[0].task.id, seqs, [step.event for step in steps], epoch)
        self._events.notify(steps[0].task.id, seqs[-1])
        return seqs

    async def close(self) -> None:
        await self._notifier.close()
        await self._db.close()

    def __repr__(self) -> str:
        return f"SQLiteStorage({self.path!r})"
