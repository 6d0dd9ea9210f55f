"""The official Python SDK 0.3.26's JSON-RPC client reading errors of streaming methods, run
from ``.venv-sdk03`` (``scripts/peers``): ``python sdk03_stream_errors.py URL NO_STREAMING_URL
PRIVATE_URL`` (an agent that streams with ``Limits(max_parts_per_message=1)``, one whose card
declares no streaming, one behind ``BearerAuth``). Not imported by the test suite; prints one
JSON line: for each case, the error the SDK raised (its class and the JSON-RPC code or HTTP
status it read) or what it did instead."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import Message, MessageSendParams, Part, Role, TaskIdParams, TextPart


async def outcome(events: Any) -> dict[str, Any]:
    try:
        async for event in events:
            return {"ok": True, "event": type(event).__name__}
        return {"ok": True, "event": None}
    except A2AClientJSONRPCError as exc:
        return {"ok": False, "class": type(exc).__name__, "code": exc.error.code}
    except A2AClientHTTPError as exc:
        return {"ok": False, "class": type(exc).__name__, "status": exc.status_code}
    except Exception as exc:  # what the SDK did instead: the test shows it
        return {"ok": False, "class": type(exc).__name__, "text": str(exc)[:300]}


def message(*texts: str, task_id: str | None = None) -> MessageSendParams:
    parts = [Part(root=TextPart(text=text)) for text in texts]
    return MessageSendParams(
        message=Message(message_id="m1", role=Role.user, parts=parts, task_id=task_id)
    )


async def main(url: str, no_streaming_url: str, private_url: str) -> None:
    seen: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=10) as http:
        rpc = JsonRpcTransport(http, url=url)
        seen["resubscribe_unknown"] = await outcome(rpc.resubscribe(TaskIdParams(id="no-such")))
        unknown_task = message("hi", task_id="no-such-task")
        seen["stream_unknown_task"] = await outcome(rpc.send_message_streaming(unknown_task))
        two_parts = message("one", "two")
        seen["stream_over_a_limit"] = await outcome(rpc.send_message_streaming(two_parts))
        seen["stream_ok"] = await outcome(rpc.send_message_streaming(message("hi")))
        no_streaming = JsonRpcTransport(http, url=no_streaming_url)
        refused = no_streaming.send_message_streaming(message("hi"))
        seen["stream_not_declared"] = await outcome(refused)
        private = JsonRpcTransport(http, url=private_url)
        seen["stream_unauthenticated"] = await outcome(
            private.send_message_streaming(message("hi"))
        )
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
