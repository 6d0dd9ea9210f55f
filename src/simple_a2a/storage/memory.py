"""In-memory storage: the reference implementation of the contract, for tests and demos."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import functools
from bisect import bisect_left, insort
from collections import Counter, OrderedDict, deque
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

from pydantic import TypeAdapter

from ..protocol.encoded import TASKS
from ..protocol.models import Task, TaskPushNotificationConfig
from ..protocol.reducer import is_final_event
from ..protocol.requests import StreamResponse
from ._common import ACTIVE_STATES, EPOCH, as_utc, order_key
from ._conversations import ConversationStore, MemoryConversationStore
from ._leases import MemoryLeaseStore
from ._packing import BatchPacker, Cold, Packed
from ._queue import MemoryWorkQueue, WorkQueue
from ._untracked import UntrackedTable
from .base import (
    ANY_OWNER,
    ConcurrentUpdateError,
    EventLog,
    LeaseStore,
    LoggedEvent,
    PushConfigStore,
    PushCursor,
    PushCursorStore,
    RecordStep,
    Storage,
    StoredTask,
    TaskChange,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
)


def sort_key(task: Task) -> tuple[datetime, str]:
    """The ListTasks order key: status timestamp (ms precision), then id; results descending."""
    return order_key(task)


def _ms(value: datetime | None) -> int:
    """The order key's timestamp as integer milliseconds since the epoch (None: the epoch);
    floored like ``utc_ms``, in one datetime operation (and no call for a UTC one: the
    server's own timestamps)."""
    if value is None:
        return 0
    if value.tzinfo is not timezone.utc:
        value = as_utc(value)
    return (value - EPOCH) // _MILLISECOND


_MILLISECOND = timedelta(milliseconds=1)


# A stored task's row: (version, owner, context_id, state, key ms, cold bytes or None, index).
# The cold form (storage/_packing.py) is spread over the last two: the raw JSON and -1 while its
# batch is open, then the packed batch and the document's index in it. Only flat atoms, kept in
# an UntrackedTable, so the garbage collector never walks them: 100,000 stored tasks cost it
# nothing (a nested tuple can stay tracked into the oldest generation, storage/_untracked.py),
# and a cold task costs its share of a packed batch rather than a tree of models.
_Row = tuple[int, "str | None", "str | None", str, int, "bytes | None", int]


def _cold_of(row: _Row) -> Cold:
    assert row[5] is not None
    return row[5] if row[6] < 0 else (row[5], row[6])


class MemoryTaskStore(TaskStore):
    """Tasks in a dict, a sorted (key, id) index for ListTasks, and a hot set of models.

    The ``hot`` most recently used tasks stay as models (reads and the writes of running tasks
    cost no encoding); colder ones are kept as their JSON document and decoded on demand. Every
    model kept is a tree of objects the garbage collector walks at each full collection, which
    is what sets the tail at high concurrency: hence a few hundred, not thousands.
    """

    # The change hint is of no use here (the task object is kept whole), so the task manager
    # need not work it out for every event (a history comparison each, issue #19).
    accepts_change = False
    # A task cooling down is encoded once more: from the bytes its SendMessage answer was
    # encoded to, when the server kept them (``_keep_hot``, ``protocol/encoded.py``).
    takes_answer_json = True

    def __init__(self, hot: int = 256, pack_batch: int = 32) -> None:
        self.hot = max(1, hot)
        self._packer = BatchPacker(pack_batch)
        self._rows: UntrackedTable[_Row] = UntrackedTable()  # (storage/_untracked.py)
        self._models: OrderedDict[str, Task] = OrderedDict()  # the ``hot`` most recent others
        self._live: dict[str, Task] = {}  # submitted or working: see ``_keep_hot``
        self._order: builtins.list[tuple[int, str]] = []  # ascending; ListTasks walks backwards
        self._per_owner: Counter[str | None] = Counter()
        self._active: set[str] = set()  # submitted or working: what a recovery scan reads

    def _keep_hot(self, task_id: str, task: Task) -> None:
        if task_id in self._active:
            # A submitted or working task changes at every event: it stays a model while it
            # runs, outside the ``hot`` count. Cooling it would encode it and decode it again
            # at its next event: with more running tasks than ``hot`` (a router's streams,
            # bench/streams.py) every event did both. Running tasks are bounded by
            # Limits.max_running_tasks_per_caller, and each holds its execution anyway.
            self._live[task_id] = task
            self._models.pop(task_id, None)
            return
        self._live.pop(task_id, None)
        models = self._models
        models[task_id] = task
        models.move_to_end(task_id)
        while len(models) > self.hot:
            cold_id, cold = models.popitem(last=False)
            row = self._rows.get(cold_id)
            if row is not None and row[5] is None:
                doc = TASKS.take(cold)  # (the bytes its last answer was encoded to, if any)
                self._rows[cold_id] = (*row[:5], doc, -1)
                self._packed(self._packer.add(cold_id, doc))

    def _packed(self, sealed: builtins.list[tuple[str, bytes, Packed]]) -> None:
        """A batch was packed: its rows that still hold their raw JSON now hold the handle."""
        rows = self._rows
        for task_id, doc, handle in sealed:
            row = rows.get(task_id)
            if row is not None and row[5] is doc:  # not changed or deleted meanwhile
                rows[task_id] = (*row[:5], *handle)

    async def create(self, task: Task, *, owner: str | None = None) -> int:
        return self._create(task, owner)

    def _create(self, task: Task, owner: str | None) -> int:
        """:meth:`create`, which never suspends (``MemoryStorage.record`` calls it as is)."""
        if task.id in self._rows:
            raise TaskExistsError(task.id)
        key = _ms(task.status.timestamp)
        self._rows[task.id] = (1, owner, task.context_id, task.status.state.value, key, None, -1)
        insort(self._order, (key, task.id))
        self._per_owner[owner] += 1
        self._track(task.id, task.status.state.value)
        self._keep_hot(task.id, task)
        return 1

    def _track(self, task_id: str, state: str) -> None:
        if state in ACTIVE_STATES:
            self._active.add(task_id)
        else:
            self._active.discard(task_id)

    def active_before(self, epoch_seconds: float) -> builtins.list[str]:
        """Submitted or working tasks whose status is older than that, oldest first."""
        limit = int(epoch_seconds * 1000)
        rows = self._rows
        found = [(rows[tid][4], tid) for tid in self._active if rows[tid][4] < limit]
        return [tid for _, tid in sorted(found)]

    def state_of(self, task_id: str) -> str | None:
        """The stored state of a task (None if absent), without decoding it."""
        row = self._rows.get(task_id)
        return None if row is None else row[3]

    def _task(self, task_id: str, row: _Row) -> Task:
        task = self._live.get(task_id) or self._models.get(task_id)
        if task is None:
            task = Task.model_validate_json(self._packer.read(_cold_of(row)))
        self._keep_hot(task_id, task)
        return task

    async def get(self, task_id: str) -> StoredTask | None:
        row = self._rows.get(task_id)
        if row is None:
            return None
        return StoredTask(self._task(task_id, row), row[0], row[1])

    async def update(
        self, task: Task, *, expected_version: int, change: TaskChange | None = None
    ) -> int:
        # ``change`` is of no use here (see ``accepts_change``): the task object is kept whole.
        return self._update(task, expected_version, 1)

    def _update(self, task: Task, expected_version: int, versions: int = 1) -> int:
        """``update``, moving the version on by ``versions``: the last snapshot of several
        steps at the version one write per step would leave (``MemoryStorage.record_steps``;
        one row written and no coroutine, where an update and a version bump cost two rows). It
        never suspends: ``MemoryStorage.record`` calls it as is."""
        current = self._rows.get(task.id)
        if current is None:
            raise KeyError(task.id)
        if current[0] != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current[0]}, not {expected_version}"
            )
        version = expected_version + versions
        live = self._live.get(task.id)
        if live is not None and live.status is task.status and live.context_id == task.context_id:
            # A running task's artifact (a streamed chunk): the same status object, so the same
            # state, index key and active set; only the version and the model change (this
            # skips the timestamp's key and the bookkeeping of a state change, issue #36).
            self._rows[task.id] = (version, *current[1:5], None, -1)
            self._live[task.id] = task
            return version
        key = _ms(task.status.timestamp)
        if key != current[4]:
            self._unindex(current[4], task.id)
            insort(self._order, (key, task.id))
        self._rows[task.id] = (
            version, current[1], task.context_id, task.status.state.value, key, None, -1
        )  # fmt: skip
        self._track(task.id, task.status.state.value)
        self._keep_hot(task.id, task)
        return version

    def _unindex(self, key: int, task_id: str) -> None:
        order = self._order
        i = bisect_left(order, (key, task_id))
        if i < len(order) and order[i] == (key, task_id):
            del order[i]

    async def list(self, query: TaskQuery) -> TaskPage:
        rows = self._rows
        any_owner = query.owner is ANY_OWNER
        context_id = query.context_id
        state = query.state.value if query.state is not None else None
        after_ms = _ms(query.status_after) if query.status_after is not None else None
        filtered = context_id is not None or state is not None or after_ms is not None

        def match(row: _Row) -> bool:
            return (
                (any_owner or row[1] == query.owner)
                and (context_id is None or row[2] == context_id)
                and (state is None or row[3] == state)
                and (after_ms is None or row[4] > after_ms)
            )

        order = self._order
        if query.after is not None:
            end = bisect_left(order, (_ms(query.after[0]), query.after[1]))
        else:
            end = len(order)
        page: builtins.list[str] = []
        i = end - 1
        while i >= 0 and len(page) <= query.limit:
            task_id = order[i][1]
            if match(rows[task_id]):
                page.append(task_id)
            i -= 1
        if filtered:
            total = sum(1 for row in rows.values() if match(row))
        elif any_owner:
            total = len(rows)
        else:
            total = self._per_owner.get(query.owner, 0)  # type: ignore[arg-type]
        has_more = len(page) > query.limit
        stored = []
        for task_id in page[: query.limit]:
            row = rows[task_id]
            stored.append(StoredTask(self._task(task_id, row), row[0], row[1]))
        return TaskPage(stored, total, has_more)

    async def delete(self, task_id: str) -> bool:
        row = self._rows.pop(task_id, None)
        if row is None:
            return False
        self._active.discard(task_id)
        self._models.pop(task_id, None)
        self._live.pop(task_id, None)
        self._unindex(row[4], task_id)
        self._per_owner[row[1]] -= 1
        if not self._per_owner[row[1]]:
            del self._per_owner[row[1]]
        return True


class _TaskEvents:
    __slots__ = ("events", "last", "timer", "waiters")

    def __init__(self) -> None:
        # A list until it outgrows the retention bound, then a deque (``append``): an empty
        # deque is 760 bytes, a list of a stream's few events ~120 (a stream's log, issue #36).
        self.events: builtins.list[LoggedEvent] | deque[LoggedEvent] = []
        self.last = 0
        # set while someone waits: each waiter's future and the loop time it times out at
        self.waiters: builtins.list[tuple[asyncio.Future[bool], float]] | None = None
        # The one timer of this log's waiters (``_expire``), at or before the earliest deadline.
        self.timer: asyncio.TimerHandle | None = None


def _expire(log: _TaskEvents) -> None:
    """The log's timer: time out the waiters whose deadline passed, and set the timer again
    for the earliest one left (if any)."""
    log.timer = None
    waiters = log.waiters
    if not waiters:
        return
    loop = asyncio.get_running_loop()
    # (the loop runs a timer up to its clock's resolution early: a millisecond of slack, so
    # a waiter due now is not put off to another turn of the timer)
    now = loop.time() + 0.001
    left = []
    for waiter, deadline in waiters:
        if waiter.done():
            continue
        if deadline <= now:
            waiter.set_result(False)
        else:
            left.append((waiter, deadline))
    log.waiters = left or None
    if left:
        log.timer = loop.call_at(min(deadline for _, deadline in left), _expire, log)


@functools.cache
def _event_list() -> TypeAdapter[builtins.list[StreamResponse]]:
    # Built on first use: the protocol models build their schemas lazily (import time, #19).
    return TypeAdapter(builtins.list[StreamResponse])


def _events_doc(events: Sequence[LoggedEvent]) -> bytes:
    """A finished task's log as one document: the first seq, a newline, then the events as one
    JSON array (sequence numbers are contiguous, so the first is all a cold log needs to keep).
    One serializer call for the whole log rather than one per event (~1 % of a SendMessage)."""
    first = events[0].seq if events else 0
    # (the adapter's serializer itself: dump_json passes it 16 keyword arguments to parse)
    serializer = _event_list().serializer
    body = serializer.to_json([e.event for e in events], by_alias=True, exclude_none=True)
    return b"%d\n%b" % (first, body)


def _events_of(doc: bytes) -> builtins.list[LoggedEvent]:
    first, _, body = doc.partition(b"\n")
    seq = int(first)
    return [LoggedEvent(seq + i, e) for i, e in enumerate(_event_list().validate_json(body))]


class MemoryEventLog(EventLog):
    """Keeps the newest ``max_events_per_task`` events of each task.

    Each append wakes the task's current waiters (a future each), so a thousand subscribers cost
    one wake-up each and a slow one never blocks the writer. The logs of all but the ``hot``
    most recently finished tasks become one document each, deflated ``pack_batch`` at a time
    (decoded when replayed, storage/_packing.py): a finished task's log then costs about a
    hundred bytes rather than a deque of models, and nothing for the garbage collector to walk
    (a finished log is rarely read again: a resumed stream, a late push delivery).
    """

    def __init__(
        self, max_events_per_task: int = 10_000, hot: int = 128, pack_batch: int = 32
    ) -> None:
        self.max_events_per_task = max_events_per_task
        self.hot = max(1, hot)
        self._logs: dict[str, _TaskEvents] = {}
        self._cold: UntrackedTable[Cold] = UntrackedTable()
        self._packer = BatchPacker(pack_batch)
        self._finished: deque[str] = deque()

    def _log(self, task_id: str) -> _TaskEvents:
        log = self._logs.get(task_id)
        if log is None:
            log = self._logs[task_id] = _TaskEvents()
            cold = self._cold.pop(task_id, None)
            if cold is not None:  # written to or waited on after it cooled down: thaw it
                log.events.extend(_events_of(self._packer.read(cold)))
                log.last = log.events[-1].seq if log.events else 0
        return log

    async def append(self, task_id: str, event: StreamResponse) -> int:
        return self._append(task_id, event)

    def _append(self, task_id: str, event: StreamResponse) -> int:
        """:meth:`append`, which never suspends (``MemoryStorage.record`` calls it as is)."""
        log = self._logs.get(task_id) or self._log(task_id)  # (a call only for a new log)
        log.last += 1
        events = log.events
        events.append(LoggedEvent(log.last, event))
        if len(events) > self.max_events_per_task:
            if not isinstance(events, deque):
                events = log.events = deque(events)
            events.popleft()
        waiters, log.waiters = log.waiters, None
        if waiters is not None:
            for waiter, _deadline in waiters:
                if not waiter.done():
                    waiter.set_result(True)
        if is_final_event(event):
            self._finished.append(task_id)
            while len(self._finished) > self.hot:
                self._compact(self._finished.popleft())
        return log.last

    def _compact(self, task_id: str) -> None:
        log = self._logs.get(task_id)
        if log is None or log.waiters or not log.events:
            return  # gone, followed by someone, or emptied: it stays as it is
        del self._logs[task_id]
        doc = self._cold[task_id] = _events_doc(log.events)
        cold = self._cold
        for key, packed_doc, handle in self._packer.add(task_id, doc):
            if cold.get(key) is packed_doc:  # not thawed or deleted meanwhile
                cold[key] = handle

    def _events(self, task_id: str) -> Sequence[LoggedEvent]:
        log = self._logs.get(task_id)
        if log is not None:
            return log.events
        cold = self._cold.get(task_id)
        return () if cold is None else _events_of(self._packer.read(cold))

    async def read(self, task_id: str, after: int, limit: int | None = None) -> list[LoggedEvent]:
        log = self._logs.get(task_id)
        events = log.events if log is not None else self._events(task_id)
        if not events:
            return []
        last = events[-1].seq
        if after >= last:
            return []
        if after == last - 1 and limit != 0:
            return [events[-1]]  # a caught-up follower's one new event (every streamed chunk)
        start = max(0, len(events) - (last - after))
        stop = len(events) if limit is None else min(len(events), start + limit)
        return [events[i] for i in range(start, stop)]

    async def last_seq(self, task_id: str) -> int:
        log = self._logs.get(task_id)
        if log is not None:
            return log.last
        events = self._events(task_id)
        return events[-1].seq if events else 0

    async def first_seq(self, task_id: str) -> int:
        events = self._events(task_id)
        return events[0].seq if events else 0

    async def wait(self, task_id: str, after: int, timeout: float) -> bool:
        log = self._logs.get(task_id) or self._log(task_id)  # (a call only for a new log)
        if log.last > after:
            return True
        # One future per waiter, and one timer per log rather than per waiter: a follower waits
        # again after every event, and a timer set and cancelled per wait cost ~15 % of the
        # wait (a handle pushed on the loop's heap, left there cancelled, compared in Python at
        # every heap operation). The log's timer is set for the first waiter and stays when an
        # append wakes everyone: the next waiters' deadlines are later, and when it fires it
        # times out whoever is due then and sets itself for the earliest deadline left
        # (``_expire``): one timer per log per keep-alive interval.
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        deadline = loop.time() + timeout
        entry = (waiter, deadline)
        if log.waiters is None:
            log.waiters = [entry]
        else:
            log.waiters.append(entry)
        timer = log.timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            log.timer = loop.call_at(deadline, _expire, log)
        try:
            woken = await waiter
        finally:
            if waiter.cancelled() and log.waiters is not None:
                with contextlib.suppress(ValueError):
                    log.waiters.remove(entry)  # gone: do not pile up
        return woken or log.last > after

    async def delete(self, task_id: str) -> None:
        self._logs.pop(task_id, None)
        self._cold.pop(task_id, None)


class MemoryPushConfigStore(PushConfigStore):
    def __init__(self, tasks: MemoryTaskStore | None = None) -> None:
        self._configs: dict[str, dict[str, TaskPushNotificationConfig]] = {}
        self._tasks = tasks  # for the owners of the tasks (count_for_owner)

    async def count_for_owner(self, owner: str) -> int | None:
        if self._tasks is None:
            return None
        rows = self._tasks._rows
        return sum(
            len(configs)
            for task_id, configs in self._configs.items()
            if (row := rows.get(task_id)) is not None and row[1] == owner
        )

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

    # record_steps is atomic here: the memory stores never suspend while writing.
    atomic_steps = True

    async def record_steps(
        self, steps: Sequence[RecordStep], *, expected_version: int
    ) -> builtins.list[int]:
        """One task write for all the steps: the last snapshot, at the version one write per
        step would leave. The snapshots between could never be read (nothing here suspends
        between the steps), and a task write costs its row, its index entry and the hot set
        (an executor's answer and its final status are two steps: issue #36). Every event is
        logged, as by the default."""
        own = self._own_writes()
        if len(steps) < 2 or own is None:
            return await super().record_steps(steps, expected_version=expected_version)
        own[0]._update(steps[-1].task, expected_version, len(steps))  # (the version guard)
        append = own[1]._append  # (no coroutine per event: it never suspends)
        return [append(step.task.id, step.event) for step in steps]

    async def record(
        self,
        task: Task,
        event: StreamResponse,
        *,
        expected_version: int | None,
        change: TaskChange | None = None,
        owner: str | None = None,
    ) -> tuple[int, int]:
        """The default's two writes, without a coroutine for each: neither suspends here, and
        this runs for every streamed chunk and every SendMessage's creation (issue #36). Stores
        whose writes are not ours take the default (:meth:`_own_writes`)."""
        own = self._own_writes()
        if own is None:
            return await super().record(
                task, event, expected_version=expected_version, change=change, owner=owner
            )
        if expected_version is None:  # a creation (every SendMessage's first write)
            return own[0]._create(task, owner), own[1]._append(task.id, event)
        return own[0]._update(task, expected_version), own[1]._append(task.id, event)

    def _own_writes(self) -> tuple[MemoryTaskStore, MemoryEventLog] | None:
        """The task store and event log when their ``create``, ``update`` and ``append`` are
        this module's own, so that their bodies may be called without a coroutine; None when
        another store was put in their place, a subclass, or a method wrapped on the instance:
        then theirs must be called."""
        tasks, events = self.tasks, self.events
        if (
            type(tasks) is MemoryTaskStore
            and type(events) is MemoryEventLog
            and "update" not in tasks.__dict__
            and "create" not in tasks.__dict__
            and "append" not in events.__dict__
        ):
            return tasks, events
        return None

    def __init__(self, max_events_per_task: int = 10_000) -> None:
        self.tasks = MemoryTaskStore()
        self.events = MemoryEventLog(max_events_per_task)
        self.push_configs = MemoryPushConfigStore(self.tasks)
        self.push_cursors: PushCursorStore | None = MemoryPushCursorStore()
        #: in-process leases: memory storage serves one process, so they coordinate only it
        leases = MemoryLeaseStore(self.tasks.state_of, self.tasks.active_before)
        self.leases: LeaseStore | None = leases
        #: the work queue (roles web/worker of servers sharing this storage in one process)
        self.queue: WorkQueue | None = (queue := MemoryWorkQueue(leases))
        leases.queued = queue.__contains__
        self.conversations: ConversationStore | None = MemoryConversationStore()
