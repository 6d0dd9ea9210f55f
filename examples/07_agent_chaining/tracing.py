"""Demo 07 with ``A2A_DEMO_TRACE=1``: one OpenTelemetry trace across the three agents.

Both sides turn tracing on (the ``otel`` extra). The client prints its trace id; the server
prints each trace as a tree once every span of it in this process has ended, so the pipeline's
server span, its executor, its two client calls and the two agents' server spans show as one
tree under the client's trace id. Storage spans are counted, not printed.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

ENABLED = os.environ.get("A2A_DEMO_TRACE", "") not in ("", "0")


def _short(span: Any) -> str:
    attrs = dict(span.attributes or {})
    bits = [span.name, span.kind.name]
    if "a2a.binding" in attrs:
        bits.append(str(attrs["a2a.binding"]))
    if "url.full" in attrs:
        bits.append(str(attrs["url.full"]).split("/", 3)[-1] or "/")
    if "a2a.task.id" in attrs:
        bits.append(f"task={str(attrs['a2a.task.id'])[:8]}")
    if "a2a.task.state" in attrs:
        bits.append(str(attrs["a2a.task.state"]).removeprefix("TASK_STATE_").lower())
    millis = (span.end_time - span.start_time) / 1e6
    return f"{' '.join(bits)}  {millis:.1f} ms"


class TreePrinter:
    """Span processor methods printing each trace of this process as an indented tree (mixed
    into the SDK's ``SpanProcessor`` when tracing is on: the module imports no OpenTelemetry)."""

    def __init__(self) -> None:
        self.open: dict[int, set[int]] = defaultdict(set)  #: spans started, not yet ended
        self.ended: dict[int, list[Any]] = defaultdict(list)

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.open[span.context.trace_id].add(span.context.span_id)

    def on_end(self, span: Any) -> None:
        trace_id = span.context.trace_id
        self.ended[trace_id].append(span)
        self.open[trace_id].discard(span.context.span_id)
        if not self.open[trace_id]:  # this process is done with the trace (for now)
            del self.open[trace_id]
            self.print(trace_id)

    def print(self, trace_id: int) -> None:
        spans = self.ended.pop(trace_id)
        children: dict[int | None, list[Any]] = defaultdict(list)
        ids = {s.context.span_id for s in spans}
        storage = 0
        for span in sorted(spans, key=lambda s: s.start_time):
            if span.name.startswith("a2a.storage"):
                storage += 1
                continue
            parent = span.parent.span_id if span.parent and span.parent.span_id in ids else None
            children[parent].append(span)
        print(f"\ntrace {trace_id:032x} ({storage} storage spans not shown)", flush=True)

        def walk(parent: int | None, prefix: str) -> None:
            kids = children.get(parent, [])
            for i, span in enumerate(kids):
                last = i == len(kids) - 1
                print(f"{prefix}{'└─ ' if last else '├─ '}{_short(span)}", flush=True)
                walk(span.context.span_id, prefix + ("   " if last else "│  "))

        walk(None, "  ")


def enable(*, printer: bool) -> Any:
    """Turn tracing on (a tree printer on the server side); returns the tracer provider."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    from simple_a2a.protocol.telemetry import enable_tracing

    provider = TracerProvider()
    if printer:
        printer_class = type("Printer", (TreePrinter, SpanProcessor), {})
        provider.add_span_processor(printer_class())
    trace.set_tracer_provider(provider)
    enable_tracing()
    return provider
