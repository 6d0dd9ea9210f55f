"""Roles (``web``, ``worker``, ``all``) and the work queue that joins them (docs/cluster.md).

- ``all`` (the default): a replica runs the messages it receives, in process, as it always did.
  Only when :attr:`QueueSettings.max_concurrent_tasks` is set and reached does a message wait
  in the queue, for this replica (or any other) to run once it has room.
- ``web``: accepts requests, stores the task (``submitted``) and enqueues it; never runs an
  executor. Streams and blocking sends follow the task's event log, which the worker writes
  (PostgreSQL NOTIFY wakes them across processes; SQLite's followers poll the file).
- ``worker``: serves no A2A operation (only the card, ``/healthz`` and metrics); claims queue
  entries (with their task lease, :meth:`~simple_a2a.storage.base.WorkQueue.claim`) while it has
  room, and runs them. Cancels reach it by the lease watch, dead workers' tasks are recovered by
  the lease scan of the others (:mod:`.leases`).

Bounds: a worker runs at most ``max_concurrent_tasks`` executions (100 by default in role
``worker``); ``max_agent_tasks`` caps executions across the cluster (counted from live task
leases when claiming); a web replica refuses a message with RateLimitError (spec §3.3.2 "System
Errors": rate limit exceeded, HTTP 503, gRPC UNAVAILABLE, JSON-RPC -32603) once ``max_depth``
entries wait, before storing anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..protocol import errors as e
from ..protocol.logcontext import library_logger
from ..protocol.models import TaskState
from ..protocol.telemetry import TELEMETRY
from .context import CallContext, Caller, RequestContext

if TYPE_CHECKING:
    from ..storage._queue import QueueEntry, QueueStats, WorkQueue
    from .handler import RequestHandler
    from .leases import LeaseKeeper

log = library_logger("simple_a2a.server")

Role = Literal["all", "web", "worker"]
ROLES: tuple[Role, ...] = ("all", "web", "worker")
DEFAULT_WORKER_CONCURRENCY = 100
#: seconds between two readings of the queue's depth and age (with metrics enabled)
STATS_INTERVAL = 5.0
#: states a claimed task may be run in (anything else ended or waits for input meanwhile)
_RUNNABLE = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


@dataclass(frozen=True)
class QueueSettings:
    """How a replica uses the work queue (docs/cluster.md, "Roles and caps")."""

    #: executions this process runs at once; None: 100 in role ``worker``, unbounded in ``all``
    max_concurrent_tasks: int | None = None
    #: executions across every process on the storage (live task leases); None: no cap
    max_agent_tasks: int | None = None
    #: entries that may wait; beyond, a message is refused with RateLimitError
    max_depth: int = 10_000
    #: how often an idle worker looks for entries when no wake-up came (PostgreSQL NOTIFY, or an
    #: enqueue in this process, wakes it at once)
    poll_interval: float = 1.0
    #: the ``Retry-After`` of a refusal when the queue is full (seconds)
    retry_after: float = 1.0
    #: entries claimed per query at most
    claim_batch: int = 32

    def __post_init__(self) -> None:
        for name in ("max_concurrent_tasks", "max_agent_tasks"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"QueueSettings.{name} must be at least 1, got {value}")
        if self.max_depth < 1 or not self.poll_interval > 0 or self.claim_batch < 1:
            raise ValueError("QueueSettings: max_depth, poll_interval, claim_batch must be > 0")


def request_of(ctx: RequestContext) -> dict[str, Any]:
    """What a worker needs, besides the stored task, to rebuild ``ctx`` (a JSON object)."""
    call = ctx.call
    caller = dataclasses.asdict(call.caller) if call.caller is not None else None
    return {
        "message_id": ctx.message.message_id,
        "caller": caller,
        "tenant": call.tenant,
        "extensions": list(call.extensions),
        "activated_extensions": list(call.activated_extensions),
        "version": call.version,
        "binding": call.binding,
        "metadata": ctx.metadata or None,
    }


class WorkDispatch:
    """A handler's seam to the queue (``RequestHandler(work=...)``) and a worker's claim loop."""

    def __init__(
        self,
        queue: WorkQueue,
        leases: LeaseKeeper,
        *,
        role: Role = "all",
        settings: QueueSettings | None = None,
    ) -> None:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {role!r}")
        self.queue = queue
        self.leases = leases
        self.role: Role = role
        self.settings = settings = settings or QueueSettings()
        cap = settings.max_concurrent_tasks
        #: executions this process runs at once (None: unbounded)
        self.capacity = DEFAULT_WORKER_CONCURRENCY if cap is None and role == "worker" else cap
        self.handler: RequestHandler | None = None
        #: the last depth and oldest entry seen (the metrics' gauges read them)
        self.last_stats: QueueStats | None = None
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._stats: asyncio.Task[None] | None = None

    @property
    def runs_tasks(self) -> bool:
        return self.role != "web"

    def bind(self, handler: RequestHandler) -> None:
        self.handler = handler

    def _running(self) -> int:
        assert self.handler is not None
        return len(self.handler._executions)

    # -- the web side --
    def must_queue(self) -> bool:
        """Does a message go through the queue (role web, or this process at capacity)? A
        plain call: role ``all`` below its cap pays nothing more per message."""
        if self.role == "web":
            return True
        return self.capacity is not None and self._running() >= self.capacity

    async def admit(self) -> bool:
        """For a message that :meth:`must_queue`: True, or RateLimitError (nothing stored) when
        ``max_depth`` entries already wait."""
        if await self.queue.depth_at_least(self.settings.max_depth):
            raise e.RateLimitError(
                f"{self.settings.max_depth} tasks are waiting for a worker "
                "(QueueSettings.max_depth); retry later",
                retry_after=self.settings.retry_after,
            )
        return True

    async def enqueue(self, ctx: RequestContext) -> None:
        """Queue the accepted message (its task is stored). If that fails the task stays
        ``submitted`` without a lease: the workers' lease scan recovers it after the lease ttl."""
        try:
            await self.queue.enqueue(ctx.task_id, request_of(ctx))
        except Exception as exc:
            log.error("could not queue task %s: %s", ctx.task_id, exc)
            raise e.InternalError(
                "the task is stored but could not be queued; it is recovered later"
            ) from None

    # -- the worker side --
    async def start(self) -> None:
        if TELEMETRY.metrics is not None and self._stats is None:
            self._stats = asyncio.get_running_loop().create_task(self._stats_loop())
        if self._loop is not None or not self.runs_tasks:
            return
        self.queue.on_enqueue = self._wake.set
        await self.queue.listen()
        self._loop = asyncio.get_running_loop().create_task(self._claim_loop())

    async def stop(self) -> None:
        loops, self._loop, self._stats = (self._loop, self._stats), None, None
        for loop in loops:
            if loop is not None:
                loop.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await loop
        self.queue.on_enqueue = None
        await self.queue.close()

    async def refresh_stats(self) -> QueueStats:
        self.last_stats = await self.queue.stats()
        return self.last_stats

    def reading(self) -> tuple[int, float] | None:
        """The last depth and oldest age (s) read, for the metrics' gauges."""
        stats = self.last_stats
        return None if stats is None else (stats.depth, stats.oldest_age())

    async def _stats_loop(self) -> None:
        while True:
            try:
                await self.refresh_stats()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away: the gauges keep the last reading
                log.debug("reading the work queue's depth failed", exc_info=True)
            await asyncio.sleep(STATS_INTERVAL)

    async def _claim_loop(self) -> None:
        while True:
            try:
                full = await self.claim_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away: try again at the next poll
                log.warning("claiming queued tasks failed", exc_info=True)
                full = False
            if full:
                continue  # a whole batch came: more may wait
            await self._idle()

    async def _idle(self) -> None:
        """Until a wake-up, the poll interval, or (at capacity) a slot freeing up."""
        self._wake.clear()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.poll_interval
        while loop.time() < deadline and not self._wake.is_set():
            if self.capacity is not None and self._running() >= self.capacity:
                await asyncio.sleep(0.02)  # a local check: no query while at capacity
                if self._running() < self.capacity:
                    return
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), deadline - loop.time())

    async def claim_once(self) -> bool:
        """Claim and start what there is room for; True when a whole batch was claimed."""
        room = self.settings.claim_batch
        if self.capacity is not None:
            room = min(room, self.capacity - self._running())
        if room <= 0:
            return False
        entries = await self.queue.claim(
            self.leases.owner,
            self.leases.ttl,
            room,
            cluster_cap=self.settings.max_agent_tasks,
        )
        for entry in entries:
            self.leases.take_over(entry.task_id)
            try:
                await self._run_entry(entry)
            except Exception:
                log.exception("could not start queued task %s", entry.task_id)
                await self.leases.release(entry.task_id)
        return len(entries) == room

    async def _run_entry(self, entry: QueueEntry) -> None:
        handler = self.handler
        assert handler is not None
        stored = await handler.tasks.get(entry.task_id)
        if stored is None or stored.task.status.state not in _RUNNABLE:
            await self.leases.release(entry.task_id)  # canceled while queued, or forgotten
            return
        task = stored.task
        request = entry.request
        wanted = request.get("message_id")
        users = [m for m in task.history if m.role.value == "ROLE_USER"]
        message = next((m for m in reversed(users) if m.message_id == wanted), None)
        if message is None and users:
            message = users[-1]  # history trimmed past it: the latest client message
        if message is None:
            await self.leases.release(entry.task_id)
            log.error("queued task %s has no client message to run", entry.task_id)
            return
        caller = request.get("caller")
        call = CallContext(
            caller=Caller(**caller) if caller else None,
            tenant=request.get("tenant"),
            extensions=list(request.get("extensions") or []),
            version=request.get("version") or "1.0",
            activated_extensions=list(request.get("activated_extensions") or []),
            binding=request.get("binding") or "",
        )
        if (call.owner or None) != (stored.owner or None):
            call = dataclasses.replace(call, caller=Caller(stored.owner) if stored.owner else None)
        ctx = RequestContext(
            handler.tasks,
            task,
            message=message,
            call=call,
            metadata=request.get("metadata"),
            committed=True,  # the web replica answered with the task: no direct reply now
        )
        handler._launch(ctx)
