"""What an executor sees and does: :class:`RequestContext` and the lifecycle verbs.

Every verb works from ``async def execute`` (``await ctx.complete(...)``) and from a plain
``def execute`` running in a worker thread (``ctx.complete(...)`` blocks until recorded): the
verbs hop onto the server's event loop when called from another thread.

The task is stored before the executor runs (a storage that cannot write refuses the message
before any agent code runs). An executor that answers with :meth:`RequestContext.reply` before
touching the task gets a direct ``Message`` response, and the task is discarded (spec §3.1.1:
a direct reply belongs to no task).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..auth.caller import Caller as Caller
from ..protocol._base import trusted
from ..protocol.models import (
    Artifact,
    Message,
    Part,
    PartLike,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
    to_parts,
    trusted_status,
)
from ..protocol.requests import StreamResponse
from ..protocol.states import TaskAnsweredError, TaskStateError, TaskTerminalError
from .tasks import StreamItem

if TYPE_CHECKING:
    from .tasks import TaskManager

ArtifactLike = str | Part | Artifact | dict[str, Any]
MessageLike = str | Message | Part | list[PartLike]
M = TypeVar("M")


@dataclass
class CallContext:
    """Binding-independent facts about one request (filled in by the binding)."""

    caller: Caller | None = None
    tenant: str | None = None
    extensions: list[str] = field(default_factory=list)
    version: str = "1.0"
    headers: dict[str, str] = field(default_factory=dict)
    activated_extensions: list[str] = field(default_factory=list)
    #: SubscribeToTask: resume after this event (the SSE ``Last-Event-ID`` header).
    last_event_id: int | None = None
    #: the binding that received the request: JSONRPC, HTTP+JSON or GRPC
    binding: str = ""

    @property
    def owner(self) -> str | None:
        return self.caller.task_owner if self.caller else None


class TaskLostError(TaskStateError):
    """The handle was fenced (:meth:`TaskHandle.fence`): another replica runs the task now, and
    this handle writes nothing more."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} is run by another replica now; this handle is fenced")


class _Done:
    """An already-finished awaitable: what a verb returns when called from a worker thread."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


_DONE = _Done()


class _LazyEvent:
    """``asyncio.Event``'s ``set``/``clear``/``is_set``/``wait``, with no Event: a waiter waits on
    a future of its own, in a list made by the first waiter and dropped when set. Most are never
    waited for, and an ``asyncio.Event`` is two Python calls to build and keeps an empty deque
    (760 bytes) for its life, on every open stream (tracemalloc at 500 streams, issue #36); a
    blocking send waits once, and building an Event then cost more than its future (its wait
    and set are two more Python frames, and a loop check). Dropping the list on ``set`` is
    safe: ``set`` resolves the waiters' futures at once, and the next waiter makes a new one.
    A waiter cancelled takes its future out (one cancellation never reaches another waiter)."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] | None = None
        self._set = False

    def set(self) -> None:
        self._set = True
        waiters, self._waiters = self._waiters, None
        if waiters is not None:
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if self._set:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if waiters is None:
            self._waiters = [waiter]
        else:
            waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter.cancelled() and self._waiters is not None:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)


class CancelSignal(_LazyEvent):
    """Set when the client cancels the task. ``await ctx.cancelled.wait()`` or poll ``bool()``."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return self._set

    def __await__(self) -> Generator[Any, Any, Any]:
        return self.wait().__await__()


def _as_message(content: MessageLike | None, task: Task) -> Message | None:
    if content is None:
        return None
    if isinstance(content, Message):
        update: dict[str, Any] = {}
        if content.task_id is None:
            update["task_id"] = task.id
        if content.context_id is None:
            update["context_id"] = task.context_id
        return content.model_copy(update=update) if update else content
    return Message.agent(content, task_id=task.id, context_id=task.context_id)


def _as_artifacts(items: ArtifactLike | Iterable[ArtifactLike] | None) -> list[Artifact]:
    if items is None:
        return []
    if type(items) is Artifact:  # (every streamed chunk: no isinstance through the ABC check)
        return [items]
    if isinstance(items, (str, Part, Artifact, dict)):
        items = [items]
    out: list[Artifact] = []
    loose: list[Part] = []
    for item in items:
        if isinstance(item, Artifact):
            out.append(item)
        elif isinstance(item, dict):
            out.append(Artifact.from_dict(item))
        else:
            loose.extend(to_parts(item))
    if loose:  # validated parts and our own id: nothing to check
        out.insert(0, trusted(Artifact, artifact_id=new_id(), parts=loose))
    return out


def _validated(cls: type[M], /, **fields: Any) -> M:
    return cls(**fields)


def _build(task: Task) -> Callable[..., Any]:
    """How to build an event of ``task``: without validation (:func:`trusted`) when every value
    is ours or already validated; validated (and refused) when the task has no context id, which
    an event requires (a task put into storage by hand)."""
    return trusted if task.id and task.context_id else _validated


class TaskHandle:
    """The lifecycle verbs of one task. A :class:`RequestContext` is one; ``ctx.detach()`` gives
    one that stays usable after ``execute`` returns (long-running background work)."""

    def __init__(self, manager: TaskManager, task: Task, owner: str | None, *, committed: bool):
        self._manager = manager
        self._task = task  # stored already: the handler stores a task before its executor runs
        self._owner = owner
        # Whether the task is the answer: once anything was recorded through the handle (or the
        # handler decided so), a reply completes the task instead of replacing it.
        self._committed = committed
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.reply_message: Message | None = None
        self.changed = _LazyEvent()  # set on each recorded change (the handler waits on it)
        self._fenced = False  # see fence()

    # -- reading --
    @property
    def task(self) -> Task:
        """The task as this handle last recorded it: a snapshot to read. Change the task through
        the handle's verbs, never in place: stores keep this very object, and answers may reuse
        its encoded form."""
        return self._task

    @property
    def task_id(self) -> str:
        return self._task.id

    @property
    def context_id(self) -> str:
        return self._task.context_id or ""

    @property
    def state(self) -> TaskState:
        return self._task.status.state

    @property
    def committed(self) -> bool:
        """The task is the answer (not a direct reply): something was recorded on it."""
        return self._committed

    def commit(self) -> None:
        """Make the task the answer (a later :meth:`reply` completes it)."""
        if not self._committed:
            self._committed = True
            self.changed.set()

    # -- the verbs --
    def start(self, message: MessageLike | None = None) -> Awaitable[None]:
        """Move to ``working``."""
        return self._call(self._set_state(TaskState.WORKING, message))

    def complete(
        self,
        artifacts: ArtifactLike | Iterable[ArtifactLike] | None = None,
        *,
        message: MessageLike | None = None,
    ) -> Awaitable[None]:
        """Add the given artifacts (a string becomes a text artifact) and move to ``completed``."""
        return self._call(self._finish(TaskState.COMPLETED, _as_artifacts(artifacts), message))

    def fail(self, message: MessageLike | None = None) -> Awaitable[None]:
        return self._call(self._set_state(TaskState.FAILED, message))

    def cancel(self, message: MessageLike | None = None) -> Awaitable[None]:
        return self._call(self._set_state(TaskState.CANCELED, message))

    def reject(self, message: MessageLike | None = None) -> Awaitable[None]:
        return self._call(self._set_state(TaskState.REJECTED, message))

    def require_input(self, message: MessageLike | None = None) -> Awaitable[None]:
        return self._call(self._set_state(TaskState.INPUT_REQUIRED, message))

    def require_auth(self, message: MessageLike | None = None) -> Awaitable[None]:
        return self._call(self._set_state(TaskState.AUTH_REQUIRED, message))

    def emit_status(
        self, message: MessageLike | None = None, *, state: TaskState | None = None
    ) -> Awaitable[None]:
        """Publish a status update (default: ``working`` with a progress message)."""
        return self._call(self._published(self._status_event(state or TaskState.WORKING, message)))

    def emit_artifact(
        self,
        artifact: ArtifactLike,
        *,
        append: bool = False,
        last_chunk: bool = False,
    ) -> Awaitable[None]:
        """Publish an artifact (or a chunk of one: ``append=True`` extends the artifact with the
        same id). Emitted artifacts are recorded on the task."""
        event = self._artifact_event(_as_artifacts(artifact)[0], append, last_chunk)
        return self._call(self._published(event))

    def reply(self, content: MessageLike) -> Awaitable[None]:
        """Answer with a direct message. Before the task exists this is the whole response (no
        task is stored); afterwards it completes the task with this message."""
        return self._call(self._reply(content))

    # -- machinery --
    def _call(self, coro: Coroutine[Any, Any, None]) -> Awaitable[None]:
        if threading.get_ident() == self._loop_thread:
            return coro
        asyncio.run_coroutine_threadsafe(coro, self._loop).result()
        return _DONE

    async def _published(self, event: StreamResponse) -> None:
        """Record, then let the event loop run at most once a millisecond: an executor that
        emits in a tight loop still lets its streams send the first event at once (time to
        first event) and the next ones in batches (events per second).

        The millisecond is counted from the last such yield of any handle of this manager (one
        loop), not of this handle: with many streams, each emitting now and then, a yield per
        handle was a yield per event (one more task step per chunk, ~4 % of a streamed chunk's
        CPU at 500 streams, bench/streams.py); a tight loop still yields within a millisecond.
        """
        await self.record(event)
        manager = self._manager
        now = self._loop.time()
        if now - manager.yielded_at >= 0.001:
            manager.yielded_at = now
            await asyncio.sleep(0)

    @property
    def fenced(self) -> bool:
        return self._fenced

    def fence(self) -> None:
        """Another replica runs the task now (its lease was lost): every verb of this handle
        refuses locally with :class:`TaskLostError`, without writing."""
        self._fenced = True
        self.changed.set()

    async def record(self, *events: StreamResponse) -> None:
        """Record events of this task in order: all of them or none (the state machine
        checks each before anything is written; see ``TaskManager.record_all``)."""
        if self._fenced:
            raise TaskLostError(self._task.id)
        if self.reply_message is not None and not self._committed:
            raise TaskAnsweredError()  # a direct reply was the answer: the task is gone
        self._committed = True
        try:
            self._task, _seq = await self._manager.record_all(self._task.id, events)
        except TaskTerminalError:
            # Someone else ended the task (e.g. a CancelTask served by another replica):
            # learn its real state, so the executor sees it and stops cleanly.
            stored = await self._manager.get(self._task.id)
            if stored is not None:
                self.observe(stored.task)
            raise
        self.changed.set()

    def observe(self, task: Task) -> None:
        """Learn the task as another writer left it (a CancelTask, another replica)."""
        self._task = task
        if task.is_terminal:
            self._ended_elsewhere()
        self.changed.set()

    def _ended_elsewhere(self) -> None:
        """Hook: the task reached a terminal state outside this handle."""

    async def _set_state(self, state: TaskState, message: MessageLike | None) -> None:
        await self.record(self._status_event(state, message))

    def _status_event(self, state: TaskState, message: MessageLike | None) -> StreamResponse:
        status = trusted_status(state, _as_message(message, self._task))
        return self._event("status_update", TaskStatusUpdateEvent, status=status)

    def _artifact_event(self, artifact: Artifact, append: bool, last_chunk: bool) -> StreamResponse:
        return self._event(
            "artifact_update",
            TaskArtifactUpdateEvent,
            artifact=artifact,
            append=append or None,
            last_chunk=last_chunk or None,
        )

    def _event(self, kind: str, payload: type[Any], **fields: Any) -> StreamResponse:
        """A StreamResponse of this task carrying ``kind`` (a status or an artifact update)."""
        task = self._task
        build = _build(task)
        update = build(payload, task_id=task.id, context_id=task.context_id or "", **fields)
        event: StreamResponse = build(StreamResponse, **{kind: update})
        return event

    async def _finish(
        self, state: TaskState, artifacts: list[Artifact], message: MessageLike | None
    ) -> None:
        # No pre-check: the state machine (protocol/states.py) refuses, through the record.
        # The artifacts and the status in one write (one transaction on SQLite/PostgreSQL).
        await self.record(
            *(self._artifact_event(artifact, False, False) for artifact in artifacts),
            self._status_event(state, message),
        )

    async def _reply(self, content: MessageLike) -> None:
        if not self._committed and self.reply_message is None:
            msg = _as_message(content, self._task)
            assert msg is not None
            # A direct reply belongs to no task (spec §3.1.1): only the context is kept, and
            # the task stored for this message is discarded before anyone learns its id.
            await self._manager.discard(self._task.id)
            self.reply_message = msg.model_copy(update={"task_id": None})
            self.changed.set()
            return
        await self._set_state(TaskState.COMPLETED, content)


class RequestContext(TaskHandle):
    """Everything an executor needs for one incoming message (PRODUCT.md §2)."""

    def __init__(
        self,
        manager: TaskManager,
        task: Task,
        *,
        message: Message,
        call: CallContext,
        metadata: dict[str, Any] | None,
        committed: bool = False,
    ) -> None:
        super().__init__(manager, task, call.owner, committed=committed)
        self.message = message
        self.call = call
        self.metadata = metadata or {}
        self.cancelled = CancelSignal()
        self.detached = False
        #: True when the task was handed back after its replica died (a ``Rerun`` recovery
        #: policy, or ``resumable``): ``attempt`` is 2 or more then.
        self.resumed = False
        #: Which execution of this message this is: 1 for the first run, 2 for the first rerun
        #: after its replica died (docs/cluster.md "Recovery policy").
        self.attempt = 1

    @property
    def text(self) -> str:
        """The incoming message's text parts, joined."""
        return self.message.text

    @property
    def history(self) -> list[Message]:
        return self._task.history

    @property
    def caller(self) -> Caller | None:
        return self.call.caller

    @property
    def tenant(self) -> str | None:
        return self.call.tenant

    @property
    def requested_extensions(self) -> list[str]:
        return self.call.extensions

    @property
    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()

    def _ended_elsewhere(self) -> None:
        if self._task.status.state is TaskState.CANCELED:
            self.cancelled.set()

    # -- conversation state (the adapters' memory of a contextId; storage/_conversations.py) --
    async def load_state(self, key: str) -> bytes | None:
        """What :meth:`save_state` stored under ``key`` for this task's conversation (its
        ``contextId``) and caller, in the server's storage (so it survives restarts and is shared
        by replicas); None at a conversation's first turn."""
        return await self._manager.conversations.load(self.context_id, key, owner=self._owner)

    async def save_state(self, key: str, value: bytes) -> None:
        """Keep ``value`` for this conversation's next turn (last writer wins; at most
        ``ConversationStore.max_state_bytes``, 8 MiB by default, else ValueError)."""
        if self._fenced:
            raise TaskLostError(self.task_id)
        await self._manager.conversations.save(self.context_id, key, value, owner=self._owner)

    def detach(self) -> TaskHandle:
        """Keep the task open after ``execute`` returns; update it later through the handle.

        A blocking SendMessage still waits until the task is terminal or interrupted (spec
        §3.2.2), and a follow-up message to the task while it works starts an execution whose
        ``ctx`` is already detached (see docs/guides/executors.md).
        """
        self.detached = True
        self.commit()
        return self


class NewTaskStream:
    """The stream of a new task's execution (SendStreamingMessage): a direct reply, or, once
    the executor recorded something, the task's log from its first event (the Task).

    An async iterator rather than an async generator re-yielding ``TaskManager.follow``'s items:
    once the log is followed, ``__anext__`` hands on follow's own, so a streamed chunk crosses
    one generator fewer (a frame resumed and suspended per chunk, issue #36)."""

    __slots__ = ("_ctx", "_manager", "_next")

    def __init__(self, ctx: RequestContext, manager: TaskManager) -> None:
        self._ctx = ctx
        self._manager = manager
        self._next: Callable[[], Awaitable[StreamItem]] = self._start

    def __aiter__(self) -> NewTaskStream:
        return self

    def __anext__(self) -> Awaitable[StreamItem]:
        return self._next()

    async def _start(self) -> StreamItem:
        ctx = self._ctx
        while not ctx.committed and ctx.reply_message is None:
            ctx.changed.clear()
            if ctx.committed or ctx.reply_message is not None:
                break
            await ctx.changed.wait()
        if ctx.reply_message is not None and not ctx.committed:
            self._next = _ended
            return StreamItem(None, StreamResponse(message=ctx.reply_message))
        items: AsyncIterator[StreamItem] = self._manager.follow(ctx.task_id, 0)  # 1: the Task
        self._next = items.__anext__
        return await items.__anext__()


async def _ended() -> Any:
    raise StopAsyncIteration
