"""The official SDK 1.3.0's client (in-process) reading the errors of our streaming methods
before their first event, over JSON-RPC and HTTP+JSON, 1.0 and 0.3 (issue #33): typed errors
both from 1.0's plain JSON-RPC error response and from 0.3's SSE stream of one error response
(0.3 §3.3.1), and from HTTP+JSON's error answer (§11.6); a 401 stays an HTTP error.

This client reads either JSON-RPC form in either version (it also passed when 0.3 answered
JSON), so these tests guard the form we chose rather than decide it: the SDK 0.3.26 client
(``test_sdk03_stream_errors.py``) and the JS SDK (``tests/test_interop_js.py``) decide it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import Part, Role, SendMessageRequest, SubscribeToTaskRequest
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from simple_a2a.auth import BearerAuth
from simple_a2a.server import Limits, server
from tests.server.test_sdk_interop import SETUPS, make_client
from tests.support.agents import TestAgent, make_card, serving

pytestmark = pytest.mark.interop(peer="Python SDK 1.3.0", direction="theirs → ours")


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    """An agent that allows one part per message, and one behind bearer authentication."""
    agents = [
        server(make_card(), TestAgent(), limits=Limits(max_parts_per_message=1)),
        server(make_card(), TestAgent(), auth=BearerAuth(tokens={"s3cret": "alice"})),
    ]
    with contextlib.ExitStack() as stack:
        limited, private = (stack.enter_context(serving(agent.app)) for agent in agents)
        yield limited, private


@pytest.fixture(params=SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
def setup(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def streaming_client(url: str, setup: tuple[str, str]) -> AsyncIterator[Any]:
    client = await make_client(url, setup, streaming=True)
    try:
        yield client
    finally:
        await client.close()


async def first_event(events: Any) -> Any:
    async for event in events:
        return event
    return None


def streamed(*texts: str, task_id: str = "") -> SendMessageRequest:
    message = new_text_message(texts[0], role=Role.ROLE_USER)
    message.parts.extend(Part(text=text) for text in texts[1:])
    message.task_id = task_id
    return SendMessageRequest(message=message)


async def test_subscribe_to_an_unknown_task(urls: tuple[str, str], setup: tuple[str, str]) -> None:
    async with streaming_client(urls[0], setup) as client:
        with pytest.raises(TaskNotFoundError, match="no-such-task"):
            await first_event(client.subscribe(SubscribeToTaskRequest(id="no-such-task")))


async def test_stream_to_an_unknown_task(urls: tuple[str, str], setup: tuple[str, str]) -> None:
    async with streaming_client(urls[0], setup) as client:
        with pytest.raises(TaskNotFoundError, match="no-such-task"):
            await first_event(client.send_message(streamed("hi", task_id="no-such-task")))


async def test_stream_over_a_limit(urls: tuple[str, str], setup: tuple[str, str]) -> None:
    async with streaming_client(urls[0], setup) as client:
        with pytest.raises(InvalidParamsError, match=r"Limits\.max_parts_per_message"):
            await first_event(client.send_message(streamed("one", "two")))
        assert (await first_event(client.send_message(streamed("one")))).task.id


async def test_stream_unauthenticated(urls: tuple[str, str], setup: tuple[str, str]) -> None:
    async with streaming_client(urls[1], setup) as client:
        with pytest.raises(A2AClientError, match="401"):
            await first_event(client.send_message(streamed("hi")))
