"""Server spans (``TELEMETRY.on`` only; docs/observability.md).

- ``a2a/<Operation>`` (SERVER): one per operation, child of the caller's span when the request
  carries a W3C ``traceparent`` (HTTP header or gRPC metadata). Attributes: ``rpc.*``,
  ``a2a.binding``, ``a2a.protocol.version``, ``a2a.task.id``, ``a2a.context.id``,
  ``a2a.task.state`` (the state the operation left the task in), ``a2a.error.code`` and
  ``error.type`` on failure. A streaming operation's span lasts as long as its stream.
- ``a2a.executor`` (INTERNAL): the executor's run, child of the operation that started it; the
  executor's own client calls to other agents are its children, so a chain is one trace.
- ``a2a.storage <store>.<method>`` (INTERNAL): each storage call made while a span is current.
- ``a2a.push <seq>`` (CLIENT): each push delivery attempt (its own trace: delivery runs in the
  background, after the request that caused it).

Each is called from the handler, executor runner, server or push dispatcher with one line.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import logcontext
from ..protocol.telemetry import ATTR, TELEMETRY, annotate, extract_context, record_error

if TYPE_CHECKING:
    from ..storage import Storage
    from .app import A2AServer
    from .context import CallContext, RequestContext

__all__ = [
    "bind_execution",
    "bind_request",
    "instrument_server",
    "instrument_storage",
    "lease_taken_over",
    "push_suspended",
    "traced_executor",
    "traced_operation",
    "traced_push",
]

#: the outcome attribute of request and push metrics: "ok" or the error's class name
OUTCOME = "a2a.outcome"


def bind_request(operation: str, request: Any, call: CallContext) -> Any:
    """Bind the request's log fields (operation, caller, task and context ids), worked out
    only if something is logged; returns the token for
    :func:`simple_a2a.protocol.logcontext.reset`."""
    return logcontext.bind_deferred(request_log_fields, operation, request, call)


def bind_execution(ctx: Any) -> Any:
    """Bind the log fields of an executor's run (task and context ids) in its own task."""
    return logcontext.bind_deferred(_execution_log_fields, ctx)


def _execution_log_fields(ctx: Any) -> dict[str, Any]:
    return {"task_id": ctx.task_id, "context_id": ctx.context_id}


def request_log_fields(operation: str, request: Any, call: CallContext) -> dict[str, Any]:
    """The log fields of a request: operation, caller, task and context ids."""
    # A model's fields live in its __dict__: reading them there costs no AttributeError for
    # the fields a request type does not have (pydantic's __getattr__ raises one).
    fields = getattr(request, "__dict__", _NONE)
    message = fields.get("message")
    sent = getattr(message, "__dict__", _NONE)
    task_id = sent.get("task_id") or fields.get("task_id")
    if task_id is None and operation in _BY_ID:
        task_id = fields.get("id")
    return {
        "operation": operation,
        "caller": call.caller.identity if call.caller is not None else None,
        "task_id": task_id,
        "context_id": sent.get("context_id"),
    }


_NONE: dict[str, Any] = {}

#: operations whose ``id`` field is a task id
_BY_ID = frozenset({"GetTask", "CancelTask", "SubscribeToTask"})


async def traced_operation(
    run: Callable[[], Awaitable[Any]], operation: str, request: Any, call: CallContext
) -> Any:
    """Run one operation inside its SERVER span (ended with the stream for streaming ones)."""
    trace, context = TELEMETRY.trace, TELEMETRY.context
    parent = extract_context(call.headers)
    attrs: dict[str, Any] = {
        ATTR.RPC_SYSTEM: "a2a",
        ATTR.RPC_SERVICE: "a2a",
        ATTR.RPC_METHOD: operation,
        ATTR.BINDING: call.binding,
        ATTR.VERSION: call.version,
    }
    if call.caller is not None:
        attrs[ATTR.CALLER] = call.caller.identity
    span = TELEMETRY.tracer.start_span(
        f"a2a/{operation}", context=parent, kind=trace.SpanKind.SERVER, attributes=attrs
    )
    annotate(span, request)
    message = getattr(request, "message", None)
    if message is not None:
        annotate(span, message)
    task_id = getattr(request, "id", None)
    if isinstance(task_id, str) and task_id:
        span.set_attribute(ATTR.TASK_ID, task_id)
    token = context.attach(trace.set_span_in_context(span, parent))
    done = _Done(operation, call.binding, time.perf_counter())
    try:
        result = await run()
    except BaseException as exc:
        record_error(span, exc)
        span.end()
        done(exc)
        raise
    finally:
        context.detach(token)
    if isinstance(result, AsyncIterator) and not hasattr(result, "model_dump"):
        return _traced_items(result, span, done)
    annotate(span, result)
    span.end()
    done(None)
    return result


class _Done:
    """Records an operation's metrics when it ends (streams: when the stream ends)."""

    __slots__ = ("attrs", "start")

    def __init__(self, operation: str, binding: str, start: float) -> None:
        self.attrs = {ATTR.RPC_METHOD: operation, ATTR.BINDING: binding}
        self.start = start

    def __call__(self, exc: BaseException | None) -> None:
        metrics = TELEMETRY.metrics
        if metrics is None:
            return
        outcome = "ok" if exc is None or isinstance(exc, GeneratorExit) else type(exc).__name__
        attrs = {**self.attrs, OUTCOME: outcome}
        metrics.duration.record(time.perf_counter() - self.start, attrs)
        metrics.requests.add(1, attrs)

    def stream(self, delta: int) -> None:
        if TELEMETRY.metrics is not None:
            TELEMETRY.metrics.streams.add(delta, {ATTR.RPC_METHOD: self.attrs[ATTR.RPC_METHOD]})


async def _traced_items(items: AsyncIterator[Any], span: Any, done: _Done) -> AsyncIterator[Any]:
    count = 0
    failure: BaseException | None = None
    done.stream(1)
    try:
        async for item in items:
            count += 1
            annotate(span, getattr(item, "event", item))
            yield item
    except BaseException as exc:
        failure = exc
        if not isinstance(exc, GeneratorExit):
            record_error(span, exc)
        raise
    finally:
        span.set_attribute(ATTR.STREAM_EVENTS, count)
        span.end()
        done.stream(-1)
        done(failure)


async def traced_executor(run: Callable[[], Awaitable[None]], ctx: RequestContext) -> None:
    """The executor's run in an INTERNAL span, current while it runs."""
    attrs = {ATTR.TASK_ID: ctx.task_id, ATTR.CONTEXT_ID: ctx.context_id}
    metrics = TELEMETRY.metrics
    if metrics is not None:
        metrics.executors.add(1)
    with TELEMETRY.tracer.start_as_current_span("a2a.executor", attributes=attrs) as span:
        try:
            await run()
        finally:
            span.set_attribute(ATTR.TASK_STATE, ctx.state.value)
            if metrics is not None:
                metrics.executors.add(-1)


async def traced_push(
    post: Callable[[], Awaitable[None]], task_id: str, config_id: str, seq: int, attempt: int
) -> None:
    """One push delivery attempt in a CLIENT span (a root span: delivery is background work)."""
    attrs = {
        ATTR.TASK_ID: task_id,
        ATTR.PUSH_CONFIG_ID: config_id,
        ATTR.PUSH_SEQ: seq,
        ATTR.PUSH_ATTEMPT: attempt,
    }
    kind = TELEMETRY.trace.SpanKind.CLIENT
    with TELEMETRY.tracer.start_as_current_span(
        "a2a.push", kind=kind, attributes=attrs, record_exception=False
    ) as span:
        outcome = "ok"
        try:
            await post()
        except BaseException as exc:
            outcome = (getattr(exc, "reason", None) and "failed") or type(exc).__name__
            record_error(span, exc)
            raise
        finally:
            metrics = TELEMETRY.metrics
            if metrics is not None:
                metrics.push_attempts.add(1, {OUTCOME: outcome})
                if attempt > 1:
                    metrics.push_retries.add(1)


def instrument_server(server: A2AServer) -> None:
    """What a server adds when telemetry is on at its creation: storage spans, the task-state
    hook and the push backlog gauge."""
    instrument_storage(server.storage)
    metrics = TELEMETRY.metrics
    if metrics is not None:
        server.handler.tasks.hooks.append(metrics.task_event)
        if server.push is not None:
            metrics.watch_push_backlog(server.push.dispatcher.backlog)
        if server.work is not None:
            metrics.watch_queue(server.work.reading)


def lease_taken_over(kind: str) -> None:
    if TELEMETRY.metrics is not None:
        TELEMETRY.metrics.lease_takeovers.add(1, {ATTR.LEASE_KIND: kind})


def push_suspended() -> None:
    if TELEMETRY.metrics is not None:
        TELEMETRY.metrics.push_suspended.add(1)


_IN_STORAGE: contextvars.ContextVar[bool] = contextvars.ContextVar("a2a_in_storage", default=False)
_STORES = ("tasks", "events", "push_configs", "push_cursors", "leases")


def instrument_storage(storage: Storage) -> None:
    """Wrap the storage's coroutine methods (on the instances) in INTERNAL spans, made only
    when a span is already current (a storage call of an operation, executor or delivery)."""
    targets: list[tuple[str, Any]] = [("storage", storage)]
    targets += [(name, getattr(storage, name, None)) for name in _STORES]
    for prefix, obj in targets:
        if obj is None or getattr(obj, "_a2a_traced", False):
            continue
        for name, _member in inspect.getmembers(type(obj), inspect.iscoroutinefunction):
            if not name.startswith("_") and name not in ("wait", "open", "close"):
                setattr(obj, name, _traced_method(getattr(obj, name), f"{prefix}.{name}"))
        obj._a2a_traced = True


def _traced_method(method: Callable[..., Awaitable[Any]], label: str) -> Any:
    @functools.wraps(method)
    async def traced(*args: Any, **kwargs: Any) -> Any:
        if (
            not TELEMETRY.on
            or _IN_STORAGE.get()  # one span per storage call, not per nested store call
            or not TELEMETRY.trace.get_current_span().is_recording()
        ):
            return await method(*args, **kwargs)
        token = _IN_STORAGE.set(True)
        try:
            with TELEMETRY.tracer.start_as_current_span(
                f"a2a.storage {label}", attributes={ATTR.STORAGE_OPERATION: label}
            ):
                return await method(*args, **kwargs)
        finally:
            _IN_STORAGE.reset(token)

    return traced
