"""The official SDK's client (a2a-sdk 1.3.0) runs every operation against our server.

Four client setups: 1.0 over JSON-RPC and over HTTP+JSON (the SDK picks the interface from our
card), and 0.3 over JSON-RPC and over HTTP+JSON (the SDK's compat transports, chosen by an
interface declaring ``protocolVersion: "0.3"``; no version header negotiation — the liberal
rule of docs/server.md serves 0.3 method names and ``/v1`` routes as 0.3). The SDK's 0.3
transports do not implement ListTasks (both) nor list/delete of push configs (REST); those
combinations are skipped, not failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import (
    AgentInterface,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from simple_a2a.server import Limits, server
from tests.support.agents import TestAgent, make_card, serving

pytestmark = pytest.mark.interop(peer="Python SDK 1.3.0", direction="theirs → ours")

SETUPS = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    extended = make_card(pushNotifications=True, extendedAgentCard=True).model_copy(
        update={"name": "Extended"}
    )
    app = server(
        make_card(pushNotifications=True, extendedAgentCard=True),
        TestAgent(),
        extended_card=extended,
    ).app
    with serving(app) as base:
        yield base


@pytest.fixture(params=SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
def setup(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def make_client(url: str, setup: tuple[str, str], *, streaming: bool) -> Any:
    binding, version = setup
    factory = ClientFactory(
        ClientConfig(supported_protocol_bindings=[binding], streaming=streaming)
    )
    if version == "1.0":
        return await factory.create_from_url(url)
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, url).get_agent_card()
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=url, protocol_binding=binding, protocol_version="0.3")
    )
    return factory.create(card)


@pytest.fixture
async def sdk(url: str, setup: tuple[str, str]) -> AsyncIterator[Any]:
    client = await make_client(url, setup, streaming=False)
    yield client
    await client.close()


@pytest.fixture
async def sdk_stream(url: str, setup: tuple[str, str]) -> AsyncIterator[Any]:
    client = await make_client(url, setup, streaming=True)
    yield client
    await client.close()


def message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))


async def send(client: Any, text: str) -> Any:
    events = [ev async for ev in client.send_message(message(text))]
    return events[-1].task


async def background_task(client: Any) -> Any:
    request = message("slow")
    request.configuration.return_immediately = True
    events = [ev async for ev in client.send_message(request)]
    return events[-1].task


async def test_send_message(sdk: Any) -> None:
    task = await send(sdk, "hello")
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "echo: hello"


async def test_send_streaming_message(sdk_stream: Any) -> None:
    events = [ev async for ev in sdk_stream.send_message(message("steps 3"))]
    assert events[0].HasField("task")
    chunks = [
        ev.artifact_update.artifact.parts[0].text for ev in events if ev.HasField("artifact_update")
    ]
    assert chunks == ["0 ", "1 ", "2 "]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_get_task_and_errors(sdk: Any) -> None:
    task = await send(sdk, "hello")
    got = await sdk.get_task(GetTaskRequest(id=task.id, history_length=1))
    assert got.id == task.id and len(got.history) == 1
    with pytest.raises(TaskNotFoundError):
        await sdk.get_task(GetTaskRequest(id="does-not-exist"))


async def test_list_tasks(sdk: Any, setup: tuple[str, str]) -> None:
    if setup[1] == "0.3":
        pytest.skip("the SDK's 0.3 transports do not implement ListTasks")
    task = await send(sdk, "listed")
    page = await sdk.list_tasks(ListTasksRequest(context_id=task.context_id, page_size=5))
    assert [t.id for t in page.tasks] == [task.id]


async def test_cancel_task(sdk: Any) -> None:
    task = await background_task(sdk)
    canceled = await sdk.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED


async def test_subscribe_to_task(sdk_stream: Any, sdk: Any) -> None:
    task = await background_task(sdk)

    async def follow() -> list[Any]:
        return [ev async for ev in sdk_stream.subscribe(SubscribeToTaskRequest(id=task.id))]

    live = asyncio.create_task(follow())
    await asyncio.sleep(0.3)
    await sdk.cancel_task(CancelTaskRequest(id=task.id))
    events = await asyncio.wait_for(live, 5)
    assert events[0].HasField("task")
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED


async def test_push_config_operations(sdk: Any, setup: tuple[str, str]) -> None:
    task = await send(sdk, "push")
    config = TaskPushNotificationConfig(
        task_id=task.id, id="cfg-1", url="https://93.184.216.34/hook", token="t"
    )
    made = await sdk.create_task_push_notification_config(config)
    assert made.id == "cfg-1" and made.url == "https://93.184.216.34/hook"
    got = await sdk.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
    )
    assert got.token == "t"
    if setup == ("HTTP+JSON", "0.3"):
        pytest.skip("the SDK's 0.3 REST transport does not implement list/delete")
    listed = await sdk.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert [c.id for c in listed.configs] == ["cfg-1"]
    await sdk.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
    )


async def test_extended_card(sdk: Any) -> None:
    card = await sdk.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert card.name == "Extended"


async def refused_while_held(client: Any) -> Exception:
    """Against an agent allowing one running task: a message with ``returnImmediately`` holds
    the place, the same again must raise one of the SDK's errors (returned)."""
    from a2a.utils.errors import A2AError

    held = message("work")
    held.configuration.return_immediately = True
    first = [ev async for ev in client.send_message(held)]
    assert first[-1].task.status.state != TaskState.TASK_STATE_COMPLETED
    with pytest.raises(A2AError) as refused:
        [ev async for ev in client.send_message(held)]
    return refused.value


@pytest.mark.parametrize("setup", SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
async def test_rate_limited_send_is_an_error_of_its_own(setup: tuple[str, str]) -> None:
    """Our RateLimitError (``Limits.max_running_tasks_per_caller``) reaches the SDK as one of its
    own errors (JSON-RPC: its ``InternalError`` with our message, the code being -32603;
    HTTP+JSON: its ``A2AClientError`` for the 503), and the next message is served once the
    running work ended."""
    from tests.server.test_limits import serving_here
    from tests.server.test_running_limit import HeldAgent, wait_idle

    agent = HeldAgent()
    srv = server(make_card(), agent, limits=Limits(max_running_tasks_per_caller=1))
    async with serving_here(srv) as port:
        client = await make_client(f"http://127.0.0.1:{port}", setup, streaming=False)
        try:
            text = str(await refused_while_held(client))
            if setup[0] == "JSONRPC":
                assert "Limits.max_running_tasks_per_caller" in text
            else:
                assert "503" in text
            agent.release.set()
            await wait_idle(srv)
            assert (await send(client, "work")).status.state == TaskState.TASK_STATE_COMPLETED
        finally:
            await client.close()
