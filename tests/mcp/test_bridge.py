"""The MCP bridge seen by the official MCP client, over streamable HTTP and over stdio (a
spawned ``simple-a2a mcp URL``): tools per skill, a call, multi-turn, input-required and its
answer, progress during a streaming agent, cancel, a failing agent."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from simple_a2a.client import AsyncClient
from simple_a2a.protocol.models import TaskState

from .conftest import Connect


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_a_tool_per_skill_described_by_the_card(connect: Connect) -> None:
    async with connect() as client:
        assert client.server_info is not None and client.server_info.name == "Paint shop"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    # Skill ids made to fit MCP tool names (SEP-986: [A-Za-z0-9._-]).
    assert sorted(tools) == ["paint", "quote_price_v2"]
    paint = tools["paint"]
    assert paint.title == "Paint"
    assert paint.description is not None
    assert "Paints a thing in a color." in paint.description
    assert "'paint the fence green'" in paint.description  # the skill's examples
    assert paint.input_schema["required"] == ["message"]
    assert set(paint.input_schema["properties"]) == {"message", "context_id", "task_id"}


async def test_a_call_answers_with_the_agents_text_and_where_it_stands(connect: Connect) -> None:
    async with connect() as client:
        result = await client.call_tool("paint", {"message": "hello"})
        skill = await client.call_tool("quote_price_v2", {"message": "skill"})
    assert not result.is_error
    assert text_of(result) == "echo: hello"
    assert result.structured_content["state"] == "completed"
    assert result.structured_content["taskId"] and result.structured_content["contextId"]
    # The tool's skill reaches the agent as a routing hint in the request metadata.
    assert text_of(skill) == "skill quote price/v2"


async def test_multi_turn_with_context_id(connect: Connect) -> None:
    async with connect() as client:
        first = await client.call_tool("paint", {"message": "turns"})
        context = first.structured_content["contextId"]
        second = await client.call_tool("paint", {"message": "turns", "context_id": context})
        other = await client.call_tool("paint", {"message": "turns"})
    assert [text_of(r) for r in (first, second, other)] == ["turn 1", "turn 2", "turn 1"]
    assert second.structured_content["contextId"] == context


async def test_input_required_then_the_answer(connect: Connect) -> None:
    async with connect() as client:
        asked = await client.call_tool("paint", {"message": "ask"})
        state = asked.structured_content
        assert not asked.is_error and state["state"] == "input-required"
        assert text_of(asked).startswith("What size?")
        assert f"task_id={state['taskId']}" in text_of(asked)  # the model is told how to answer
        answered = await client.call_tool(
            "paint",
            {"message": "ask big", "task_id": state["taskId"], "context_id": state["contextId"]},
        )
    assert text_of(answered) == "a big one, then"
    assert answered.structured_content == {**state, "state": "completed"}


async def test_progress_notifications_while_the_agent_streams(connect: Connect) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async with connect() as client:
        result = await client.call_tool("paint", {"message": "steps 3"}, progress_callback=progress)
    assert text_of(result) == "0 1 2 "
    values = [value for value, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values)  # increasing (MCP)
    messages = [message for _, message in seen]
    task_id = result.structured_content["taskId"]
    assert messages == [f"task {task_id}: submitted", "working", "0 ", "1 ", "2 ", "completed"]


async def test_an_mcp_cancel_cancels_the_task(connect: Connect, agent_url: str) -> None:
    seen: list[str] = []
    working = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")
        if message == "working":
            working.set()

    async with connect() as client:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool("paint", {"message": "slow"}, progress_callback=progress)

            group.start_soon(call)
            with anyio.fail_after(10):
                await working.wait()
            group.cancel_scope.cancel()  # the MCP client sends notifications/cancelled
        # The bridge still answers after a cancelled call.
        assert text_of(await client.call_tool("paint", {"message": "still here"}))
    task_id = seen[0].removeprefix("task ").split(":")[0]
    async with AsyncClient(agent_url) as agent:
        deadline = time.monotonic() + 10
        while (task := await agent.get(task_id)).state is not TaskState.CANCELED:
            assert time.monotonic() < deadline, f"task still {task.state}"
            await anyio.sleep(0.05)


async def test_a_failing_agent_is_a_tool_error_without_its_internals(connect: Connect) -> None:
    async with connect() as client:
        result = await client.call_tool("paint", {"message": "fail"})
    assert result.is_error
    assert text_of(result).startswith("The agent ended the task failed.")
    assert "secret internal detail" not in text_of(result)
    assert "Traceback" not in text_of(result)
    assert result.structured_content["state"] == "failed"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "'message' must be a non-empty string"),
        ({"message": 3}, "'message' must be a non-empty string"),
        ({"message": "hi", "task_id": ""}, "'task_id' must be a non-empty string when given"),
        ({"message": "hi", "colour": "red"}, "unknown arguments: colour"),
    ],
)
async def test_bad_arguments_are_a_tool_error(
    mcp_http_url: str, arguments: dict[str, Any], problem: str
) -> None:
    from mcp import Client

    async with Client(mcp_http_url) as client:
        result = await client.call_tool("paint", arguments)
    assert result.is_error
    assert text_of(result) == f"invalid call: {problem}"
