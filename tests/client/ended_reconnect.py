"""A subscription whose reconnect comes after its task ended, against any peer (issue #33).

:func:`reconnect_after_the_end` subscribes through a :class:`CuttingProxy` that cuts the first
event stream right after its headers (a dropped connection, not a clean end), cancels the task
while the client waits to reconnect, and returns what the caller saw and what was sent. The
reconnect meets a terminal task, which a peer refuses (spec §3.1.6: UnsupportedOperationError;
the SDK 0.3.26: invalid params); the client then ends the stream with GetTask's task.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from simple_a2a import Task, TaskState
from simple_a2a.client import AsyncClient, ReconnectPolicy
from simple_a2a.protocol.requests import StreamEvent
from tests.client.proxy import CuttingProxy


@dataclass
class Resumed:
    events: list[StreamEvent] = field(default_factory=list)
    error: Exception | None = None
    #: (HTTP method, path, JSON-RPC method or "") of every request through the proxy
    sent: list[tuple[str, str, str]] = field(default_factory=list)


def _proxied_card(base: str, proxy: CuttingProxy) -> dict[str, Any]:
    """The agent's card with its HTTP interfaces moved to the proxy's port."""
    raw = httpx.get(base + "/.well-known/agent-card.json").text
    port = base.rsplit(":", 1)[1]
    proxied: dict[str, Any] = json.loads(raw.replace(f"127.0.0.1:{port}", proxy.url[7:]))
    return proxied


async def reconnect_after_the_end(base: str, binding: str) -> Resumed:
    """Subscribe over ``binding`` to a task of the agent at ``base`` (its "slow" word works
    until canceled), have the stream cut, and cancel the task meanwhile."""
    proxy = CuttingProxy(int(base.rsplit(":", 1)[1]), cut_after=0)
    proxied = _proxied_card(base, proxy)
    seen = Resumed()

    async def record(request: httpx.Request) -> None:
        method = ""
        if request.method == "POST" and request.content:
            method = str(json.loads(request.content).get("method", ""))
        seen.sent.append((request.method, request.url.path, method))

    http = httpx.AsyncClient(event_hooks={"request": [record]}, timeout=10)
    try:
        async with (
            AsyncClient(base, bindings=[binding]) as direct,
            AsyncClient(
                proxied,
                bindings=[binding],
                http_client=http,
                reconnect=ReconnectPolicy(backoff=1.0),  # time to cancel before the reconnect
            ) as via_proxy,
        ):
            task = await direct.send("slow", return_immediately=True)
            assert isinstance(task, Task)

            async def follow() -> None:
                try:
                    async for event in via_proxy.subscribe(task.id):
                        seen.events.append(event)
                except Exception as exc:  # the test reports it
                    seen.error = exc

            follower = asyncio.create_task(follow())
            for _ in range(100):
                if proxy.cuts_done:
                    break
                await asyncio.sleep(0.02)
            assert proxy.cuts_done == 1, "the proxy never cut the stream"
            await direct.cancel(task.id)
            await asyncio.wait_for(follower, 15)
    finally:
        proxy.close()
        await http.aclose()
    return seen


def ended_canceled(seen: Resumed, binding: str, version: str) -> None:
    """The stream ended without an error, on the canceled task that GetTask gave after the one
    reconnect the agent refused (cut, reconnect, GetTask: nothing else was sent)."""
    assert seen.error is None, f"the stream raised {seen.error!r}"
    final = seen.events[-1]
    assert isinstance(final, Task) and final.state is TaskState.CANCELED, seen.events
    if binding == "JSONRPC":
        subscribe, get = (
            ("SubscribeToTask", "GetTask")
            if version == "1.0"
            else ("tasks/resubscribe", "tasks/get")
        )
        assert [m for _, _, m in seen.sent] == [subscribe, subscribe, get]
    else:
        verb = "POST" if version == "1.0" else "GET"  # 1.0 subscribes by POST (docs/interop.md)
        path = f"/tasks/{final.id}"
        sent = [(v, p[p.index(path) :]) for v, p, _ in seen.sent]
        assert sent == [(verb, path + ":subscribe"), (verb, path + ":subscribe"), ("GET", path)]
