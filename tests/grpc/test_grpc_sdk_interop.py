"""gRPC interop with the official SDK (a2a-sdk[grpc] 1.3.0), both directions.

- The SDK's gRPC client (``ClientFactory`` with ``grpc_channel_factory``) against our server:
  send, stream, get, list, cancel, subscribe, push configs, and typed errors.
- Our ``GRPCTransport`` (through ``AsyncClient``) against the SDK's gRPC server (``GrpcHandler``
  over ``DefaultRequestHandler``, the SDK demo agent of tests/client/sdk_agent.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
    a2a_pb2_grpc,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from google.protobuf import json_format

import grpc
from simple_a2a import AsyncClient
from simple_a2a.protocol import errors as e
from simple_a2a.protocol.models import Message, Task
from simple_a2a.protocol.models import TaskState as OurState
from tests.client.sdk_agent import DemoExecutor
from tests.grpc.grpc_served import Served
from tests.grpc.sdk_grpc_agent import sdk_grpc_agent

PEER = "Python SDK 1.3.0"
OURS = {"peer": PEER, "direction": "ours → theirs", "protocol": "1.0", "binding": "GRPC"}
THEIRS = {"peer": PEER, "direction": "theirs → ours", "protocol": "1.0", "binding": "GRPC"}

# -- the SDK's client against our server --------------------------------------------------------


def sdk_client(served: Served, *, streaming: bool) -> Any:
    card = json_format.ParseDict(served.card().to_dict(), AgentCard(), ignore_unknown_fields=True)
    config = ClientConfig(
        supported_protocol_bindings=["GRPC"],
        streaming=streaming,
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    return ClientFactory(config).create(card)


def message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_send_get_list(served: Served) -> None:
    client = sdk_client(served, streaming=False)
    try:
        events = [ev async for ev in client.send_message(message("hello"))]
        task = events[-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got.id == task.id and got.status.state == TaskState.TASK_STATE_COMPLETED
        page = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in page.tasks] == [task.id]
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="nope"))
    finally:
        await client.close()


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_stream(served: Served) -> None:
    client = sdk_client(served, streaming=True)
    try:
        events = [ev async for ev in client.send_message(message("steps 3"))]
    finally:
        await client.close()
    assert events[0].HasField("task")
    chunks = [
        e.artifact_update.artifact.parts[0].text for e in events if e.HasField("artifact_update")
    ]
    assert chunks == ["0 ", "1 ", "2 "]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_cancel_and_subscribe(served: Served) -> None:
    client = sdk_client(served, streaming=True)
    try:
        request = message("slow")
        request.configuration.return_immediately = True
        task = [ev async for ev in sdk_client(served, streaming=False).send_message(request)][
            -1
        ].task
        seen: list[Any] = []

        async def follow() -> None:
            async for ev in client.subscribe(SubscribeToTaskRequest(id=task.id)):
                seen.append(ev)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        await asyncio.wait_for(follower, 5)
        assert seen[0].HasField("task")
        assert seen[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
    finally:
        await client.close()


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_push_configs(served: Served) -> None:
    client = sdk_client(served, streaming=False)
    try:
        task = [ev async for ev in client.send_message(message("hello"))][-1].task
        config = TaskPushNotificationConfig(task_id=task.id, id="c1", url="http://127.0.0.1:9/h")
        created = await client.create_task_push_notification_config(config)
        assert created.id == "c1"
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1")
        )
        assert got.url == "http://127.0.0.1:9/h"
    finally:
        await client.close()


# -- our client against the SDK's server -------------------------------------------------------


@pytest.fixture
async def sdk_server() -> AsyncIterator[AgentCard]:
    async with sdk_grpc_agent("SDK gRPC agent", "1.0") as card:
        yield card


def our_client(card: AgentCard) -> AsyncClient:
    return AsyncClient(json_format.MessageToDict(card))


@pytest.mark.interop(**OURS)
async def test_our_client_send_get_list(sdk_server: AgentCard) -> None:
    async with our_client(sdk_server) as client:
        task = await client.send("hello")
        assert client.interface is not None and client.interface.protocol_binding == "GRPC"
        assert isinstance(task, Task) and task.status.state == OurState.COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        got = await client.get(task.id)
        assert got.id == task.id
        page = await client.list()
        assert task.id in [t.id for t in page.tasks]
        reply = await client.send("reply hi")
        assert isinstance(reply, Message) and reply.text == "reply: hi"
        with pytest.raises(e.TaskNotFoundError):
            await client.get("nope")


@pytest.mark.interop(**OURS)
async def test_our_client_stream(sdk_server: AgentCard) -> None:
    async with our_client(sdk_server) as client:
        events = [ev async for ev in client.stream("count 3")]
    assert isinstance(events[0], Task)
    final = events[-1]
    assert final.status.state == OurState.COMPLETED  # type: ignore[union-attr]


@pytest.mark.interop(**OURS)
async def test_our_client_cancel_subscribe_push(sdk_server: AgentCard) -> None:
    async with our_client(sdk_server) as client:
        task = await client.send("slow", return_immediately=True)
        seen: list[Any] = []

        async def follow() -> None:
            async for ev in client.subscribe(task.id):
                seen.append(ev)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        created = await client.create_push_config(task.id, "http://127.0.0.1:9/h", config_id="c1")
        assert created.id == "c1"
        assert [c.id for c in await client.list_push_configs(task.id)] == ["c1"]
        await client.delete_push_config(task.id, "c1")
        canceled = await client.cancel(task.id)
        assert canceled.status.state == OurState.CANCELED
        await asyncio.wait_for(follower, 5)
        assert seen and seen[-1].status.state == OurState.CANCELED
        with pytest.raises(e.TaskNotCancelableError):
            await client.cancel(task.id)


# -- discovery: our client reaches the SDK's gRPC interface in every URL form (issue 15 item 1) --

URL_FORMS = ["127.0.0.1:{port}", "[::1]:{port}", "grpc://127.0.0.1:{port}", "http://[::1]:{port}"]


@pytest.mark.parametrize("form", URL_FORMS)
@pytest.mark.interop(**OURS)
async def test_our_client_discovers_grpc_url_forms(form: str, serve: Any) -> None:
    """The SDK publishes its card over HTTP with the GRPC interface as ``host:port`` (the
    proto's form): our client must dial it as a gRPC target, never join it onto the card URL."""
    from a2a.server.routes import create_agent_card_routes
    from starlette.applications import Starlette

    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    try:
        server.add_insecure_port(f"[::1]:{port}")
    except RuntimeError:
        if "::1" in form:
            pytest.skip("no IPv6 loopback")
    card = AgentCard(
        name="SDK gRPC agent",
        description="echo",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        supported_interfaces=[
            AgentInterface(
                url=form.format(port=port), protocol_binding="GRPC", protocol_version="1.0"
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=DemoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    try:
        card_url = serve(Starlette(routes=create_agent_card_routes(card)))
        async with AsyncClient(card_url) as client:
            task = await client.send("hello")
            assert client.interface is not None
            assert client.interface.url == form.format(port=port)  # not joined
            assert isinstance(task, Task) and task.artifacts[0].parts[0].text == "echo: hello"
    finally:
        await server.stop(0)


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_rate_limited_send() -> None:
    """Our RateLimitError over gRPC (UNAVAILABLE with a google.rpc.Status) reaches the SDK's
    client as an error of its own carrying our message; once the work ended, the next message
    is served."""
    from simple_a2a.server import Limits
    from tests.grpc.grpc_served import start
    from tests.server.test_running_limit import HeldAgent, wait_idle
    from tests.server.test_sdk_interop import refused_while_held

    agent = HeldAgent()
    served = await start(executor=agent, push=None, limits=Limits(max_running_tasks_per_caller=1))
    client = sdk_client(served, streaming=False)
    try:
        refused = await refused_while_held(client)
        assert "Limits.max_running_tasks_per_caller" in str(refused)
        agent.release.set()
        await wait_idle(served.a2a)
        events = [ev async for ev in client.send_message(message("work"))]
        assert events[-1].task.status.state == TaskState.TASK_STATE_COMPLETED
    finally:
        await client.close()
        await served.close()
