"""A2A 0.3 over gRPC (``a2a.v1.A2AService``) with the official SDK 1.3.0's 0.3 compatibility
layer, both directions (issue 15 item 5; the SDK 0.3.26 peer is in tests/interop/test_sdk03.py):

- the SDK's ``CompatGrpcTransport`` (``ClientFactory`` on a GRPC interface of protocol version
  0.3) against our server's 0.3 service, also with the card as our server serves it, read by
  the SDK's own card parser, and without that transport (F7: it speaks 1.0 to our port);
- our client against the SDK's ``CompatGrpcHandler`` behind a 0.3 GRPC interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a.client import ClientConfig, ClientFactory, client_factory
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import (
    AgentCard,
    AgentInterface,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from google.protobuf import json_format

import grpc
from simple_a2a import AsyncClient
from simple_a2a.protocol import errors as e
from simple_a2a.protocol.card import AgentInterface as OurInterface
from simple_a2a.protocol.models import Message, Task
from simple_a2a.protocol.models import TaskState as OurState
from tests.conftest import free_port
from tests.grpc.grpc_served import Served, make_card, start
from tests.grpc.sdk_grpc_agent import sdk_grpc_agent

PEER = "Python SDK 1.3.0"
OURS = {"peer": PEER, "direction": "ours → theirs", "protocol": "0.3", "binding": "GRPC"}
THEIRS = {
    "peer": PEER,
    "direction": "theirs → ours",
    "protocol": "0.3",
    "binding": "GRPC",
    "faults": {"GRPC": "F7"},
}

# -- the SDK's 0.3 gRPC client against our server -----------------------------------------------


@pytest.fixture(autouse=True)
def _compat_grpc_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peer fault F7 (docs/interop.md): when ``a2a.server.routes`` is imported before the client
    factory (other test modules do), the factory's ``CompatGrpcTransport`` is silently None (a
    circular import swallowed by its ``except ImportError``) and the SDK speaks 1.0 gRPC to a
    0.3 interface. Restore it, as an application importing the client first would have it."""
    from a2a.client import client_factory
    from a2a.compat.v0_3.grpc_transport import CompatGrpcTransport

    monkeypatch.setattr(client_factory, "CompatGrpcTransport", CompatGrpcTransport)


def sdk_client(served: Served, *, streaming: bool) -> Any:
    """The SDK's client on our card, told that our gRPC interface speaks 0.3 (a 0.3 agent's
    card as the SDK reads it): it picks its CompatGrpcTransport, which calls ``a2a.v1``."""
    card = json_format.ParseDict(served.card().to_dict(), AgentCard(), ignore_unknown_fields=True)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(url=served.target, protocol_binding="GRPC", protocol_version="0.3")
    )
    config = ClientConfig(
        supported_protocol_bindings=["GRPC"],
        streaming=streaming,
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    return ClientFactory(config).create(card)


def message(text: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_send_get_errors(served: Served) -> None:
    client = sdk_client(served, streaming=False)
    try:
        assert type(client._transport).__name__ == "CompatGrpcTransport"
        task = [ev async for ev in client.send_message(message("hello"))][-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got.id == task.id and got.history[0].parts[0].text == "hello"
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
    chunks = [
        e.artifact_update.artifact.parts[0].text for e in events if e.HasField("artifact_update")
    ]
    assert chunks == ["0 ", "1 ", "2 "]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_cancel_subscribe_push_configs(served: Served) -> None:
    unary, streaming = sdk_client(served, streaming=False), sdk_client(served, streaming=True)
    try:
        request = message("slow")
        request.configuration.return_immediately = True
        task = [ev async for ev in unary.send_message(request)][-1].task
        seen: list[Any] = []

        async def follow() -> None:
            async for ev in streaming.subscribe(SubscribeToTaskRequest(id=task.id)):
                seen.append(ev)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        config = TaskPushNotificationConfig(task_id=task.id, id="c1", url="http://127.0.0.1:9/h")
        assert (await unary.create_task_push_notification_config(config)).id == "c1"
        got = await unary.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1")
        )
        assert got.url == "http://127.0.0.1:9/h"
        listed = await unary.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert [c.id for c in listed.configs] == ["c1"]
        await unary.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="c1")
        )
        canceled = await unary.cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        await asyncio.wait_for(follower, 5)
        assert seen and seen[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await unary.cancel_task(CancelTaskRequest(id=task.id))
    finally:
        await unary.close()
        await streaming.close()


@pytest.fixture
async def served03() -> AsyncIterator[Served]:
    """Our server whose card declares its gRPC interface 0.3 only (``a2a.v1`` on that port)."""
    port = free_port()
    grpc03 = OurInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="0.3")
    card = make_card(pushNotifications=True).model_copy(update={"supported_interfaces": [grpc03]})
    served = await start(card, port=port)
    try:
        yield served
    finally:
        await served.close()


def resolved_client(served: Served) -> Any:
    """The SDK's client on our card as our server serves it (1.0 and 0.3 fields), read by the
    SDK's own card parser."""
    card = parse_agent_card(served.a2a.card_document("http://testserver"))
    config = ClientConfig(
        supported_protocol_bindings=["GRPC"],
        streaming=False,
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    return ClientFactory(config).create(card)


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_resolves_our_card(served03: Served) -> None:
    client = resolved_client(served03)
    try:
        assert type(client._transport).__name__ == "CompatGrpcTransport"
        task = [ev async for ev in client.send_message(message("hello"))][-1].task
        follow_up = SendMessageRequest(
            message=new_text_message("more", context_id=task.context_id, role=Role.ROLE_USER)
        )
        again = [ev async for ev in client.send_message(follow_up)][-1].task
        assert again.context_id == task.context_id and again.id != task.id
        reply = [ev async for ev in client.send_message(message("reply hi"))][-1]
        assert reply.message.parts[0].text == "reply: hi"
        for cid in ("c1", "c2"):
            url = f"http://127.0.0.1:9/{cid}"
            config = TaskPushNotificationConfig(task_id=task.id, id=cid, url=url, token="tok")
            assert (await client.create_task_push_notification_config(config)).id == cid
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="c2")
        )
        assert (got.id, got.url, got.token) == ("c2", "http://127.0.0.1:9/c2", "tok")
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert sorted(c.id for c in listed.configs) == ["c1", "c2"]
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id="nope", id="c1")
            )
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task(CancelTaskRequest(id="nope"))
    finally:
        await client.close()


@pytest.mark.interop(**THEIRS)
async def test_sdk_client_without_its_03_transport(
    served03: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F7 as it happens: the factory without ``CompatGrpcTransport`` speaks 1.0 (``lf.a2a.v1``)
    to our interface declared 0.3; our port serves both services, so the client still works."""
    monkeypatch.setattr(client_factory, "CompatGrpcTransport", None)
    client = resolved_client(served03)
    try:
        assert type(client._transport).__name__ == "GrpcTransport"
        task = [ev async for ev in client.send_message(message("hello"))][-1].task
        assert task.artifacts[0].parts[0].text == "echo: hello"
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="nope"))
    finally:
        await client.close()


# -- our client against the SDK's 0.3 gRPC server ----------------------------------------------


@pytest.fixture
async def sdk_v03_server() -> AsyncIterator[AgentCard]:
    async with sdk_grpc_agent("SDK 0.3 gRPC agent", "0.3") as card:
        yield card


@pytest.mark.interop(**OURS)
async def test_our_client_send_get_reply_errors(sdk_v03_server: AgentCard) -> None:
    async with AsyncClient(json_format.MessageToDict(sdk_v03_server)) as client:
        task = await client.send("hello")
        assert client.protocol_version == "0.3"
        assert client.interface is not None and client.interface.protocol_binding == "GRPC"
        assert isinstance(task, Task) and task.status.state == OurState.COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        assert (await client.get(task.id)).id == task.id
        again = await client.send("echo two", context_id=task.context_id)
        assert isinstance(again, Task) and again.context_id == task.context_id
        reply = await client.send("reply hi")
        assert isinstance(reply, Message) and reply.text == "reply: hi"
        with pytest.raises(e.TaskNotFoundError):
            await client.get("nope")


@pytest.mark.interop(**OURS)
async def test_our_client_stream(sdk_v03_server: AgentCard) -> None:
    async with AsyncClient(json_format.MessageToDict(sdk_v03_server)) as client:
        events = [ev async for ev in client.stream("count 3")]
    final = events[-1]
    assert final.status.state == OurState.COMPLETED  # type: ignore[union-attr]


@pytest.mark.interop(**OURS)
async def test_our_client_cancel_subscribe_push_configs(sdk_v03_server: AgentCard) -> None:
    async with AsyncClient(json_format.MessageToDict(sdk_v03_server)) as client:
        task = await client.send("slow", return_immediately=True)
        seen: list[Any] = []

        async def follow() -> None:
            async for ev in client.subscribe(task.id):
                seen.append(ev)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        created = await client.create_push_config(task.id, "http://127.0.0.1:9/h", config_id="c1")
        assert created.id == "c1"
        assert (await client.get_push_config(task.id, "c1")).url == "http://127.0.0.1:9/h"
        assert [c.id for c in await client.list_push_configs(task.id)] == ["c1"]
        await client.delete_push_config(task.id, "c1")
        canceled = await client.cancel(task.id)
        assert canceled.status.state == OurState.CANCELED
        await asyncio.wait_for(follower, 5)
        assert seen and seen[-1].status.state == OurState.CANCELED
        with pytest.raises(e.TaskNotCancelableError):
            await client.cancel(task.id)


@pytest.mark.interop(**OURS)
async def test_our_client_push_configs_by_id_and_missing(sdk_v03_server: AgentCard) -> None:
    async with AsyncClient(json_format.MessageToDict(sdk_v03_server)) as client:
        task = await client.send("hello")
        hook = "http://127.0.0.1:9/hook"
        await client.create_push_config(task.id, hook, config_id="c1", token="tok")
        await client.create_push_config(task.id, hook + "2", config_id="c2")
        got = await client.get_push_config(task.id, "c2")
        assert (got.id, got.url) == ("c2", hook + "2")
        assert sorted(c.id for c in await client.list_push_configs(task.id)) == ["c1", "c2"]
        await client.delete_push_config(task.id, "c1")
        assert [c.id for c in await client.list_push_configs(task.id)] == ["c2"]
        with pytest.raises(e.TaskNotFoundError):
            await client.get_push_config("nope", "c1")
        with pytest.raises(e.TaskNotFoundError):
            await client.cancel("nope")
        with pytest.raises(e.UnsupportedOperationError):  # 0.3's gRPC service has no ListTasks
            await client.list()
