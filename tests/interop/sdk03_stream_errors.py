"""The official Python SDK 0.3.26's JSON-RPC client reading errors of streaming methods, run
from ``.venv-sdk03`` (``scripts/peers``): ``python sdk03_stream_errors.py RPC_URL``. Not
imported by the test suite; prints one JSON line: for each case, the error the SDK raised (its
class and the JSON-RPC code it read) or what it did instead."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from a2a.client.errors import A2AClientJSONRPCError
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import Message, MessageSendParams, Part, Role, TaskIdParams, TextPart


async def outcome(events: Any) -> dict[str, Any]:
    try:
        async for event in events:
            return {"ok": True, "event": type(event).__name__}
        return {"ok": True, "event": None}
    except A2AClientJSONRPCError as exc:
        return {"ok": False, "class": type(exc).__name__, "code": exc.error.code}
    except Exception as exc:  # what the SDK did instead: the test shows it
        return {"ok": False, "class": type(exc).__name__, "text": str(exc)[:300]}


async def main(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        rpc = JsonRpcTransport(http, url=url)
        unknown = await outcome(rpc.resubscribe(TaskIdParams(id="no-such-task")))
        follow_up = Message(
            message_id="m1",
            role=Role.user,
            parts=[Part(root=TextPart(text="hi"))],
            task_id="no-such-task",
        )
        stream = await outcome(rpc.send_message_streaming(MessageSendParams(message=follow_up)))
    print(json.dumps({"resubscribe_unknown": unknown, "stream_unknown_task": stream}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
