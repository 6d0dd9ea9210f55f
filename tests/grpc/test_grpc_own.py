"""Every operation over gRPC: our GRPCTransport (via AsyncClient) against our grpc.aio server."""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2

import grpc
from simple_a2a import AsyncClient
from simple_a2a.auth import BearerAuth
from simple_a2a.client import GRPCTransport, afold
from simple_a2a.protocol import errors as e
from simple_a2a.protocol._grpc import a2a_pb2, a2a_pb2_grpc
from simple_a2a.protocol.card import AgentInterface
from simple_a2a.protocol.models import Message, Task, TaskState
from tests.grpc.grpc_served import EXT, GRPC_ONLY, Served, make_card, start
from tests.support.agents import cancel_while_subscribed


async def test_card_lists_grpc_and_client_picks_it(served: Served) -> None:
    interfaces = {i.protocol_binding: i.url for i in served.card().supported_interfaces}
    assert interfaces["GRPC"] == served.target
    async with served.client() as client:
        await client.send("hi")
        assert isinstance(client._transport, GRPCTransport)


async def test_send_get_list(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("hello", metadata={"k": "v"})
        assert isinstance(task, Task)
        assert task.status.state == TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        got = await client.get(task.id, history_length=0)
        assert got.id == task.id and got.history == []
        page = await client.list(context_id=task.context_id)
        assert [t.id for t in page.tasks] == [task.id]
        reply = await client.send("reply hey")
        assert isinstance(reply, Message) and reply.text == "reply: hey"


async def test_stream_and_fold(served: Served) -> None:
    async with served.client() as client:
        events = [event async for event in client.stream("steps 3")]
    assert isinstance(events[0], Task)
    final = await afold(_aiter(events))
    assert isinstance(final, Task)
    assert final.status.state == TaskState.COMPLETED
    assert final.artifacts[0].parts[0].text is not None
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


async def _aiter(items: list[Any]) -> Any:
    for item in items:
        yield item


async def test_cancel_and_subscribe(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("slow", return_immediately=True)
        canceled, seen = await cancel_while_subscribed(client, task.id)
        assert canceled.status.state == TaskState.CANCELED
        assert isinstance(seen[0], Task)
        assert seen[-1].status.state == TaskState.CANCELED
        with pytest.raises(e.TaskNotCancelableError) as info:
            await client.cancel(task.id)
        assert info.value.status_code == 400  # type: ignore[attr-defined]


async def test_multi_turn(served: Served) -> None:
    async with served.client() as client:
        first = await client.send("ask")
        assert isinstance(first, Task) and first.status.state == TaskState.INPUT_REQUIRED
        second = await client.send("ask large", task_id=first.id, context_id=first.context_id)
        assert isinstance(second, Task) and second.status.state == TaskState.COMPLETED


async def test_push_config_ops(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("hello")
        url = "http://127.0.0.1:9/hook"
        created = await client.create_push_config(task.id, url, config_id="c1", token="t")
        assert created.id == "c1" and created.url == url
        got = await client.get_push_config(task.id, "c1")
        assert got.token == "t"
        assert [c.id for c in await client.list_push_configs(task.id)] == ["c1"]
        await client.delete_push_config(task.id, "c1")
        assert await client.list_push_configs(task.id) == []
        with pytest.raises(e.TaskNotFoundError):
            await client.get_push_config("nope", "c1")


async def test_push_not_supported_and_extended_card() -> None:
    s = await start(card=make_card(), push=None)
    try:
        async with s.client() as client:
            task = await client.send("hello")
            with pytest.raises(e.PushNotificationNotSupportedError):
                await client.create_push_config(task.id, "http://127.0.0.1:9/hook")
            with pytest.raises(e.UnsupportedOperationError):  # the card declares none
                await client.extended_card()
    finally:
        await s.close()
    s = await start(card=make_card(extendedAgentCard=True), push=None)
    try:
        async with s.client() as client:
            with pytest.raises(e.ExtendedAgentCardNotConfiguredError):
                await client.extended_card()
    finally:
        await s.close()
    extended = make_card().model_copy(update={"name": "Extended"})
    s = await start(card=make_card(extendedAgentCard=True), extended_card=extended)
    try:
        async with s.client() as client:
            assert (await client.extended_card()).name == "Extended"
    finally:
        await s.close()


async def test_task_created_over_grpc_is_read_over_jsonrpc(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("hello")
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=served.a2a.app))
    async with AsyncClient(served.card(), bindings=["JSONRPC"], http_client=http) as client:
        got = await client.get(task.id)
        assert client.interface is not None and client.interface.protocol_binding == "JSONRPC"
    await http.aclose()
    assert got.status.state == TaskState.COMPLETED
    assert got.artifacts[0].parts[0].text == "echo: hello"


# -- the wire: status codes, ErrorInfo, metadata ----------------------------------------------


async def _raw(served: Served, rpc: str, request: Any, metadata: Any = ()) -> Any:
    async with grpc.aio.insecure_channel(served.target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        return await getattr(stub, rpc)(request, metadata=metadata, timeout=5)


async def _status(served: Served, rpc: str, request: Any, metadata: Any = ()) -> Any:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _raw(served, rpc, request, metadata)
    err = info.value
    raw = dict(err.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    assert status.code == err.code().value[0] and status.message == err.details()
    details: dict[str, Any] = {}
    for packed in status.details:
        for cls in (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest):
            if packed.Is(cls.DESCRIPTOR):
                detail = cls()
                packed.Unpack(detail)
                details[cls.__name__] = detail
    info_detail = details["ErrorInfo"]
    assert info_detail.domain == "a2a-protocol.org"
    return err.code(), info_detail, details


@pytest.mark.parametrize(
    ("rpc", "request_", "metadata", "code", "reason"),
    [
        ("GetTask", a2a_pb2.GetTaskRequest(id="nope"), (), "NOT_FOUND", "TASK_NOT_FOUND"),
        (
            "GetTask",
            a2a_pb2.GetTaskRequest(id="x"),
            (("a2a-version", "9.9"),),
            "FAILED_PRECONDITION",
            "VERSION_NOT_SUPPORTED",
        ),
        (
            "GetTask",
            a2a_pb2.GetTaskRequest(id="x"),
            (("a2a-version", "0.3"),),
            "FAILED_PRECONDITION",
            "VERSION_NOT_SUPPORTED",
        ),
        (
            "GetTask",
            a2a_pb2.GetTaskRequest(id="x", history_length=-1),
            (),
            "NOT_FOUND",
            "TASK_NOT_FOUND",
        ),
        (
            "SendMessage",
            a2a_pb2.SendMessageRequest(
                message=a2a_pb2.Message(message_id="m", role=a2a_pb2.ROLE_AGENT)
            ),
            (),
            "INVALID_ARGUMENT",
            "INVALID_PARAMS",
        ),
        (
            "SubscribeToTask",
            a2a_pb2.SubscribeToTaskRequest(id="nope"),
            (),
            "NOT_FOUND",
            "TASK_NOT_FOUND",
        ),
    ],
)
async def test_error_status_codes(
    served: Served, rpc: str, request_: Any, metadata: Any, code: str, reason: str
) -> None:
    if rpc == "SubscribeToTask":
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            async with grpc.aio.insecure_channel(served.target) as channel:
                async for _ in a2a_pb2_grpc.A2AServiceStub(channel).SubscribeToTask(request_):
                    pass
        assert raised.value.code().name == code
        return
    got, info, _ = await _status(served, rpc, request_, metadata)
    assert got.name == code and info.reason == reason


async def test_invalid_params_carry_bad_request(served: Served) -> None:
    task = await _raw(
        served,
        "SendMessage",
        a2a_pb2.SendMessageRequest(
            message=a2a_pb2.Message(
                message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hi")]
            )
        ),
    )
    request = a2a_pb2.GetTaskRequest(id=task.task.id, history_length=-1)
    code, info, details = await _status(served, "GetTask", request)
    assert code.name == "INVALID_ARGUMENT" and info.reason == "INVALID_PARAMS"
    assert details["BadRequest"].field_violations[0].field == "historyLength"


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
async def test_a_number_json_cannot_carry_is_invalid_params(served: Served, number: float) -> None:
    """Protobuf's binary Struct carries NaN and infinity; ProtoJSON (our models) cannot. It is
    the caller's invalid params, as ``1e400`` is a parse error over HTTP, never INTERNAL."""
    message = a2a_pb2.Message(
        message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hi")]
    )
    message.metadata["x"] = number
    request = a2a_pb2.SendMessageRequest(message=message)
    code, info, _details = await _status(served, "SendMessage", request)
    assert code.name == "INVALID_ARGUMENT" and info.reason == "INVALID_PARAMS"


async def test_required_extension_and_activation() -> None:
    card = make_card().model_copy(deep=True)
    card.capabilities.extensions[0].required = True
    s = await start(card=card, push=None)
    try:
        code, info, _ = await _status(s, "GetTask", a2a_pb2.GetTaskRequest(id="x"))
        assert code.name == "FAILED_PRECONDITION" and info.reason == "EXTENSION_SUPPORT_REQUIRED"
        async with s.client(extensions=[EXT]) as client:
            task = await client.send("whoami")
        assert isinstance(task, Task) and EXT in (task.artifacts[0].parts[0].text or "")
    finally:
        await s.close()


async def test_internal_errors_hide_the_exception() -> None:
    class Broken:
        async def list(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("secret database password in this message")

    s = await start(push=None)
    s.a2a.handler.list_tasks = Broken().list  # type: ignore[method-assign]
    try:
        code, info, _ = await _status(s, "ListTasks", a2a_pb2.ListTasksRequest())
        assert code.name == "INTERNAL" and info.reason == "INTERNAL"
        async with s.client() as client:
            with pytest.raises(e.InternalError) as raised:
                await client.list()
        assert "secret" not in raised.value.message
    finally:
        await s.close()


async def test_auth_over_grpc_metadata() -> None:
    s = await start(auth=BearerAuth(tokens={"tok-alice": "alice"}), push=None)
    try:
        code, info, _ = await _status(s, "ListTasks", a2a_pb2.ListTasksRequest())
        assert code.name == "UNAUTHENTICATED" and info.reason == "UNAUTHENTICATED"
        async with s.client() as client:
            with pytest.raises(e.AuthenticationError):
                await client.list()
        async with s.client(bearer_token="tok-alice") as client:
            task = await client.send("hello")
            assert [t.id for t in (await client.list()).tasks] == [task.id]
    finally:
        await s.close()


async def test_unreachable_is_a_connect_error() -> None:
    from simple_a2a.client import ConnectError, RetryPolicy

    interface = {"url": "127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    data = {**make_card().to_dict(), "supportedInterfaces": [interface]}
    card = type(make_card()).from_dict(data)
    async with AsyncClient(card, retry=RetryPolicy(max_attempts=1), timeout=2) as client:
        with pytest.raises(ConnectError):
            await client.get("x")


async def test_our_client_refuses_a_number_json_cannot_carry() -> None:
    """Another agent's gRPC answer may hold NaN or infinity in a Struct (the binary form allows
    it): our client raises InvalidAgentResponseError, not a bare protobuf error."""
    from simple_a2a.protocol.errors import InvalidAgentResponseError

    class InfiniteAgent(a2a_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
        async def GetTask(self, request: Any, context: Any) -> Any:
            task = a2a_pb2.Task(id=request.id, context_id="c")
            task.status.state = a2a_pb2.TASK_STATE_COMPLETED
            task.metadata["x"] = math.inf
            return task

    raw = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(InfiniteAgent(), raw)
    port = raw.add_insecure_port("127.0.0.1:0")
    await raw.start()
    try:
        card = make_card().model_copy(
            update={
                "supported_interfaces": [
                    AgentInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC")
                ]
            }
        )
        async with AsyncClient(card, bindings=GRPC_ONLY) as client:
            with pytest.raises(InvalidAgentResponseError, match="JSON cannot carry"):
                await client.get("t1")
    finally:
        await raw.stop(0)
