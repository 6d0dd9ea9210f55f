"""Interop with the official Python SDK 0.3.26, both directions, over 0.3 JSON-RPC, 0.3
HTTP+JSON and 0.3 gRPC (``a2a.v1.A2AService``) (issue 15). The SDK runs in its own venv
(``scripts/peers``) as a real process:

- our client against the SDK's agent (tests/interop/sdk03_agent.py): send, get, multi-turn,
  a direct Message, stream, cancel, subscribe, push configs, push delivery, typed errors;
- the SDK's client (tests/interop/sdk03_client.py) against our server, every operation it has.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from simple_a2a import Message, Task, TaskNotFoundError, TaskState, TaskStatusUpdateEvent
from simple_a2a.client import AsyncClient, afold
from simple_a2a.protocol.errors import (
    A2AError,
    InternalError,
    MethodNotFoundError,
    TaskNotCancelableError,
)
from simple_a2a.protocol.models import TaskPushNotificationConfig
from simple_a2a.server import Limits, server
from tests.interop.peers import (
    PeerProcess,
    healthy_peer,
    peer_for_test,
    run_sdk03_client,
    sdk03_peer,
)
from tests.push.push_helpers import Receiver, settings
from tests.support.agents import TestAgent, make_card, serving

BINDINGS = ["JSONRPC", "HTTP+JSON"]
PEER = "Python SDK 0.3.26"
OURS = {"peer": PEER, "direction": "ours → theirs", "protocol": "0.3"}
THEIRS = {"peer": PEER, "direction": "theirs → ours", "protocol": "0.3"}

# -- our client against the SDK 0.3.26 agent ----------------------------------------------------


@pytest.fixture(scope="module")
def their_peer() -> Iterator[PeerProcess]:
    with healthy_peer(sdk03_peer()) as peer:
        yield peer


@pytest.fixture
def their_agent(request: pytest.FixtureRequest, their_peer: PeerProcess) -> Iterator[str]:
    """The SDK agent's base URL, healthy for this test (restarted if it hung or died)."""
    yield from peer_for_test(request, their_peer)


@pytest.fixture(params=[*BINDINGS, "GRPC"])
async def agent(request: pytest.FixtureRequest, their_agent: str) -> Any:
    async with AsyncClient(their_agent, bindings=[request.param]) as client:
        yield client


@pytest.mark.interop(**OURS)
async def test_our_client_send_get_multi_turn(agent: AsyncClient) -> None:
    task = await agent.send("echo hi")
    assert agent.protocol_version == "0.3"
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    assert task.text == "echo: echo hi"
    got = await agent.get(task.id)
    assert got.id == task.id and got.state is TaskState.COMPLETED
    again = await agent.send("echo two", context_id=task.context_id)
    assert isinstance(again, Task) and again.context_id == task.context_id
    reply = await agent.send("reply there")
    assert isinstance(reply, Message) and reply.text == "reply: there"
    with pytest.raises(TaskNotFoundError):
        await agent.get("missing")


@pytest.mark.interop(**OURS)
async def test_our_client_stream(agent: AsyncClient) -> None:
    final = await afold(agent.stream("count 3"))
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


@pytest.mark.interop(**OURS, faults={"*": "F3"})
async def test_our_client_cancel_subscribe(agent: AsyncClient) -> None:
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task)
    seen: list[object] = []
    ended: list[Exception] = []

    async def follow() -> None:
        try:
            async for event in agent.subscribe(task.id):
                seen.append(event)
        except Exception as exc:
            ended.append(exc)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.3)
    canceled = await agent.cancel(task.id)
    assert canceled.state is TaskState.CANCELED
    await asyncio.wait_for(follower, 10)  # well under the test's timeout
    if ended:
        # Peer fault (docs/interop.md): the SDK 0.3.26's resubscribe stream sends no event for
        # a running task and ends at the cancel without the final canceled event (JSON-RPC and
        # gRPC: our client resubscribes and the SDK refuses the finished task as invalid params,
        # "terminal state"; HTTP+JSON: the SDK drops the connection mid-chunk).
        assert "terminal state" in str(ended[0]) or "peer closed connection" in str(ended[0])
    else:
        assert seen
        last = seen[-1]
        assert isinstance(last, TaskStatusUpdateEvent | Task)
        assert last.status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError):
        await agent.cancel(task.id)
    with pytest.raises(TaskNotFoundError):
        await agent.cancel("missing")


@pytest.mark.interop(
    **OURS, faults={"*": "F8", "JSONRPC": "F1", "HTTP+JSON": "F4 F5", "GRPC": "F6"}
)
async def test_our_client_push_configs(agent: AsyncClient) -> None:
    task = await agent.send("echo push")
    assert isinstance(task, Task)
    hook = "http://127.0.0.1:9/hook"
    created = await agent.create_push_config(task.id, hook, config_id="c1", token="tok")
    assert created.id == "c1" and created.url == hook
    got = await agent.get_push_config(task.id, "c1")
    assert got.url == hook and got.token == "tok"
    second = await agent.create_push_config(task.id, hook + "2", config_id="c2")
    assert second.id == "c2" and second.url == hook + "2"
    # Peer fault F8 (docs/interop.md): asked for c2, the SDK 0.3.26 answers the task's first
    # config; we hand back what the agent answered.
    assert (await agent.get_push_config(task.id, "c2")).id == "c1"
    binding = agent.interface.protocol_binding if agent.interface is not None else None
    if binding == "GRPC":
        # Peer fault F6 (docs/interop.md): the SDK 0.3.26's GrpcHandler implements neither
        # ListTaskPushNotificationConfig nor DeleteTaskPushNotificationConfig of its own
        # a2a.v1 service: UNIMPLEMENTED "Method not implemented!", a MethodNotFoundError here.
        with pytest.raises(MethodNotFoundError):
            await agent.list_push_configs(task.id)
        with pytest.raises(MethodNotFoundError):
            await agent.delete_push_config(task.id, "c1")
        return
    rest = binding == "HTTP+JSON"
    if rest:
        # Peer fault (docs/interop.md): the SDK 0.3.26's REST list of push configs answers
        # HTTP 500 {"message": "unknown exception"}.
        with pytest.raises(InternalError):
            await agent.list_push_configs(task.id)
    else:
        assert sorted(c.id for c in await agent.list_push_configs(task.id)) == ["c1", "c2"]
    if rest:
        # Peer fault (docs/interop.md): the SDK 0.3.26's REST app has no DELETE route for
        # push configs (0.3 a2a.proto: DELETE /v1/{name=tasks/*/pushNotificationConfigs/*}).
        with pytest.raises(A2AError, match="405"):
            await agent.delete_push_config(task.id, "c1")
        return
    # The SDK answers the delete with no ``result`` (issue 15 item 4): read as success.
    await agent.delete_push_config(task.id, "c1")
    assert [c.id for c in await agent.list_push_configs(task.id)] == ["c2"]


@pytest.mark.interop(**OURS, binding="GRPC")
async def test_our_client_reads_the_card_over_grpc(their_agent: str) -> None:
    """0.3's GetAgentCard: the SDK 0.3.26's GrpcHandler answers its card there (the 0.3 proto:
    "GetAgentCard returns the agent card"), although the card claims no extended one; the 0.3
    proto's AgentCard reaches us as a 1.0 card whose interfaces are 0.3's."""
    async with AsyncClient(their_agent, bindings=["GRPC"]) as client:
        card = await client.extended_card()
        assert client.interface is not None
        url = client.interface.url
    assert card.name == "SDK 0.3.26 demo agent"
    assert card.capabilities.streaming and card.capabilities.push_notifications
    assert [s.id for s in card.skills] == ["echo"]
    grpc_ifaces = [i for i in card.supported_interfaces if i.protocol_binding == "GRPC"]
    assert [(i.url, i.protocol_version) for i in grpc_ifaces] == [(url, "0.3")]


@pytest.mark.interop(**OURS)
async def test_our_client_push_delivery(agent: AsyncClient) -> None:
    """A config sent with the message: the SDK posts the 0.3 Task to the webhook (0.3 §9.5)."""
    receiver = Receiver()
    with serving(receiver.app) as hook_base:
        config = TaskPushNotificationConfig(url=hook_base + "/hook", token="tok")
        task = await agent.send("echo pushed", push_config=config)
        assert isinstance(task, Task)
        for _ in range(100):
            if any(json.loads(b)["status"]["state"] == "completed" for _, b in receiver.received):
                break
            await asyncio.sleep(0.05)
        headers, body = receiver.received[-1]
        pushed = json.loads(body)
        assert pushed["kind"] == "task" and pushed["id"] == task.id
        assert pushed["status"]["state"] == "completed"
        assert headers.get("x-a2a-notification-token") == "tok"


# -- the SDK 0.3.26 client against our server ---------------------------------------------------


@pytest.fixture(scope="module")
def our_server() -> Iterator[str]:
    """Our agent over 0.3 JSON-RPC, HTTP+JSON and gRPC (its card lists all three for 0.3)."""
    agent = server(make_card(pushNotifications=True), TestAgent(), push=settings())
    with serving(agent.app, grpc_of=agent) as base:
        yield base


@pytest.mark.interop(**THEIRS)
@pytest.mark.parametrize("transport", [*BINDINGS, "GRPC"])
def test_their_client_every_operation(our_server: str, transport: str) -> None:
    receiver = Receiver()
    with serving(receiver.app) as hook_base:
        out = run_sdk03_client(our_server, transport, hook_base + "/hook")
        for _ in range(100):
            if any(b'"canceled"' in body for _, body in receiver.received):
                break
            time.sleep(0.05)
    # A webhook registered over 0.3 gets 0.3 Task objects (0.3 §9.5; issue 15 item 2).
    pushed = [(h, json.loads(body)) for h, body in receiver.received]
    assert pushed and all(p["kind"] == "task" for _, p in pushed)
    running = [(h, p) for h, p in pushed if p["id"] == out["push_running"]]
    assert running[-1][1]["status"]["state"] == "canceled"
    assert all(h["content-type"] == "application/json" for h, _ in running)
    assert running[-1][0].get("x-a2a-notification-token") == "tok"
    assert out["send"] == ["completed", "echo: echo hi"]
    assert out["get"] == [True, "completed"]
    assert out["multi_turn"] is True
    assert out["reply"] == "reply: there"
    assert out["stream"] == ["completed"]
    # typed errors: JSON-RPC codes, HTTP statuses, gRPC status codes with the error named by
    # the message, as 0.3 servers do (the SDK's gRPC client raises grpc's own error)
    codes = {"JSONRPC": ("-32001", "-32002"), "HTTP+JSON": ("404", "400")}
    grpc_codes = ("NOT_FOUND TaskNotFoundError", "FAILED_PRECONDITION TaskNotCancelableError")
    not_found, not_cancelable = codes.get(transport, grpc_codes)
    assert out["get_missing"].endswith(not_found)
    assert out["cancel"] == "canceled"
    assert out["subscribe"] == ["canceled"]
    assert out["cancel_again"].endswith(not_cancelable), out
    assert out["set_push"] == "c1"
    assert out["get_push"] == hook_base + "/hook"
    if transport == "GRPC":  # through the SDK's own stub where its Client has no method
        assert out["get_push_2"] == "c2"
        assert out["list_push"] == ["c1", "c2"]
        assert out["delete_push"] == "deleted"
        assert out["list_push_after"] == ["c2"]
        # 0.3 §7.10: GetAgentCard is the authenticated extended card, there only when the card
        # says supportsAuthenticatedExtendedCard (ours does not)
        assert out["card"].endswith("FAILED_PRECONDITION UnsupportedOperationError"), out


@pytest.mark.interop(**THEIRS)
@pytest.mark.parametrize("transport", [*BINDINGS, "GRPC"])
def test_their_client_meets_our_rate_limit(transport: str) -> None:
    """Our RateLimitError (``Limits.max_running_tasks_per_caller`` = 1) to the 0.3.26 client:
    JSON-RPC -32603, HTTP 503, gRPC UNAVAILABLE naming the error as 0.3 servers do; the task
    it holds is then canceled as usual."""
    agent = server(make_card(), TestAgent(), limits=Limits(max_running_tasks_per_caller=1))
    with serving(agent.app, grpc_of=agent) as base:
        out = run_sdk03_client(base, transport, "http://127.0.0.1:9/hook", "rate_limit")
    assert out["held"] in ("submitted", "working"), out
    expected = {"JSONRPC": "-32603", "HTTP+JSON": "503"}.get(
        transport, "UNAVAILABLE RateLimitError"
    )
    assert out["refused"].startswith("error: ") and out["refused"].endswith(expected), out
    assert out["cancel"] == "canceled", out
