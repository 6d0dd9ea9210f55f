"""The storage contract every backend implements (memory, SQLite, PostgreSQL, ...).

Three seams (PRODUCT.md §5):

- :class:`TaskStore` keeps tasks with a version number, so two writers cannot silently overwrite
  each other (:class:`ConcurrentUpdateError`);
- :class:`EventLog` keeps each task's events, ordered and sequence-numbered from 1, readable from
  a cursor and awaitable for new events (the base of streaming, replay and push delivery);
- :class:`PushConfigStore` keeps webhook configurations per task;
- :class:`PushCursorStore` (optional) is the push outbox: per (task, config) the last event
  delivered, so deliveries resume after a restart;
- :class:`LeaseStore` (optional) says which process runs a task or delivers a push config, so
  any number of processes can share one storage.

:class:`Storage` bundles them. Objects handed out by a store must be treated as read-only by
callers (copy before mutating); stores may return shared instances for speed.
The reusable conformance suite in ``tests/storage/`` is the executable form of this contract.
"""

from __future__ import annotations

import abc
import builtins
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Final, Literal, Protocol

from ..protocol.models import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from ..protocol.requests import StreamResponse
from ._conversations import ConversationStore

if TYPE_CHECKING:
    from ._queue import WorkQueue


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


TaskChangeKind = Literal["full", "status", "artifact", "history"]


@dataclass(frozen=True)
class TaskChange:
    """What an update changed, relative to the stored task at ``expected_version`` (a hint that
    lets durable backends write only that; ``TaskStore.update(change=None)`` means anything).

    - ``status``: the status (and nothing else of the core: id, context, metadata) changed, and
      ``appended`` messages were added at the end of the history (a status message);
    - ``artifact``: only the artifact ``artifact_id`` was added (at the end) or replaced in place;
    - ``history``: only ``appended`` messages were added at the end of the history;
    - ``full``: anything may have changed (the whole task is rewritten).

    The hint must be true: a backend trusts it and writes only the parts it names. A backend
    that cannot use a hint (memory) ignores it; one that finds it inconsistent with the task
    (an unknown artifact id, more appended messages than the history holds) writes everything.
    """

    kind: TaskChangeKind = "full"
    artifact_id: str | None = None
    appended: int = 0

    @classmethod
    def for_event(cls, event: StreamResponse, before: Task, after: Task) -> TaskChange:
        """The change ``apply_event(before, event) == after`` made (``full`` when unsure)."""
        payload = event.payload
        appended = len(after.history) - len(before.history)
        if appended < 0 or after.history[: len(before.history)] != before.history:
            return FULL_CHANGE
        if isinstance(payload, TaskStatusUpdateEvent):
            return cls("status", appended=appended)
        if isinstance(payload, TaskArtifactUpdateEvent):
            if appended == 0 and len(after.artifacts) - len(before.artifacts) in (0, 1):
                return cls("artifact", artifact_id=payload.artifact.artifact_id)
        elif isinstance(payload, Message):
            return cls("history", appended=appended)
        return FULL_CHANGE


#: ``TaskChange()``: anything may have changed.
FULL_CHANGE: Final = TaskChange()


@dataclass(frozen=True)
class RecordStep:
    """One event of a task and the snapshot it leads to (:meth:`Storage.record_steps`)."""

    task: Task
    event: StreamResponse
    change: TaskChange | None = None


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


class RecentTasks(OrderedDict[str, StoredTask]):
    """The ``size`` most recently kept stored tasks by id: an LRU table (``get`` and ``pop`` are
    the dict's, in C; :meth:`keep` adds or refreshes one and drops the oldest beyond ``size``).
    What the task manager remembers of its own writes, and what the SQL stores remember of their
    reads (docs/storage.md)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def keep(self, stored: StoredTask) -> None:
        task_id = stored.task.id
        self[task_id] = stored
        self.move_to_end(task_id)
        if len(self) > self.size:
            self.popitem(last=False)


class TaskStore(abc.ABC):
    #: True when :meth:`update` takes the ``change`` hint (stores written before it existed
    #: leave it False and are called without it).
    accepts_change: ClassVar[bool] = False
    #: True when the store encodes the tasks it keeps later on (the memory store, as it cools
    #: them) and takes the JSON a SendMessage answer was encoded to from
    #: ``protocol.encoded.TASKS`` instead: the server then remembers those bytes for it. Other
    #: stores leave it False, and the answer's bytes are not kept.
    takes_answer_json: ClassVar[bool] = False

    @abc.abstractmethod
    async def create(self, task: Task, *, owner: str | None = None) -> int:
        """Store a new task at version 1; raise :class:`TaskExistsError` if the id is taken."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> StoredTask | None: ...

    @abc.abstractmethod
    async def update(
        self, task: Task, *, expected_version: int, change: TaskChange | None = None
    ) -> int:
        """Replace the task if its stored version is ``expected_version``; return the new one.

        ``change`` (when :attr:`accepts_change`) says what differs from the stored task, so a
        durable backend can write only that (an artifact chunk rewrites one artifact, not the
        task); ``None`` means anything may have changed. The version guard is the same.
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

    async def count_for_owner(self, owner: str) -> int | None:
        """How many configs the tasks of ``owner`` have (``Limits.max_push_configs_per_caller``);
        None when this store cannot tell, and the per-caller cap is then not applied."""
        return None


PushCursorState = Literal["active", "suspended", "done"]


@dataclass(frozen=True)
class PushCursor:
    """Delivery progress of one webhook config of one task (a row of the push outbox).

    The outbox is *derived*: the :class:`EventLog` already holds every event in order, so the
    pending notifications of a config are the events with ``seq > delivered_seq``.

    - ``delivered_seq`` is the last seq acknowledged (2xx) by the webhook. ``None`` means nothing
      was delivered yet: the dispatcher starts with a Task snapshot, then follows the log.
    - ``state``: ``active`` (work may be pending), ``suspended`` (the webhook kept failing;
      nothing is sent until resumed or the config is re-created), ``done`` (the task's final
      event was delivered).
    - ``failures`` counts consecutive failed attempts; ``last_error`` is the newest reason.
    """

    task_id: str
    config_id: str
    delivered_seq: int | None = None
    state: PushCursorState = "active"
    failures: int = 0
    last_error: str | None = None
    updated_at: datetime | None = None


class PushCursorStore(abc.ABC):
    """The push outbox contract: one :class:`PushCursor` per (task id, config id).

    Backends store the dataclass as given (all fields round-trip, ``updated_at`` at ms precision
    at least). On start the dispatcher calls :meth:`pending` and resumes every active cursor
    from ``delivered_seq``; delivery is at least once (a crash between the POST and :meth:`put`
    repeats one notification). With several processes on one storage, each cursor is delivered
    by the holder of its ``push`` lease (:class:`LeaseStore`).

    Cursors are rows of their own: deleting a push config (:class:`PushConfigStore`) or a task
    does not delete them in the store. Their owners do: the dispatcher deletes a config's cursor
    when the config is deleted (and drops a cursor whose config it finds gone), the retention
    sweep deletes the cursors of the tasks it sweeps.
    """

    @abc.abstractmethod
    async def get(self, task_id: str, config_id: str) -> PushCursor | None: ...

    @abc.abstractmethod
    async def put(self, cursor: PushCursor) -> None:
        """Insert or replace the cursor ``(cursor.task_id, cursor.config_id)``."""

    @abc.abstractmethod
    async def list(self, task_id: str) -> builtins.list[PushCursor]:
        """The cursors of one task, any state."""

    @abc.abstractmethod
    async def pending(self) -> builtins.list[PushCursor]:
        """Every cursor in state ``active``, of every task (used on restart)."""

    @abc.abstractmethod
    async def delete(self, task_id: str, config_id: str) -> bool: ...


LeaseKind = Literal["task", "push"]


@dataclass(frozen=True)
class Lease:
    """Time-limited ownership of one thing (a task's execution, a push cursor) by one replica.

    ``kind`` names the namespace (``task``: the key is a task id; ``push``: ``task_id/config``),
    ``owner`` the replica holding it, ``expires_at`` when it lapses unless renewed (UTC).
    """

    kind: LeaseKind
    key: str
    owner: str
    expires_at: datetime


class LeaseStore(abc.ABC):
    """Who runs what, when several processes share one storage (``docs/storage.md``, Leases).

    A lease is held by one owner (a replica id) until it expires; the holder renews it by a
    heartbeat. Every operation is atomic across every process sharing the storage: of any
    number of concurrent :meth:`acquire` calls on a free or expired lease exactly one wins.
    Expiry is judged by one clock per store (PostgreSQL: the database's; SQLite: the host's;
    memory: the process's), so replicas' clocks need not agree.
    """

    @abc.abstractmethod
    async def acquire(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        """Take the lease for ``ttl`` seconds if it is free, expired (stealing it from its dead
        holder) or already ``owner``'s (renewing it); False if another owner holds it."""

    async def take_over(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        """:meth:`acquire` for a recovery scan taking a task from a replica that stopped
        renewing its lease — which may be alive and writing still (a partition, a long pause).
        This is the *fence* (docs/cluster.md, Fencing): a ``task`` lease taken over also moves
        the task's version on, in the same transaction, so that every write the old holder
        sent before or after (each carries the version it read) is refused by the version
        guard. False, and an expired lease of it dropped, when the task is not active any more
        (ended, waiting for input, or gone): there is nothing to run, and a finished task's
        version stays where it is. This default is :meth:`acquire` alone: right for stores one
        process uses."""
        return await self.acquire(kind, key, owner, ttl)

    @abc.abstractmethod
    async def renew(
        self, kind: LeaseKind, keys: builtins.list[str], owner: str, ttl: float
    ) -> builtins.list[str]:
        """Extend ``owner``'s leases among ``keys`` to ``ttl`` seconds from now (also one that
        expired but was not taken yet); returns the keys renewed — the others were lost."""

    @abc.abstractmethod
    async def release(self, kind: LeaseKind, key: str, owner: str) -> bool:
        """Give the lease up; False (and nothing changed) unless ``owner`` holds it."""

    @abc.abstractmethod
    async def get(self, kind: LeaseKind, key: str) -> Lease | None:
        """The lease as stored (expired or not), None when nobody holds it."""

    @abc.abstractmethod
    async def expired(self, kind: LeaseKind, limit: int = 100) -> builtins.list[Lease]:
        """Leases of ``kind`` past their expiry, oldest first (what a recovery scan takes over)."""

    @abc.abstractmethod
    async def unleased(self, older_than: float, limit: int = 100) -> builtins.list[str]:
        """Tasks ``submitted``/``working`` with no ``task`` lease whose status is older than
        ``older_than`` seconds, oldest first: left by a process that died before it took a
        lease (a process leases a task only once it has run a moment), or by a version without
        leases. Status timestamps are the writers' clocks; ``older_than`` absorbs their skew."""

    @abc.abstractmethod
    async def ended(self, owner: str) -> builtins.list[str]:
        """The tasks whose ``task`` lease ``owner`` holds but which are in a terminal state
        (ended by another process: a cancel served by another replica). One query."""

    async def announce_ended(self, task_id: str) -> None:  # noqa: B027 (optional hook)
        """Tell every process sharing this store, at once, that ``task_id`` was ended by this
        one although another may run it (a CancelTask served by a replica that does not run
        the task): its executor is then signalled within milliseconds instead of at the next
        poll of :meth:`ended`. Best effort; this default does nothing (the poll does it)."""

    async def listen_ended(self, callback: Callable[[str], None]) -> Listening | None:
        """Call ``callback(task_id)`` for each :meth:`announce_ended` of any process, until the
        returned handle is closed or stops being ``alive`` (a lost connection: listen again).
        None: this store has no such signal, and polling :meth:`ended` is all there is."""
        return None


class Listening(Protocol):
    """A subscription a store holds open (:meth:`LeaseStore.listen_ended`)."""

    @property
    def alive(self) -> bool: ...

    async def close(self) -> None: ...


class Storage(abc.ABC):
    """The bundle a server runs on: tasks, events and push configs of one agent."""

    tasks: TaskStore
    events: EventLog
    push_configs: PushConfigStore
    #: The push outbox; ``None`` (backends that predate it) means the dispatcher keeps delivery
    #: progress in memory, so pending notifications do not survive a restart.
    push_cursors: PushCursorStore | None = None
    #: Leases on tasks and push cursors (``None``: a backend without them; the server then
    #: assumes it is alone). The memory store's are in-process: one process only.
    leases: LeaseStore | None = None
    #: Agent frameworks' per-conversation state (``_conversations``; ``None``: a backend
    #: without it, and adapters then keep conversations in this process's memory only).
    conversations: ConversationStore | None = None
    #: Tasks accepted by a web replica, waiting for a worker (``_queue``; ``None``: a backend
    #: without it, which serves role ``all`` only; docs/cluster.md)
    queue: WorkQueue | None = None

    async def open(self) -> None:  # noqa: B027 (optional hook)
        """Connect, create or migrate the schema. Idempotent."""

    async def record(
        self,
        task: Task,
        event: StreamResponse,
        *,
        expected_version: int | None,
        change: TaskChange | None = None,
        owner: str | None = None,
    ) -> tuple[int, int]:
        """Store ``task`` and append ``event`` to its log; returns ``(version, seq)``.

        ``expected_version`` None creates the task (``TaskStore.create``), otherwise it is
        ``TaskStore.update``'s version guard. This default makes the two calls; a backend that
        can do both in one transaction overrides it (one round trip, and a snapshot is never
        stored without its event). Errors are those of ``create``/``update``/``append``.
        """
        if expected_version is None:
            version = await self.tasks.create(task, owner=owner)
        elif self.tasks.accepts_change:
            version = await self.tasks.update(
                task, expected_version=expected_version, change=change
            )
        else:
            version = await self.tasks.update(task, expected_version=expected_version)
        return version, await self.events.append(task.id, event)

    #: :meth:`record_steps` writes all its steps or none of them. The task manager hands a
    #: backend several events at once (an executor's artifacts and its final status) only then.
    atomic_steps: ClassVar[bool] = False

    async def record_steps(
        self, steps: Sequence[RecordStep], *, expected_version: int
    ) -> builtins.list[int]:
        """Store consecutive events of one existing task, each with the snapshot it leads to
        (versions ``expected_version + 1``, ``+ 2``, ...); returns the events' seqs.

        ``expected_version`` guards the first step, as in :meth:`record`. This default makes
        one :meth:`record` per step, which is atomic only for a backend that never suspends in
        between (the memory store); one that writes them in one transaction overrides it and
        sets :attr:`atomic_steps`.
        """
        seqs = []
        version = expected_version
        for step in steps:
            version, seq = await self.record(
                step.task, step.event, expected_version=version, change=step.change
            )
            seqs.append(seq)
        return seqs

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections. Idempotent."""
