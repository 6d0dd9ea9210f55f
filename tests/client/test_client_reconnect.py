"""Streams survive a connection cut mid-stream: every event exactly once, via Last-Event-ID."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import simple_a2a
from simple_a2a import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from simple_a2a.client import (
    AsyncClient,
    ReconnectPolicy,
    StreamInterruptedError,
    afold,
    fold,
)
from tests.client.proxy import CuttingProxy
from tests.client.replay_agent import TASK_ID, ReplayAgent
from tests.client.servers import ServerThread

FAST = ReconnectPolicy(max_attempts=3, backoff=0.01)


def describe(event: object) -> str:
    if isinstance(event, Task):
        return f"task:{event.state.name}"
    if isinstance(event, TaskStatusUpdateEvent):
        return f"status:{event.status.state.name}"
    assert isinstance(event, TaskArtifactUpdateEvent)
    return f"chunk:{event.artifact.parts[0].text}"


EXPECTED = [
    "task:SUBMITTED",
    "status:WORKING",
    *[f"chunk:w{i} " for i in range(8)],
    "status:COMPLETED",
]


@pytest.fixture
def replay() -> Iterator[tuple[ReplayAgent, ServerThread]]:
    agent = ReplayAgent(chunks=8, delay=0.02)
    with ServerThread(agent.app) as server:
        yield agent, server


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("cut_after", [300, 650, 1000])
async def test_stream_resumes_with_last_event_id(replay, binding: str, cut_after: int) -> None:
    agent, server = replay
    proxy = CuttingProxy(server.port, cut_after=cut_after)
    try:
        async with AsyncClient(proxy.url, bindings=[binding], reconnect=FAST) as client:
            events = [e async for e in client.stream("go")]
    finally:
        proxy.close()
    assert [describe(e) for e in events] == EXPECTED
    assert proxy.cuts_done == 1
    assert agent.calls == ["SendStreamingMessage", "SubscribeToTask"]
    assert agent.last_event_ids[-1] is not None  # resumed from the cursor, not from scratch
    final = fold(events)
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "".join(
        f"w{i} " for i in range(8)
    )


async def test_subscribe_resumes_too(replay) -> None:
    agent, server = replay
    proxy = CuttingProxy(server.port, cut_after=500)
    try:
        async with AsyncClient(proxy.url, reconnect=FAST) as client:
            events = [e async for e in client.subscribe(TASK_ID)]
    finally:
        proxy.close()
    assert [describe(e) for e in events] == EXPECTED
    assert agent.calls == ["SubscribeToTask", "SubscribeToTask"]


def test_sync_client_resumes(replay) -> None:
    _agent, server = replay
    proxy = CuttingProxy(server.port, cut_after=700)
    try:
        with simple_a2a.client(proxy.url, reconnect=FAST) as client:
            events = list(client.stream("go"))
    finally:
        proxy.close()
    assert [describe(e) for e in events] == EXPECTED


async def test_cut_before_the_first_event_cannot_be_resumed(replay) -> None:
    _, server = replay
    proxy = CuttingProxy(server.port, cut_after=30)
    try:
        async with AsyncClient(proxy.url, reconnect=FAST) as client:
            with pytest.raises(StreamInterruptedError):
                async for _ in client.stream("go"):
                    pass
    finally:
        proxy.close()


async def test_reconnect_off_raises(replay) -> None:
    _, server = replay
    proxy = CuttingProxy(server.port, cut_after=400)
    try:
        async with AsyncClient(proxy.url, reconnect=ReconnectPolicy(max_attempts=0)) as client:
            seen = []
            with pytest.raises(StreamInterruptedError):
                async for event in client.stream("go"):
                    seen.append(event)
    finally:
        proxy.close()
    assert seen and isinstance(seen[0], Task)


async def test_reconnect_gives_up_after_bounded_attempts(replay) -> None:
    agent, server = replay
    proxy = CuttingProxy(server.port, cut_after=600, cuts=100, then_cut_after=10)
    try:
        async with AsyncClient(proxy.url, reconnect=FAST) as client:
            with pytest.raises(StreamInterruptedError, match="gave up after 3"):
                async for _ in client.stream("go"):
                    pass
    finally:
        proxy.close()
    assert agent.calls.count("SubscribeToTask") == 3


async def test_sdk_stream_survives_a_cut(sdk_server) -> None:
    """The SDK server sends no SSE ids, so it cannot replay: the client resubscribes and gets a
    fresh Task snapshot, then live events. No event-level exactly-once is possible, but the
    folded result is the complete task."""
    proxy = CuttingProxy(sdk_server.port, cut_after=900)
    async with httpx.AsyncClient() as http:
        card = (await http.get(sdk_server.url + "/.well-known/agent-card.json")).json()
    for interface in card["supportedInterfaces"]:
        interface["url"] = interface["url"].replace(sdk_server.url, proxy.url)
    try:
        async with AsyncClient(card, reconnect=FAST) as client:
            final = await afold(client.stream("count 12"))
    finally:
        proxy.close()
    assert proxy.cuts_done == 1
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    text = "".join(p.text or "" for p in final.artifacts[0].parts)
    assert text.endswith("11 ")
