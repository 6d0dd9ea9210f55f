"""The Google ADK adapter (issue #35): the conformance suite on an ``LlmAgent`` whose model is a
``BaseLlm`` driven by the Script (read from the ``LlmRequest`` ADK builds), plus tool
confirmations, structured output, the session service's bounds, and remote A2A agents (ours and
the official SDK's) as the agent's tools."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps.app import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from pydantic import BaseModel

import simple_a2a
from simple_a2a.adapters import RemoteAgent
from simple_a2a.adapters.adk import ask_human, executor, remote_agent_tool
from simple_a2a.client import AsyncClient
from simple_a2a.protocol import Part, Task, TaskState
from simple_a2a.server import AgentExecutor, RequestContext
from simple_a2a.storage.sqlite import SQLiteStorage
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
from .running import run_example


def _tool_result(response: dict[str, Any] | None) -> str:
    if response and set(response) == {"result"}:
        return str(response["result"])
    return json.dumps(response, sort_keys=True)


def turn_of(request: LlmRequest) -> Turn:
    """The Turn ADK handed its model: user text parts and function responses, oldest first."""
    users: list[str] = []
    tools: list[str] = []
    for content in request.contents:
        for part in content.parts or []:
            if part.function_response is not None:
                tools.append(_tool_result(part.function_response.response))
            elif content.role == "user" and part.text:
                users.append(part.text)
    return Turn(users, tools)


def _content(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


class ScriptedLlm(BaseLlm):
    """ADK's model interface answering from the Script: text streamed as partial responses
    then the whole (what ``stream=True`` means in ``BaseLlm``), a tool call, an error, a hang."""

    model: str = "scripted"
    script: Any

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        step: Step = self.script.step(turn_of(llm_request))
        if isinstance(step, Fail):
            raise ModelFailure(step.message)
        if isinstance(step, CallTool):
            call = types.FunctionCall(name=step.name, args=step.args)
            yield LlmResponse(content=_content(types.Part(function_call=call)))
            return
        tokens = step.tokens if isinstance(step, Say) else (step.first,)
        if stream:
            for token in tokens:
                yield LlmResponse(content=_content(types.Part(text=token)), partial=True)
        if isinstance(step, Hang):
            await self.script.hang()
        yield LlmResponse(content=_content(types.Part(text="".join(tokens))))


def scripted_agent(script: Script, **options: Any) -> LlmAgent:
    tools = options.pop("tools", [ask_human])
    return LlmAgent(name="assistant", model=ScriptedLlm(script=script), tools=tools, **options)


class TestADKAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return executor(scripted_agent(script))


# -- beyond the suite: confirmations, structured output, errors, bounds ---------------------------

paints: list[str] = []


def paint(color: str) -> str:
    """Paint the wall."""
    paints.append(color)
    return f"painted {color}"


def _paint_then_report(turn: Turn) -> Step:
    if not turn.tool_results:
        return CallTool("paint", {"color": "red"})
    return Say(("result: ", turn.tool_results[-1]))


@pytest.mark.parametrize("answer", ["yes", "no, blue"])
async def test_a_tool_needing_confirmation_asks_and_runs_only_on_yes(answer: str) -> None:
    paints.clear()
    script = Script(_paint_then_report)
    tool = FunctionTool(paint, require_confirmation=True)
    app = simple_a2a.server(card(), executor(scripted_agent(script, tools=[tool])))
    with serving(app.app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("paint the wall")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            assert asked.status.message is not None
            assert asked.status.message.text == 'May I call paint with {"color":"red"}? (yes/no)'
            done = await client.send(answer, task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED, done.status
    if answer == "yes":
        assert paints == ["red"] and done.text == "result: painted red"
    else:
        assert paints == [] and "rejected" in done.text


class Verdict(BaseModel):
    score: int


async def test_a_structured_output_is_the_artifact_as_json() -> None:
    script = Script(lambda turn: Say(('{"score"', ": 7}")))
    agent = scripted_agent(script, tools=[], output_schema=Verdict)
    with serving(simple_a2a.server(card(), executor(agent)).app) as url:
        async with AsyncClient(url) as client:
            task = await client.send("rate it")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert json.loads(task.text) == {"score": 7}


class RefusingLlm(BaseLlm):
    """A provider that answers with an error code and no content (e.g. a safety block)."""

    model: str = "refusing"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(error_code="SAFETY", error_message="blocked: key sk-secret")


async def test_an_error_response_fails_the_task_with_its_code_only() -> None:
    agent = LlmAgent(name="assistant", model=RefusingLlm())
    with serving(simple_a2a.server(card(), executor(agent)).app) as url:
        async with AsyncClient(url) as client:
            task = await client.send("hi")
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED
    said = task.status.message.text if task.status.message else ""
    assert said.endswith("(SAFETY)") and "sk-secret" not in said


def _ask_once_then_recall(turn: Turn) -> Step:
    if len(turn.user_texts) == 1 and not turn.tool_results:
        return CallTool("ask_human", {"question": "Which color?"})
    return Say((" | ".join(turn.user_texts), " / ", " | ".join(turn.tool_results)))


async def test_the_turn_after_a_human_answer_has_the_whole_conversation() -> None:
    script = Script(_ask_once_then_recall)
    with serving(simple_a2a.server(card(), executor(scripted_agent(script))).app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("paint it")
            assert isinstance(asked, Task)
            await client.send("blue", task_id=asked.id, context_id=asked.context_id)
            later = await client.send("and the door?", context_id=asked.context_id)
    assert isinstance(later, Task) and later.id != asked.id
    assert later.text == "paint it | and the door? / blue"  # the answer is a tool result


async def test_a_question_left_unanswered_is_closed_by_the_next_task() -> None:
    script = Script(_ask_once_then_recall)
    with serving(simple_a2a.server(card(), executor(scripted_agent(script))).app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("paint it")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            other = await client.send("never mind, the door", context_id=asked.context_id)
            again = await client.get(asked.id)
    assert isinstance(other, Task) and other.status.state is TaskState.COMPLETED
    (note,) = script.turns[-1].tool_results  # the model's API wants every call answered
    assert "did not answer" in note
    assert other.text.startswith("paint it | never mind, the door / ")
    assert again.status.state is TaskState.INPUT_REQUIRED  # the A2A task itself is untouched


async def test_the_session_kept_is_bounded_by_whole_turns() -> None:
    script = Script(AdapterConformance._recall)
    # each turn is 2 events (user, model): 3 events keep the last whole turn, then the new one
    agent = scripted_agent(script, tools=[])
    with serving(simple_a2a.server(card(), executor(agent, max_history_events=3)).app) as url:
        async with AsyncClient(url) as client:
            first = await client.send("one")
            assert isinstance(first, Task)
            for text in ("two", "three"):
                last = await client.send(text, context_id=first.context_id)
    assert isinstance(last, Task) and last.text == "turn 2: two | three"


def _instruction(request: LlmRequest) -> str:
    return str(request.config.system_instruction or "")


async def test_session_state_is_kept_with_the_conversation(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recorder(ScriptedLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            seen.append(_instruction(llm_request))
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    script = Script(lambda turn: Say((f"answer {len(turn.user_texts)}",)))
    agent = LlmAgent(
        name="assistant",
        model=Recorder(script=script),
        instruction="Your last answer: {last?}",
        output_key="last",  # ADK writes the answer into the session's state
    )
    path = tmp_path / "tasks.db"
    context_id = None
    for text in ("one", "two"):  # a new server on the same file each turn
        app = simple_a2a.server(card(), executor(agent), storage=SQLiteStorage(path))
        with serving(app.app) as url:
            async with AsyncClient(url) as client:
                task = await client.send(text, context_id=context_id)
        assert isinstance(task, Task)
        context_id = task.context_id
    assert "Your last answer: answer 1" in seen[-1]


async def test_message_parts_reach_the_model_as_gemini_parts() -> None:
    seen: list[types.Part] = []

    class Recorder(ScriptedLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            seen.extend(llm_request.contents[-1].parts or [])
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    agent = LlmAgent(name="assistant", model=Recorder(script=Script(lambda turn: Say(("ok",)))))
    parts = [
        Part.text("look"),
        Part.raw(b"\x89PNG", media_type="image/png"),
        Part.url("https://example.com/a.pdf", media_type="application/pdf"),
        Part.data({"n": 1}),
    ]
    with serving(simple_a2a.server(card(), executor(agent)).app) as url:
        async with AsyncClient(url) as client:
            task = await client.send(parts)
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    text, raw, link, data = seen
    assert text.text == "look"
    assert raw.inline_data is not None and raw.inline_data.data == b"\x89PNG"
    assert raw.inline_data.mime_type == "image/png"
    assert link.file_data is not None and link.file_data.file_uri == "https://example.com/a.pdf"
    assert json.loads(data.text or "") == {"n": 1}


def test_importing_simple_a2a_imports_no_adk() -> None:
    code = (
        "import sys, simple_a2a, simple_a2a.adapters; "
        "print([m for m in sys.modules if m.startswith(('google.adk', 'google.genai'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


async def test_an_app_is_served_with_its_name() -> None:
    script = Script(AdapterConformance._recall)
    app = App(name="painter_app", root_agent=scripted_agent(script, tools=[]))
    served = executor(app)
    assert served.app_name == "painter_app"
    with serving(simple_a2a.server(card(), served).app) as url:
        async with AsyncClient(url) as client:
            first = await client.send("one")
            assert isinstance(first, Task)
            second = await client.send("two", context_id=first.context_id)
    assert isinstance(second, Task) and second.text == "turn 2: one | two"


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


async def _run(agent: LlmAgent, text: str) -> str:
    """The agent's final answer, run by ADK's own Runner (no A2A server on this side)."""
    runner = Runner(agent=agent, app_name="test", session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="test", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    answer = ""
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    return answer


async def _run_with_remote(url: str) -> tuple[FunctionTool, Script, str]:
    remote = await RemoteAgent.connect(url)
    try:
        tool = await remote_agent_tool(remote)
        script = Script(_call_remote(tool.name))
        answer = await _run(scripted_agent(script, tools=[tool]), "ask the other agent")
    finally:
        await remote.aclose()
    return tool, script, answer


async def test_our_agent_as_a_tool(our_agent: str) -> None:
    tool, script, answer = await _run_with_remote(our_agent)
    assert tool.name == "Echo_shop" and tool.description == "Echoes what it is told."
    declaration = tool._get_declaration()
    assert declaration is not None and declaration.description == "Echoes what it is told."
    assert script.turns[-1].tool_results == ["echo: echo hi"]
    assert answer == "it said: echo: echo hi"


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent_as_a_tool(sdk_agent: str) -> None:
    tool, script, answer = await _run_with_remote(sdk_agent)
    assert tool.description  # the SDK agent's card
    assert script.turns[-1].tool_results == ["echo: echo hi"]
    assert answer == "it said: echo: echo hi"


async def _out_of_stock(ctx: RequestContext) -> Any:
    raise RuntimeError("out of stock")


async def test_a_remote_failure_is_the_tool_result_the_model_reads() -> None:
    with serving(simple_a2a.server(card("Broken shop"), _out_of_stock).app) as url:
        tool = await remote_agent_tool(url, name="shop")
        script = Script(_call_remote("shop"))
        answer = await _run(scripted_agent(script, tools=[tool]), "ask the other agent")
    assert tool.name == "shop"
    (said,) = script.turns[-1].tool_results
    assert json.loads(said)["error"].startswith("the agent Broken_shop ended the task failed")
    assert answer.startswith("it said: ")


def test_the_example_runs_as_written() -> None:
    said = run_example("adk_agent")
    assert "asked: [INPUT_REQUIRED] Which color?" in said
    assert "answer: Got: blue [COMPLETED]" in said
    assert "front desk: Got: Which color?" in said
