"""Both clients against simple-a2a's own server, both bindings; exactly-once stream resumption."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

import simple_a2a
from simple_a2a import (
    AgentCard,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
)
from simple_a2a.client import AsyncClient, ReconnectPolicy, afold, fold
from simple_a2a.server import AgentExecutor, RequestContext, server
from tests.client.proxy import CuttingProxy
from tests.client.servers import ServerThread

CARD = AgentCard.from_dict(
    {"name": "own", "description": "ours", "version": "1", "capabilities": {"streaming": True}}
)


class Demo(AgentExecutor):
    """``count N``: N chunks, 30 ms apart; ``slow``: works until canceled; else echoes."""

    async def execute(self, ctx: RequestContext) -> None:
        word, _, rest = ctx.text.partition(" ")
        await ctx.start()
        if word == "count":
            n = int(rest)
            for i in range(n):
                await asyncio.sleep(0.03)
                await ctx.emit_artifact(
                    {"artifactId": "out", "parts": [{"text": f"{i} "}]},
                    append=i > 0,
                    last_chunk=i == n - 1,
                )
        elif word == "slow":
            while not ctx.cancelled:
                await asyncio.sleep(0.02)
            return
        else:
            await ctx.emit_artifact({"artifactId": "out", "parts": [{"text": f"echo: {ctx.text}"}]})
        await ctx.complete()


@pytest.fixture(scope="module")
def own_server() -> Iterator[ServerThread]:
    with ServerThread(lambda url: server(CARD, Demo()).app) as srv:
        yield srv


@pytest.fixture(params=["JSONRPC", "HTTP+JSON"])
async def agent(request: pytest.FixtureRequest, own_server) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(own_server.url, bindings=[request.param]) as client:
        yield client


def describe(event: object) -> str:
    if isinstance(event, Task):
        return f"task:{event.state.name}"
    if isinstance(event, TaskStatusUpdateEvent):
        return f"status:{event.status.state.name}"
    assert isinstance(event, TaskArtifactUpdateEvent)
    return "chunk:" + "".join(p.text or "" for p in event.artifact.parts)


async def test_operations(agent: AsyncClient) -> None:
    task = await agent.send("hello")
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    assert task.text == "echo: hello"
    assert agent.protocol_version == "1.0"
    assert (await agent.get(task.id, history_length=1)).id == task.id
    assert task.id in [t.id async for t in agent.list_all(page_size=1)]
    with pytest.raises(TaskNotFoundError):
        await agent.get("missing")


async def test_stream_and_fold(agent: AsyncClient) -> None:
    events = [e async for e in agent.stream("count 3")]
    assert isinstance(events[0], Task)
    final = fold(events)
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


async def test_cancel_ends_a_subscription(agent: AsyncClient) -> None:
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task)
    watcher = asyncio.create_task(afold(agent.subscribe(task.id)))
    await asyncio.sleep(0.1)
    assert (await agent.cancel(task.id)).state is TaskState.CANCELED
    final = await asyncio.wait_for(watcher, 5)
    assert isinstance(final, Task) and final.state is TaskState.CANCELED


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("cut_after", [1000, 2000])
async def test_cut_stream_yields_every_event_exactly_once(
    own_server, binding: str, cut_after: int
) -> None:
    async with AsyncClient(own_server.url, bindings=[binding]) as direct:
        expected = [describe(e) async for e in direct.stream("count 10")]
    proxy = CuttingProxy(own_server.port, cut_after=cut_after)
    try:
        policy = ReconnectPolicy(max_attempts=3, backoff=0.01)
        async with AsyncClient(proxy.url, bindings=[binding], reconnect=policy) as client:
            events = [describe(e) async for e in client.stream("count 10")]
    finally:
        proxy.close()
    assert proxy.cuts_done == 1
    assert events == expected


def test_sync_client(own_server) -> None:
    with simple_a2a.client(own_server.url) as agent:
        task = agent.send("sync")
        assert isinstance(task, Task) and task.text == "echo: sync"
        assert fold(agent.stream("count 2")).state is TaskState.COMPLETED  # type: ignore[union-attr]
