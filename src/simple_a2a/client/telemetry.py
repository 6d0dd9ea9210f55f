"""Client spans (``TELEMETRY.on`` only): one per call, one per stream (docs/observability.md).

The span is current while the transport sends, so the transport's :func:`inject_context` puts
its W3C trace context in the HTTP headers or gRPC metadata, and the agent's server span becomes
its child. Called from :class:`~simple_a2a.client.AsyncClient` with one line each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from simple_a2a.protocol.telemetry import ATTR, TELEMETRY, annotate, record_error

T = TypeVar("T")


def _attributes(operation: str) -> dict[str, Any]:
    return {ATTR.RPC_SYSTEM: "a2a", ATTR.RPC_SERVICE: "a2a", ATTR.RPC_METHOD: operation}


def _target(span: Any, client: Any) -> None:
    """Where the call went (known once the client has chosen an interface)."""
    interface = getattr(client, "interface", None)
    if interface is not None:
        span.set_attribute(ATTR.BINDING, interface.protocol_binding)
        span.set_attribute(ATTR.URL_FULL, interface.url)


async def traced_call(
    call: Callable[[], Awaitable[dict[str, Any]]],
    operation: str,
    client: Any,
) -> dict[str, Any]:
    """Run one unary call (retries included) inside a CLIENT span."""
    kind = TELEMETRY.trace.SpanKind.CLIENT
    attrs = _attributes(operation)
    with TELEMETRY.tracer.start_as_current_span(
        f"a2a/{operation}", kind=kind, attributes=attrs, record_exception=False
    ) as span:
        try:
            result = await call()
        except BaseException as exc:
            record_error(span, exc)
            raise
        finally:
            _target(span, client)
        annotate(span, result)
        return result


async def traced_stream(events: AsyncIterator[T], operation: str, client: Any) -> AsyncIterator[T]:
    """Follow a stream inside a CLIENT span that ends with the stream.

    The span is made current only while the next event is awaited (so a (re)connect made then
    carries it), never across a ``yield``: the consumer's context is left as it was."""
    trace, context = TELEMETRY.trace, TELEMETRY.context
    span = TELEMETRY.tracer.start_span(
        f"a2a/{operation}",
        kind=trace.SpanKind.CLIENT,
        attributes=_attributes(operation),
    )
    span_context = trace.set_span_in_context(span)
    count = 0
    try:
        while True:
            token = context.attach(span_context)
            try:
                event = await events.__anext__()
            except StopAsyncIteration:
                break
            finally:
                context.detach(token)
            count += 1
            annotate(span, event)
            yield event
    except BaseException as exc:
        if not isinstance(exc, GeneratorExit):
            record_error(span, exc)
        raise
    finally:
        _target(span, client)
        span.set_attribute(ATTR.STREAM_EVENTS, count)
        span.end()
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
