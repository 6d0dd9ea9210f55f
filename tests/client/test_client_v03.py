"""A 0.3-only agent (the official SDK 1.3.0's 0.3 compatibility layer behind a 0.3 card) is
spoken to in 0.3, over JSON-RPC and over HTTP+JSON (issue 15 items 3 and 4).

0.3 REST carries the 0.3 proto's ProtoJSON (``ROLE_USER``, ``content``, ``TASK_STATE_*``): the
SDK's 0.3 REST layer rejects the 0.3 JSON-RPC object shapes, which is what these tests pin.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest

from simple_a2a import Task, TaskNotFoundError, TaskState
from simple_a2a.client import AsyncClient, NegotiationError, afold
from simple_a2a.protocol.errors import InvalidAgentResponseError, TaskNotCancelableError
from tests.client.sdk_agent import build_v03_app
from tests.client.servers import ServerThread
from tests.support.agents import cancel_while_subscribed

pytestmark = pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs", protocol="0.3")


@pytest.fixture(scope="module", params=["JSONRPC", "HTTP+JSON"])
def v03_server(request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    with ServerThread(functools.partial(build_v03_app, binding=request.param)) as server:
        yield server


async def test_v03_round_trip(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        task = await agent.send("echo old")
        assert agent.protocol_version == "0.3"
        assert isinstance(task, Task) and task.state is TaskState.COMPLETED
        assert task.text == "echo: echo old"
        got = await agent.get(task.id)
        assert got.id == task.id and got.state is TaskState.COMPLETED
        assert [m.text for m in got.history][:1] == ["echo old"]
        with pytest.raises(TaskNotFoundError):
            await agent.get("missing")


async def test_v03_multi_turn(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        first = await agent.send("echo one")
        assert isinstance(first, Task)
        second = await agent.send("echo two", context_id=first.context_id)
        assert isinstance(second, Task) and second.context_id == first.context_id


async def test_v03_stream(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        final = await afold(agent.stream("count 3"))
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


async def test_v03_cancel_and_subscribe(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        task = await agent.send("slow", return_immediately=True)
        assert isinstance(task, Task)
        canceled, seen = await cancel_while_subscribed(agent, task.id, settle=0.3)
        assert canceled.state is TaskState.CANCELED
        assert isinstance(seen[0], Task)
        with pytest.raises(TaskNotCancelableError):
            await agent.cancel(task.id)
        with pytest.raises(TaskNotFoundError):
            await agent.cancel("missing")


@pytest.mark.interop(
    peer="Python SDK 1.3.0",
    direction="ours → theirs",
    protocol="0.3",
    faults={"JSONRPC": "F1", "HTTP+JSON": "F2"},
)
async def test_v03_push_configs(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        task = await agent.send("echo push")
        assert isinstance(task, Task)
        url = "http://127.0.0.1:9/hook"
        created = await agent.create_push_config(task.id, url, config_id="c1", token="tok")
        assert created.id == "c1" and created.url == url and created.task_id == task.id
        got = await agent.get_push_config(task.id, "c1")
        assert got.url == url and got.token == "tok"
        listed = await agent.list_push_configs(task.id)
        assert [c.id for c in listed] == ["c1"]
        if agent.interface is not None and agent.interface.protocol_binding == "HTTP+JSON":
            # Peer fault (docs/interop.md): the SDK 1.3.0's 0.3 REST layer has no route for
            # DeleteTaskPushNotificationConfig (0.3 a2a.proto: DELETE /v1/{name=tasks/*/...}).
            with pytest.raises(InvalidAgentResponseError, match="404"):
                await agent.delete_push_config(task.id, "c1")
            return
        # The SDK answers this delete without ``result`` (item 4): read as success.
        await agent.delete_push_config(task.id, "c1")
        assert await agent.list_push_configs(task.id) == []


async def test_v03_refused_when_not_allowed(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url, allow_v03=False) as agent:
        with pytest.raises(NegotiationError):
            await agent.send("echo")
