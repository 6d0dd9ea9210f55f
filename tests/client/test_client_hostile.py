"""The client against an agent it should not trust (issue #16, items 13-18).

Every test talks over real HTTP to :class:`hostile.HostileAgent` on loopback: redirects to
another origin, answers of hundreds of megabytes, endless keep-alives, JSON nested 100,000
deep, answers for another JSON-RPC id, events of another task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from simple_a2a import InvalidAgentResponseError, Task
from simple_a2a.client import (
    AsyncClient,
    ClientLimits,
    ClientTimeoutError,
    DiscoveryError,
    NegotiationError,
    ReconnectPolicy,
    RetryPolicy,
)
from simple_a2a.client.limits import SeenWindow
from tests.client.hostile import HostileAgent, MiB, Received, Reply, rpc_result, sse
from tests.client.servers import ServerThread

TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
NO_RETRY = RetryPolicy(max_attempts=1)
NO_RECONNECT = ReconnectPolicy(max_attempts=0)
KEY = "s3cret-api-key"


def serve() -> Iterator[HostileAgent]:
    agents: list[HostileAgent] = []

    def factory(url: str) -> HostileAgent:
        agents.append(HostileAgent(url))
        return agents[0]

    with ServerThread(factory):
        yield agents[0]


@pytest.fixture
def agent() -> Iterator[HostileAgent]:
    yield from serve()


@pytest.fixture
def other() -> Iterator[HostileAgent]:
    """A second agent: another port, so another origin."""
    yield from serve()


def client(agent: HostileAgent, **options: Any) -> AsyncClient:
    options.setdefault("retry", NO_RETRY)
    options.setdefault("reconnect", NO_RECONNECT)
    return AsyncClient(agent.url, **options)


def credentials_in(request: Received) -> list[str]:
    return [k for k in ("authorization", "x-api-key", "cookie") if k in request.headers]


# -- 13: redirects ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a2a_calls_do_not_follow_redirects(
    agent: HostileAgent, other: HostileAgent, status: int
) -> None:
    async def redirect(request: Received, reply: Reply) -> None:
        await reply.start(status, {"location": other.url + "/rpc", "content-length": "0"})
        await reply.body(b"", more=False)

    agent.behaviour = redirect
    async with client(agent, api_key=KEY, bearer_token="tok") as c:
        with pytest.raises(InvalidAgentResponseError, match="redirect"):
            await c.send("the user's private message")
    assert other.received == []  # neither the message nor the credentials left the origin


async def test_stream_does_not_follow_redirects(agent: HostileAgent, other: HostileAgent) -> None:
    async def redirect(request: Received, reply: Reply) -> None:
        await reply.start(307, {"location": other.url + "/rpc", "content-length": "0"})
        await reply.body(b"", more=False)

    agent.behaviour = redirect
    async with client(agent, api_key=KEY) as c:
        with pytest.raises(InvalidAgentResponseError, match="redirect"):
            [e async for e in c.stream("hello")]
    assert other.received == []


async def test_card_redirect_to_another_origin_drops_credentials(
    agent: HostileAgent, other: HostileAgent
) -> None:
    async def redirect(request: Received, reply: Reply) -> None:
        location = other.url + "/.well-known/agent-card.json"
        await reply.start(302, {"location": location, "content-length": "0"})
        await reply.body(b"", more=False)

    agent.card_behaviour = redirect
    other.interface_url = agent.url + "/rpc"  # the card leads back to the named origin

    async def answer(request: Received, reply: Reply) -> None:
        await reply.json(rpc_result(request, {"task": DONE}))

    agent.behaviour = answer
    async with client(agent, api_key=KEY, bearer_token="tok") as c:
        assert isinstance(await c.send("hi"), Task)
    (card_request,) = other.received
    assert credentials_in(card_request) == []
    (call,) = agent.calls()
    assert call.headers["x-api-key"] == KEY and call.headers["authorization"] == "Bearer tok"


# -- 14: the card's interface on another origin ----------------------------------------------


async def test_credentials_to_another_origin_need_an_opt_in(
    agent: HostileAgent, other: HostileAgent
) -> None:
    agent.interface_url = other.url + "/rpc"
    async with client(agent, api_key=KEY) as c:
        with pytest.raises(NegotiationError, match="allow_cross_origin_credentials"):
            await c.send("hi")
    assert other.received == []


async def test_opted_in_cross_origin_credentials_warn(
    agent: HostileAgent, other: HostileAgent, caplog: pytest.LogCaptureFixture
) -> None:
    agent.interface_url = other.url + "/rpc"

    async def answer(request: Received, reply: Reply) -> None:
        await reply.json(rpc_result(request, {"task": DONE}))

    other.behaviour = answer
    caplog.set_level(logging.WARNING, "simple_a2a.client")
    async with client(agent, api_key=KEY, allow_cross_origin_credentials=True) as c:
        assert isinstance(await c.send("hi"), Task)
    assert other.received[0].headers["x-api-key"] == KEY
    assert "another origin" in caplog.text


async def test_no_credentials_no_question(agent: HostileAgent, other: HostileAgent) -> None:
    agent.interface_url = other.url + "/rpc"

    async def answer(request: Received, reply: Reply) -> None:
        await reply.json(rpc_result(request, {"task": DONE}))

    other.behaviour = answer
    async with client(agent) as c:
        assert isinstance(await c.send("hi"), Task)


# -- 15: sizes, enforced while reading -------------------------------------------------------


async def endless_body(request: Received, reply: Reply) -> None:
    """300 MB of a JSON string, chunked (no Content-Length to refuse up front)."""
    await reply.start(200, {"content-type": "application/json"})
    await reply.body(b'{"jsonrpc": "2.0", "id": 1, "result": "')
    for _ in range(300):
        await reply.body(b"x" * MiB)
    await reply.body(b'"}', more=False)


async def test_a_huge_answer_is_refused_while_reading(agent: HostileAgent) -> None:
    agent.behaviour = endless_body
    async with client(agent) as c:  # the default limit
        with pytest.raises(InvalidAgentResponseError, match="max_response_bytes"):
            await c.get("t1")
    assert agent.sent < 200 * MiB  # the client hung up long before the 300 MB


async def test_a_small_response_limit_is_honoured(agent: HostileAgent) -> None:
    agent.behaviour = endless_body
    async with client(agent, limits=ClientLimits(max_response_bytes=64 * 1024)) as c:
        with pytest.raises(InvalidAgentResponseError, match="too large"):
            await c.get("t1")


async def test_an_announced_huge_answer_is_refused_before_reading(agent: HostileAgent) -> None:
    async def announced(request: Received, reply: Reply) -> None:
        headers = {"content-type": "application/json", "content-length": str(300 * MiB)}
        await reply.start(200, headers)
        await reply.body(b"{", more=True)
        await reply.gone.wait()

    agent.behaviour = announced
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="announced"):
            await c.get("t1")


async def test_a_huge_event_is_refused_while_reading(agent: HostileAgent) -> None:
    async def huge_event(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(sse(1, rpc_result(request, {"task": TASK})))
        await reply.body(b"data: ")
        for _ in range(300):  # one line that never ends
            await reply.body(b"x" * MiB)

    agent.behaviour = huge_event
    async with client(agent, limits=ClientLimits(max_event_bytes=MiB)) as c:
        events = []
        with pytest.raises(InvalidAgentResponseError, match="max_event_bytes"):
            async for event in c.stream("hi"):
                events.append(event)
    assert len(events) == 1
    assert agent.sent < 100 * MiB


async def test_many_small_lines_count_towards_the_event_limit(agent: HostileAgent) -> None:
    async def many_lines(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        for _ in range(10_000):  # data lines, never the blank line that ends the event
            await reply.body(b"data: " + b"x" * 1000 + b"\n")

    agent.behaviour = many_lines
    async with client(agent, limits=ClientLimits(max_event_bytes=MiB)) as c:
        with pytest.raises(InvalidAgentResponseError, match="larger than"):
            [e async for e in c.stream("hi")]


async def test_a_huge_card_is_refused(agent: HostileAgent) -> None:
    async def huge_card(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "application/json"})
        await reply.body(b'{"name": "')
        for _ in range(300):
            await reply.body(b"x" * MiB)

    agent.card_behaviour = huge_card
    async with client(agent) as c:
        with pytest.raises(DiscoveryError, match="max_card_bytes"):
            await c.agent_card()
    assert agent.sent < 100 * MiB


# -- 16: total deadlines, bounded memory of a long stream ------------------------------------


async def test_a_dribbling_answer_hits_the_call_deadline(agent: HostileAgent) -> None:
    async def dribble(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "application/json"})
        for _ in range(600):  # a byte every 0.1 s: each read is quick, the answer never ends
            await reply.body(b" ")
            await asyncio.sleep(0.1)

    agent.behaviour = dribble
    limits = ClientLimits(call_deadline=1.0)
    async with client(agent, timeout=5.0, limits=limits) as c:
        with pytest.raises(ClientTimeoutError, match="call_deadline"):
            await asyncio.wait_for(c.get("t1"), 30)  # generous: the deadline must fire first


async def test_endless_keep_alives_hit_the_stream_deadline(agent: HostileAgent) -> None:
    async def keep_alives(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(sse(1, rpc_result(request, {"task": TASK})))
        for _ in range(600):
            await reply.body(b": keep-alive\n\n")
            await asyncio.sleep(0.05)

    agent.behaviour = keep_alives
    limits = ClientLimits(stream_deadline=1.0)
    async with client(agent, timeout=5.0, limits=limits) as c:
        events: list[Any] = []

        async def read() -> None:
            async for event in c.stream("hi"):
                events.append(event)

        with pytest.raises(ClientTimeoutError, match="stream_deadline"):
            await asyncio.wait_for(read(), 30)  # generous: the deadline must fire first
    assert len(events) == 1


async def test_a_long_stream_remembers_a_bounded_window_of_ids(agent: HostileAgent) -> None:
    count = 3000

    async def many_events(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(sse(1, rpc_result(request, {"task": TASK})))
        update = {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
        for i in range(2, count):
            await reply.body(sse(i, rpc_result(request, {"statusUpdate": update})))
        final = {**update, "status": {"state": "TASK_STATE_COMPLETED"}}
        await reply.body(sse(count, rpc_result(request, {"statusUpdate": final})), more=False)

    agent.behaviour = many_events
    windows: list[SeenWindow] = []
    original = SeenWindow.__init__

    def spy(self: SeenWindow, size: int) -> None:
        original(self, size)
        windows.append(self)

    pytest.MonkeyPatch().setattr(SeenWindow, "__init__", spy)
    try:
        async with client(agent, limits=ClientLimits(seen_event_ids=100)) as c:
            events = [e async for e in c.stream("hi")]
    finally:
        SeenWindow.__init__ = original  # type: ignore[method-assign]
    assert len(events) == count
    assert len(windows[0]) == 100


def test_the_seen_window_forgets_the_oldest() -> None:
    window = SeenWindow(3)
    for i in range(10):
        window.add(str(i))
    assert [str(i) in window for i in range(10)] == [False] * 7 + [True] * 3
    assert len(window) == 3


# -- 17: deeply nested JSON ------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


async def test_deep_json_answer_is_an_invalid_agent_response(agent: HostileAgent) -> None:
    async def deep(request: Received, reply: Reply) -> None:
        await reply.raw(b'{"jsonrpc": "2.0", "id": 1, "result": ' + DEEP + b"}")

    agent.behaviour = deep
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="nested too deeply"):
            await c.get("t1")


async def test_deep_json_event_is_an_invalid_agent_response(agent: HostileAgent) -> None:
    async def deep(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(b"id: 1\ndata: " + DEEP + b"\n\n", more=False)

    agent.behaviour = deep
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="nested too deeply"):
            [e async for e in c.stream("hi")]


async def test_deep_metadata_below_the_parser_limit_is_an_invalid_agent_response(
    agent: HostileAgent,
) -> None:
    nested: Any = "leaf"
    for _ in range(900):  # json.loads copes; validating and converting it must not crash
        nested = {"k": nested}

    async def deep(request: Received, reply: Reply) -> None:
        await reply.json(rpc_result(request, {**DONE, "metadata": nested}))

    agent.behaviour = deep
    async with client(agent) as c:
        try:
            task = await c.get("t1")
        except InvalidAgentResponseError:
            return  # refused with the right error
        assert task.id == "t1"  # or accepted whole; never a bare RecursionError


async def test_deep_json_card_is_a_discovery_error(agent: HostileAgent) -> None:
    async def deep(request: Received, reply: Reply) -> None:
        await reply.raw(DEEP)

    agent.card_behaviour = deep
    async with client(agent) as c:
        with pytest.raises(DiscoveryError, match="nested too deeply"):
            await c.agent_card()


# -- 18: answers for another id, events of another task --------------------------------------


async def test_a_jsonrpc_answer_for_another_id_is_refused(agent: HostileAgent) -> None:
    async def wrong_id(request: Received, reply: Reply) -> None:
        await reply.json(rpc_result(request, DONE, request_id=request.json["id"] + 1000))

    agent.behaviour = wrong_id
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="JSON-RPC id"):
            await c.get("t1")


async def test_a_jsonrpc_error_with_a_null_id_is_still_the_error(agent: HostileAgent) -> None:
    async def parse_error(request: Received, reply: Reply) -> None:
        error = {"code": -32001, "message": "Task not found"}
        await reply.json({"jsonrpc": "2.0", "id": None, "error": error})

    agent.behaviour = parse_error
    async with client(agent) as c:
        with pytest.raises(Exception) as info:
            await c.get("t1")
    assert type(info.value).__name__ == "TaskNotFoundError"


async def test_stream_events_with_another_id_are_refused(agent: HostileAgent) -> None:
    async def wrong_id(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(sse(1, rpc_result(request, {"task": TASK}, request_id=424242)))

    agent.behaviour = wrong_id
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="JSON-RPC id"):
            [e async for e in c.stream("hi")]


async def test_stream_events_of_another_task_are_refused(agent: HostileAgent) -> None:
    async def other_task(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        await reply.body(sse(1, rpc_result(request, {"task": TASK})))
        foreign = {"taskId": "someone-else", "contextId": "c9", "status": DONE["status"]}
        await reply.body(sse(2, rpc_result(request, {"statusUpdate": foreign})), more=False)

    agent.behaviour = other_task
    async with client(agent) as c:
        events = []
        with pytest.raises(InvalidAgentResponseError, match="someone-else"):
            async for event in c.stream("hi"):
                events.append(event)
    assert len(events) == 1


async def test_subscribe_refuses_another_task_from_the_first_event(agent: HostileAgent) -> None:
    async def other_task(request: Received, reply: Reply) -> None:
        await reply.start(200, {"content-type": "text/event-stream"})
        foreign = {**TASK, "id": "someone-else"}
        await reply.body(sse(1, rpc_result(request, {"task": foreign})), more=False)

    agent.behaviour = other_task
    async with client(agent) as c:
        with pytest.raises(InvalidAgentResponseError, match="someone-else"):
            [e async for e in c.subscribe("t1")]
