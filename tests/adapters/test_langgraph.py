"""The LangGraph adapter (issue #35): the conformance suite on LangGraph's prebuilt ReAct agent
driven by a LangChain chat model that follows the Script (LangChain's fake chat models cannot
call tools, so this is one of its own on ``BaseChatModel``), a graph of our own with
``interrupt()`` in a node, a graph with its own checkpointer, message parts as content blocks,
and remote A2A agents (ours and the official SDK's) as LangChain tools."""

from __future__ import annotations

import json
import operator
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent
from langgraph.types import interrupt

import simple_a2a
from simple_a2a.adapters.langgraph import ask_human, executor, remote_agent_tool
from simple_a2a.client import AsyncClient
from simple_a2a.protocol import Part, Task, TaskState
from simple_a2a.server import AgentExecutor
from tests.support import card
from tests.support.agents import serving

from .conformance import AdapterConformance, CallTool, Fail, Hang, ModelFailure, Say, Script, Turn
from .running import loaded_by_import, run_example

# LangGraph 1.x points create_react_agent users to langchain.agents.create_agent (the
# `langchain` package, not a dependency of the extra); both build the same kind of graph.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


def turn_of(messages: Sequence[BaseMessage]) -> Turn:
    """The conversation as LangGraph handed it to the model."""
    return Turn(
        [m.text for m in messages if isinstance(m, HumanMessage)],
        [m.text for m in messages if isinstance(m, ToolMessage)],
    )


class ScriptedChatModel(BaseChatModel):
    """A chat model that does what the Script says, streaming token by token."""

    script: Any
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self  # the script names the tools it calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("the adapter runs graphs asynchronously")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = [chunk async for chunk in self._astream(messages, stop, run_manager)]
        message: Any = chunks[0].message
        for chunk in chunks[1:]:
            message = message + chunk.message
        return ChatResult(generations=[ChatGeneration(message=AIMessage(**message.model_dump()))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.seen.append(list(messages))
        step = self.script.step(turn_of(messages))
        if isinstance(step, Fail):
            raise ModelFailure(step.message)
        tokens: tuple[str, ...] = ()
        if isinstance(step, Hang):
            tokens = (step.first,)
        elif isinstance(step, Say):
            tokens = step.tokens
        for token in tokens:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager is not None:
                await run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
        if isinstance(step, Hang):
            await self.script.hang()
        if isinstance(step, CallTool):
            call = {"name": step.name, "args": json.dumps(step.args), "id": "call-1", "index": 0}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[call]))


class TestLangGraphAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return executor(create_react_agent(ScriptedChatModel(script=script), tools=[ask_human]))


async def _ask_twice(graph: Any) -> tuple[Task, Task]:
    with serving(simple_a2a.server(card("graph"), executor(graph)).app) as url:
        async with AsyncClient(url) as client:
            asked = await client.send("book a table")
            assert isinstance(asked, Task)
            done = await client.send("8 pm", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task)
    return asked, done


def booking_graph(checkpointer: Any = None) -> Any:
    """A graph of our own: a node that interrupts with a dict, no chat model at all."""

    def book(state: MessagesState) -> dict[str, Any]:
        when = interrupt({"question": "At what time?", "choices": ["7 pm", "8 pm"]})
        return {"messages": [AIMessage(content=f"Booked for {when}.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("book", book)
    builder.add_edge(START, "book")
    return builder.compile(checkpointer=checkpointer)


async def test_an_interrupt_in_a_node_of_our_own_graph_is_input_required() -> None:
    asked, done = await _ask_twice(booking_graph())
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None and asked.status.message.text == "At what time?"
    assert done.status.state is TaskState.COMPLETED and done.text == "Booked for 8 pm."


async def test_parallel_interrupts_are_asked_together_and_one_answer_resumes_both() -> None:
    class Orders(TypedDict):
        said: Annotated[list[str], operator.add]
        messages: list[AIMessage]

    def ask(name: str) -> Any:
        def node(state: Orders) -> dict[str, Any]:
            return {"said": [f"{name}: {interrupt(f'{name}?')}"]}

        return node

    def answer(state: Orders) -> dict[str, Any]:
        return {"messages": [AIMessage(content=", ".join(sorted(state["said"])))]}

    builder = StateGraph(Orders)
    for name in ("starter", "main"):
        builder.add_node(name, ask(name))
        builder.add_edge(START, name)
        builder.add_edge(name, "answer")
    builder.add_node("answer", answer)
    asked, done = await _ask_twice(builder.compile())
    assert asked.status.message is not None
    assert sorted(asked.status.message.text.split("\n")) == ["main?", "starter?"]
    assert done.status.state is TaskState.COMPLETED and done.text == "main: 8 pm, starter: 8 pm"


async def test_a_graph_with_its_own_checkpointer_keeps_its_threads_there() -> None:
    saver = InMemorySaver()
    asked, done = await _ask_twice(booking_graph(saver))
    assert done.text == "Booked for 8 pm."
    threads = {saved.config["configurable"]["thread_id"] async for saved in saver.alist(None)}
    assert threads == {asked.context_id}  # thread_id is the contextId


async def test_message_parts_reach_the_model_as_content_blocks() -> None:
    script = Script(lambda turn: Say(("seen",)))
    model = ScriptedChatModel(script=script, seen=[])
    graph = create_react_agent(model, tools=[ask_human])
    with serving(simple_a2a.server(card("parts"), executor(graph)).app) as url:
        async with AsyncClient(url) as client:
            message = simple_a2a.Message.user(
                [
                    Part(text="look"),
                    Part(raw=b"\x89PNG", media_type="image/png", filename="a.png"),
                    Part(url="https://example.com/r.pdf", media_type="application/pdf"),
                    Part(data={"k": 1}),
                ]
            )
            task = await client.send(message)
    assert isinstance(task, Task) and task.text == "seen"
    content = model.seen[0][-1].content
    assert content == [
        {"type": "text", "text": "look"},
        {
            "type": "image",
            "mime_type": "image/png",
            "base64": "iVBORw==",
            "extras": {"filename": "a.png"},
        },
        {"type": "file", "mime_type": "application/pdf", "url": "https://example.com/r.pdf"},
        {"type": "text", "text": '{"k": 1}'},
    ]


class RemoteCaller(BaseChatModel):
    """Calls the one tool it was bound with "what is 2+2?", then says what it returned."""

    seen: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "remote-caller"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.seen.extend(f"{t.name}: {t.description}" for t in tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        results = [m.text for m in messages if isinstance(m, ToolMessage)]
        if results:
            message = AIMessage(content=f"the agent said {results[-1]}")
        else:
            name = self.seen[-1].split(":")[0]
            call = {"name": name, "args": {"message": "what is 2+2?"}, "id": "r1"}
            message = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


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


async def _ask_through(url: str) -> tuple[list[str], str]:
    model = RemoteCaller(seen=[])
    graph = create_react_agent(model, tools=[await remote_agent_tool(url)])
    state = await graph.ainvoke({"messages": [HumanMessage(content="ask it")]})
    return model.seen, state["messages"][-1].text


async def test_a_remote_agent_is_a_tool(our_agent: str) -> None:
    seen, answer = await _ask_through(our_agent)
    assert seen == ["Calculator: Adds numbers. Skills: add: adds two numbers."]
    assert answer == "the agent said 4"


@pytest.fixture(scope="module")
def sdk_agent() -> Iterator[Any]:
    from tests.client.sdk_agent import build_app
    from tests.client.servers import ServerThread

    with ServerThread(build_app) as server:
        yield server


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent_is_a_tool(sdk_agent: Any) -> None:
    _seen, answer = await _ask_through(sdk_agent.url)
    assert answer == "the agent said echo: what is 2+2?"


def test_the_example_runs_as_written() -> None:
    said = run_example("langgraph_agent")
    assert "asked: [INPUT_REQUIRED] At what time?" in said
    assert "answer: Booked a table for two at 8 pm. [COMPLETED]" in said


def test_importing_simple_a2a_imports_no_langgraph() -> None:
    assert loaded_by_import("langgraph", "langchain_core") == []
