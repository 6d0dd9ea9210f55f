"""The storage contract every backend implements (memory, SQLite, PostgreSQL, ...).

Three seams (PRODUCT.md §5):

- :class:`TaskStore` keeps tasks with a version number, so two writers cannot silently overwrite
  each other (:class:`ConcurrentUpdateError`);
- :class:`EventLog` keeps each task's events, ordered and sequence-numbered from 1, readable from
  a cursor and awaitable for new events (the base of streaming, replay and push delivery);
- :class:`PushConfigStore` keeps webhook configurations per task.

:class:`Storage` bundles the three. Objects handed out by a store must be treated as read-only by
callers (copy before mutating); stores may return shared instances for speed.
The reusable conformance suite in ``tests/storage/`` is the executable form of this contract.
"""

from __future__ import annotations

import abc
import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from ..protocol.models import Task, TaskPushNotificationConfig, TaskState
from ..protocol.requests import StreamResponse


class StorageError(Exception):
    """Base of storage failures."""


class ConcurrentUpdateError(StorageError):
    """The task changed since it was read: its version is not the expected one."""


class TaskExistsError(StorageError):
    """A task with this id already exists."""


class _AnyOwner:
    def __repr__(self) -> str:
        return "ANY_OWNER"


#: Owner filter meaning "do not filter by owner" (servers without authentication).
ANY_OWNER: Final = _AnyOwner()


@dataclass(frozen=True)
class StoredTask:
    task: Task
    version: int
    owner: str | None = None


@dataclass(frozen=True)
class TaskQuery:
    """Filters and keyset position of a ListTasks page (spec §3.1.4).

    Results are ordered by status timestamp, newest first, then by task id (descending) so the
    order is total. ``after`` is the (timestamp, id) of the last task of the previous page.
    Timestamps are compared at millisecond precision (the wire's), so a cursor taken from a task
    as returned by any backend, or as parsed from its JSON, lands exactly on that task.
    """

    limit: int = 50
    context_id: str | None = None
    state: TaskState | None = None
    status_after: datetime | None = None
    owner: str | _AnyOwner | None = ANY_OWNER
    after: tuple[datetime, str] | None = None


@dataclass(frozen=True)
class TaskPage:
    tasks: list[StoredTask]
    total: int  #: tasks matching the filters, ignoring the page position
    has_more: bool


@dataclass(frozen=True)
class LoggedEvent:
    seq: int
    event: StreamResponse


class TaskStore(abc.ABC):
    @abc.abstractmethod
    async def create(self, task: Task, *, owner: str | None = None) -> int:
        """Store a new task at version 1; raise :class:`TaskExistsError` if the id is taken."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> StoredTask | None: ...

    @abc.abstractmethod
    async def update(self, task: Task, *, expected_version: int) -> int:
        """Replace the task if its stored version is ``expected_version``; return the new one.

        Raise :class:`ConcurrentUpdateError` on a version mismatch, ``KeyError`` if absent.
        """

    @abc.abstractmethod
    async def list(self, query: TaskQuery) -> TaskPage: ...

    @abc.abstractmethod
    async def delete(self, task_id: str) -> bool: ...

    async def active_tasks(self) -> builtins.list[StoredTask]:
        """Tasks in submitted or working state (used on restart). Backends may optimise."""
        found: builtins.list[StoredTask] = []
        for state in (TaskState.SUBMITTED, TaskState.WORKING):
            after: tuple[datetime, str] | None = None
            while True:
                page = await self.list(TaskQuery(limit=100, state=state, after=after))
                found.extend(page.tasks)
                if not page.has_more or not page.tasks:
                    break
                last = page.tasks[-1].task
                assert last.status.timestamp is not None
                after = (last.status.timestamp, last.id)
        return found


class EventLog(abc.ABC):
    @abc.abstractmethod
    async def append(self, task_id: str, event: StreamResponse) -> int:
        """Append an event; return its sequence number (1, 2, 3, ... per task)."""

    @abc.abstractmethod
    async def read(self, task_id: str, after: int, limit: int | None = None) -> list[LoggedEvent]:
        """Retained events with ``seq > after``, in order."""

    @abc.abstractmethod
    async def last_seq(self, task_id: str) -> int:
        """The sequence number of the newest event (0 when none)."""

    @abc.abstractmethod
    async def first_seq(self, task_id: str) -> int:
        """The oldest retained sequence number (0 when none); older events were trimmed."""

    @abc.abstractmethod
    async def wait(self, task_id: str, after: int, timeout: float) -> bool:
        """Wait until an event with ``seq > after`` exists; False on timeout."""

    @abc.abstractmethod
    async def delete(self, task_id: str) -> None: ...


class PushConfigStore(abc.ABC):
    @abc.abstractmethod
    async def put(self, config: TaskPushNotificationConfig) -> None:
        """Insert or replace the config ``(config.task_id, config.id)``."""

    @abc.abstractmethod
    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None: ...

    @abc.abstractmethod
    async def list(self, task_id: str) -> builtins.list[TaskPushNotificationConfig]: ...

    @abc.abstractmethod
    async def delete(self, task_id: str, config_id: str) -> bool: ...


class Storage(abc.ABC):
    """The bundle a server runs on: tasks, events and push configs of one agent."""

    tasks: TaskStore
    events: EventLog
    push_configs: PushConfigStore

    async def open(self) -> None:  # noqa: B027 (optional hook)
        """Connect, create or migrate the schema. Idempotent."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections. Idempotent."""
