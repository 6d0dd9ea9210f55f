"""Streams that survive a dropped connection, and folding a stream into the final task.

A stream (SendStreamingMessage or SubscribeToTask) ends normally when its task reaches a
terminal or interrupted state, or after a single direct ``Message``. If the connection drops
earlier, :func:`resilient_stream` resubscribes with SubscribeToTask, sending the last SSE
``id:`` it saw as ``Last-Event-ID`` (servers number each task's events), and skips any event
whose id it has already yielded: the caller sees every event exactly once. Attempts and backoff
are bounded by a :class:`ReconnectPolicy`; ``ReconnectPolicy(max_attempts=0)`` turns it off.

Folding (:class:`TaskAccumulator`, :func:`fold`, :func:`afold`) is lenient: it applies what the
agent sent without enforcing the state machine, since the agent is the authority on its task.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from simple_a2a.protocol.errors import A2AError
from simple_a2a.protocol.logcontext import library_logger
from simple_a2a.protocol.models import (
    FINAL_STATES,
    INTERRUPTED_STATES,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.reducer import apply_artifact, apply_message, apply_status
from simple_a2a.protocol.requests import StreamEvent, StreamResponse

from .answers import invalid
from .errors import ClientTimeoutError, ConnectError, StreamInterruptedError, TransportError
from .limits import ClientLimits, SeenWindow
from .transport import SSEEvent

__all__ = ["ReconnectPolicy", "RetryPolicy", "TaskAccumulator", "afold", "fold"]

log = library_logger("simple_a2a.client")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of unary calls, only where safe.

    A request that never reached the agent (connection refused, connect timeout) or that it
    refused as over a limit (:class:`~simple_a2a.RateLimitError`, waiting at least the
    ``retry_after`` it gave, up to ``max_backoff``) is retried for every operation; a read
    timeout or a dropped connection only for idempotent reads (GetTask, ListTasks, the
    push-config reads and deletes, the extended card, the card).
    ``RetryPolicy(max_attempts=1)`` turns retries off.
    """

    max_attempts: int = 3
    backoff: float = 0.2  #: seconds before the first retry; doubles each time
    max_backoff: float = 2.0

    def delay(self, attempt: int) -> float:
        """The pause after failed attempt number ``attempt`` (1-based)."""
        return float(min(self.max_backoff, self.backoff * (2 ** (attempt - 1))))


@dataclass(frozen=True)
class ReconnectPolicy:
    """Resuming a stream that dropped before its task reached a final state.

    ``max_attempts`` consecutive failed reconnections are allowed (the count resets whenever an
    event arrives); ``0`` disables reconnection.
    """

    max_attempts: int = 5
    backoff: float = 0.1
    max_backoff: float = 2.0

    def delay(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * (2 ** (attempt - 1))))


def _task_id_and_state(event: StreamEvent) -> tuple[str | None, TaskState | None]:
    """The event's task and the state it reports (None: no state; a Message is final)."""
    if isinstance(event, Task):
        return event.id, event.status.state
    if isinstance(event, TaskStatusUpdateEvent):
        return event.task_id, event.status.state
    return event.task_id, None


async def resilient_stream(
    open_stream: Callable[[], Awaitable[AsyncIterator[SSEEvent]]],
    resubscribe: Callable[[str, str | None], Awaitable[AsyncIterator[SSEEvent]]],
    policy: ReconnectPolicy,
    *,
    task_id: str | None = None,
    until: frozenset[TaskState] = FINAL_STATES,
    limits: ClientLimits | None = None,
    get_task: Callable[[str], Awaitable[Task]] | None = None,
) -> AsyncIterator[StreamEvent]:
    """Yield the events of ``await open_stream()``, resuming through
    ``await resubscribe(task_id, last_id)``.

    ``task_id`` is known up front for SubscribeToTask, and learned from the first event of
    SendStreamingMessage (a stream that drops before any event cannot be resumed). The stream
    ends at a state in ``until``: terminal or interrupted for SendStreamingMessage (spec
    §3.1.2), terminal for a subscription (§3.1.6) — which also ends without complaint when a
    server closes it cleanly at an interrupted state (0.3 servers and older ones do).

    This is the only async generator between the caller and the connection: the sources are
    closed here, in ``finally``, whether the caller finished, broke out, raised or was
    cancelled (see :class:`~simple_a2a.client.transport.SSEStream` for why only one).

    An event of another task than the stream's is refused; ``limits.stream_deadline`` bounds
    the whole stream (reconnections included) and ``limits.seen_event_ids`` the ids kept.

    The task may end unsaid: a server closes the stream short of the end (the SDK 0.3.26's
    resubscribe, docs/interop.md F3), or refuses the resubscription before its first event
    because the task is terminal (§3.1.6: UnsupportedOperationError; the SDK 0.3.26: invalid
    params over JSON-RPC, a connection dropped mid-body over HTTP+JSON). Then, when
    ``get_task`` shows the task at a state in ``until``, the stream ends with that task
    instead of reconnecting or raising.
    """
    limits = limits or ClientLimits()
    loop = asyncio.get_running_loop()
    deadline = limits.stream_deadline
    ends = None if deadline is None else loop.time() + deadline

    async def next_of(source: AsyncIterator[SSEEvent]) -> SSEEvent:
        if ends is None:
            return await source.__anext__()
        return await asyncio.wait_for(source.__anext__(), ends - loop.time())

    seen = SeenWindow(limits.seen_event_ids)
    last_id: str | None = None
    last_state: TaskState | None = None
    seen_task = False  # a Message after a task event is history (a follow-up), not an answer
    failures = 0
    resumed = False  # the source is a resubscription that has sent nothing yet
    source = await open_stream()
    while True:
        cause: Exception | None = None
        reason = "the server closed the stream before the task reached a final state"
        ended_with: Task | None = None
        try:
            while True:
                try:
                    sse = await next_of(source)
                except StopAsyncIteration:
                    break
                resumed = False
                if sse.fresh_id:
                    if sse.id in seen:
                        continue
                    seen.add(sse.id)
                    last_id = sse.id
                try:
                    event = StreamResponse.from_dict(sse.data).payload
                except A2AError as exc:
                    raise invalid(f"an event is not a StreamResponse: {exc.message}") from None
                except RecursionError:
                    raise invalid("an event is nested too deeply") from None
                failures = 0
                event_task, state = _task_id_and_state(event)
                if task_id is not None and event_task is not None and event_task != task_id:
                    raise invalid(f"the stream of task {task_id} sent an event of {event_task}")
                task_id = task_id or event_task
                last_state = state or last_state
                yield event
                if isinstance(event, Message) and not seen_task:
                    return  # the one Message of a message-only stream
                seen_task = True
                if state in until:
                    return
            if last_state in INTERRUPTED_STATES:
                return  # closed cleanly while the task waits for input: that server's rule
            if get_task is not None and task_id is not None:
                ended_with = await _ended(get_task, task_id, until)
        except asyncio.TimeoutError:
            raise ClientTimeoutError(
                f"the stream did not end within its deadline of {deadline}s "
                "(ClientLimits.stream_deadline)"
            ) from None
        except TransportError as exc:
            cause, reason = exc, str(exc)
            if resumed and not isinstance(exc, ConnectError) and get_task and task_id:
                # reached, then dropped before its first event (the SDK 0.3.26's HTTP+JSON
                # answer to a terminal task): the task may have ended
                ended_with = await _ended(get_task, task_id, until)
        except A2AError:
            if not resumed or get_task is None or task_id is None:
                raise
            ended_with = await _ended(get_task, task_id, until)
            if ended_with is None:
                raise
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()
        if ended_with is not None:
            log.info("stream of task %s ended unsaid; GetTask gave its end", task_id)
            yield ended_with
            return
        failures += 1
        if task_id is None or failures > policy.max_attempts:
            if cause is None and task_id is None:
                return  # nothing to resume (for example an empty stream)
            raise StreamInterruptedError(
                f"stream of task {task_id} interrupted: {reason}"
                + (f" (gave up after {failures - 1} reconnections)" if task_id else "")
            ) from cause
        delay = policy.delay(failures)
        log.info("stream of task %s dropped (%s); resubscribing in %.2fs", task_id, reason, delay)
        if ends is not None and loop.time() + delay >= ends:
            raise ClientTimeoutError(
                f"the stream of task {task_id} did not end within its deadline of {deadline}s "
                f"(ClientLimits.stream_deadline): {reason}"
            ) from cause
        await asyncio.sleep(delay)
        source = await resubscribe(task_id, last_id)
        resumed = True


async def _ended(
    get_task: Callable[[str], Awaitable[Task]], task_id: str, until: frozenset[TaskState]
) -> Task | None:
    """The task when GetTask shows it at a state in ``until``; else ``None``, also when GetTask
    fails (the stream's own error is the one to report)."""
    try:
        task = await get_task(task_id)
    except (A2AError, TransportError):
        return None
    return task if task.status.state in until else None


class TaskAccumulator:
    """Builds the task from its stream, one event at a time (``apply``), leniently.

    ``result`` is the task so far, or the ``Message`` of a message-only stream.
    """

    def __init__(self, task: Task | None = None) -> None:
        self.task: Task | None = task
        self.message: Message | None = None

    @property
    def result(self) -> Task | Message | None:
        return self.task if self.task is not None else self.message

    def apply(self, event: StreamEvent | StreamResponse) -> Task | Message | None:
        """Fold one event in, with the same reducer the server uses (so a folded stream equals
        what GetTask returns), minus the state-machine checks: a client takes what it gets."""
        if isinstance(event, StreamResponse):
            event = event.payload
        if isinstance(event, Task):
            self.task = event
        elif isinstance(event, Message):
            if self.task is None:
                self.message = event
            else:
                self.task = apply_message(self.task, event)
        elif isinstance(event, TaskStatusUpdateEvent):
            task = self.task or Task(
                id=event.task_id, context_id=event.context_id, status=event.status
            )
            self.task = apply_status(task, event.status, check=False)
        elif isinstance(event, TaskArtifactUpdateEvent) and self.task is not None:
            self.task = apply_artifact(self.task, event, check=False)
        return self.result


def fold(events: Iterable[StreamEvent | StreamResponse]) -> Task | Message | None:
    """The final task (or direct message) of a whole stream."""
    acc = TaskAccumulator()
    for event in events:
        acc.apply(event)
    return acc.result


async def afold(events: AsyncIterator[Any]) -> Task | Message | None:
    """The final task (or direct message) of a whole async stream."""
    acc = TaskAccumulator()
    async for event in events:
        acc.apply(event)
    return acc.result
