"""A pydantic-ai agent served over A2A: it streams its answer, remembers the conversation and
asks the user a question with ``ask_human`` (the task waits ``input-required``).

    pip install 'simple-a2a[pydantic-ai]'
    python -m examples.adapters.pydantic_ai_agent            # serve on port 9393
    python -m examples.adapters.pydantic_ai_agent --check    # serve, call it, print, exit

With ``OPENAI_API_KEY`` set the agent uses ``openai:gpt-4.1-mini``; with ``--offline`` (or
``A2A_DEMO_OFFLINE=1``, or no key) it uses pydantic-ai's own ``FunctionModel`` (no network),
which asks for a date when told to book, and otherwise says what it heard so far.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

import simple_a2a
from simple_a2a import AgentCard, AsyncClient, Task, TaskArtifactUpdateEvent
from simple_a2a.adapters.pydantic_ai import ask_human, executor
from simple_a2a.server.background import BackgroundServer

OFFLINE = (
    "--offline" in sys.argv
    or os.environ.get("A2A_DEMO_OFFLINE", "") not in ("", "0")
    or not os.environ.get("OPENAI_API_KEY")
)

CARD = AgentCard.from_dict(
    {
        "name": "Travel desk",
        "description": "Books trips; asks for the date.",
        "version": "1.0",
        "capabilities": {"streaming": True},
        "skills": [{"id": "book", "name": "book", "description": "books a trip you name"}],
    }
)


async def offline_model(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """A stand-in for a real model, so the example runs without a key."""
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
    said = [str(p.content) for p in parts if isinstance(p, UserPromptPart)]
    answers = [str(p.content) for p in parts if isinstance(p, ToolReturnPart)]
    if "book" in said[-1] and not answers:
        question = json.dumps({"question": "For which date?"})
        yield {0: DeltaToolCall(name="ask_human", json_args=question, tool_call_id="ask-1")}
        return
    answer = f"Booked {said[-1].removeprefix('book ')} for {answers[-1]}." if answers else ""
    words = (answer or f"You said: {' / '.join(said)}").split(" ")
    for i, word in enumerate(words):  # streamed a word at a time, as a model streams tokens
        yield word if i == 0 else " " + word


def model() -> Any:
    return FunctionModel(stream_function=offline_model) if OFFLINE else "openai:gpt-4.1-mini"


agent = Agent(
    model(),
    instructions="You book trips. Ask for the date with ask_human before booking.",
    tools=[ask_human],  # the model's call ends the A2A turn input-required
)
app = simple_a2a.server(CARD, executor(agent))


async def check(url: str) -> bool:
    async with AsyncClient(url) as client:
        asked = await client.send("book a trip to Porto")
        assert isinstance(asked, Task) and asked.status.message is not None
        print(f"asked: [{asked.status.state.name}] {asked.status.message.text}")
        async for event in client.stream("May 3", task_id=asked.id, context_id=asked.context_id):
            if isinstance(event, TaskArtifactUpdateEvent) and not event.last_chunk:
                print("delta:", event.artifact.text)
        done = await client.get(asked.id)
        print("answer:", done.text, f"[{done.status.state.name}]")
    return "May 3" in done.text


def main() -> int:
    if "--check" not in sys.argv:
        app.run(port=int(os.environ.get("A2A_DEMO_PORT", "9393")))
        return 0
    with BackgroundServer(app.app) as server:
        return 0 if asyncio.run(check(server.url)) else 1


if __name__ == "__main__":
    sys.exit(main())
