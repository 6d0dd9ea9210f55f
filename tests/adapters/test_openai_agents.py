"""The OpenAI Agents SDK adapter: the conformance suite on an ``agents.Agent`` driven by the
SDK's own test model (``agents.testing.ScriptedModel``), plus approvals, structured output, and
remote A2A agents (ours and the official SDK's) as the agent's tools."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, ModelSettings, Runner, function_tool, set_tracing_disabled
from agents.models.interface import ModelTracing
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message
from agents.testing import function_call as function_call_item
from openai.types.responses import ResponseTextDeltaEvent
from pydantic import BaseModel

import simple_a2a
from simple_a2a.adapters import RemoteAgent
from simple_a2a.adapters.openai_agents import (
    ask_human,
    executor,
    remote_agent_tool,
)
from simple_a2a.client import AsyncClient
from simple_a2a.protocol import Part, Task, TaskState
from simple_a2a.server import AgentExecutor, RequestContext
from tests.support import card
from tests.support.agents import TestAgent, serving

from .conformance import (
    AdapterConformance,
    CallTool,
    Fail,
    Hang,
    ModelFailure,
    Say,
    Script,
    Step,
    Turn,
)
from .running import loaded_by_import, run_example

set_tracing_disabled(True)  # no trace export (it would try the network); every model is scripted


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def turn_of(model_input: str | list[Any]) -> Turn:
    """The Turn the framework handed its model: user messages and tool outputs, from the
    Responses API input items."""
    if isinstance(model_input, str):
        return Turn([model_input], [])
    users: list[str] = []
    tools: list[str] = []
    for item in model_input:
        if item.get("role") == "user":
            users.append(_text(item.get("content", "")))
        elif item.get("type") == "function_call_output":
            tools.append(_text(item.get("output", "")))
    return Turn(users, tools)


async def _streamed(tokens: tuple[str, ...], script: Script, hang: bool) -> AsyncIterator[Any]:
    """The SDK's own event stream for one assistant message, its text delta cut into
    ``tokens`` (a provider streams several deltas per message); a Hang waits after them."""
    whole = ScriptedModel([[assistant_message("".join(tokens))]])
    events = whole.stream_response(
        None,
        [],
        ModelSettings(),
        [],
        None,
        [],
        ModelTracing.DISABLED,
        previous_response_id=None,
        conversation_id=None,
        prompt=None,
    )
    async for event in events:
        if isinstance(event, ResponseTextDeltaEvent):
            for token in tokens:
                yield event.model_copy(update={"delta": token})
            if hang:
                await script.hang()
        else:
            yield event


class ConformanceModel(ScriptedModel):
    """``ScriptedModel`` whose every call is one step of the :class:`Script`, read from the
    call's input."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def _respond(self, call: ModelCall) -> ModelStep:
        step: Step = self.script.step(turn_of(call.input))
        if isinstance(step, Fail):
            return ModelStep.raise_error(ModelFailure(step.message))
        if isinstance(step, CallTool):
            call_id = f"call_{uuid.uuid4().hex}"
            return ModelStep(output=[function_call_item(step.name, step.args, call_id=call_id)])
        tokens = step.tokens if isinstance(step, Say) else (step.first,)
        hang = isinstance(step, Hang)
        return ModelStep.stream(
            lambda _call: _streamed(tokens, self.script, hang),
            output=[assistant_message("".join(tokens))],
        )

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        self.enqueue(ModelStep.respond(self._respond))
        return await super().get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        self.enqueue(ModelStep.respond(self._respond))
        return super().stream_response(*args, **kwargs)


def scripted_agent(script: Script, **options: Any) -> Agent[Any]:
    tools = options.pop("tools", [ask_human])
    return Agent(name="Assistant", model=ConformanceModel(script), tools=tools, **options)


class TestOpenAIAgentsAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return executor(scripted_agent(script))


# -- beyond the suite: approvals, structured output ----------------------------------------------

paints: list[str] = []


@function_tool(needs_approval=True)
def paint(color: str) -> str:
    """Paint the wall."""
    paints.append(color)
    return f"painted {color}"


def _paint_then_report(turn: Turn) -> Step:
    if not turn.tool_results:
        return CallTool("paint", {"color": "red"})
    return Say(("result: ", turn.tool_results[-1]))


@pytest.mark.parametrize("answer", ["yes", "no, blue"])
async def test_a_tool_needing_approval_asks_and_runs_only_on_yes(answer: str) -> None:
    paints.clear()
    script = Script(_paint_then_report)
    app = simple_a2a.server(card(), executor(scripted_agent(script, tools=[paint])))
    with serving(app.app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("paint the wall")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            assert asked.status.message is not None
            assert asked.status.message.text == 'May I call paint with {"color":"red"}? (yes/no)'
            done = await client.send(answer, task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    if answer == "yes":
        assert paints == ["red"] and done.text == "result: painted red"
    else:
        assert paints == [] and "no, blue" in script.turns[-1].tool_results[-1]


class Verdict(BaseModel):
    score: int


async def test_a_structured_output_is_the_artifact_as_json() -> None:
    script = Script(lambda turn: Say(('{"score"', ": 7}")))
    app = simple_a2a.server(card(), executor(scripted_agent(script, tools=[], output_type=Verdict)))
    with serving(app.app) as url:
        async with AsyncClient(url) as client:
            task = await client.send("rate it")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert json.loads(task.text) == {"score": 7}


def _ask_once_then_recall(turn: Turn) -> Step:
    if len(turn.user_texts) == 1 and not turn.tool_results:
        return CallTool("ask_human", {"question": "Which color?"})
    return Say((" | ".join(turn.user_texts), " / ", " | ".join(turn.tool_results)))


async def test_the_turn_after_a_human_answer_has_the_whole_conversation() -> None:
    script = Script(_ask_once_then_recall)
    app = simple_a2a.server(card(), executor(scripted_agent(script)))
    with serving(app.app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("paint it")
            assert isinstance(asked, Task)
            await client.send("blue", task_id=asked.id, context_id=asked.context_id)
            later = await client.send("and the door?", context_id=asked.context_id)
    assert isinstance(later, Task) and later.id != asked.id
    assert later.text == "paint it | and the door? / blue"  # the answer is a tool result


async def test_the_history_kept_is_bounded_by_whole_turns() -> None:
    script = Script(AdapterConformance._recall)
    # each turn is 2 items (user, assistant): 3 items keep the last whole turn, then the new one
    app = simple_a2a.server(card(), executor(scripted_agent(script), max_history_items=3))
    with serving(app.app) as url:
        async with AsyncClient(url) as client:
            first = await client.send("one")
            assert isinstance(first, Task)
            for text in ("two", "three"):
                last = await client.send(text, context_id=first.context_id)
    assert isinstance(last, Task) and last.text == "turn 2: two | three"


async def test_message_parts_reach_the_model_as_responses_input_content() -> None:
    model = ConformanceModel(Script(lambda turn: Say(("ok",))))
    agent = Agent(name="Assistant", model=model)
    parts = [
        Part.text("look"),
        Part.raw(b"\x89PNG", media_type="image/png"),
        Part.raw(b"a,b", media_type="text/csv", filename="t.csv"),
        Part.url("https://example.com/a.pdf", media_type="application/pdf"),
        Part.data({"n": 1}),
    ]
    with serving(simple_a2a.server(card(), executor(agent)).app) as url:
        async with AsyncClient(url) as client:
            task = await client.send(parts)
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert model.last_call is not None
    (item,) = model.last_call.input
    assert item["role"] == "user" and item["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "auto"},
        {"type": "input_file", "file_data": "data:text/csv;base64,YSxi", "filename": "t.csv"},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_text", "text": '{"n": 1}'},
    ]


# -- call: a remote A2A agent as the agent's tool -------------------------------------------------


@pytest.fixture(scope="module")
def our_agent() -> Iterator[str]:
    shop = card("Echo shop")
    shop.description = "Echoes what it is told."
    with serving(simple_a2a.server(shop, TestAgent()).app) as url:
        yield url


@pytest.fixture(scope="module")
def sdk_agent() -> Iterator[str]:
    from tests.client.sdk_agent import build_app
    from tests.client.servers import ServerThread

    with ServerThread(build_app) as server:
        yield server.url


def _call_remote(name: str) -> Any:
    def reply(turn: Turn) -> Step:
        if not turn.tool_results:
            return CallTool(name, {"message": "echo hi"})
        return Say(("it said: ", turn.tool_results[-1]))

    return reply


async def _run_with_remote(url: str) -> tuple[Any, Script, Any]:
    remote = await RemoteAgent.connect(url)
    try:
        tool = await remote_agent_tool(remote)
        script = Script(_call_remote(tool.name))
        result = await Runner.run(scripted_agent(script, tools=[tool]), "ask the other agent")
    finally:
        await remote.aclose()
    return tool, script, result


async def test_our_agent_as_a_tool(our_agent: str) -> None:
    tool, script, result = await _run_with_remote(our_agent)
    assert tool.name == "Echo_shop" and tool.description == "Echoes what it is told."
    assert script.turns[-1].tool_results == ["echo: echo hi"]
    assert result.final_output == "it said: echo: echo hi"


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent_as_a_tool(sdk_agent: str) -> None:
    tool, script, result = await _run_with_remote(sdk_agent)
    assert tool.description  # the SDK agent's card
    assert script.turns[-1].tool_results == ["echo: echo hi"]
    assert result.final_output == "it said: echo: echo hi"


async def _out_of_stock(ctx: RequestContext) -> Any:
    raise RuntimeError("out of stock")


async def test_a_remote_failure_is_the_tool_result_the_model_reads() -> None:
    with serving(simple_a2a.server(card("Broken shop"), _out_of_stock).app) as url:
        tool = await remote_agent_tool(url, name="shop")
        script = Script(_call_remote("shop"))
        result = await Runner.run(scripted_agent(script, tools=[tool]), "ask the other agent")
    assert tool.name == "shop"
    (said,) = script.turns[-1].tool_results
    assert said.startswith("Error: the agent Broken_shop ended the task failed")
    assert result.final_output.startswith("it said: ")


def test_the_example_runs_as_written() -> None:
    said = run_example("openai_agents_agent")
    assert "asked: [INPUT_REQUIRED] Which color?" in said
    assert "answer: Got: blue [COMPLETED]" in said
    assert "front desk: Got: Which color?" in said


def test_importing_simple_a2a_imports_no_agents_sdk() -> None:
    assert loaded_by_import("agents", "openai") == []
