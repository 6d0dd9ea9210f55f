"""A Google ADK agent served over A2A, and another one calling it as a tool.

    pip install 'simple-a2a[adk]'
    python -m examples.adapters.adk_agent            # serve on port 9393
    python -m examples.adapters.adk_agent --check    # serve, call it, print, exit

With ``GOOGLE_API_KEY`` set the agents use Gemini; with ``--offline`` (or
``A2A_DEMO_OFFLINE=1``, or no key) they use ``OfflineModel``, an ADK ``BaseLlm`` answering from
what it was given (no network): it asks which color when told to paint, and otherwise repeats
what it was told or what its tool answered.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

import simple_a2a
from simple_a2a import AgentCard, AsyncClient, Task, TaskArtifactUpdateEvent
from simple_a2a.adapters.adk import ask_human, executor, remote_agent_tool
from simple_a2a.server.background import BackgroundServer

OFFLINE = (
    "--offline" in sys.argv
    or os.environ.get("A2A_DEMO_OFFLINE", "") not in ("", "0")
    or not (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))
)

CARD = AgentCard.from_dict(
    {
        "name": "Painter",
        "description": "Paints things; asks which color.",
        "version": "1.0",
        "capabilities": {"streaming": True},
        "skills": [{"id": "paint", "name": "paint", "description": "paints what you name"}],
    }
)


def _model_turn(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


# What a real model reports with its answer (ADK logs a warning for an answer without it).
_NO_TOKENS = types.GenerateContentResponseUsageMetadata(
    prompt_token_count=0, candidates_token_count=0, total_token_count=0
)


class OfflineModel(BaseLlm):
    """A stand-in for a real model, so the example runs without a key."""

    model: str = "offline"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        parts = [part for content in llm_request.contents for part in content.parts or []]
        said = [p.function_response.response or {} for p in parts if p.function_response]
        users = [p.text for p in parts if p.text] or [""]
        tools = set(llm_request.tools_dict)
        call = None
        if "ask_human" in tools and "paint" in users[-1] and not said:
            call = types.FunctionCall(name="ask_human", args={"question": "Which color?"})
        elif "Painter" in tools and not said:
            call = types.FunctionCall(name="Painter", args={"message": "paint the fence"})
        if call is not None:
            yield LlmResponse(
                content=_model_turn(types.Part(function_call=call)), usage_metadata=_NO_TOKENS
            )
            return
        text = f"Got: {said[-1].get('result')}" if said else f"You said: {users[-1]}"
        if stream:  # SSE: the words as they "come", then the whole answer
            for word in text.split(" "):
                yield LlmResponse(content=_model_turn(types.Part(text=word + " ")), partial=True)
        yield LlmResponse(content=_model_turn(types.Part(text=text)), usage_metadata=_NO_TOKENS)


def model() -> Any:
    return OfflineModel() if OFFLINE else "gemini-2.5-flash"


# -- serve: the painter agent over A2A ------------------------------------------------------
painter = LlmAgent(
    name="painter",
    instruction="You paint what the user names. Ask which color with ask_human first.",
    model=model(),
    tools=[ask_human],  # the model's call ends the A2A turn input-required
)
app = simple_a2a.server(CARD, executor(painter))


async def ask_front_desk(front_desk: LlmAgent, text: str) -> str:
    """Run an ADK agent with ADK's own Runner and in-memory sessions; its final answer."""
    runner = Runner(
        agent=front_desk, app_name="front_desk", session_service=InMemorySessionService()
    )
    session = await runner.session_service.create_session(app_name="front_desk", user_id="me")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    answer = ""
    async for event in runner.run_async(user_id="me", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    return answer


async def check(url: str) -> bool:
    async with AsyncClient(url) as client:
        asked = await client.send("paint the fence")  # the model calls ask_human
        assert isinstance(asked, Task) and asked.status.message is not None
        print(f"asked: [{asked.status.state.name}] {asked.status.message.text}")
        async for event in client.stream("blue", task_id=asked.id, context_id=asked.context_id):
            if isinstance(event, TaskArtifactUpdateEvent) and not event.last_chunk:
                print("delta:", event.artifact.text)
        done = await client.get(asked.id)
        print("answer:", done.text, f"[{done.status.state.name}]")

    # -- call: another agent with the painter as one of its tools -------------------------------
    painter_tool = await remote_agent_tool(url)
    print("tool:", painter_tool.name, "-", painter_tool.description)
    front_desk = LlmAgent(
        name="front_desk",
        instruction="Forward painting jobs to the Painter tool.",
        model=model(),
        tools=[painter_tool],
    )
    answer = await ask_front_desk(front_desk, "Could someone paint the fence?")
    print("front desk:", answer)
    return "blue" in done.text and "Which color?" in answer


def main() -> int:
    if "--check" not in sys.argv:
        app.run(port=int(os.environ.get("A2A_DEMO_PORT", "9393")))
        return 0
    with BackgroundServer(app.app) as server:
        return 0 if asyncio.run(check(server.url)) else 1


if __name__ == "__main__":
    sys.exit(main())
