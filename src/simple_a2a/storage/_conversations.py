"""Conversation state: what an agent framework keeps between the turns of one conversation.

A2A names a conversation by its ``contextId`` (spec §3.4.1, "contextId ... logically groups
multiple related Task and Message objects"). A framework adapter (``simple_a2a.adapters``) keeps
the framework's own record of it — pydantic-ai's message history, an OpenAI Agents session, an
ADK session, a LangGraph checkpoint — as one opaque blob per (owner, context id, key) here, so a
conversation survives a restart and continues on any replica sharing the storage.

- SQLite and PostgreSQL: table ``conversations`` (migration 5 and 5), one row per key;
  memory: a dict.
- Scoped by owner (the authenticated caller; ``""`` for anonymous callers, as tasks are): a
  caller who learns another's context id still cannot read or overwrite its state.
- Last writer wins: two tasks of one context saving at once keep the later blob (conversations
  are turn by turn; docs/adapters/index.md says so).
- Bounded: :attr:`ConversationStore.max_state_bytes` (default 8 MiB) per blob; beyond it
  :meth:`~ConversationStore.save` raises :class:`ConversationStateTooLarge`.
- Forgotten with the tasks: the retention sweep (``retention=``) deletes blobs not written for
  longer than the retention period.
"""

from __future__ import annotations

import abc
import sqlite3
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._sqlite_db import _Database as _SQLiteDatabase
    from .postgres import _Database as _PgDatabase

DEFAULT_MAX_STATE_BYTES = 8 * 1024 * 1024


class ConversationStateTooLarge(ValueError):
    """A conversation's state is over :attr:`ConversationStore.max_state_bytes`."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"conversation state of {size} bytes is over the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class ConversationStore(abc.ABC):
    """Opaque per-conversation blobs (module docstring). ``owner`` None is the anonymous caller."""

    #: bytes one blob may have (ConversationStateTooLarge beyond)
    max_state_bytes: int = DEFAULT_MAX_STATE_BYTES

    @abc.abstractmethod
    async def load(self, context_id: str, key: str, *, owner: str | None) -> bytes | None:
        """The blob saved last under ``key`` for this conversation, or None."""

    async def save(self, context_id: str, key: str, value: bytes, *, owner: str | None) -> None:
        """Store ``value`` under ``key`` for this conversation, replacing what was there."""
        if len(value) > self.max_state_bytes:
            raise ConversationStateTooLarge(len(value), self.max_state_bytes)
        await self._put(context_id, key, bytes(value), owner or "", _micros_now())

    @abc.abstractmethod
    async def _put(self, context_id: str, key: str, value: bytes, owner: str, now: int) -> None: ...

    @abc.abstractmethod
    async def forget(self, context_id: str, *, owner: str | None) -> int:
        """Delete every key of this conversation; how many were deleted."""

    @abc.abstractmethod
    async def forget_older(self, seconds: float) -> int:
        """Delete every blob not written for ``seconds``; how many were deleted."""


def _micros_now() -> int:
    return int(time.time() * 1_000_000)


SQLITE_MIGRATION = (
    """CREATE TABLE conversations (
        owner TEXT NOT NULL,
        context_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (owner, context_id, key)) WITHOUT ROWID""",
    "CREATE INDEX conversations_by_age ON conversations (updated_at)",
)


def postgres_migration(s: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE {s}.conversations (
            owner text NOT NULL,
            context_id text NOT NULL,
            key text NOT NULL,
            value bytea NOT NULL,
            updated_at bigint NOT NULL,
            PRIMARY KEY (owner, context_id, key))""",
        f"CREATE INDEX conversations_by_age ON {s}.conversations (updated_at)",
    )


class MemoryConversationStore(ConversationStore):
    def __init__(self) -> None:
        self._blobs: dict[tuple[str, str, str], tuple[bytes, int]] = {}

    async def load(self, context_id: str, key: str, *, owner: str | None) -> bytes | None:
        found = self._blobs.get((owner or "", context_id, key))
        return None if found is None else found[0]

    async def _put(self, context_id: str, key: str, value: bytes, owner: str, now: int) -> None:
        self._blobs[(owner, context_id, key)] = (value, now)

    async def forget(self, context_id: str, *, owner: str | None) -> int:
        keys = [k for k in self._blobs if k[0] == (owner or "") and k[1] == context_id]
        for k in keys:
            del self._blobs[k]
        return len(keys)

    async def forget_older(self, seconds: float) -> int:
        cutoff = _micros_now() - int(seconds * 1_000_000)
        keys = [k for k, (_, at) in self._blobs.items() if at < cutoff]
        for k in keys:
            del self._blobs[k]
        return len(keys)


class SQLiteConversationStore(ConversationStore):
    def __init__(self, db: _SQLiteDatabase) -> None:
        self._db = db

    async def load(self, context_id: str, key: str, *, owner: str | None) -> bytes | None:
        def run(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute(
                "SELECT value FROM conversations WHERE owner = ? AND context_id = ? AND key = ?",
                (owner or "", context_id, key),
            ).fetchone()
            return None if row is None else bytes(row[0])

        return await self._db.read(run)

    async def _put(self, context_id: str, key: str, value: bytes, owner: str, now: int) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO conversations (owner, context_id, key, value, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (owner, context_id, key) DO UPDATE"
                " SET value = excluded.value, updated_at = excluded.updated_at",
                (owner, context_id, key, value, now),
            )

        await self._db.write(run)

    async def forget(self, context_id: str, *, owner: str | None) -> int:
        def run(conn: sqlite3.Connection) -> int:
            sql = "DELETE FROM conversations WHERE owner = ? AND context_id = ?"
            return conn.execute(sql, (owner or "", context_id)).rowcount

        return await self._db.write(run)

    async def forget_older(self, seconds: float) -> int:
        cutoff = _micros_now() - int(seconds * 1_000_000)

        def run(conn: sqlite3.Connection) -> int:
            return conn.execute(
                "DELETE FROM conversations WHERE updated_at < ?", (cutoff,)
            ).rowcount

        return await self._db.write(run)


class PostgresConversationStore(ConversationStore):
    def __init__(self, db: _PgDatabase) -> None:
        self._db = db
        t = f"{db.s}.conversations"
        self._load = f"SELECT value FROM {t} WHERE owner = $1 AND context_id = $2 AND key = $3"
        self._put_sql = (
            f"INSERT INTO {t} (owner, context_id, key, value, updated_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (owner, context_id, key) DO UPDATE"
            " SET value = excluded.value, updated_at = excluded.updated_at"
        )
        self._forget = f"DELETE FROM {t} WHERE owner = $1 AND context_id = $2"
        self._forget_older = f"DELETE FROM {t} WHERE updated_at < $1"

    async def load(self, context_id: str, key: str, *, owner: str | None) -> bytes | None:
        value = await self._db.pool.fetchval(self._load, owner or "", context_id, key)
        return None if value is None else bytes(value)

    async def _put(self, context_id: str, key: str, value: bytes, owner: str, now: int) -> None:
        await self._db.pool.execute(self._put_sql, owner, context_id, key, value, now)

    async def forget(self, context_id: str, *, owner: str | None) -> int:
        status = await self._db.pool.execute(self._forget, owner or "", context_id)
        return int(status.split()[-1])

    async def forget_older(self, seconds: float) -> int:
        cutoff = _micros_now() - int(seconds * 1_000_000)
        status = await self._db.pool.execute(self._forget_older, cutoff)
        return int(status.split()[-1])


__all__ = [
    "SQLITE_MIGRATION",
    "ConversationStateTooLarge",
    "ConversationStore",
    "MemoryConversationStore",
    "PostgresConversationStore",
    "SQLiteConversationStore",
    "postgres_migration",
]
