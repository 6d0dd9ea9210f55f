"""A LangGraph agent served over A2A: it streams its answer, remembers the conversation (the
graph's checkpoint, kept in the server's storage) and asks the user a question with
``ask_human`` (an ``interrupt()``: the task waits ``input-required``).

    pip install 'simple-a2a[langgraph]'
    python -m examples.adapters.langgraph_agent            # serve on port 9494
    python -m examples.adapters.langgraph_agent --check    # serve, call it, print, exit

With ``OPENAI_API_KEY`` set (and ``pip install langchain-openai``) the agent uses
``gpt-4.1-mini``; with ``--offline`` (or ``A2A_DEMO_OFFLINE=1``, or no key) it uses a small
scripted chat model (no network), which asks for a time when told to book, and otherwise says
what it heard so far.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.prebuilt import create_react_agent

import simple_a2a
from simple_a2a import AgentCard, AsyncClient, Task, TaskArtifactUpdateEvent
from simple_a2a.adapters.langgraph import ask_human, executor
from simple_a2a.server.background import BackgroundServer

OFFLINE = (
    "--offline" in sys.argv
    or os.environ.get("A2A_DEMO_OFFLINE", "") not in ("", "0")
    or not os.environ.get("OPENAI_API_KEY")
)

CARD = AgentCard.from_dict(
    {
        "name": "Restaurant desk",
        "description": "Books tables; asks for the time.",
        "version": "1.0",
        "capabilities": {"streaming": True},
        "skills": [{"id": "book", "name": "book", "description": "books a table you name"}],
    }
)


class OfflineModel(BaseChatModel):
    """A stand-in for a real chat model, so the example runs without a key."""

    @property
    def _llm_type(self) -> str:
        return "offline"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kw: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._reply(messages)
        if reply.tool_calls:
            call = reply.tool_calls[0]
            chunk = {"name": call["name"], "args": '{"question": "At what time?"}', "index": 0}
            chunk["id"] = call["id"]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[chunk]))
            return
        for i, word in enumerate(reply.text.split(" ")):  # a word at a time, as models stream
            yield ChatGenerationChunk(
                message=AIMessageChunk(content=word if i == 0 else " " + word)
            )

    @staticmethod
    def _reply(messages: list[BaseMessage]) -> AIMessage:
        said = [m.text for m in messages if isinstance(m, HumanMessage)]
        answers = [m.text for m in messages if isinstance(m, ToolMessage)]
        if "book" in said[-1] and not answers:
            call = {"name": "ask_human", "args": {"question": "At what time?"}, "id": "ask-1"}
            return AIMessage(content="", tool_calls=[call])
        if answers:
            return AIMessage(content=f"Booked {said[-1].removeprefix('book ')} at {answers[-1]}.")
        return AIMessage(content=f"You said: {' / '.join(said)}")


def model() -> Any:
    if OFFLINE:
        return OfflineModel()
    from langchain_openai import ChatOpenAI  # type: ignore[import-not-found]

    return ChatOpenAI(model="gpt-4.1-mini")


graph = create_react_agent(
    model(),
    tools=[ask_human],  # its interrupt() ends the A2A turn input-required
    prompt="You book restaurant tables. Ask for the time with ask_human before booking.",
)
app = simple_a2a.server(CARD, executor(graph))


async def check(url: str) -> bool:
    async with AsyncClient(url) as client:
        asked = await client.send("book a table for two")
        assert isinstance(asked, Task) and asked.status.message is not None
        print(f"asked: [{asked.status.state.name}] {asked.status.message.text}")
        async for event in client.stream("8 pm", task_id=asked.id, context_id=asked.context_id):
            if isinstance(event, TaskArtifactUpdateEvent) and not event.last_chunk:
                print("delta:", event.artifact.text)
        done = await client.get(asked.id)
        print("answer:", done.text, f"[{done.status.state.name}]")
    return "8 pm" in done.text


def main() -> int:
    if "--check" not in sys.argv:
        app.run(port=int(os.environ.get("A2A_DEMO_PORT", "9494")))
        return 0
    with BackgroundServer(app.app) as server:
        return 0 if asyncio.run(check(server.url)) else 1


if __name__ == "__main__":
    sys.exit(main())
