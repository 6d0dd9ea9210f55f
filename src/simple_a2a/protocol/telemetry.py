"""The telemetry switch and W3C trace context propagation, shared by client and server.

OpenTelemetry is optional (``pip install 'simple-a2a[otel]'``: the API and SDK only). Nothing
here imports it until :func:`enable_tracing` is called, and every instrumented place first reads
``TELEMETRY.on`` — one attribute check — so the cost with the extra absent or tracing off is that
check alone (docs/observability.md has the measurement).

``enable_tracing()`` uses the global tracer provider (``opentelemetry.trace.
set_tracer_provider``) unless one is given. Span and attribute names follow OpenTelemetry's RPC
semantic conventions (``rpc.system``, ``rpc.service``, ``rpc.method``, ``error.type``) plus
``a2a.*`` attributes for what only A2A has.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    "ATTR",
    "TELEMETRY",
    "disable_metrics",
    "disable_tracing",
    "enable_tracing",
    "extract_context",
    "inject_context",
]

_MISSING = "tracing needs OpenTelemetry: pip install 'simple-a2a[otel]'"


class ATTR:
    """Attribute names (semantic conventions where one exists)."""

    RPC_SYSTEM = "rpc.system"  #: always "a2a"
    RPC_SERVICE = "rpc.service"  #: always "a2a"
    RPC_METHOD = "rpc.method"  #: the operation, e.g. "SendMessage"
    ERROR_TYPE = "error.type"  #: the A2A error class name
    SERVER_ADDRESS = "server.address"
    URL_FULL = "url.full"
    BINDING = "a2a.binding"  #: JSONRPC, HTTP+JSON or GRPC
    VERSION = "a2a.protocol.version"
    TASK_ID = "a2a.task.id"
    CONTEXT_ID = "a2a.context.id"
    TASK_STATE = "a2a.task.state"  #: the state the operation left the task in
    ERROR_CODE = "a2a.error.code"  #: the JSON-RPC code of the A2A error (spec §5.4)
    CALLER = "a2a.caller"
    STREAM_EVENTS = "a2a.stream.events"
    PUSH_CONFIG_ID = "a2a.push.config.id"
    PUSH_ATTEMPT = "a2a.push.attempt"
    PUSH_SEQ = "a2a.push.seq"
    STORAGE_OPERATION = "a2a.storage.operation"
    LEASE_KIND = "a2a.lease.kind"  #: task or push


class _Telemetry:
    """``on`` is the one cheap check (tracing or metrics enabled); the rest exist only when on."""

    __slots__ = ("context", "metrics", "on", "propagate", "trace", "tracer")

    def __init__(self) -> None:
        self.on = False
        self.tracer: Any = None
        self.trace: Any = None
        self.context: Any = None
        self.propagate: Any = None
        #: the server's instruments (simple_a2a.server.metrics.enable_metrics), or None
        self.metrics: Any = None

    def ensure_tracer(self, tracer_provider: Any = None, *, replace: bool = False) -> None:
        """Load OpenTelemetry; a no-op tracer unless tracing is enabled (metrics alone)."""
        try:
            from opentelemetry import context, propagate, trace
        except ImportError as exc:
            raise ImportError(_MISSING) from exc
        self.trace, self.context, self.propagate = trace, context, propagate
        if replace:
            self.tracer = trace.get_tracer("simple_a2a", tracer_provider=tracer_provider)
        elif self.tracer is None:
            self.tracer = trace.NoOpTracer()


TELEMETRY = _Telemetry()


def enable_tracing(tracer_provider: Any = None) -> None:
    """Start tracing: every client call and server operation from now on makes spans.

    Uses the global tracer provider unless one is given. Raises ``ImportError`` when the
    ``otel`` extra is not installed."""
    TELEMETRY.ensure_tracer(tracer_provider, replace=True)
    TELEMETRY.on = True


def disable_tracing() -> None:
    """Stop making spans (metrics, if enabled, go on)."""
    TELEMETRY.tracer = None
    TELEMETRY.on = TELEMETRY.metrics is not None
    if TELEMETRY.on:
        TELEMETRY.ensure_tracer()


def disable_metrics() -> None:
    """Stop recording server metrics (tracing, if enabled, goes on)."""
    TELEMETRY.metrics = None
    TELEMETRY.on = TELEMETRY.tracer is not None and not isinstance(
        TELEMETRY.tracer, TELEMETRY.trace.NoOpTracer
    )


def inject_context(headers: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """Add the current span's W3C ``traceparent`` (and ``tracestate``) to ``headers``."""
    TELEMETRY.propagate.inject(headers)
    return headers


def grpc_metadata(metadata: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """``metadata`` plus the current span's trace context (gRPC keys are lower-case)."""
    return (*metadata, *inject_context({}).items())


def extract_context(headers: Mapping[str, str]) -> Any:
    """The OTel context a request's ``traceparent`` names (headers with lower-case names)."""
    return TELEMETRY.propagate.extract(headers)


def annotate(span: Any, value: Any) -> None:
    """Set task id, context id and task state on ``span`` from a result or stream event: a
    Task, Message, status/artifact update, StreamResponse, a response wrapping a task or message
    (``.task``/``.message``), or their wire dicts."""
    if isinstance(value, Mapping):
        inner = value.get("task") or value.get("message") or value.get("statusUpdate")
        if isinstance(inner, Mapping):
            value = inner
        task_id = value.get("taskId") or (value.get("id") if "status" in value else None)
        context_id = value.get("contextId")
        status = value.get("status")
        state = status.get("state") if isinstance(status, Mapping) else None
    else:
        for name in ("task", "message", "status_update", "artifact_update"):
            inner = getattr(value, name, None)
            if inner is not None and not isinstance(inner, str):
                value = inner
                break
        task_id = getattr(value, "task_id", None) or (
            getattr(value, "id", None) if hasattr(value, "status") else None
        )
        context_id = getattr(value, "context_id", None)
        status = getattr(value, "status", None)
        state = getattr(getattr(status, "state", None), "value", None)
    if task_id:
        span.set_attribute(ATTR.TASK_ID, str(task_id))
    if context_id:
        span.set_attribute(ATTR.CONTEXT_ID, str(context_id))
    if state:
        span.set_attribute(ATTR.TASK_STATE, str(state))


def record_error(span: Any, exc: BaseException) -> None:
    """Mark ``span`` failed: ``error.type``, the A2A error code when there is one, the event."""
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        span.set_attribute(ATTR.ERROR_CODE, code)
    span.set_attribute(ATTR.ERROR_TYPE, type(exc).__name__)
    span.record_exception(exc)
    span.set_status(TELEMETRY.trace.Status(TELEMETRY.trace.StatusCode.ERROR, str(exc)[:200]))
