"""A2A 0.3 over gRPC (``a2a.v1.A2AService``, issue 15 item 5): the generated code, our server
serving it beside ``lf.a2a.v1`` on one port, and our client speaking it to our server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.protobuf import descriptor as pb_descriptor
from google.rpc import error_details_pb2, status_pb2

import grpc
from simple_a2a import AsyncClient
from simple_a2a.client import GRPCTransport, afold
from simple_a2a.protocol import errors as e
from simple_a2a.protocol import grpc_v03
from simple_a2a.protocol._grpc import a2a_pb2, a2a_pb2_grpc
from simple_a2a.protocol._grpc_v03 import a2a_v03_pb2, a2a_v03_pb2_grpc
from simple_a2a.protocol.card import AgentInterface
from simple_a2a.protocol.models import Message, Task, TaskPushNotificationConfig, TaskState
from tests.grpc.grpc_served import Served, start
from tests.push.push_helpers import Receiver, serve_in_thread
from tests.support.agents import cancel_while_subscribed

# -- the generated code -------------------------------------------------------------------------


def _fields(file: pb_descriptor.FileDescriptor) -> dict[tuple[str, str], tuple[Any, ...]]:
    out: dict[tuple[str, str], tuple[Any, ...]] = {}

    def walk(prefix: str, message: pb_descriptor.Descriptor) -> None:
        for f in message.fields:
            target = f.message_type.full_name if f.message_type else None
            out[(prefix + message.name, f.name)] = (f.number, f.type, f.json_name, target)
        for nested in message.nested_types:
            walk(prefix + message.name + ".", nested)

    for message in file.message_types_by_name.values():
        walk("", message)
    return out


def test_generated_03_code_is_the_official_sdks_a2a_v1() -> None:
    """Field by field (number, type, JSON name) and rpc by rpc, our 0.3 descriptor is the one the
    official SDK 1.3.0 ships for its 0.3 layer (0.3.0's proto plus the 0.3.x additions that
    scripts/gen_grpc applies), and both load in one process (private descriptor pool)."""
    from a2a.compat.v0_3 import a2a_v0_3_pb2 as official

    assert a2a_v03_pb2.DESCRIPTOR.package == official.DESCRIPTOR.package == "a2a.v1"
    assert _fields(a2a_v03_pb2.DESCRIPTOR) == _fields(official.DESCRIPTOR)
    ours = a2a_v03_pb2.DESCRIPTOR.services_by_name["A2AService"]
    theirs = official.DESCRIPTOR.services_by_name["A2AService"]
    assert [
        (m.name, m.input_type.name, m.output_type.name, m.server_streaming) for m in ours.methods
    ] == [
        (m.name, m.input_type.name, m.output_type.name, m.server_streaming) for m in theirs.methods
    ]
    assert set(grpc_v03.RPCS.values()) == {m.name for m in ours.methods}


# -- our server: both services on one port ------------------------------------------------------


async def _raw03(served: Served, rpc: str, request: Any, metadata: Any = ()) -> Any:
    async with grpc.aio.insecure_channel(served.target) as channel:
        stub = a2a_v03_pb2_grpc.A2AServiceStub(channel)
        return await getattr(stub, rpc)(request, metadata=metadata, timeout=5)


def _status(exc: grpc.aio.AioRpcError) -> status_pb2.Status:
    raw = dict(exc.trailing_metadata() or ())["grpc-status-details-bin"]
    return status_pb2.Status.FromString(raw)


async def test_both_services_on_one_port(served: Served) -> None:
    request = a2a_v03_pb2.SendMessageRequest(
        request=a2a_v03_pb2.Message(
            message_id="m1",
            role=a2a_v03_pb2.ROLE_USER,
            content=[a2a_v03_pb2.Part(text="hello")],
        ),
        configuration=a2a_v03_pb2.SendMessageConfiguration(blocking=True),
    )
    reply = await _raw03(served, "SendMessage", request)
    task = reply.task
    assert task.status.state == a2a_v03_pb2.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "echo: hello"
    assert task.history[0].content[0].text == "hello"  # 0.3's ``content``, not ``parts``
    got = await _raw03(served, "GetTask", a2a_v03_pb2.GetTaskRequest(name=f"tasks/{task.id}"))
    assert got.id == task.id
    async with grpc.aio.insecure_channel(served.target) as channel:  # the same task over 1.0
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        again = await stub.GetTask(a2a_pb2.GetTaskRequest(id=task.id), timeout=5)
    assert again.status.state == a2a_pb2.TASK_STATE_COMPLETED


async def test_03_errors_name_the_error_and_carry_error_info(served: Served) -> None:
    """Status codes as 1.0 (spec §10.6); the message ``"TaskNotFoundError: …"`` as the official
    SDKs' 0.3 servers send it (their 0.3 clients type errors by it)."""
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _raw03(served, "GetTask", a2a_v03_pb2.GetTaskRequest(name="tasks/nope"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert (info.value.details() or "").startswith("TaskNotFoundError: ")
    status = _status(info.value)
    error_info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(error_info)
    assert error_info.reason == "TASK_NOT_FOUND" and error_info.domain == "a2a-protocol.org"
    with pytest.raises(grpc.aio.AioRpcError) as info:  # a name that is not tasks/{id}
        await _raw03(served, "GetTask", a2a_v03_pb2.GetTaskRequest(name="nope"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (info.value.details() or "").startswith("InvalidParamsError: ")


async def test_the_service_is_the_version(served: Served) -> None:
    """``a2a.v1`` is 0.3 whatever ``a2a-version`` says; ``lf.a2a.v1`` refuses 0.3."""
    request = a2a_v03_pb2.SendMessageRequest(
        request=a2a_v03_pb2.Message(
            message_id="m2", role=a2a_v03_pb2.ROLE_USER, content=[a2a_v03_pb2.Part(text="hi")]
        ),
        configuration=a2a_v03_pb2.SendMessageConfiguration(blocking=True),
    )
    reply = await _raw03(served, "SendMessage", request, metadata=(("a2a-version", "1.0"),))
    assert reply.task.status.state == a2a_v03_pb2.TASK_STATE_COMPLETED
    async with grpc.aio.insecure_channel(served.target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.GetTask(
                a2a_pb2.GetTaskRequest(id="x"), metadata=(("a2a-version", "0.3"),), timeout=5
            )
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "a2a.v1.A2AService" in (info.value.details() or "")


async def test_v03_false_serves_only_1_0() -> None:
    s = await start(v03=False)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await _raw03(s, "GetTask", a2a_v03_pb2.GetTaskRequest(name="tasks/x"))
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        await s.close()


# -- our client speaking 0.3 over gRPC to our server --------------------------------------------


@pytest.fixture
async def client03(served: Served) -> AsyncIterator[AsyncClient]:
    """Our client on a card whose only interface is GRPC 0.3 (a 0.3 agent's gRPC)."""
    interface = AgentInterface(url=served.target, protocol_binding="GRPC", protocol_version="0.3")
    card = served.card().model_copy(update={"supported_interfaces": [interface]})
    async with AsyncClient(card, bindings=["GRPC"]) as client:
        yield client


async def test_client03_send_get_reply_errors(client03: AsyncClient) -> None:
    task = await client03.send("hello", metadata={"k": "v"})
    assert isinstance(client03._transport, GRPCTransport) and client03.protocol_version == "0.3"
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.text == "echo: hello"
    got = await client03.get(task.id)
    assert got.id == task.id and got.history[0].text == "hello"
    reply = await client03.send("reply hey")
    assert isinstance(reply, Message) and reply.text == "reply: hey"
    with pytest.raises(e.TaskNotFoundError) as info:
        await client03.get("nope")
    assert not info.value.message.startswith("TaskNotFoundError")  # the name is not the text
    with pytest.raises(e.TaskNotCancelableError):
        await client03.cancel(task.id)
    with pytest.raises(e.UnsupportedOperationError, match="ListTasks"):  # 0.3 has no rpc for it
        await client03.list()


async def test_client03_stream_multi_turn(client03: AsyncClient) -> None:
    final = await afold(client03.stream("steps 3"))
    assert isinstance(final, Task) and final.status.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "
    first = await client03.send("ask")
    assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
    second = await client03.send("ask large", task_id=first.id, context_id=first.context_id)
    assert isinstance(second, Task) and second.status.state is TaskState.COMPLETED


async def test_client03_cancel_subscribe(client03: AsyncClient) -> None:
    task = await client03.send("slow", return_immediately=True)
    canceled, seen = await cancel_while_subscribed(client03, task.id)
    assert canceled.status.state is TaskState.CANCELED
    assert isinstance(seen[0], Task) and seen[-1].status.state is TaskState.CANCELED


async def test_client03_push_configs_and_0_3_delivery(client03: AsyncClient) -> None:
    """Every push config rpc; a webhook registered over 0.3 gRPC gets 0.3 Task objects
    (0.3 §9.5, issue 15 item 2): the CallContext says 0.3."""
    receiver = Receiver()
    with serve_in_thread(receiver.app) as hook_base:
        hook = hook_base + "/hook"
        config = TaskPushNotificationConfig(url=hook, token="tok")
        task = await client03.send("slow", return_immediately=True, push_config=config)
        created = await client03.create_push_config(task.id, hook, config_id="c1", token="t")
        assert created.id == "c1" and created.url == hook and created.task_id == task.id
        got = await client03.get_push_config(task.id, "c1")
        assert got.token == "t"
        assert {c.id for c in await client03.list_push_configs(task.id)} >= {"c1"}
        await client03.delete_push_config(task.id, "c1")
        assert "c1" not in {c.id for c in await client03.list_push_configs(task.id)}
        with pytest.raises(e.TaskNotFoundError):
            await client03.get_push_config("nope", "c1")
        await client03.cancel(task.id)
        for _ in range(200):
            if any(b'"canceled"' in body for _, body in receiver.received):
                break
            await asyncio.sleep(0.05)
    pushed = [json.loads(body) for _, body in receiver.received]
    assert pushed and all(p["kind"] == "task" and p["id"] == task.id for p in pushed)
    assert pushed[-1]["status"]["state"] == "canceled"


async def test_client03_extended_card() -> None:
    from tests.grpc.grpc_served import make_card

    extended = make_card().model_copy(update={"name": "Extended"})
    s = await start(card=make_card(extendedAgentCard=True), extended_card=extended)
    try:
        interface = AgentInterface(url=s.target, protocol_binding="GRPC", protocol_version="0.3")
        card = s.card().model_copy(update={"supported_interfaces": [interface]})
        async with AsyncClient(card, bindings=["GRPC"]) as client:
            got = await client.extended_card()
        assert got.name == "Extended"
    finally:
        await s.close()


def test_resource_names_both_ways() -> None:
    up = grpc_v03.request_up
    assert up("GetTask", {"name": "tasks/t1", "historyLength": 2}) == {
        "id": "t1",
        "historyLength": 2,
    }
    assert up("GetTask", {"name": "tasks/t1"}) == {"id": "t1"}
    assert up(
        "DeleteTaskPushNotificationConfig", {"name": "tasks/t1/pushNotificationConfigs/c"}
    ) == {
        "taskId": "t1",
        "id": "c",
    }
    assert up("ListTaskPushNotificationConfigs", {"parent": "tasks/t1"}) == {"taskId": "t1"}
    created = up(
        "CreateTaskPushNotificationConfig",
        {
            "parent": "tasks/t1",
            "configId": "c",
            "config": {"name": "", "pushNotificationConfig": {"url": "http://h/x"}},
        },
    )
    assert created == {"taskId": "t1", "id": "c", "url": "http://h/x"}
    with pytest.raises(e.InvalidParamsError):
        up("CancelTask", {"name": "task/t1"})
    down = grpc_v03.request_down
    assert down("SubscribeToTask", {"id": "t1"}) == {"name": "tasks/t1"}
    assert down("GetTaskPushNotificationConfig", {"taskId": "t1", "id": "c"}) == {
        "name": "tasks/t1/pushNotificationConfigs/c"
    }
    assert grpc_v03.split_error_message("TaskNotFoundError: gone") == (e.TaskNotFoundError, "gone")
    assert grpc_v03.split_error_message("SomethingError: x") is None
