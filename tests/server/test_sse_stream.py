"""The SSE response itself (server/http.py ``EventStream``) over real HTTP on loopback: its
headers, keep-alive comments while the task is idle, and the end of the server's side when the
client disconnects mid-stream (uvicorn drops what is sent to a closed connection, so only the
disconnect watcher ends a stream whose task emits nothing more)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from simple_a2a.protocol import Message
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server import http as server_http
from tests.support import card, rpc


class Idle(AgentExecutor):
    """One artifact, then nothing until the task is cancelled."""

    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        await ctx.emit_artifact({"artifactId": "a", "parts": [{"text": "one"}]})
        while not ctx.cancelled:
            await asyncio.sleep(0.01)


def _send(text: str = "go") -> dict[str, Any]:
    return rpc("SendStreamingMessage", {"message": Message.user(text).to_dict()})


async def _until(condition: Any, what: str) -> None:
    for _ in range(500):  # bounded: 5 s at most
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_client_disconnect_ends_the_servers_stream_and_its_follower(serve: Any) -> None:
    srv = server(card(streaming=True), Idle())
    url = serve(srv.app)
    log = srv.storage.events
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        async with client.stream("POST", "/", json=_send()) as response:
            assert response.status_code == 200
            events = []
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
                    if len(events) == 2:  # the task and its artifact: now idle
                        break
        task_id = events[0]["result"]["task"]["id"]
        # the server's follower waits on the task's log until the disconnect ends it
        await _until(lambda: not log._logs[task_id].waiters, "the follower still waits")
        await _until(lambda: not server_http._STREAMING, "the stream's task is still sending")
        # the execution is detached from the request: the task is still working
        answer = await client.post("/", json=rpc("GetTask", {"id": task_id}))
        assert answer.json()["result"]["status"]["state"] == "TASK_STATE_WORKING"
        await client.post("/", json=rpc("CancelTask", {"id": task_id}))


async def test_idle_stream_sends_keep_alive_comments_with_the_sse_headers(serve: Any) -> None:
    srv = server(card(streaming=True), Idle(), keepalive=0.05)
    url = serve(srv.app)
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        async with client.stream("POST", "/", json=_send()) as response:
            headers = response.headers
            lines = []
            async for line in response.aiter_lines():
                lines.append(line)
                if line == ": keep-alive":
                    break
        task_id = json.loads(lines[1][5:])["result"]["task"]["id"]
        await client.post("/", json=rpc("CancelTask", {"id": task_id}))
    assert headers["content-type"] == "text/event-stream; charset=utf-8"
    assert headers["cache-control"] == "no-cache"
    assert headers["x-accel-buffering"] == "no"
    assert headers["a2a-version"] == "1.0"
    assert "content-length" not in headers
    assert lines[:2] == ["id: 1", lines[1]] and lines[1].startswith("data: ")
    assert ": keep-alive" in lines
