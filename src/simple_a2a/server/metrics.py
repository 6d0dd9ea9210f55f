"""Server metrics (OpenTelemetry metrics; the ``otel`` extra) and their Prometheus text form.

:func:`enable_metrics` starts recording into a ``MeterProvider`` (a new one with an in-memory
reader, or yours); ``server(..., metrics_path="/metrics")`` serves that reader's data as the
Prometheus text exposition format. Off by default, and then the cost is the one
``TELEMETRY.on`` check of :mod:`simple_a2a.protocol.telemetry`.

| name (OTel) | kind | unit | attributes |
|---|---|---|---|
| ``rpc.server.call.duration`` | histogram | s | ``rpc.method``, ``a2a.binding``, ``a2a.outcome`` |
| ``a2a.server.requests`` | counter | {request} | ``rpc.method``, ``a2a.binding``, ``a2a.outcome`` |
| ``a2a.server.tasks`` | up-down counter | {task} | ``a2a.task.state`` |
| ``a2a.server.executors.running`` | up-down counter | {executor} | |
| ``a2a.server.streams.open`` | up-down counter | {stream} | ``rpc.method`` |
| ``a2a.server.push.attempts`` | counter | {attempt} | ``a2a.outcome`` |
| ``a2a.server.push.retries`` | counter | {attempt} | |
| ``a2a.server.push.suspended`` | counter | {config} | |
| ``a2a.server.push.backlog`` | gauge | {config} | (configs with undelivered events) |
| ``a2a.server.lease.takeovers`` | counter | {lease} | ``a2a.lease.kind`` (task, push) |
| ``a2a.server.queue.depth`` | gauge | {task} | (tasks waiting for a worker, docs/cluster.md) |
| ``a2a.server.queue.oldest_age`` | gauge | s | (how long the oldest has waited) |

``a2a.outcome`` is ``ok`` or the A2A error's class name. ``a2a.server.tasks`` counts tasks
currently in each non-terminal state, and tasks that reached each terminal state since start.
``rpc.server.call.duration`` follows OpenTelemetry's RPC semantic conventions; the rest are
``a2a.*`` (no convention exists). In Prometheus, dots become underscores, ``s`` adds
``_seconds`` and counters ``_total``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..protocol.models import TERMINAL_STATES, Task
from ..protocol.requests import StreamResponse
from ..protocol.telemetry import ATTR, TELEMETRY

__all__ = ["Metrics", "enable_metrics", "prometheus_text"]

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The instruments, and what the Prometheus route reads."""

    def __init__(self, meter_provider: Any, reader: Any) -> None:
        from opentelemetry.metrics import CallbackOptions, Observation

        self.reader = reader
        meter = meter_provider.get_meter("simple_a2a")
        self.duration = meter.create_histogram(
            "rpc.server.call.duration",
            unit="s",
            description="Duration of A2A operations (streams: until the stream ends)",
            explicit_bucket_boundaries_advisory=list(_BUCKETS),
        )
        self.requests = meter.create_counter(
            "a2a.server.requests", unit="{request}", description="A2A operations served"
        )
        self.tasks = meter.create_up_down_counter(
            "a2a.server.tasks", unit="{task}", description="Tasks by state"
        )
        self.executors = meter.create_up_down_counter(
            "a2a.server.executors.running", unit="{executor}", description="Running executors"
        )
        self.streams = meter.create_up_down_counter(
            "a2a.server.streams.open", unit="{stream}", description="Open streams and subscribers"
        )
        self.push_attempts = meter.create_counter(
            "a2a.server.push.attempts", unit="{attempt}", description="Push delivery attempts"
        )
        self.push_retries = meter.create_counter(
            "a2a.server.push.retries", unit="{attempt}", description="Push attempts after a failure"
        )
        self.push_suspended = meter.create_counter(
            "a2a.server.push.suspended", unit="{config}", description="Push configs suspended"
        )
        self.lease_takeovers = meter.create_counter(
            "a2a.server.lease.takeovers",
            unit="{lease}",
            description="Task and push leases taken over from a replica that stopped renewing",
        )
        self._backlogs: list[Callable[[], int]] = []

        def backlog(options: CallbackOptions) -> Iterable[Observation]:
            yield Observation(sum(count() for count in self._backlogs))

        meter.create_observable_gauge(
            "a2a.server.push.backlog",
            [backlog],
            unit="{config}",
            description="Push configs with undelivered events",
        )
        self._states: dict[str, str] = {}  #: task id -> its non-terminal state
        #: the work queue's last (depth, oldest age) per dispatcher, refreshed by each
        self._queues: list[Callable[[], tuple[int, float] | None]] = []

        def queue_gauge(index: int) -> Callable[[CallbackOptions], Iterable[Observation]]:
            def observe(options: CallbackOptions) -> Iterable[Observation]:
                seen = [s for s in (read() for read in self._queues) if s is not None]
                if seen:  # every replica sees the same table: report the latest reading
                    yield Observation(seen[-1][index])

            return observe

        meter.create_observable_gauge(
            "a2a.server.queue.depth",
            [queue_gauge(0)],
            unit="{task}",
            description="Tasks waiting in the work queue for a worker",
        )
        meter.create_observable_gauge(
            "a2a.server.queue.oldest_age",
            [queue_gauge(1)],
            unit="s",
            description="How long the oldest task in the work queue has waited",
        )

    def watch_queue(self, reading: Callable[[], tuple[int, float] | None]) -> None:
        """A work queue's last (depth, oldest age in s), or None before its first reading."""
        self._queues.append(reading)

    def watch_push_backlog(self, count: Callable[[], int]) -> None:
        self._backlogs.append(count)

    async def task_event(self, task_id: str, seq: int, event: StreamResponse, task: Task) -> None:
        """An event hook: moves the task between states (bounded: terminal tasks are dropped)."""
        state = task.status.state
        previous = self._states.get(task_id)
        if previous == state.value:
            return
        if previous is not None:
            self.tasks.add(-1, {ATTR.TASK_STATE: previous})
        self.tasks.add(1, {ATTR.TASK_STATE: state.value})
        if state in TERMINAL_STATES:
            self._states.pop(task_id, None)
        else:
            self._states[task_id] = state.value


def enable_metrics(meter_provider: Any = None) -> Metrics:
    """Start recording server metrics; returns the :class:`Metrics` (its ``reader`` feeds the
    Prometheus route). Without ``meter_provider`` a new SDK ``MeterProvider`` with an in-memory
    reader is made; give yours to export elsewhere (the Prometheus route then has no data unless
    you also pass ``reader=``). Raises ``ImportError`` without the ``otel`` extra."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = None
    if meter_provider is None:
        reader = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[reader])
    TELEMETRY.ensure_tracer()
    TELEMETRY.metrics = Metrics(meter_provider, reader)
    TELEMETRY.on = True
    return TELEMETRY.metrics  # type: ignore[no-any-return]


# -- the Prometheus text exposition format (version 0.0.4) --------------------------------------


def _name(name: str, unit: str, counter: bool) -> str:
    base = "".join(c if c.isalnum() else "_" for c in name)
    if unit == "s":
        base += "_seconds"
    return base + "_total" if counter else base


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(attributes: Any, extra: dict[str, str] | None = None) -> str:
    pairs = {**{str(k): str(v) for k, v in (attributes or {}).items()}, **(extra or {})}
    if not pairs:
        return ""
    body = ",".join(
        f'{"".join(c if c.isalnum() else "_" for c in k)}="{_escape(v)}"'
        for k, v in sorted(pairs.items())
    )
    return "{" + body + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if isinstance(value, float) and not value.is_integer():
        return repr(value)
    return str(int(value))


def prometheus_text(reader: Any) -> str:
    """Render what ``reader`` (an OTel ``MetricReader``) collects as Prometheus text."""
    from opentelemetry.sdk.metrics.export import Gauge, Histogram, Sum

    lines: list[str] = []
    data = reader.get_metrics_data() if reader is not None else None
    for resource in data.resource_metrics if data is not None else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = metric.data
                counter = isinstance(points, Sum) and points.is_monotonic
                name = _name(metric.name, metric.unit or "", counter)
                kind = (
                    "histogram"
                    if isinstance(points, Histogram)
                    else ("counter" if counter else "gauge")
                )
                lines.append(f"# HELP {name} {metric.description}")
                lines.append(f"# TYPE {name} {kind}")
                for point in points.data_points:
                    if isinstance(points, Histogram):
                        running = 0
                        bounds = [*point.explicit_bounds, math.inf]
                        for bound, count in zip(bounds, point.bucket_counts, strict=False):
                            running += count
                            le = _labels(point.attributes, {"le": _number(bound)})
                            lines.append(f"{name}_bucket{le} {running}")
                        labels = _labels(point.attributes)
                        lines.append(f"{name}_sum{labels} {_number(point.sum)}")
                        lines.append(f"{name}_count{labels} {point.count}")
                    elif isinstance(points, (Sum, Gauge)):
                        lines.append(f"{name}{_labels(point.attributes)} {_number(point.value)}")
    return "\n".join(lines) + "\n"


async def metrics_endpoint(request: Request) -> Response:
    """``GET <metrics_path>``: the Prometheus text (empty until :func:`enable_metrics`)."""
    metrics = TELEMETRY.metrics
    body = prometheus_text(metrics.reader) if metrics is not None else ""
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
