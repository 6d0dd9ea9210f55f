"""Replay stores for webhook receivers: each notification ``jti`` accepted once, durably.

:class:`~simple_a2a.webhooks.NotificationVerifier` remembers the ``jti`` of every notification
it accepted until its token expires. In memory (the default) that memory ends with the process
and is not shared by replicas; these stores keep it in SQLite (one host, survives restarts) or
PostgreSQL (shared by every replica). Pass one as ``NotificationVerifier(replay_store=...)``.

Both use one statement: insert the ``jti``, or take over a row whose token has expired; a row
that comes back means "first time seen".
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
import time
from typing import Any

__all__ = ["PostgresReplayStore", "SQLiteReplayStore"]

_TABLE = "a2a_seen_notifications"
_CREATE = (
    "CREATE TABLE IF NOT EXISTS {table} (jti TEXT PRIMARY KEY, expires DOUBLE PRECISION NOT NULL)"
)
_REMEMBER = (
    "INSERT INTO {table} (jti, expires) VALUES ({p1}, {p2}) ON CONFLICT (jti) DO UPDATE "
    "SET expires = excluded.expires WHERE {table}.expires <= {p3} RETURNING jti"
)
_FORGET = "DELETE FROM {table} WHERE expires <= {p1}"
_SWEEP_EVERY = 1000  # remembers between sweeps of expired rows


class SQLiteReplayStore:
    """The seen ``jti`` values in a SQLite file (WAL; safe for several processes on one host)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._count = 0

    def _remember(self, jti: str, expires: float) -> bool:
        with self._lock:
            if self._conn is None:
                self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(_CREATE.format(table=_TABLE))
            now = time.time()
            sql = _REMEMBER.format(table=_TABLE, p1="?", p2="?", p3="?")
            with self._conn:
                row = self._conn.execute(sql, (jti, expires, now)).fetchone()
                self._count += 1
                if self._count % _SWEEP_EVERY == 0:
                    self._conn.execute(_FORGET.format(table=_TABLE, p1="?"), (now,))
            return row is not None

    async def remember(self, jti: str, expires: float) -> bool:
        """True the first time ``jti`` is seen (until ``expires``, a Unix time)."""
        return await asyncio.to_thread(self._remember, jti, expires)

    async def aclose(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresReplayStore:
    """The seen ``jti`` values in PostgreSQL, shared by every replica (needs ``asyncpg``)."""

    def __init__(self, dsn: str, *, schema: str = "public") -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", schema):
            raise ValueError(f"invalid schema name {schema!r}")
        self.dsn = dsn
        self.schema = schema
        self.table = f'"{schema}".{_TABLE}'
        self._pool: Any = None
        self._lock = asyncio.Lock()
        self._count = 0

    async def _ready(self) -> Any:
        async with self._lock:
            if self._pool is None:
                import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

                pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=2)
                await pool.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                await pool.execute(_CREATE.format(table=self.table))
                self._pool = pool
        return self._pool

    async def remember(self, jti: str, expires: float) -> bool:
        """True the first time ``jti`` is seen (until ``expires``, a Unix time)."""
        pool = await self._ready()
        now = time.time()
        sql = _REMEMBER.format(table=self.table, p1="$1", p2="$2", p3="$3")
        row = await pool.fetchrow(sql, jti, expires, now)
        self._count += 1
        if self._count % _SWEEP_EVERY == 0:
            await pool.execute(_FORGET.format(table=self.table, p1="$1"), now)
        return row is not None

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
