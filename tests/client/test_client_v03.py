"""A 0.3-only agent (the SDK's 0.3 compatibility layer behind a 0.3 card) is spoken to in 0.3."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simple_a2a import Task, TaskNotFoundError, TaskState
from simple_a2a.client import AsyncClient, NegotiationError, afold
from tests.client.sdk_agent import build_v03_app
from tests.client.servers import ServerThread


@pytest.fixture(scope="module")
def v03_server() -> Iterator[ServerThread]:
    with ServerThread(build_v03_app) as server:
        yield server


async def test_v03_round_trip(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        task = await agent.send("echo old")
        assert agent.protocol_version == "0.3"
        assert isinstance(task, Task) and task.state is TaskState.COMPLETED
        assert task.text == "echo: echo old"
        assert (await agent.get(task.id)).id == task.id
        with pytest.raises(TaskNotFoundError):
            await agent.get("missing")


async def test_v03_stream(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url) as agent:
        final = await afold(agent.stream("count 3"))
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


async def test_v03_refused_when_not_allowed(v03_server: ServerThread) -> None:
    async with AsyncClient(v03_server.url, allow_v03=False) as agent:
        with pytest.raises(NegotiationError):
            await agent.send("echo")
