"""In-memory storage: the reference implementation of the contract, for tests and demos."""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from datetime import datetime

from ..protocol.models import Task, TaskPushNotificationConfig
from ..protocol.requests import StreamResponse
from ._common import order_key, utc_ms
from .base import (
    ANY_OWNER,
    ConcurrentUpdateError,
    EventLog,
    LoggedEvent,
    PushConfigStore,
    PushCursor,
    PushCursorStore,
    Storage,
    StoredTask,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
)


def sort_key(task: Task) -> tuple[datetime, str]:
    """The ListTasks order key: status timestamp (ms precision), then id; results descending."""
    return order_key(task)


class MemoryTaskStore(TaskStore):
    def __init__(self) -> None:
        self._tasks: dict[str, StoredTask] = {}

    async def create(self, task: Task, *, owner: str | None = None) -> int:
        if task.id in self._tasks:
            raise TaskExistsError(task.id)
        self._tasks[task.id] = StoredTask(task, 1, owner)
        return 1

    async def get(self, task_id: str) -> StoredTask | None:
        return self._tasks.get(task_id)

    async def update(self, task: Task, *, expected_version: int) -> int:
        current = self._tasks.get(task.id)
        if current is None:
            raise KeyError(task.id)
        if current.version != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current.version}, not {expected_version}"
            )
        self._tasks[task.id] = StoredTask(task, expected_version + 1, current.owner)
        return expected_version + 1

    async def list(self, query: TaskQuery) -> TaskPage:
        matches = [
            stored
            for stored in self._tasks.values()
            if (query.owner is ANY_OWNER or stored.owner == query.owner)
            and (query.context_id is None or stored.task.context_id == query.context_id)
            and (query.state is None or stored.task.status.state == query.state)
            and (
                query.status_after is None
                or (
                    stored.task.status.timestamp is not None
                    and utc_ms(stored.task.status.timestamp) > query.status_after
                )
            )
        ]
        matches.sort(key=lambda s: sort_key(s.task), reverse=True)
        total = len(matches)
        if query.after is not None:
            position = (utc_ms(query.after[0]), query.after[1])
            matches = [s for s in matches if sort_key(s.task) < position]
        page = matches[: query.limit]
        return TaskPage(page, total, len(matches) > query.limit)

    async def delete(self, task_id: str) -> bool:
        return self._tasks.pop(task_id, None) is not None


class _TaskEvents:
    __slots__ = ("changed", "events", "last")

    def __init__(self) -> None:
        self.events: deque[LoggedEvent] = deque()
        self.last = 0
        self.changed = asyncio.Event()


class MemoryEventLog(EventLog):
    """Keeps the newest ``max_events_per_task`` events of each task.

    Waiters share one :class:`asyncio.Event` per task, replaced on every append, so a thousand
    subscribers cost one wake-up each and a slow one never blocks the writer.
    """

    def __init__(self, max_events_per_task: int = 10_000) -> None:
        self.max_events_per_task = max_events_per_task
        self._logs: dict[str, _TaskEvents] = {}

    def _log(self, task_id: str) -> _TaskEvents:
        log = self._logs.get(task_id)
        if log is None:
            log = self._logs[task_id] = _TaskEvents()
        return log

    async def append(self, task_id: str, event: StreamResponse) -> int:
        log = self._log(task_id)
        log.last += 1
        log.events.append(LoggedEvent(log.last, event))
        if len(log.events) > self.max_events_per_task:
            log.events.popleft()
        changed, log.changed = log.changed, asyncio.Event()
        changed.set()
        return log.last

    async def read(self, task_id: str, after: int, limit: int | None = None) -> list[LoggedEvent]:
        log = self._logs.get(task_id)
        if log is None or after >= log.last:
            return []
        events = log.events
        start = max(0, len(events) - (log.last - after))
        out = [events[i] for i in range(start, len(events))]
        return out if limit is None else out[:limit]

    async def last_seq(self, task_id: str) -> int:
        log = self._logs.get(task_id)
        return log.last if log else 0

    async def first_seq(self, task_id: str) -> int:
        log = self._logs.get(task_id)
        return log.events[0].seq if log and log.events else 0

    async def wait(self, task_id: str, after: int, timeout: float) -> bool:
        log = self._log(task_id)
        if log.last > after:
            return True
        try:
            await asyncio.wait_for(log.changed.wait(), timeout)
        except asyncio.TimeoutError:
            return log.last > after
        return True

    async def delete(self, task_id: str) -> None:
        self._logs.pop(task_id, None)


class MemoryPushConfigStore(PushConfigStore):
    def __init__(self) -> None:
        self._configs: dict[str, dict[str, TaskPushNotificationConfig]] = {}

    async def put(self, config: TaskPushNotificationConfig) -> None:
        assert config.task_id and config.id
        self._configs.setdefault(config.task_id, {})[config.id] = config

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        return self._configs.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return list(self._configs.get(task_id, {}).values())

    async def delete(self, task_id: str, config_id: str) -> bool:
        return self._configs.get(task_id, {}).pop(config_id, None) is not None


class MemoryPushCursorStore(PushCursorStore):
    def __init__(self) -> None:
        self._cursors: dict[tuple[str, str], PushCursor] = {}

    async def get(self, task_id: str, config_id: str) -> PushCursor | None:
        return self._cursors.get((task_id, config_id))

    async def put(self, cursor: PushCursor) -> None:
        self._cursors[(cursor.task_id, cursor.config_id)] = cursor

    async def list(self, task_id: str) -> list[PushCursor]:
        return [c for (t, _), c in self._cursors.items() if t == task_id]

    async def pending(self) -> builtins.list[PushCursor]:
        return [c for c in self._cursors.values() if c.state == "active"]

    async def delete(self, task_id: str, config_id: str) -> bool:
        return self._cursors.pop((task_id, config_id), None) is not None


class MemoryStorage(Storage):
    """Everything in process memory; lost on restart."""

    def __init__(self, max_events_per_task: int = 10_000) -> None:
        self.tasks = MemoryTaskStore()
        self.events = MemoryEventLog(max_events_per_task)
        self.push_configs = MemoryPushConfigStore()
        self.push_cursors: PushCursorStore | None = MemoryPushCursorStore()
