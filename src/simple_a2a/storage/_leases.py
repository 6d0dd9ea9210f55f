"""The :class:`~.base.LeaseStore` of each backend: a row per lease, ``(kind, key)`` its key.

- memory: a dict, judged by this process's clock — one process only (it cannot coordinate
  others, and says so in ``docs/storage.md``);
- SQLite (migration 4): table ``leases``, ``expires_at`` in µs since the epoch by the host's
  clock; each operation is one statement inside the writer's ``BEGIN IMMEDIATE`` transaction,
  so it is atomic against every process writing the file;
- PostgreSQL (migration 4): table ``leases``, ``expires_at timestamptz`` by the *database's*
  clock (``clock_timestamp()``), so replicas on hosts whose clocks disagree still agree on
  expiry. ``acquire`` is one ``INSERT .. ON CONFLICT DO UPDATE .. WHERE`` (the conflicting row
  is locked and the condition re-checked on its newest version: of two stealers one wins).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..protocol.logcontext import library_logger
from ..protocol.models import TERMINAL_STATES
from ._common import from_micros
from .base import Lease, LeaseKind, LeaseStore, Listening, StorageError

if TYPE_CHECKING:
    import sqlite3

    from ._sqlite_db import _Database as _SQLiteDatabase
    from .postgres import _Database as _PgDatabase

log = library_logger("simple_a2a.storage")

#: Migration 4 of each SQL backend.
SQLITE_MIGRATION = (
    """CREATE TABLE leases (
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (kind, key)) WITHOUT ROWID""",
    "CREATE INDEX leases_by_expiry ON leases (kind, expires_at)",
)


def postgres_migration(s: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE {s}.leases (
            kind text NOT NULL,
            key text NOT NULL,
            owner text NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (kind, key))""",
        f"CREATE INDEX leases_by_expiry ON {s}.leases (kind, expires_at)",
    )


#: Task states no executor may change any more (spec §4.1.3 terminal states).
TERMINAL = frozenset(state.value for state in TERMINAL_STATES)
_ENDED = (
    "SELECT l.key FROM leases l JOIN tasks t ON t.id = l.key"
    " WHERE l.kind = 'task' AND l.owner = $1 AND t.state IN ("
    + ", ".join(f"'{state}'" for state in sorted(TERMINAL))
    + ") ORDER BY l.key"
)


#: the states a replica runs an executor in: what a recovery scan may take over
ACTIVE = frozenset(("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"))
_ACTIVE_SQL = "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')"

#: Active tasks without a task lease, status older than ``$1`` (served by the state index).
_UNLEASED = (
    f"SELECT t.id FROM tasks t WHERE t.state IN {_ACTIVE_SQL}"
    " AND t.ts < $1 AND NOT EXISTS"
    " (SELECT 1 FROM leases l WHERE l.kind = 'task' AND l.key = t.id)"
    # (a task waiting in the work queue has no lease either: a worker will claim it, _queue)
    " AND NOT EXISTS (SELECT 1 FROM work_queue q WHERE q.task_id = t.id) ORDER BY t.ts LIMIT $2"
)


def _check(kind: str, ttl: float) -> None:
    if kind not in ("task", "push"):
        raise ValueError(f"unknown lease kind {kind!r}")
    if not ttl > 0:
        raise ValueError(f"a lease needs a positive ttl, got {ttl!r}")


def _lease(row: Any, ts: Any) -> Lease:
    kind, key, owner, expires_at = row
    if kind not in ("task", "push"):
        raise StorageError(f"lease {key!r} has unknown kind {kind!r}")
    checked: LeaseKind = kind
    return Lease(checked, key, owner, ts(expires_at))


class MemoryLeaseStore(LeaseStore):
    """Leases in a dict: they coordinate the tasks of this process only (memory storage is not
    shared anyway)."""

    def __init__(
        self,
        states: Callable[[str], str | None] | None = None,
        active: Callable[[float], builtins.list[str]] | None = None,
    ) -> None:
        self._leases: dict[tuple[str, str], tuple[str, float]] = {}
        self._states = states  # task id -> its state (the memory task store's rows)
        self._active = active  # status older than (epoch s) -> active task ids, oldest first
        #: task id -> waits in the work queue (no lease, yet no orphan); set by MemoryStorage
        self.queued: Callable[[str], bool] = lambda _task_id: False

    def live(self, kind: LeaseKind) -> int:
        """How many leases of ``kind`` are held and unexpired (the work queue's cluster cap)."""
        now = time.time()
        return sum(1 for (k, _), (_, until) in self._leases.items() if k == kind and until > now)

    async def acquire(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        _check(kind, ttl)
        now = time.time()
        held = self._leases.get((kind, key))
        if held is not None and held[0] != owner and held[1] > now:
            return False
        self._leases[(kind, key)] = (owner, now + ttl)
        return True

    async def take_over(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        if kind == "task" and self._states is not None and self._states(key) not in ACTIVE:
            # not active: nothing to take over (the SQL stores' fence, ``_FENCE``)
            if self._leases.get((kind, key), ("", 0.0))[1] <= time.time():
                self._leases.pop((kind, key), None)  # an expired lease of it: dropped
            return False
        return await self.acquire(kind, key, owner, ttl)

    async def renew(
        self, kind: LeaseKind, keys: builtins.list[str], owner: str, ttl: float
    ) -> builtins.list[str]:
        _check(kind, ttl)
        until = time.time() + ttl
        renewed = []
        for key in keys:
            held = self._leases.get((kind, key))
            if held is not None and held[0] == owner:
                self._leases[(kind, key)] = (owner, until)
                renewed.append(key)
        return renewed

    async def release(self, kind: LeaseKind, key: str, owner: str) -> bool:
        held = self._leases.get((kind, key))
        if held is None or held[0] != owner:
            return False
        del self._leases[(kind, key)]
        return True

    async def get(self, kind: LeaseKind, key: str) -> Lease | None:
        held = self._leases.get((kind, key))
        if held is None:
            return None
        return Lease(kind, key, held[0], datetime.fromtimestamp(held[1], timezone.utc))

    async def expired(self, kind: LeaseKind, limit: int = 100) -> builtins.list[Lease]:
        now = time.time()
        found = sorted(
            (until, key, owner)
            for (k, key), (owner, until) in self._leases.items()
            if k == kind and until <= now
        )
        return [
            Lease(kind, key, owner, datetime.fromtimestamp(until, timezone.utc))
            for until, key, owner in found[:limit]
        ]

    async def unleased(self, older_than: float, limit: int = 100) -> builtins.list[str]:
        if self._active is None:
            return []
        found = self._active(time.time() - older_than)
        return [t for t in found if ("task", t) not in self._leases and not self.queued(t)][:limit]

    async def ended(self, owner: str) -> builtins.list[str]:
        states = self._states
        if states is None:
            return []
        return sorted(
            key
            for (kind, key), (holder, _) in self._leases.items()
            if kind == "task" and holder == owner and states(key) in TERMINAL
        )


#: The fence of a takeover (LeaseStore.take_over): the task's version moves on, nothing else —
#: only while the task is active. A task that ended (or waits for input, or is gone) has nothing
#: to take over: the scan's list of unleased tasks can be older than the end of a task this very
#: replica ran (it ended, and let its lease go, while the query was in flight), and taking that
#: over logged a takeover that never was, counted it, and bumped the version of a finished task
#: (207 of them in one loaded bench run with a single replica).
_FENCE = f"UPDATE tasks SET version = version + 1 WHERE id = $1 AND state IN {_ACTIVE_SQL}"
_DROP = "DELETE FROM leases WHERE kind = $1 AND key = $2 AND owner = $3"


def _micros_now() -> int:
    return int(time.time() * 1_000_000)


def sqlite_acquire(conn: sqlite3.Connection, kind: str, key: str, owner: str, ttl: float) -> bool:
    """:meth:`SQLiteLeaseStore.acquire` inside the caller's write transaction (the queue's
    claim takes an entry and its lease at once)."""
    now = _micros_now()
    cursor = conn.execute(
        "INSERT INTO leases (kind, key, owner, expires_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (kind, key) DO UPDATE"
        " SET owner = excluded.owner, expires_at = excluded.expires_at"
        " WHERE leases.owner = excluded.owner OR leases.expires_at <= ?",
        (kind, key, owner, now + int(ttl * 1_000_000), now),
    )
    return cursor.rowcount == 1


class SQLiteLeaseStore(LeaseStore):
    def __init__(self, db: _SQLiteDatabase) -> None:
        self._db = db

    async def acquire(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        _check(kind, ttl)
        return await self._db.write(lambda conn: sqlite_acquire(conn, kind, key, owner, ttl))

    async def take_over(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        _check(kind, ttl)

        def run(conn: sqlite3.Connection) -> bool:
            taken = sqlite_acquire(conn, kind, key, owner, ttl)
            fence = _FENCE.replace("$1", "?")
            if taken and kind == "task" and conn.execute(fence, (key,)).rowcount == 0:
                drop = _DROP.replace("$1", "?").replace("$2", "?").replace("$3", "?")
                conn.execute(drop, (kind, key, owner))
                return False  # not active: nothing to take over (the lease is dropped)
            return taken

        return await self._db.write(run)

    async def renew(
        self, kind: LeaseKind, keys: builtins.list[str], owner: str, ttl: float
    ) -> builtins.list[str]:
        _check(kind, ttl)
        if not keys:
            return []

        def run(conn: sqlite3.Connection) -> builtins.list[str]:
            until = _micros_now() + int(ttl * 1_000_000)
            renewed: builtins.list[str] = []
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                rows = conn.execute(
                    f"UPDATE leases SET expires_at = ? WHERE kind = ? AND owner = ?"
                    f" AND key IN ({marks}) RETURNING key",
                    (until, kind, owner, *chunk),
                ).fetchall()
                renewed.extend(row[0] for row in rows)
            return renewed

        return await self._db.write(run)

    async def release(self, kind: LeaseKind, key: str, owner: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            sql = "DELETE FROM leases WHERE kind = ? AND key = ? AND owner = ?"
            return conn.execute(sql, (kind, key, owner)).rowcount == 1

        return await self._db.write(run)

    async def get(self, kind: LeaseKind, key: str) -> Lease | None:
        def run(conn: sqlite3.Connection) -> Any:
            sql = "SELECT kind, key, owner, expires_at FROM leases WHERE kind = ? AND key = ?"
            return conn.execute(sql, (kind, key)).fetchone()

        row = await self._db.read(run)
        return None if row is None else _lease(row, from_micros)

    async def expired(self, kind: LeaseKind, limit: int = 100) -> builtins.list[Lease]:
        def run(conn: sqlite3.Connection) -> builtins.list[Any]:
            return conn.execute(
                "SELECT kind, key, owner, expires_at FROM leases"
                " WHERE kind = ? AND expires_at <= ? ORDER BY expires_at LIMIT ?",
                (kind, _micros_now(), limit),
            ).fetchall()

        return [_lease(row, from_micros) for row in await self._db.read(run)]

    async def unleased(self, older_than: float, limit: int = 100) -> builtins.list[str]:
        def run(conn: sqlite3.Connection) -> builtins.list[Any]:
            sql = _UNLEASED.replace("$1", "?").replace("$2", "?")
            return conn.execute(sql, (_micros_now() - int(older_than * 1e6), limit)).fetchall()

        return [row[0] for row in await self._db.read(run)]

    async def ended(self, owner: str) -> builtins.list[str]:
        def run(conn: sqlite3.Connection) -> builtins.list[Any]:
            return conn.execute(_ENDED.replace("$1", "?"), (owner,)).fetchall()

        return [row[0] for row in await self._db.read(run)]


class PostgresLeaseStore(LeaseStore):
    def __init__(self, db: _PgDatabase) -> None:
        self._db = db
        t = f"{db.s}.leases"
        until = "clock_timestamp() + $4 * interval '1 second'"
        self._acquire = (
            f"INSERT INTO {t} AS l (kind, key, owner, expires_at) VALUES ($1, $2, $3, {until})"
            " ON CONFLICT (kind, key) DO UPDATE"
            " SET owner = excluded.owner, expires_at = excluded.expires_at"
            " WHERE l.owner = excluded.owner OR l.expires_at <= clock_timestamp() RETURNING 1"
        )
        self._renew = (
            f"UPDATE {t} SET expires_at = clock_timestamp() + $4 * interval '1 second'"
            " WHERE kind = $1 AND key = ANY($2::text[]) AND owner = $3 RETURNING key"
        )
        self._release = f"DELETE FROM {t} WHERE kind = $1 AND key = $2 AND owner = $3"
        self._get = f"SELECT kind, key, owner, expires_at FROM {t} WHERE kind = $1 AND key = $2"
        self._ended = _ENDED.replace("leases", t).replace("tasks", f"{db.s}.tasks")
        self._fence = _FENCE.replace("tasks", f"{db.s}.tasks")
        self._drop = _DROP.replace("leases", t)
        self._unleased = (
            _UNLEASED.replace("leases", t)
            .replace("tasks", f"{db.s}.tasks")
            .replace("work_queue", f"{db.s}.work_queue")
            .replace("t.ts < $1", "t.ts < clock_timestamp() - $1 * interval '1 second'")
        )
        self._expired = (
            f"SELECT kind, key, owner, expires_at FROM {t}"
            " WHERE kind = $1 AND expires_at <= clock_timestamp() ORDER BY expires_at LIMIT $2"
        )

    async def acquire(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        return await self.acquire_on(self._db.pool, kind, key, owner, ttl)

    async def take_over(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        if kind != "task":
            return await self.acquire(kind, key, owner, ttl)
        # One transaction: the UPDATE waits for the row lock of a write the old holder has in
        # flight, so that write is ordered before the takeover, and every later one is refused
        # by the version guard (LeaseStore.take_over).
        async with self._db.pool.acquire() as conn, conn.transaction():
            taken = await self.acquire_on(conn, kind, key, owner, ttl)
            if taken and await conn.execute(self._fence, key) == "UPDATE 0":
                await conn.execute(self._drop, kind, key, owner)
                return False  # not active: nothing to take over (the lease is dropped)
            return taken

    async def acquire_on(
        self, conn: Any, kind: LeaseKind, key: str, owner: str, ttl: float
    ) -> bool:
        """:meth:`acquire` on ``conn`` (a pool, or a connection in the caller's transaction:
        the work queue's claim takes an entry and its lease at once)."""
        _check(kind, ttl)
        found = await conn.fetchval(self._acquire, kind, key, owner, float(ttl))
        return bool(found == 1)

    async def renew(
        self, kind: LeaseKind, keys: builtins.list[str], owner: str, ttl: float
    ) -> builtins.list[str]:
        _check(kind, ttl)
        if not keys:
            return []
        rows = await self._db.pool.fetch(self._renew, kind, keys, owner, float(ttl))
        return [row[0] for row in rows]

    async def release(self, kind: LeaseKind, key: str, owner: str) -> bool:
        status = await self._db.pool.execute(self._release, kind, key, owner)
        return bool(status == "DELETE 1")

    async def get(self, kind: LeaseKind, key: str) -> Lease | None:
        row = await self._db.pool.fetchrow(self._get, kind, key)
        return None if row is None else _lease(row, _utc)

    async def expired(self, kind: LeaseKind, limit: int = 100) -> builtins.list[Lease]:
        rows = await self._db.pool.fetch(self._expired, kind, limit)
        return [_lease(row, _utc) for row in rows]

    async def ended(self, owner: str) -> builtins.list[str]:
        return [row[0] for row in await self._db.pool.fetch(self._ended, owner)]

    async def unleased(self, older_than: float, limit: int = 100) -> builtins.list[str]:
        rows = await self._db.pool.fetch(self._unleased, float(older_than), limit)
        return [row[0] for row in rows]

    @property
    def ended_channel(self) -> str:
        return f"a2a_ended.{self._db.schema}"[:63]

    async def announce_ended(self, task_id: str) -> None:
        # NOTIFY outside any transaction: sent at once, after the cancel that ended the task
        # committed, so the listener's re-read finds it terminal.
        await self._db.pool.execute("SELECT pg_notify($1, $2)", self.ended_channel, task_id)

    async def listen_ended(self, callback: Callable[[str], None]) -> Listening | None:
        import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

        try:
            conn = await asyncpg.connect(self._db.dsn)
            await conn.add_listener(
                self.ended_channel, lambda _conn, _pid, _channel, task_id: callback(task_id)
            )
        except (OSError, asyncpg.PostgresError) as exc:
            log.warning("cannot LISTEN on %s (polling instead): %r", self.ended_channel, exc)
            return None
        return _PgListening(conn)


class _PgListening:
    """One connection of its own LISTENing (the pool's connections are shared, and a LISTEN
    holds its connection for as long as it lasts)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @property
    def alive(self) -> bool:
        return not self._conn.is_closed()

    async def close(self) -> None:
        if not self._conn.is_closed():
            await self._conn.close()


def _utc(value: datetime) -> datetime:
    return value.astimezone(timezone.utc)


__all__ = [
    "SQLITE_MIGRATION",
    "MemoryLeaseStore",
    "PostgresLeaseStore",
    "SQLiteLeaseStore",
    "postgres_migration",
]
