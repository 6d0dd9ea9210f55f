"""Our client reads an a2a-sdk 0.3 agent's answers with their nulls (issue #33).

The agent here answers, over real HTTP, the JSON that a2a-sdk 0.3.26's models dump with nulls
kept (``tests/protocol/data/sdk03_nulls.json``, made by the SDK itself): the card, the task of
``message/send`` and ``tasks/get``, and a stream of status and artifact updates. Every answer
used to be refused whole ("extensions: Input should be a valid list").
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from simple_a2a import Task, TaskState
from simple_a2a.client import AsyncClient
from tests.client.servers import ServerThread
from tests.protocol.test_nulls import SDK03


def nulls_agent(base: str) -> Starlette:
    card = copy.deepcopy(SDK03["card"])
    card["url"] = base + "/"
    card["additionalInterfaces"] = [{"transport": "JSONRPC", "url": base + "/"}]

    async def rpc(request: Request) -> Response:
        body = await request.json()
        method = body["method"]
        if method in ("message/send", "tasks/get"):
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": SDK03["task"]})
        if method == "message/stream":
            events = [
                {**SDK03["working_task"], "id": "t1"},
                SDK03["status_update"],
                SDK03["artifact_update"],
            ]
            done = {**SDK03["status_update"], "status": SDK03["task"]["status"], "final": True}

            async def sse() -> Any:
                for event in [*events, done]:
                    answer = {"jsonrpc": "2.0", "id": body["id"], "result": event}
                    yield f"data: {json.dumps(answer)}\n\n"

            return StreamingResponse(sse(), media_type="text/event-stream")
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601}})

    return Starlette(
        routes=[
            Route("/.well-known/agent-card.json", lambda r: JSONResponse(card)),
            Route("/", rpc, methods=["POST"]),
        ]
    )


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with ServerThread(nulls_agent) as server:
        yield server.url


async def test_discovery_send_get_and_stream_read_the_nulls(agent_url: str) -> None:
    async with AsyncClient(agent_url) as client:
        task = await client.send("hi")
        assert client.protocol_version == "0.3"
        card = await client.agent_card()
        assert card.capabilities.extensions == [] and card.security_schemes == {}
        assert card.skills[0].input_modes == []
        assert isinstance(task, Task) and task.state is TaskState.COMPLETED
        assert task.text == "echo: hi"
        assert task.history[0].reference_task_ids == []
        got = await client.get(task.id)
        assert got.artifacts[0].parts[2].data == {"k": None, "n": 1}
        events = [event async for event in client.stream("hi")]
        assert events and events[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
