"""Retention: forget terminal tasks (events, push configs and cursors too) after a time-to-live.

The default is to keep everything (``retention=None``). With a TTL, a background sweep deletes
every task that reached a terminal state more than TTL ago — its snapshot, its event log, its
webhook configurations and their delivery cursors (the push outbox, when the storage has one).
Interrupted and active tasks are never swept.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from ..protocol.logcontext import library_logger
from ..protocol.models import TERMINAL_STATES
from ..storage.base import Storage, TaskQuery

log = library_logger("simple_a2a.server")


class RetentionSweeper:
    def __init__(self, storage: Storage, ttl: timedelta, *, interval: float = 60.0) -> None:
        if ttl <= timedelta(0):
            raise ValueError("retention must be a positive duration")
        self.storage = storage
        self.ttl = ttl
        self.interval = interval
        self._runner: asyncio.Task[None] | None = None

    async def sweep_once(self, now: datetime | None = None) -> int:
        """Delete every terminal task older than the TTL; return how many were deleted."""
        cutoff = (now or datetime.now(timezone.utc)) - self.ttl
        deleted = 0
        cursors = self.storage.push_cursors
        for state in TERMINAL_STATES:
            while True:
                # Keyset position (cutoff, "") selects exactly the tasks with timestamp < cutoff.
                page = await self.storage.tasks.list(
                    TaskQuery(limit=200, state=state, after=(cutoff, ""))
                )
                if not page.tasks:
                    break
                for stored in page.tasks:
                    task_id = stored.task.id
                    for config in await self.storage.push_configs.list(task_id):
                        if config.id:
                            await self.storage.push_configs.delete(task_id, config.id)
                    if cursors is not None:
                        for cursor in await cursors.list(task_id):
                            await cursors.delete(task_id, cursor.config_id)
                    await self.storage.events.delete(task_id)
                    if await self.storage.tasks.delete(task_id):
                        deleted += 1
        if self.storage.conversations is not None:  # adapters' state, by when last written
            await self.storage.conversations.forget_older(self.ttl.total_seconds())
        if deleted:
            log.info("retention: deleted %d task(s) older than %s", deleted, self.ttl)
        return deleted

    def start(self) -> None:
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(
                self._loop(), name="a2a-retention"
            )

    async def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
            self._runner = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.sweep_once()
            except Exception:
                log.exception("retention sweep failed")
            await asyncio.sleep(self.interval)
