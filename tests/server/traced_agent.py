"""One agent of the cross-process tracing test: ``python traced_agent.py NAME PORT SPANS [NEXT]``.

Serves on 127.0.0.1:PORT with tracing on; every finished span is appended to the SPANS file as a
JSON line. With NEXT (an agent URL) its executor forwards the text there and wraps the answer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import uvicorn
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from simple_a2a import AsyncClient
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.telemetry import enable_tracing
from simple_a2a.server import server


class JsonLines(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a") as out:
            for span in spans:
                record = {
                    "name": span.name,
                    "kind": span.kind.name,
                    "trace_id": f"{span.context.trace_id:032x}",
                    "span_id": f"{span.context.span_id:016x}",
                    "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
                    "attributes": dict(span.attributes or {}),
                }
                out.write(json.dumps(record) + "\n")
        return SpanExportResult.SUCCESS


def main(name: str, port: int, spans: str, next_url: str | None) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(spans)))
    enable_tracing(provider)

    async def execute(ctx: Any) -> str:
        if next_url is None:
            return f"{name}({ctx.text})"
        async with AsyncClient(next_url) as client:
            answer = await client.send(ctx.text)
        return f"{name}({answer.text})"  # type: ignore[union-attr]

    card = AgentCard.from_dict(
        {"name": name, "description": name, "version": "1", "capabilities": {}}
    )
    uvicorn.run(server(card, execute).app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
