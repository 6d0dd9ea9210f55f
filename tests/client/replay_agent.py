"""A minimal raw SSE agent that numbers its events and honours ``Last-Event-ID``.

It serves one scripted task (``t1``) over JSON-RPC (``/rpc``) and HTTP+JSON (``/rest``):
the Task, a working status, ``chunks`` artifact chunks, then a completed status; each event's
SSE ``id:`` is its sequence number. SubscribeToTask with ``Last-Event-ID: n`` replays from
event ``n`` (one event of overlap, as a sloppy server might) so the client must dedupe.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

TASK_ID = "t1"
CTX = "c1"


def script(chunks: int) -> list[dict[str, Any]]:
    def status(state: str) -> dict[str, Any]:
        return {"statusUpdate": {"taskId": TASK_ID, "contextId": CTX, "status": {"state": state}}}

    events: list[dict[str, Any]] = [
        {"task": {"id": TASK_ID, "contextId": CTX, "status": {"state": "TASK_STATE_SUBMITTED"}}},
        status("TASK_STATE_WORKING"),
    ]
    for i in range(chunks):
        events.append(
            {
                "artifactUpdate": {
                    "taskId": TASK_ID,
                    "contextId": CTX,
                    "artifact": {"artifactId": "a", "parts": [{"text": f"w{i} "}]},
                    "append": i > 0,
                    "lastChunk": i == chunks - 1,
                }
            }
        )
    events.append(status("TASK_STATE_COMPLETED"))
    return events


class ReplayAgent:
    def __init__(self, chunks: int = 8, delay: float = 0.02) -> None:
        self.events = script(chunks)
        self.delay = delay
        self.last_event_ids: list[str | None] = []
        self.calls: list[str] = []

    def _stream(self, start: int, rpc_id: Any | None) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            for seq in range(start, len(self.events) + 1):
                payload: Any = self.events[seq - 1]
                if rpc_id is not None:
                    payload = {"jsonrpc": "2.0", "id": rpc_id, "result": payload}
                yield f"id: {seq}\ndata: {json.dumps(payload)}\n\n".encode()
                await asyncio.sleep(self.delay)

        return StreamingResponse(body(), media_type="text/event-stream")

    def _start(self, request: Request) -> int:
        last = request.headers.get("last-event-id")
        self.last_event_ids.append(last)
        return max(1, int(last)) if last else 1  # replays event `last` again: overlap

    async def rpc(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append(body["method"])
        if body["method"] == "SendStreamingMessage":
            return self._stream(1, body["id"])
        if body["method"] == "SubscribeToTask":
            return self._stream(self._start(request), body["id"])
        error = {"code": -32601, "message": "Method not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "error": error})

    async def rest_stream(self, request: Request) -> Response:
        self.calls.append("SendStreamingMessage")
        return self._stream(1, None)

    async def rest_subscribe(self, request: Request) -> Response:
        self.calls.append("SubscribeToTask")
        return self._stream(self._start(request), None)

    async def card(self, request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "name": "replay",
                "description": "numbers its events",
                "version": "1",
                "supportedInterfaces": [
                    {"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                    {
                        "url": base + "/rest",
                        "protocolBinding": "HTTP+JSON",
                        "protocolVersion": "1.0",
                    },
                ],
                "capabilities": {"streaming": True},
                "skills": [],
            }
        )

    def app(self, base_url: str) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/agent-card.json", self.card),
                Route("/rpc", self.rpc, methods=["POST"]),
                Route("/rest/message:stream", self.rest_stream, methods=["POST"]),
                Route("/rest/tasks/{id}:subscribe", self.rest_subscribe, methods=["POST"]),
            ]
        )
