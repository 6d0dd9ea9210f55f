"""Storage backends behind one contract (:mod:`.base`): memory, SQLite, PostgreSQL."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._conversations import ConversationStateTooLarge, ConversationStore, MemoryConversationStore
from .base import (
    ANY_OWNER,
    ConcurrentUpdateError,
    EventLog,
    Lease,
    LeaseStore,
    LoggedEvent,
    PushConfigStore,
    PushCursor,
    PushCursorStore,
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
from .memory import MemoryStorage


def open_storage(spec: str | Storage | None) -> Storage:
    """A storage from an object or a URL (not opened yet: the server calls ``open()``).

    - ``None``, ``"memory"``: :class:`MemoryStorage`;
    - ``"sqlite:///relative/tasks.db"``, ``"sqlite:////absolute/tasks.db"``: :class:`SQLiteStorage`
      (the SQLAlchemy spelling; an in-memory SQLite database is refused: use ``"memory"``);
    - ``"postgresql://user@host/db?schema=a2a"`` (or ``postgres://``): :class:`PostgresStorage`;
      ``schema`` and ``fanout`` (an event fan-out URL, e.g. ``fanout=redis://127.0.0.1:6379/0``:
      docs/cluster.md, "Event fan-out") are taken out of the URL, the rest is the asyncpg DSN.
    """
    if spec is None or spec == "memory" or spec == "memory://":
        return MemoryStorage()
    if isinstance(spec, Storage):
        return spec
    if spec.startswith("sqlite:"):
        from .sqlite import SQLiteStorage

        path = spec[len("sqlite:///") :] if spec.startswith("sqlite:///") else ""
        if not path or path in (":memory:", "/:memory:"):
            raise ValueError(
                f"storage {spec!r}: SQLite needs a file, e.g. 'sqlite:///tasks.db' (relative) or "
                "'sqlite:////var/lib/a2a/tasks.db' (absolute); for no file use 'memory'"
            )
        return SQLiteStorage(path)
    if spec.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStorage

        url = urlsplit(spec)
        query = parse_qsl(url.query, keep_blank_values=True)
        ours = ("schema", "fanout")
        options: dict[str, Any] = {k: v for k, v in query if k in ours}
        dsn = urlunsplit(url._replace(query=urlencode([(k, v) for k, v in query if k not in ours])))
        return PostgresStorage(dsn, **options)
    raise ValueError(
        f"unknown storage {spec!r}: use 'memory', 'sqlite:///path/tasks.db', "
        "'postgresql://...' or a Storage object"
    )


__all__ = [
    "ANY_OWNER",
    "ConcurrentUpdateError",
    "ConversationStateTooLarge",
    "ConversationStore",
    "EventLog",
    "Lease",
    "LeaseStore",
    "LoggedEvent",
    "MemoryConversationStore",
    "MemoryStorage",
    "PushConfigStore",
    "PushCursor",
    "PushCursorStore",
    "RecordStep",
    "Storage",
    "StorageError",
    "StoredTask",
    "TaskChange",
    "TaskExistsError",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "open_storage",
]
