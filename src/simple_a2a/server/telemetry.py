"""Server spans (``TRACING.on`` only; docs/observability.md).

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

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.telemetry import ATTR, TRACING, annotate, extract_context, record_error

if TYPE_CHECKING:
    from ..storage import Storage
    from .context import CallContext, RequestContext

__all__ = ["instrument_storage", "traced_executor", "traced_operation", "traced_push"]


async def traced_operation(
    run: Callable[[], Awaitable[Any]], operation: str, request: Any, call: CallContext
) -> Any:
    """Run one operation inside its SERVER span (ended with the stream for streaming ones)."""
    trace, context = TRACING.trace, TRACING.context
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
    span = TRACING.tracer.start_span(
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
    try:
        result = await run()
    except BaseException as exc:
        record_error(span, exc)
        span.end()
        raise
    finally:
        context.detach(token)
    if inspect.isasyncgen(result) or (
        isinstance(result, AsyncIterator) and not hasattr(result, "model_dump")
    ):
        return _traced_items(result, span)
    annotate(span, result)
    span.end()
    return result


async def _traced_items(items: AsyncIterator[Any], span: Any) -> AsyncIterator[Any]:
    count = 0
    try:
        async for item in items:
            count += 1
            annotate(span, getattr(item, "event", item))
            yield item
    except BaseException as exc:
        if not isinstance(exc, GeneratorExit):
            record_error(span, exc)
        raise
    finally:
        span.set_attribute(ATTR.STREAM_EVENTS, count)
        span.end()


async def traced_executor(run: Callable[[], Awaitable[None]], ctx: RequestContext) -> None:
    """The executor's run in an INTERNAL span, current while it runs."""
    attrs = {ATTR.TASK_ID: ctx.task_id, ATTR.CONTEXT_ID: ctx.context_id}
    with TRACING.tracer.start_as_current_span("a2a.executor", attributes=attrs) as span:
        try:
            await run()
        finally:
            span.set_attribute(ATTR.TASK_STATE, ctx.state.value)


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
    kind = TRACING.trace.SpanKind.CLIENT
    with TRACING.tracer.start_as_current_span(
        "a2a.push", kind=kind, attributes=attrs, record_exception=False
    ) as span:
        try:
            await post()
        except BaseException as exc:
            record_error(span, exc)
            raise


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
        if not TRACING.on or not TRACING.trace.get_current_span().is_recording():
            return await method(*args, **kwargs)
        with TRACING.tracer.start_as_current_span(
            f"a2a.storage {label}", attributes={ATTR.STORAGE_OPERATION: label}
        ):
            return await method(*args, **kwargs)

    return traced
