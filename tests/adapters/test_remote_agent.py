"""``RemoteAgent``: a remote A2A agent behind ``ask`` (what every adapter's remote tool calls),
against a real agent of ours on loopback and the official a2a-sdk 1.3.0's agent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import simple_a2a
from simple_a2a.adapters import RemoteAgent, RemoteAgentError
from simple_a2a.protocol import AgentCard
from simple_a2a.server import RequestContext
from tests.support.agents import serving

CARD = AgentCard.from_dict(
    {
        "name": "Paint shop!",
        "description": "Paints things.",
        "version": "1.0",
        "capabilities": {"streaming": True},
        "skills": [
            {"id": "paint", "name": "paint", "description": "paints a thing", "tags": ["art"]}
        ],
    }
)


async def paint_shop(ctx: RequestContext) -> Any:
    word = ctx.text.split(" ")[0]
    if word == "paint" and ctx.task.history[:-1]:
        return f"painted {ctx.text.removeprefix('paint ')}"
    if word == "paint":
        await ctx.require_input("Which color?")
        return None
    if word == "turns":  # how many messages of this conversation reached the agent
        seen = int(await ctx.load_state("turns") or 0) + 1
        await ctx.save_state("turns", str(seen).encode())
        return f"turn {seen}"
    if word == "stream":
        await ctx.start()
        for token in ("a", "b", "c"):
            await ctx.emit_artifact({"artifactId": "x", "parts": [{"text": token}]}, append=True)
        return None
    if word == "long":
        return "x" * 500
    raise RuntimeError("no such order")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(simple_a2a.server(CARD, paint_shop).app) as served:
        yield served


async def test_the_card_describes_the_tool(url: str) -> None:
    agent = await RemoteAgent.connect(url)
    try:
        assert agent.name == "Paint_shop"  # a tool name every model API takes
        assert agent.description == "Paints things. Skills: paint: paints a thing."
    finally:
        await agent.aclose()


async def test_one_remote_agent_is_one_conversation(url: str) -> None:
    agent = await RemoteAgent.connect(url)
    other = await RemoteAgent.connect(url)
    try:
        assert [await agent.ask("turns") for _ in range(3)] == ["turn 1", "turn 2", "turn 3"]
        assert await other.ask("turns") == "turn 1"
    finally:
        await agent.aclose()
        await other.aclose()


async def test_a_question_is_the_answer_and_the_next_ask_answers_it(url: str) -> None:
    agent = await RemoteAgent.connect(url)
    try:
        assert await agent.ask("paint the fence") == "Which color?"
        assert await agent.ask("paint green") == "painted green"
    finally:
        await agent.aclose()


async def test_a_failed_task_raises_and_answers_are_bounded(url: str) -> None:
    agent = await RemoteAgent.connect(url, max_answer_chars=100)
    try:
        with pytest.raises(RemoteAgentError, match="failed"):
            await agent.ask("explode")
        answer = await agent.ask("long")
        assert answer.startswith("x" * 100) and "[cut: the answer was 500 characters]" in answer
    finally:
        await agent.aclose()


async def test_streaming_yields_the_chunks(url: str) -> None:
    agent = await RemoteAgent.connect(url)
    try:
        assert [text async for text in agent.ask_streaming("stream")] == ["a", "b", "c"]
    finally:
        await agent.aclose()


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[Any]:
    from tests.client.sdk_agent import build_app
    from tests.client.servers import ServerThread

    with ServerThread(build_app) as server:
        yield server


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent(sdk_server: Any) -> None:
    agent = await RemoteAgent.connect(sdk_server.url)
    try:
        assert agent.description
        assert await agent.ask("echo hi") == "echo: echo hi"
        assert "".join([t async for t in agent.ask_streaming("count 3")])
    finally:
        await agent.aclose()
