"""Pieces shared by the SQL backends (and the memory one): keys, rows, queries, wake-ups.

Nothing here knows a database driver. The SQL backends differ only in placeholder style
(``?`` or ``$1``), in how a timestamp column is stored and in how they run a statement; the
ListTasks filters, the keyset order and the row ⇄ model conversion are written once, here.

Timestamps are compared at **millisecond** precision everywhere: that is the precision of the
wire format (spec §5.6.1) and so of every task a durable backend hands back. A keyset cursor
taken from a returned task therefore always lands exactly on that task, whatever backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..protocol.logcontext import library_logger
from ..protocol.models import Task, TaskPushNotificationConfig, TaskState
from ..protocol.requests import StreamResponse
from .base import (
    ANY_OWNER,
    LoggedEvent,
    PushCursor,
    PushCursorState,
    StorageError,
    StoredTask,
    TaskPage,
    TaskQuery,
)

log = library_logger("simple_a2a.storage")

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)

#: States a restarted server must resume (``TaskStore.active_tasks``).
ACTIVE_STATES: tuple[str, ...] = (TaskState.SUBMITTED.value, TaskState.WORKING.value)


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken as UTC."""
    tzinfo = value.tzinfo
    if tzinfo is timezone.utc:  # what the server's own timestamps carry: nothing to convert
        return value
    if tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def utc_ms(value: datetime | None) -> datetime:
    """The timestamp as compared by stores: UTC, truncated to milliseconds; None is the epoch."""
    if value is None:
        return EPOCH
    value = as_utc(value)
    return value.replace(microsecond=value.microsecond - value.microsecond % 1000)


def order_key(task: Task) -> tuple[datetime, str]:
    """The ListTasks order key: (status timestamp at ms precision, id); results are descending."""
    return (utc_ms(task.status.timestamp), task.id)


def to_micros(value: datetime) -> int:
    """Microseconds since the epoch, exactly (for an INTEGER timestamp column); naive is UTC."""
    return (as_utc(value) - EPOCH) // _US


def from_micros(value: int) -> datetime:
    """The inverse of :func:`to_micros`: an aware UTC datetime."""
    return EPOCH + int(value) * _US


# --- rows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    """The indexed columns of a task (its documents are ``_layout``'s: core and rows)."""

    id: str
    context_id: str | None
    state: str
    ts: datetime  #: status timestamp, UTC, ms precision (the epoch when unset)


def task_row(task: Task) -> TaskRow:
    return TaskRow(
        id=task.id,
        context_id=task.context_id,
        state=task.status.state.value,
        ts=utc_ms(task.status.timestamp),
    )


def stored_task(doc: str | bytes, version: int, owner: str | None) -> StoredTask:
    return StoredTask(Task.from_json(doc), int(version), owner)


def logged_event(seq: int, doc: str | bytes) -> LoggedEvent:
    return LoggedEvent(int(seq), StreamResponse.from_json(doc))


def event_doc(event: StreamResponse) -> str:
    return event.to_json().decode()


#: The doc member that remembers a config's registration version (absent: 1.x). A member of
#: the stored JSON rather than a column, so rows written before it read as 1.x with no migration.
VERSION_MEMBER = "a2aProtocolVersion"


def push_doc(config: TaskPushNotificationConfig) -> tuple[str, str, str]:
    """(task_id, config id, JSON) of a config; both ids are required to store it."""
    if not config.task_id or not config.id:
        raise ValueError("a stored push config needs task_id and id")
    doc = config.to_dict()
    if config.protocol_version:
        doc[VERSION_MEMBER] = config.protocol_version
    return config.task_id, config.id, json.dumps(doc, separators=(",", ":"))


def push_config(doc: str | bytes | dict[str, Any]) -> TaskPushNotificationConfig:
    data = json.loads(doc) if isinstance(doc, str | bytes) else doc
    config = TaskPushNotificationConfig.from_dict(data)
    version = data.get(VERSION_MEMBER) if isinstance(data, dict) else None
    return config.with_protocol_version(version) if version else config


# --- push cursors (the push outbox) ------------------------------------------------------------

CURSOR_STATES: frozenset[str] = frozenset(("active", "suspended", "done"))
_CURSOR_COLUMNS = "task_id, config_id, delivered_seq, state, failures, last_error, updated_at"
_CURSOR_UPDATED = ("delivered_seq", "state", "failures", "last_error", "updated_at")


@dataclass(frozen=True)
class CursorSQL:
    """The statements of a :class:`~.base.PushCursorStore` over a ``push_cursors`` table keyed
    by ``(task_id, config_id)``. ``pending`` names the state as a literal so a partial index
    ``WHERE state = 'active'`` serves it (SQLite matches partial indexes textually)."""

    get: str
    put: str
    list: str
    pending: str
    delete: str


def cursor_sql(table: str, *, numbered: bool) -> CursorSQL:
    def ph(n: int) -> str:
        return f"${n}" if numbered else "?"

    select = f"SELECT {_CURSOR_COLUMNS} FROM {table}"
    key = f"task_id = {ph(1)} AND config_id = {ph(2)}"
    values = ", ".join(ph(n) for n in range(1, 8))
    updates = ", ".join(f"{c} = excluded.{c}" for c in _CURSOR_UPDATED)
    return CursorSQL(
        get=f"{select} WHERE {key}",
        put=(
            f"INSERT INTO {table} ({_CURSOR_COLUMNS}) VALUES ({values})"
            f" ON CONFLICT (task_id, config_id) DO UPDATE SET {updates}"
        ),
        list=f"{select} WHERE task_id = {ph(1)} ORDER BY config_id",
        pending=f"{select} WHERE state = 'active' ORDER BY task_id, config_id",
        delete=f"DELETE FROM {table} WHERE {key}",
    )


def cursor_row(cursor: PushCursor, ts: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The bound values of :attr:`CursorSQL.put`; ``ts`` converts ``updated_at`` for the column."""
    if not cursor.task_id or not cursor.config_id:
        raise ValueError("a stored push cursor needs task_id and config_id")
    if cursor.state not in CURSOR_STATES:
        raise ValueError(f"unknown push cursor state {cursor.state!r}")
    updated = None if cursor.updated_at is None else ts(cursor.updated_at)
    return (
        cursor.task_id,
        cursor.config_id,
        cursor.delivered_seq,
        cursor.state,
        cursor.failures,
        cursor.last_error,
        updated,
    )


def push_cursor(row: Sequence[Any], ts: Callable[[Any], datetime]) -> PushCursor:
    """A cursor from a row of :attr:`CursorSQL.get` (``ts`` reads the ``updated_at`` column)."""
    task_id, config_id, delivered_seq, state, failures, last_error, updated = row
    if state not in CURSOR_STATES:
        raise StorageError(f"push cursor {task_id}/{config_id} has unknown state {state!r}")
    checked: PushCursorState = state
    return PushCursor(
        task_id,
        config_id,
        None if delivered_seq is None else int(delivered_seq),
        checked,
        int(failures),
        last_error,
        None if updated is None else ts(updated),
    )


# --- ListTasks as SQL -------------------------------------------------------------------------


class Params:
    """Collects bound values; ``p(value)`` returns the placeholder (``?`` or ``$n``)."""

    def __init__(self, numbered: bool) -> None:
        self.numbered = numbered
        self.values: list[Any] = []

    def __call__(self, value: Any) -> str:
        self.values.append(value)
        return f"${len(self.values)}" if self.numbered else "?"


@dataclass(frozen=True)
class ListSQL:
    count_sql: str
    count_args: list[Any]
    page_sql: str
    page_args: list[Any]


def list_sql(
    table: str,
    query: TaskQuery,
    *,
    numbered: bool,
    ts: Callable[[datetime], Any],
    columns: str = "doc, version, owner",
) -> ListSQL:
    """The count and page statements of a ListTasks query over a table with columns
    ``id, context_id, state, ts, owner`` (indexes on ``(x, ts, id)`` serve them).

    ``ts`` converts a datetime to the column's representation. The page fetches ``limit + 1``
    rows: the extra row only tells ``has_more``.
    """
    p = Params(numbered)
    where: list[str] = []
    if query.owner is not ANY_OWNER:
        where.append("owner IS NULL" if query.owner is None else f"owner = {p(query.owner)}")
    if query.context_id is not None:
        where.append(f"context_id = {p(query.context_id)}")
    if query.state is not None:
        where.append(f"state = {p(query.state.value)}")
    if query.status_after is not None:
        where.append(f"ts > {p(ts(query.status_after))}")
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    count_sql, count_args = f"SELECT count(*) FROM {table}{cond}", list(p.values)
    if query.after is not None:
        after_ts, after_id = query.after
        keyset = f"(ts, id) < ({p(ts(utc_ms(after_ts)))}, {p(after_id)})"
        cond = f"{cond} AND {keyset}" if where else f" WHERE {keyset}"
    page_sql = (
        f"SELECT {columns} FROM {table}{cond} ORDER BY ts DESC, id DESC "
        f"LIMIT {p(max(query.limit, 0) + 1)}"
    )
    return ListSQL(count_sql, count_args, page_sql, p.values)


def task_page(rows: Sequence[Sequence[Any]], total: int, limit: int) -> TaskPage:
    """A page from ``(doc, version, owner)`` rows fetched with ``limit + 1``."""
    limit = max(limit, 0)
    tasks = [stored_task(doc, version, owner) for doc, version, owner in rows[:limit]]
    return TaskPage(tasks, int(total), len(rows) > limit)


# --- wake-ups for EventLog.wait ---------------------------------------------------------------


class _Slot(dict["asyncio.Future[int]", float]):
    """The waiters of one task: a future each, set when woken (:data:`_WOKEN`, the seq this
    process committed, or :data:`_TIMED_OUT`), and its deadline (a dict: a
    waiter that leaves without being woken is dropped in O(1), 2,000 followers of one task
    included); and the task's newest poll re-check, a read of the database that the waiters
    whose wait began before it share (:meth:`ChangeNotifier._recheck`)."""

    __slots__ = ("recheck", "recheck_at")

    def __init__(self) -> None:
        super().__init__()
        self.recheck: asyncio.Future[int] | None = None
        self.recheck_at = 0.0  # loop time at which ``recheck`` was started


_NEVER = float("inf")
#: what a waiter's future is set to when woken without a seq (another writer, a poll) or timed
#: out; a seq (> 0) when this process's own commit of it woke the waiter (``notify``)
_WOKEN, _TIMED_OUT = 0, -1


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _wake(waiters: _Slot, seq: int = _WOKEN) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(seq)


#: foreign wake-ups are counted per bucket of task ids: bounded memory; two tasks sharing a bucket
#: only cost each other a database read
_BUCKETS = 1024


class ChangeNotifier:
    """Wakes ``EventLog.wait`` callers: at once for appends this process made (``notify``),
    and for appends made elsewhere either by the backend's own signal (PostgreSQL
    LISTEN/NOTIFY or an event fan-out calls ``notify_foreign``) or by polling.

    Two polling modes:

    - with ``marker`` (a cheap "did anything change?" probe, e.g. SQLite's
      ``PRAGMA data_version``): one shared poll every ``poll_interval`` while anyone waits;
      a change wakes every waiter, who re-checks its own task;
    - without: each waiter re-checks its task every ``poll_interval`` (a fallback behind a
      push signal that normally does the work), and that re-check always reads the database;
      the waiters of one task share it (:meth:`_recheck`): one read per task and interval
      however many wait, not one per waiter (10,000 subscribers of one task on PostgreSQL were
      10,000 reads a second while they waited, and the server never caught up: issue #36).

    **Epochs** (issue #36): :meth:`epoch` counts the *foreign* wake-ups of a task (another
    writer's append: ``notify_foreign``, ``notify_all``), so that a caught-up follower can trust
    what this process appended (``RecentEvents``) instead of reading the database. The rule:
    the database confirmed at some point that the task's log ends at ``after`` (this process's
    own commit there, or a read), and the epoch captured *before* that confirmation is still
    the epoch now. Then any other writer's later append (seq > ``after``) committed after the
    confirmation, so its wake-up, sent after its commit, either came already (the epoch moved:
    the follower reads the database) or is still to come, and finds the follower registered
    (:meth:`wait` registers before it checks). That needs a signal that is delivered: the
    epoch is None (never trusted) while it is not, i.e. without a running poller (``marker``)
    or while ``signal()`` answers None (a LISTEN connection or a fan-out down); a new token
    from ``signal()`` (reconnected, wake-ups may have been missed) counts as a foreign wake-up.
    """

    def __init__(
        self,
        poll_interval: float,
        marker: Callable[[], Awaitable[object]] | None = None,
        signal: Callable[[], object] | None = None,
    ) -> None:
        self.poll_interval = poll_interval
        self._marker = marker
        self._signal = signal
        self._slots: dict[str, _Slot] = {}
        # One timer per task with waiters, not per wait (as the memory store's logs): a
        # follower waits again after every event, and a timer set and cancelled per wait was
        # a handle pushed on the loop's heap each time, compared in Python at every heap
        # operation. It stays when a notify wakes the task's waiters (their next deadlines
        # are later); when it fires it times out whoever is due and is set again for the
        # earliest deadline left (:meth:`_expire`).
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._waiting = 0  # calls of wait() in progress (a notified one has left its slot)
        self._poller: asyncio.Task[None] | None = None
        self._foreign_all = 0  # notify_all calls (and signal tokens seen)
        self._foreign = [0] * _BUCKETS  # notify_foreign calls, per bucket of task ids
        self._token: object = None  # the signal token :meth:`epoch` saw last
        self._polling: object = None  # the marker's poller's token, while it watches

    def epoch(self, task_id: str) -> int | None:
        """Foreign wake-ups of the task so far (only ever grows); None: none are delivered now."""
        if self._marker is not None:
            token = self._polling
        else:
            token = None if self._signal is None else self._signal()
        if token is None:
            return None
        if token is not self._token:  # (re)connected: what came before may have been missed
            self._token = token
            self._foreign_all += 1
        return self._foreign_all + self._foreign[hash(task_id) % _BUCKETS]

    def notify(self, task_id: str, seq: int = _WOKEN) -> None:
        """This process appended to the task (the epoch does not move); ``seq``: the seq it
        committed, which a waiter before it takes as its answer without asking ``last_seq``."""
        slot = self._slots.pop(task_id, None)
        if slot is not None:
            _wake(slot, seq)

    def notify_foreign(self, task_id: str) -> None:
        """Another writer appended to the task."""
        self._foreign[hash(task_id) % _BUCKETS] += 1
        self.notify(task_id)

    def notify_all(self) -> None:
        """Another writer may have appended to any task."""
        self._foreign_all += 1
        slots, self._slots = self._slots, {}
        for slot in slots.values():
            _wake(slot)

    async def wait(
        self,
        task_id: str,
        after: int,
        timeout: float,
        last_seq: Callable[[str, int, bool], Awaitable[int]],
    ) -> bool:
        """True once ``last_seq(task_id, after, trusted) > after`` or this process notified a
        seq > ``after``; False after ``timeout``. ``trusted`` False: the answer must come from
        the database (a poll re-check)."""
        self._waiting += 1
        try:
            return await self._wait(task_id, after, timeout, last_seq)
        finally:
            self._waiting -= 1

    async def _wait(
        self,
        task_id: str,
        after: int,
        timeout: float,
        last_seq: Callable[[str, int, bool], Awaitable[int]],
    ) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        trusted = True
        began = deadline  # (set when a wait begins; read only once one has timed out)
        while True:
            # Register before checking, so an append between the check and the wait wakes us;
            # that is also what makes an answer from this process's own appends sound (class
            # docstring): a wake-up that comes after the check finds the waiter registered.
            # One future per wait, the task's timer (issue #36): a Task for ``Event.wait()``
            # under ``asyncio.wait`` cost a Task, a second future, sets, callbacks and a timer
            # per follower per event, which the garbage collector then walked. Awaiting the
            # future itself also lets a cancellation through as it is (``asyncio.wait_for`` on
            # Python < 3.12 could swallow one arriving as the poller's first ``notify_all``).
            waiter: asyncio.Future[int] = loop.create_future()
            slot = self._slots.get(task_id)
            if slot is None:
                slot = self._slots[task_id] = _Slot()
            slot[waiter] = _NEVER
            try:
                if trusted:
                    seq = await last_seq(task_id, after, True)
                else:
                    seq = await self._recheck(slot, task_id, after, began, last_seq)
                if seq > after:
                    return True
                now = loop.time()
                if deadline <= now:
                    return False
                if self._marker is not None:
                    self._ensure_poller()
                    due = deadline
                else:
                    due = min(deadline, now + self.poll_interval)
                slot[waiter] = due
                timer = self._timers.get(task_id)
                if timer is None or timer.when() > due:
                    if timer is not None:
                        timer.cancel()
                    self._timers[task_id] = loop.call_at(due, self._expire, task_id)
                began = loop.time()  # (a shared re-check must have started after this)
                woken = await waiter
                if woken > after:
                    # This process committed that seq: the log holds it, and the follower
                    # needs no second registration nor ``last_seq`` to learn so (issue #36).
                    return True
                # A poll of its own (no marker) is the fallback for a lost wake-up: it reads.
                trusted = self._marker is not None or woken != _TIMED_OUT
            finally:
                slot.pop(waiter, None)
                if not slot and self._slots.get(task_id) is slot:
                    del self._slots[task_id]

    @staticmethod
    async def _recheck(
        slot: _Slot,
        task_id: str,
        after: int,
        since: float,
        last_seq: Callable[[str, int, bool], Awaitable[int]],
    ) -> int:
        """A poll re-check of the task's last seq from the database, shared by its waiters: a
        read started at or after ``since`` (when the asking waiter's wait began) sees every
        append that the waiter's own read would have seen but those of the moments between, so
        it is taken as the answer (an unsignalled append is then seen within two intervals);
        else a new read is started. What ``last_seq`` answers is a lower bound of the log's end
        (``RecentEvents.reader``), so one waiter's read answers any other's. One waiter
        cancelled does not cancel the read the others await (``shield``)."""
        recheck = slot.recheck
        if recheck is None or slot.recheck_at < since:
            slot.recheck_at = asyncio.get_running_loop().time()
            recheck = slot.recheck = asyncio.ensure_future(last_seq(task_id, after, False))
            recheck.add_done_callback(_retrieve)  # (its waiters may all have left)
        return await asyncio.shield(recheck)

    def _expire(self, task_id: str) -> None:
        """The task's timer: time out its waiters that are due, then wait for the next one."""
        del self._timers[task_id]
        slot = self._slots.get(task_id)
        if not slot:
            return
        loop = asyncio.get_running_loop()
        now, earliest = loop.time(), _NEVER
        for waiter, due in slot.items():
            if due <= now:
                if not waiter.done():
                    waiter.set_result(_TIMED_OUT)
            elif due < earliest:
                earliest = due
        if earliest != _NEVER:
            self._timers[task_id] = loop.call_at(earliest, self._expire, task_id)

    def _ensure_poller(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        assert self._marker is not None
        try:
            seen = await self._marker()
            # Anything committed before that first reading may have been missed by a waiter
            # that checked just before: let everyone re-check once. From here on every commit
            # of another connection is seen (the epoch may be trusted).
            self._polling = object()
            self.notify_all()
            # Kept one interval past the last waiter: a follower between two events leaves
            # for a moment, and each restart wakes every waiter to re-check (issue #36). Waits
            # in progress, not slots: an append empties its task's slot until the woken
            # waiters run (500 streams: 7 restarts in 20 chunks, each a read per follower).
            idle = 0
            while idle < 2:
                await asyncio.sleep(self.poll_interval)
                idle = 0 if self._waiting else idle + 1
                current = await self._marker()
                if current != seen:
                    seen = current
                    self.notify_all()
        except asyncio.CancelledError:
            raise
        except Exception:  # the store was closed under us, or the probe failed: waiters time out
            log.debug("storage change poll stopped", exc_info=True)
        finally:
            self._polling = None  # nobody watches: nothing appended here may be trusted

    async def close(self) -> None:
        timers, self._timers = self._timers, {}
        for timer in timers.values():
            timer.cancel()
        poller, self._poller = self._poller, None
        if poller is not None and not poller.done():
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await poller
        self.notify_all()
