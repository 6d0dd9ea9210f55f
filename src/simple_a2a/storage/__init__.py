"""Storage backends behind one contract (:mod:`.base`): memory, SQLite, PostgreSQL."""

from __future__ import annotations

from .base import (
    ANY_OWNER,
    ConcurrentUpdateError,
    EventLog,
    LoggedEvent,
    PushConfigStore,
    Storage,
    StoredTask,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from .memory import MemoryStorage


def open_storage(spec: str | Storage | None) -> Storage:
    """A storage from an object or a URL: ``"memory"``, ``"sqlite:///path/tasks.db"``, ..."""
    if spec is None or spec == "memory" or spec == "memory://":
        return MemoryStorage()
    if isinstance(spec, Storage):
        return spec
    raise ValueError(f"unknown storage {spec!r}: use 'memory' or a Storage object")


__all__ = [
    "ANY_OWNER",
    "ConcurrentUpdateError",
    "EventLog",
    "LoggedEvent",
    "MemoryStorage",
    "PushConfigStore",
    "Storage",
    "StoredTask",
    "TaskExistsError",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "open_storage",
]
