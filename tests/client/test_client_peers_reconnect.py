"""Our client meets a task that ended while it was away, on the official Python SDKs' agents
(issue #33): the reconnect they refuse, or the stream they end without the final status (the
SDK 0.3.26, F3), ends the caller's stream with GetTask's task instead of an error. And ListTasks
over 0.3 is refused before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simple_a2a import Task, TaskState, TaskStatusUpdateEvent
from simple_a2a.client import AsyncClient
from simple_a2a.protocol.errors import UnsupportedOperationError
from tests.client.ended_reconnect import ended_canceled, reconnect_after_the_end
from tests.interop.peers import sdk03_agent
from tests.support.agents import cancel_while_subscribed

SDK13 = {"peer": "Python SDK 1.3.0", "direction": "ours → theirs", "protocol": "1.0"}
SDK03 = {"peer": "Python SDK 0.3.26", "direction": "ours → theirs", "protocol": "0.3"}


@pytest.mark.interop(**SDK13)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_sdk13_refused_reconnect_ends_with_the_task(sdk_server: Any, binding: str) -> None:
    ended_canceled(await reconnect_after_the_end(sdk_server.url, binding), binding, "1.0")


@pytest.fixture(scope="module")
def sdk03() -> Iterator[str]:
    with sdk03_agent() as base:
        yield base


@pytest.mark.interop(**SDK03, faults={"*": "F3"})
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_sdk03_refused_reconnect_ends_with_the_task(sdk03: str, binding: str) -> None:
    """The SDK refuses the reconnect as invalid params over JSON-RPC and drops the connection
    mid-body over HTTP+JSON (F3); either way GetTask gives the end."""
    ended_canceled(await reconnect_after_the_end(sdk03, binding), binding, "0.3")


@pytest.mark.interop(**SDK03, faults={"*": "F3"})
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_sdk03_cancel_while_subscribed_ends_without_an_error(
    sdk03: str, binding: str
) -> None:
    """F3: the SDK's resubscribe stream ends at a cancel without the final canceled event (or
    drops the connection); the caller's stream still ends at the canceled task."""
    async with AsyncClient(sdk03, bindings=[binding]) as client:
        task = await client.send("slow", return_immediately=True)
        assert isinstance(task, Task)
        _, seen = await cancel_while_subscribed(client, task.id, settle=0.3, timeout=20)
    last = seen[-1]  # (cancel_while_subscribed raises if the stream did)
    assert isinstance(last, Task | TaskStatusUpdateEvent)
    assert last.status.state is TaskState.CANCELED


@pytest.mark.interop(**SDK03)
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_sdk03_list_is_refused_before_sending(sdk03: str, binding: str) -> None:
    sent: list[str] = []

    async def record(request: httpx.Request) -> None:
        sent.append(f"{request.method} {request.url.path}")

    http = httpx.AsyncClient(event_hooks={"request": [record]}, timeout=10)
    async with AsyncClient(sdk03, bindings=[binding], http_client=http) as client:
        await client.agent_card()
        before = list(sent)
        with pytest.raises(UnsupportedOperationError, match=r"no A2A 1\.0 interface"):
            await client.list()
    await http.aclose()
    assert sent == before  # nothing went out for it
