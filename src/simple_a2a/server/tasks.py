"""Task bookkeeping: every change to a task goes through here, in one order.

:class:`TaskManager` turns an event into (1) a new task snapshot in the task store, guarded by the
version number, and (2) the next entry of the task's event log, under a per-task lock so the two
agree. Readers follow the log from a cursor (:meth:`TaskManager.follow`), which is what makes
many subscribers, reconnects with ``Last-Event-ID`` and replay of finished tasks work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol._base import trusted
from ..protocol.logcontext import library_logger
from ..protocol.models import FINAL_STATES, Task, TaskState
from ..protocol.reducer import apply_event, is_final_event
from ..protocol.requests import StreamResponse
from ..storage import MemoryConversationStore, MemoryStorage
from ..storage.base import (
    FULL_CHANGE,
    ConcurrentUpdateError,
    RecentTasks,
    RecordStep,
    Storage,
    StoredTask,
    TaskChange,
)

log = library_logger("simple_a2a.server")

#: Called after every recorded event (push delivery hooks in here).
EventHook = Callable[[str, int, StreamResponse, Task], Awaitable[None]]


@dataclass(frozen=True)
class StreamItem:
    """One event of a stream: ``seq`` is the SSE ``id:``; ``event`` None means keep-alive."""

    seq: int | None
    event: StreamResponse | None


class _TaskLock:
    """A per-task lock that leaves the table when its last user is done (no lock per task kept
    forever)."""

    __slots__ = ("_lock", "_table", "_task_id", "_users")

    def __init__(self, table: dict[str, _TaskLock], task_id: str) -> None:
        self._lock = asyncio.Lock()
        self._table = table
        self._task_id = task_id
        self._users = 0

    async def __aenter__(self) -> None:
        self._users += 1
        try:
            await self._lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()
        self._leave()

    def _leave(self) -> None:
        self._users -= 1
        if not self._users and self._table.get(self._task_id) is self:
            del self._table[self._task_id]


class TaskManager:
    #: How many tasks' latest snapshots ``record`` remembers (see ``_latest``).
    LATEST = 1024

    def __init__(
        self, storage: Storage, *, keepalive: float = 15.0, max_history: int | None = None
    ) -> None:
        self.storage = storage
        self.keepalive = keepalive
        #: messages kept in a stored task's history (the newest; None keeps all), see _trimmed
        self.max_history = max_history
        self.hooks: list[EventHook] = []
        #: Awaited before a write the version guard refused is retried; raises to refuse the
        #: retry (the fence of cluster mode: ``leases.bind_leases``, docs/cluster.md).
        self.before_retry: Callable[[str], Awaitable[None]] | None = None
        #: adapters' conversation state (RequestContext.load_state); a storage without a store
        #: of its own keeps it in this process's memory
        self.conversations = storage.conversations or MemoryConversationStore()
        self._locks: dict[str, _TaskLock] = {}
        # The memory storage never suspends while it reads or writes (``atomic_steps``): no
        # other coroutine runs between this manager's read of a task and its write, so the
        # per-task lock has nothing to order in create and record; it cost two objects and three
        # coroutines per write (issue #36). A storage that awaits I/O, or a subclass that may,
        # is locked. (A retry's ``before_retry`` may wait: writers meeting there are ordered by
        # the version guard, as writers of two processes are.)
        self._unlocked = type(storage) is MemoryStorage
        # The snapshot this process last wrote, per recently changed task: ``record`` tries it
        # first instead of reading the task back before every event. Safe with other writers
        # (another replica, retention): the store's version guard refuses a stale snapshot with
        # ConcurrentUpdateError (or KeyError), and then the task is read afresh.
        self._latest = RecentTasks(self.LATEST)
        #: loop time of the last yield after an emit (``TaskHandle._published``)
        self.yielded_at = 0.0

    def _lock(self, task_id: str) -> _TaskLock:
        lock = self._locks.get(task_id)
        if lock is None:
            lock = self._locks[task_id] = _TaskLock(self._locks, task_id)
        return lock

    async def create(self, task: Task, *, owner: str | None) -> int:
        """Store a new task and log its snapshot as event 1."""
        event = trusted(StreamResponse, task=task)  # a stored task: valid
        if self._unlocked:
            version, seq = await self.storage.record(
                task, event, expected_version=None, owner=owner
            )
        else:
            async with self._lock(task.id):
                version, seq = await self.storage.record(
                    task, event, expected_version=None, owner=owner
                )
        self._latest.keep(StoredTask(task, version, owner))
        if self.hooks:  # (no coroutine without hooks, as in record_all)
            await self._notify(task.id, seq, event, task)
        return seq

    async def record(self, task_id: str, event: StreamResponse) -> tuple[Task, int]:
        """Apply an event to the task and log it; returns the new task and the event's seq.

        Raises :class:`~simple_a2a.protocol.states.InvalidTransitionError` (or its
        :class:`~simple_a2a.protocol.states.TaskTerminalError`) for an illegal change
        (nothing is written then). Retries when another writer changed the task meanwhile.
        """
        return await self.record_all(task_id, (event,))

    async def record_all(
        self,
        task_id: str,
        events: Sequence[StreamResponse],
        *,
        metadata: dict[str, Any] | None = None,
    ) -> tuple[Task, int]:
        """:meth:`record` for consecutive events (an executor's artifacts and its final
        status): all or none of them, in one storage write when the backend can
        (``Storage.atomic_steps``), else one write each. Returns the last task and seq.

        ``metadata`` is merged into the task's metadata with the last event (in its write):
        what the server keeps on a task that no event carries (``policy.ATTEMPT_KEY``)."""
        assert events, "no events to record"
        if len(events) > 1 and not self.storage.atomic_steps:
            for index, event in enumerate(events):
                last = index == len(events) - 1
                task, seq = await self.record_all(
                    task_id, (event,), metadata=metadata if last else None
                )
            return task, seq
        if self._unlocked:
            steps, seqs = await self._apply(task_id, events, metadata)
        else:
            async with self._lock(task_id):
                steps, seqs = await self._apply(task_id, events, metadata)
        task = steps[-1].task
        if self.hooks:  # (no coroutine per event without hooks: a server without push)
            for step, seq in zip(steps, seqs, strict=True):
                await self._notify(task_id, seq, step.event, step.task)
        return task, seqs[-1]

    async def _apply(
        self, task_id: str, events: Sequence[StreamResponse], metadata: dict[str, Any] | None
    ) -> tuple[list[RecordStep], list[int]]:
        """Read, apply and write (the task's lock held, where it needs one): the steps written
        and their seqs."""
        stored = self._latest.get(task_id)
        for _attempt in range(10):
            if stored is None:
                stored = await self.storage.tasks.get(task_id)
                if stored is None:
                    raise KeyError(task_id)
            steps = self._steps(stored.task, events)
            if metadata:
                steps[-1] = self._with_metadata(steps[-1], metadata)
            try:
                version, seqs = await self._write(steps, stored.version)
            except (ConcurrentUpdateError, KeyError):
                self._latest.pop(task_id, None)
                stored = None  # someone else changed (or deleted) it: read it afresh
                if self.before_retry is not None:
                    await self.before_retry(task_id)  # (raises when fenced)
                continue
            self._latest.keep(StoredTask(steps[-1].task, version, stored.owner))
            return steps, seqs
        raise ConcurrentUpdateError(f"task {task_id} kept changing; gave up")

    async def _write(self, steps: list[RecordStep], version: int) -> tuple[int, list[int]]:
        """Store the steps; returns the task's new version and the events' seqs."""
        if len(steps) == 1:  # the common case, with the one call every backend has
            step = steps[0]
            version, seq = await self.storage.record(
                step.task, step.event, expected_version=version, change=step.change
            )
            return version, [seq]
        return version + len(steps), await self.storage.record_steps(
            steps, expected_version=version
        )

    def _steps(self, task: Task, events: Sequence[StreamResponse]) -> list[RecordStep]:
        """Each event applied in turn (the state machine refuses an illegal one before anything
        is written), with the change hint of backends that write parts of a task."""
        steps = []
        hint = self.storage.tasks.accepts_change
        for event in events:
            after = apply_event(task, event)
            # Only backends that write parts of a task use the hint (it compares histories).
            change = TaskChange.for_event(event, task, after) if hint else None
            after, change = self._trimmed(after, change)
            steps.append(RecordStep(after, event, change))
            task = after
        return steps

    def _with_metadata(self, step: RecordStep, metadata: dict[str, Any]) -> RecordStep:
        task = step.task.model_copy(update={"metadata": {**(step.task.metadata or {}), **metadata}})
        return RecordStep(task, step.event, FULL_CHANGE if step.change is not None else None)

    def _trimmed(self, task: Task, change: TaskChange | None) -> tuple[Task, TaskChange | None]:
        """Bound the history a task keeps in storage (#16 item 3: a caller cannot make a task
        hold messages without end). Trimmed in steps of a tenth of the bound, back to the
        newest ``max_history`` messages, so a long conversation rewrites its history rows once
        every ``max_history / 10`` messages rather than at every message."""
        cap = self.max_history
        if cap is None or len(task.history) <= cap + cap // 10:
            return task, change
        task = task.model_copy(update={"history": task.history[-cap:] if cap else []})
        return task, FULL_CHANGE if change is not None else None

    async def discard(self, task_id: str) -> None:
        """Forget a task and its log (a message answered by a direct reply has no task)."""
        async with self._lock(task_id):
            self._latest.pop(task_id, None)
            await self.storage.tasks.delete(task_id)
            await self.storage.events.delete(task_id)

    async def _notify(self, task_id: str, seq: int, event: StreamResponse, task: Task) -> None:
        for hook in self.hooks:
            try:
                await hook(task_id, seq, event, task)
            except Exception:  # a hook must never break the agent
                log.exception("event hook failed for task %s", task_id)

    async def get(self, task_id: str) -> StoredTask | None:
        return await self.storage.tasks.get(task_id)

    async def latest(self, task_id: str) -> StoredTask | None:
        """The snapshot this process last wrote for the task, else the stored one.

        For answering the request that just wrote it (a blocking send): every write of this
        process goes through :meth:`create` / :meth:`record`, so the remembered snapshot is the
        state the request settled at, without a read back from the store (a thread hop on
        SQLite, a round trip on PostgreSQL). Reads that must see other replicas' writes
        (GetTask) use :meth:`get`.
        """
        stored = self._latest.get(task_id)
        if stored is None:
            return await self.storage.tasks.get(task_id)
        if stored.task.status.state.is_terminal:
            # Nothing writes to it any more: forget it now rather than keep its objects for the
            # garbage collector to walk until 1,024 later tasks push it out (the tail at c=32).
            del self._latest[task_id]
        return stored

    async def snapshot(self, task_id: str) -> tuple[Task, int] | None:
        """The task and the seq of the last event it reflects, consistently."""
        async with self._lock(task_id):
            stored = await self.storage.tasks.get(task_id)
            if stored is None:
                return None
            return stored.task, await self.storage.events.last_seq(task_id)

    async def follow(
        self, task_id: str, after: int, *, until: frozenset[TaskState] = FINAL_STATES
    ) -> AsyncIterator[StreamItem]:
        """Every event with ``seq > after``, live, until one reaches a state in ``until``
        (terminal or interrupted by default; a subscription passes the terminal states).

        If the cursor fell out of the retained window, the subscriber first gets a fresh Task
        snapshot (documented overflow policy: no silent gap). Yields keep-alive items while idle.
        """
        events = self.storage.events
        first = await events.first_seq(task_id)
        if first and after + 1 < first:
            snap = await self.snapshot(task_id)
            if snap is not None:
                task, after = snap
                yield StreamItem(after, StreamResponse(task=task))
                if task.status.state in until:
                    return
        while True:
            batch = await events.read(task_id, after, limit=500)
            for item in batch:
                after = item.seq
                yield StreamItem(item.seq, item.event)
                if is_final_event(item.event, until):
                    return
            if len(batch) >= 500:
                continue
            if not batch:
                snap = await self.snapshot(task_id)
                if snap is None or (snap[0].status.state in until and snap[1] <= after):
                    return  # finished while we were away and everything was delivered
            if not await events.wait(task_id, after, self.keepalive):
                yield StreamItem(None, None)
