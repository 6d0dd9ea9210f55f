"""The work queue: messages accepted by a web replica, waiting for a worker to run them.

One entry per task (``task_id`` is the key): the message to run is already in the task's
history, so an entry holds only what rebuilds the executor's request context (``request``, a
JSON object: the message id, the caller, tenant, extensions, request metadata), the attempt
number, when it was enqueued and when it may run (``not_before``).

:meth:`WorkQueue.claim` takes entries *and* their task leases in one transaction, so a task is
never claimed without an owner (a worker that dies after claiming leaves a lease that expires,
and the lease scan recovers the task as for any dead replica). With a cluster-wide cap it first
counts the live task leases under a lock, so no two workers claim past it.

- memory: a dict, one process (several servers in it may share one MemoryStorage);
- SQLite (migration 6): table ``work_queue``, claimed inside the writer's ``BEGIN IMMEDIATE``
  transaction, so several processes on one file agree; idle workers poll;
- PostgreSQL (migration 6): table ``work_queue``, claimed with ``FOR UPDATE SKIP LOCKED``
  (workers claiming at once take different entries and never wait on each other); an enqueue
  sends ``NOTIFY`` on ``a2a_queue.<schema>`` so an idle worker wakes at once; polling remains
  the fallback when the notification is lost.
"""

from __future__ import annotations

import abc
import builtins
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from ._common import from_micros
from ._leases import sqlite_acquire

if TYPE_CHECKING:
    import sqlite3

    from ._leases import MemoryLeaseStore, PostgresLeaseStore
    from ._sqlite_db import _Database as _SQLiteDatabase
    from .postgres import _Database as _PgDatabase

#: Migration 6 of each SQL backend.
SQLITE_MIGRATION = (
    """CREATE TABLE work_queue (
        task_id TEXT PRIMARY KEY,
        request TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        enqueued_at INTEGER NOT NULL,
        not_before INTEGER NOT NULL) WITHOUT ROWID""",
    "CREATE INDEX work_queue_due ON work_queue (not_before, enqueued_at)",
)


def postgres_migration(s: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE {s}.work_queue (
            task_id text PRIMARY KEY,
            request json NOT NULL,
            attempt integer NOT NULL,
            enqueued_at timestamptz NOT NULL,
            not_before timestamptz NOT NULL)""",
        f"CREATE INDEX work_queue_due ON {s}.work_queue (not_before, enqueued_at)",
    )


@dataclass(frozen=True)
class QueueEntry:
    """A task waiting for a worker (see the module docstring)."""

    task_id: str
    request: dict[str, Any]
    attempt: int
    enqueued_at: datetime


@dataclass(frozen=True)
class QueueStats:
    depth: int  #: entries waiting (due or not)
    oldest: datetime | None  #: when the oldest waiting entry was enqueued (None: empty)

    def oldest_age(self, now: float | None = None) -> float:
        """Seconds the oldest entry has waited (0 when the queue is empty)."""
        if self.oldest is None:
            return 0.0
        return max(0.0, (now or time.time()) - self.oldest.timestamp())


class WorkQueue(abc.ABC):
    """Tasks accepted by one replica for another to run (``docs/cluster.md``, Roles and caps)."""

    #: :meth:`enqueue` wakes the workers of other processes at once (PostgreSQL: NOTIFY);
    #: False: they find new entries when they poll
    wakes_others: ClassVar[bool] = False

    def __init__(self) -> None:
        #: called (on the loop) when an entry may be waiting: set by this process's worker
        self.on_enqueue: Callable[[], None] | None = None

    @abc.abstractmethod
    async def enqueue(
        self, task_id: str, request: dict[str, Any], *, attempt: int = 1, delay: float = 0.0
    ) -> None:
        """Add (or replace) the task's entry, to be run ``delay`` seconds from now at the
        earliest."""

    @abc.abstractmethod
    async def claim(
        self, owner: str, ttl: float, limit: int, *, cluster_cap: int | None = None
    ) -> builtins.list[QueueEntry]:
        """Take up to ``limit`` due entries, oldest first, each with its task lease acquired
        for ``owner`` (``ttl`` seconds; an entry whose lease another owner holds stays). With
        ``cluster_cap``, only as many as keep the live task leases at or below it."""

    @abc.abstractmethod
    async def stats(self) -> QueueStats:
        """Depth and the oldest entry's enqueue time (one query)."""

    @abc.abstractmethod
    async def depth_at_least(self, n: int) -> bool:
        """Does the queue hold ``n`` entries or more? (Bounded cost: counts at most ``n``.)"""

    async def listen(self) -> None:  # noqa: B027 (optional hook)
        """Start receiving other processes' wake-ups (a worker calls it). Idempotent."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Stop listening."""

    def _woken(self) -> None:
        if self.on_enqueue is not None:
            self.on_enqueue()


class MemoryWorkQueue(WorkQueue):
    def __init__(self, leases: MemoryLeaseStore) -> None:
        super().__init__()
        self._leases = leases
        #: task id -> (request, attempt, enqueued_at, not_before), in enqueue order
        self._entries: dict[str, tuple[dict[str, Any], int, float, float]] = {}

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._entries

    async def enqueue(
        self, task_id: str, request: dict[str, Any], *, attempt: int = 1, delay: float = 0.0
    ) -> None:
        now = time.time()
        self._entries.pop(task_id, None)
        self._entries[task_id] = (request, attempt, now, now + delay)
        self._woken()

    async def claim(
        self, owner: str, ttl: float, limit: int, *, cluster_cap: int | None = None
    ) -> builtins.list[QueueEntry]:
        if cluster_cap is not None:
            limit = min(limit, cluster_cap - self._leases.live("task"))
        now = time.time()
        taken: list[QueueEntry] = []
        for task_id, (request, attempt, enqueued_at, not_before) in list(self._entries.items()):
            if len(taken) >= limit:
                break
            if not_before > now or not await self._leases.acquire("task", task_id, owner, ttl):
                continue
            del self._entries[task_id]
            stamp = datetime.fromtimestamp(enqueued_at, timezone.utc)
            taken.append(QueueEntry(task_id, request, attempt, stamp))
        return taken

    async def stats(self) -> QueueStats:
        oldest = min((entry[2] for entry in self._entries.values()), default=None)
        stamp = None if oldest is None else datetime.fromtimestamp(oldest, timezone.utc)
        return QueueStats(len(self._entries), stamp)

    async def depth_at_least(self, n: int) -> bool:
        return len(self._entries) >= n


def _micros_now() -> int:
    return int(time.time() * 1_000_000)


class SQLiteWorkQueue(WorkQueue):
    def __init__(self, db: _SQLiteDatabase) -> None:
        super().__init__()
        self._db = db

    async def enqueue(
        self, task_id: str, request: dict[str, Any], *, attempt: int = 1, delay: float = 0.0
    ) -> None:
        doc = json.dumps(request, separators=(",", ":"), default=str)

        def run(conn: sqlite3.Connection) -> None:
            now = _micros_now()
            conn.execute(
                "INSERT OR REPLACE INTO work_queue"
                " (task_id, request, attempt, enqueued_at, not_before) VALUES (?, ?, ?, ?, ?)",
                (task_id, doc, attempt, now, now + int(delay * 1_000_000)),
            )

        await self._db.write(run)
        self._woken()  # a worker in this process; the others poll

    async def claim(
        self, owner: str, ttl: float, limit: int, *, cluster_cap: int | None = None
    ) -> builtins.list[QueueEntry]:
        def due(conn: sqlite3.Connection) -> bool:
            sql = "SELECT 1 FROM work_queue WHERE not_before <= ? LIMIT 1"
            return conn.execute(sql, (_micros_now(),)).fetchone() is not None

        if not await self._db.read(due):  # an idle poll is a read, never a write transaction
            return []

        def run(conn: sqlite3.Connection) -> builtins.list[QueueEntry]:
            now = _micros_now()
            room = limit
            if cluster_cap is not None:  # the writer's transaction is the lock
                (live,) = conn.execute(
                    "SELECT count(*) FROM leases WHERE kind = 'task' AND expires_at > ?", (now,)
                ).fetchone()
                room = min(room, cluster_cap - live)
            if room <= 0:
                return []
            rows = conn.execute(
                "SELECT task_id, request, attempt, enqueued_at FROM work_queue q"
                " WHERE not_before <= ? AND NOT EXISTS (SELECT 1 FROM leases l WHERE"
                " l.kind = 'task' AND l.key = q.task_id AND l.expires_at > ?)"
                " ORDER BY not_before, enqueued_at LIMIT ?",
                (now, now, room),
            ).fetchall()
            taken = []
            for task_id, doc, attempt, enqueued_at in rows:
                if sqlite_acquire(conn, "task", task_id, owner, ttl):
                    conn.execute("DELETE FROM work_queue WHERE task_id = ?", (task_id,))
                    entry = QueueEntry(task_id, json.loads(doc), attempt, from_micros(enqueued_at))
                    taken.append(entry)
            return taken

        return await self._db.write(run)

    async def stats(self) -> QueueStats:
        def run(conn: sqlite3.Connection) -> Any:
            return conn.execute("SELECT count(*), min(enqueued_at) FROM work_queue").fetchone()

        depth, oldest = await self._db.read(run)
        return QueueStats(depth, None if oldest is None else from_micros(oldest))

    async def depth_at_least(self, n: int) -> bool:
        def run(conn: sqlite3.Connection) -> int:
            sql = "SELECT count(*) FROM (SELECT 1 FROM work_queue LIMIT ?)"
            return int(conn.execute(sql, (n,)).fetchone()[0])

        return await self._db.read(run) >= n


class PostgresWorkQueue(WorkQueue):
    wakes_others = True

    def __init__(self, db: _PgDatabase, leases: PostgresLeaseStore) -> None:
        super().__init__()
        self._db = db
        self._leases = leases
        self.channel = f"a2a_queue.{db.schema}"[:63]
        q = f"{db.s}.work_queue"
        now = "clock_timestamp()"
        self._enqueue = (
            f"WITH e AS (INSERT INTO {q} (task_id, request, attempt, enqueued_at, not_before)"
            f" VALUES ($1, $2::json, $3, {now}, {now} + $4 * interval '1 second')"
            " ON CONFLICT (task_id) DO UPDATE SET request = excluded.request,"
            " attempt = excluded.attempt, enqueued_at = excluded.enqueued_at,"
            " not_before = excluded.not_before RETURNING task_id)"
            " SELECT pg_notify($5, task_id) FROM e"
        )
        self._live = (
            f"SELECT count(*) FROM {db.s}.leases WHERE kind = 'task' AND expires_at > {now}"
        )
        self._due = (
            f"SELECT task_id, request, attempt, enqueued_at FROM {q} q"
            f" WHERE not_before <= {now} AND NOT EXISTS (SELECT 1 FROM {db.s}.leases l"
            f" WHERE l.kind = 'task' AND l.key = q.task_id AND l.expires_at > {now})"
            " ORDER BY not_before, enqueued_at LIMIT $1 FOR UPDATE OF q SKIP LOCKED"
        )
        self._any_due = f"SELECT 1 FROM {q} WHERE not_before <= {now} LIMIT 1"
        self._delete = f"DELETE FROM {q} WHERE task_id = $1"
        self._stats = f"SELECT count(*), min(enqueued_at) FROM {q}"
        self._at_least = f"SELECT count(*) FROM (SELECT 1 FROM {q} LIMIT $1) AS x"
        self._listener: Any = None
        self._listen_retry_at = 0.0

    async def enqueue(
        self, task_id: str, request: dict[str, Any], *, attempt: int = 1, delay: float = 0.0
    ) -> None:
        doc = json.dumps(request, separators=(",", ":"), default=str)
        await self._db.pool.execute(
            self._enqueue, task_id, doc, attempt, float(delay), self.channel
        )
        self._woken()

    async def claim(
        self, owner: str, ttl: float, limit: int, *, cluster_cap: int | None = None
    ) -> builtins.list[QueueEntry]:
        if await self._db.pool.fetchval(self._any_due) is None:
            return []  # an idle poll: one read, no transaction, no lock
        async with self._db.pool.acquire() as conn, conn.transaction():
            room = limit
            if cluster_cap is not None:
                # Workers counting at once would each see room for one more: count under a
                # transaction-scoped lock (held until this claim's leases are committed).
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", self.channel)
                room = min(room, cluster_cap - await conn.fetchval(self._live))
            if room <= 0:
                return []
            taken = []
            for task_id, doc, attempt, enqueued_at in await conn.fetch(self._due, room):
                if await self._leases.acquire_on(conn, "task", task_id, owner, ttl):
                    await conn.execute(self._delete, task_id)
                    request = json.loads(doc) if isinstance(doc, str) else doc
                    taken.append(QueueEntry(task_id, request, attempt, enqueued_at))
            return taken

    async def stats(self) -> QueueStats:
        depth, oldest = await self._db.pool.fetchrow(self._stats)
        return QueueStats(depth, oldest)

    async def depth_at_least(self, n: int) -> bool:
        return int(await self._db.pool.fetchval(self._at_least, n)) >= n

    async def listen(self) -> None:
        """A connection of its own LISTENs for enqueues (only workers open it); when it cannot
        connect, or is lost, the worker's poll finds the entries and this retries."""
        if self._listener is not None and not self._listener.is_closed():
            return
        if time.monotonic() < self._listen_retry_at:
            return
        import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

        try:
            conn = await asyncpg.connect(self._db.dsn)
            await conn.add_listener(self.channel, lambda *_: self._woken())
        except (OSError, asyncpg.PostgresError):
            self._listen_retry_at = time.monotonic() + 5
            return
        self._listener = conn

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None and not listener.is_closed():
            await listener.close()


__all__ = [
    "SQLITE_MIGRATION",
    "MemoryWorkQueue",
    "PostgresWorkQueue",
    "QueueEntry",
    "QueueStats",
    "SQLiteWorkQueue",
    "WorkQueue",
    "postgres_migration",
]
