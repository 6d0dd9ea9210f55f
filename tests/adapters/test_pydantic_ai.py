"""The pydantic-ai adapter (issue #35): the conformance suite with pydantic-ai's own
FunctionModel driven by the Script, and a remote A2A agent as a pydantic-ai tool."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

import simple_a2a
from simple_a2a.adapters.pydantic_ai import ask_human, executor, remote_agent_tool
from simple_a2a.server import AgentExecutor
from tests.support import card
from tests.support.agents import serving

from .conformance import AdapterConformance, CallTool, Fail, Hang, ModelFailure, Say, Script, Turn


def turn_of(messages: list[ModelMessage]) -> Turn:
    """The conversation as pydantic-ai handed it to the model."""
    parts = [
        part for message in messages if isinstance(message, ModelRequest) for part in message.parts
    ]
    return Turn(
        [str(p.content) for p in parts if isinstance(p, UserPromptPart)],
        [str(p.content) for p in parts if isinstance(p, ToolReturnPart)],
    )


def scripted_model(script: Script) -> FunctionModel:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        step = script.step(turn_of(messages))
        if isinstance(step, Fail):
            raise ModelFailure(step.message)
        if isinstance(step, Hang):
            yield step.first
            await script.hang()
        if isinstance(step, CallTool):
            call = DeltaToolCall(
                name=step.name, json_args=json.dumps(step.args), tool_call_id="call-1"
            )
            yield {0: call}
        if isinstance(step, Say):
            for token in step.tokens:
                yield token

    return FunctionModel(stream_function=stream)


class TestPydanticAIAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return executor(Agent(scripted_model(script), tools=[ask_human]))


async def test_a_tool_needing_approval_is_asked_and_a_yes_runs_it() -> None:
    ran: list[str] = []
    script = Script(
        lambda turn: (
            CallTool("delete", {"path": "/tmp/x"})
            if not turn.tool_results
            else Say(("done: ", turn.tool_results[-1]))
        )
    )
    agent = Agent(scripted_model(script))

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        ran.append(path)
        return f"deleted {path}"

    app = simple_a2a.server(card("approvals"), executor(agent))
    with serving(app.app) as url:
        async with simple_a2a.AsyncClient(url) as client:
            asked = await client.send("clean up")
            assert isinstance(asked, simple_a2a.Task)
            assert asked.status.state is simple_a2a.TaskState.INPUT_REQUIRED
            assert asked.status.message is not None and "delete" in asked.status.message.text
            done = await client.send("yes", task_id=asked.id, context_id=asked.context_id)
    assert (
        ran == ["/tmp/x"]
        and isinstance(done, simple_a2a.Task)
        and done.text == "done: deleted /tmp/x"
    )


def remote_caller(seen: list[str]) -> FunctionModel:
    """A model that calls the one tool it has with "what is 2+2?", then says what it returned."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = turn_of(messages)
        if not turn.tool_results:
            tool = info.function_tools[0]
            seen.append(f"{tool.name}: {tool.description}")
            args = {"message": "what is 2+2?"}
            return ModelResponse(parts=[ToolCallPart(tool.name, args, tool_call_id="r1")])
        return ModelResponse(parts=[TextPart(f"the agent said {turn.tool_results[-1]}")])

    return FunctionModel(function=answer)


@pytest.fixture(scope="module")
def our_agent() -> Iterator[str]:
    remote_card = simple_a2a.AgentCard.from_dict(
        {
            "name": "Calculator",
            "description": "Adds numbers.",
            "version": "1",
            "capabilities": {},
            "skills": [{"id": "add", "name": "add", "description": "adds two numbers", "tags": []}],
        }
    )
    with serving(simple_a2a.server(remote_card, lambda ctx: "4").app) as url:
        yield url


async def test_a_remote_agent_is_a_tool(our_agent: str) -> None:
    seen: list[str] = []
    tool = await remote_agent_tool(our_agent)
    result = await Agent(remote_caller(seen), tools=[tool]).run("ask the calculator")
    assert seen == ["Calculator: Adds numbers. Skills: add: adds two numbers."]
    assert result.output == "the agent said 4"


@pytest.fixture(scope="module")
def sdk_agent() -> Iterator[Any]:
    from tests.client.sdk_agent import build_app
    from tests.client.servers import ServerThread

    with ServerThread(build_app) as server:
        yield server


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent_is_a_tool(sdk_agent: Any) -> None:
    seen: list[str] = []
    tool = await remote_agent_tool(sdk_agent.url)
    result = await Agent(remote_caller(seen), tools=[tool]).run("ask it")
    assert result.output == "the agent said echo: what is 2+2?"


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        (
            "pydantic_ai_agent",
            ["asked: [INPUT_REQUIRED] For which date?", "for May 3. [COMPLETED]"],
        ),
        ("chain", ["front desk: The painter says: Which color?", "The painter says: Got: blue"]),
    ],
)
def test_the_examples_run_as_written(example: str, expected: list[str]) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", f"examples.adapters.{example}", "--check", "--offline"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for line in expected:
        assert line in done.stdout, done.stdout
