"""Two frameworks chained over A2A: a pydantic-ai front desk that hands painting jobs to an
OpenAI Agents SDK painter, each served by simple-a2a, the painter a tool of the front desk.

    pip install 'simple-a2a[pydantic-ai,openai-agents]'
    python -m examples.adapters.chain --check      # both served, one conversation, exit

    client ──A2A──> front desk (pydantic-ai) ──A2A, as a tool──> painter (OpenAI Agents)

The painter asks which color (``input-required``); its question travels back through the front
desk's tool to the user, and the user's answer travels the same way to the painter's waiting
task. With ``OPENAI_API_KEY`` both use OpenAI's models; offline (``--offline`` or no key) each
uses its framework's own test model, so the chain runs without network.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import set_tracing_disabled
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

import simple_a2a
from examples.adapters.openai_agents_agent import OFFLINE
from examples.adapters.openai_agents_agent import app as painter_app
from simple_a2a import AgentCard, AsyncClient, Task
from simple_a2a.adapters.pydantic_ai import executor, remote_agent_tool
from simple_a2a.server.background import BackgroundServer

FRONT_DESK = AgentCard.from_dict(
    {
        "name": "Front desk",
        "description": "Takes any job and hands it to the right agent.",
        "version": "1.0",
        "capabilities": {"streaming": True},
        "skills": [{"id": "jobs", "name": "jobs", "description": "takes a job"}],
    }
)


async def offline_front_desk(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """Forwards every user message to its one tool, then reports the tool's answer."""
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    returned = [p for p in parts if isinstance(p, ToolReturnPart)]
    if returned:
        yield f"The painter says: {returned[-1].content}"
        return
    said = next(str(p.content) for p in parts if isinstance(p, UserPromptPart))
    call = DeltaToolCall(info.function_tools[0].name, json.dumps({"message": said}))
    yield {0: call}


async def front_desk(painter_url: str) -> simple_a2a.A2AServer:
    painter = await remote_agent_tool(painter_url)  # named and described by the painter's card
    model: Any = (
        FunctionModel(stream_function=offline_front_desk) if OFFLINE else "openai:gpt-4.1-mini"
    )
    agent = Agent(model, instructions="Hand painting jobs to the Painter tool.", tools=[painter])
    return simple_a2a.server(FRONT_DESK, executor(agent))


async def conversation(url: str) -> bool:
    async with AsyncClient(url) as client:
        first = await client.send("paint the fence")
        assert isinstance(first, Task)
        print("front desk:", first.text)
        second = await client.send("blue", context_id=first.context_id)
        assert isinstance(second, Task)
        print("front desk:", second.text)
    return "Which color?" in first.text and "blue" in second.text


def main() -> int:
    with BackgroundServer(painter_app.app) as painter:
        desk = asyncio.run(front_desk(painter.url))
        with BackgroundServer(desk.app) as server:
            if "--check" not in sys.argv:
                print(f"front desk on {server.url}, painter on {painter.url}; Ctrl-C stops")
                try:
                    while True:
                        asyncio.run(asyncio.sleep(3600))
                except KeyboardInterrupt:
                    return 0
            return 0 if asyncio.run(conversation(server.url)) else 1


if __name__ == "__main__":
    if OFFLINE:
        set_tracing_disabled(True)  # nothing leaves the machine
    sys.exit(main())
