"""An OpenAI Agents SDK agent served over A2A, and another one calling it as a tool.

    pip install 'simple-a2a[openai-agents]'
    python -m examples.adapters.openai_agents_agent            # serve on port 9292
    python -m examples.adapters.openai_agents_agent --check    # serve, call it, print, exit

With ``OPENAI_API_KEY`` set the agents use OpenAI's models; with ``--offline`` (or
``A2A_DEMO_OFFLINE=1``, or no key) they use the SDK's own ``ScriptedModel`` (no network), which
asks which color when told to paint and otherwise repeats what it was told.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

import simple_a2a
from simple_a2a import AgentCard, AsyncClient, Task, TaskArtifactUpdateEvent
from simple_a2a.adapters.openai_agents import ask_human, executor, remote_agent_tool
from simple_a2a.server.background import BackgroundServer

OFFLINE = (
    "--offline" in sys.argv
    or os.environ.get("A2A_DEMO_OFFLINE", "") not in ("", "0")
    or not os.environ.get("OPENAI_API_KEY")
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


class OfflineModel(ScriptedModel):
    """The SDK's ScriptedModel answering every call from what it was given: a stand-in for a
    real model, so the example runs without a key."""

    def _respond(self, call: ModelCall) -> ModelStep:
        items = call.input if isinstance(call.input, list) else [{"role": "user", "content": ""}]
        said = [str(i.get("output", "")) for i in items if i.get("type") == "function_call_output"]
        users = [i.get("content") for i in items if i.get("role") == "user"]
        tools = {tool.name for tool in call.tools}
        if "ask_human" in tools and "paint" in str(users[-1]) and not said:
            question = function_call(
                "ask_human", {"question": "Which color?"}, call_id=f"call_{uuid.uuid4().hex}"
            )
            return ModelStep(output=[question])
        if "Painter" in tools and not said:
            ask = function_call("Painter", {"message": "paint the fence"}, call_id="call_painter")
            return ModelStep(output=[ask])
        text = f"Got: {said[-1]}" if said else f"You said: {users[-1]}"
        return ModelStep(output=[assistant_message(text)])

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        self.enqueue(ModelStep.respond(self._respond))
        return await super().get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        self.enqueue(ModelStep.respond(self._respond))
        return super().stream_response(*args, **kwargs)


def model() -> Any:
    return OfflineModel() if OFFLINE else "gpt-4.1-mini"


# -- serve: the painter agent over A2A ------------------------------------------------------
painter = Agent(
    name="Painter",
    instructions="You paint what the user names. Ask which color with ask_human first.",
    model=model(),
    tools=[ask_human],  # the model's call ends the A2A turn input-required
)
app = simple_a2a.server(CARD, executor(painter))


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
    front_desk = Agent(
        name="Front desk",
        instructions="Forward painting jobs to the Painter tool.",
        model=model(),
        tools=[painter_tool],
    )
    result = await Runner.run(front_desk, "Could someone paint the fence?")
    print("front desk:", result.final_output)
    return "blue" in done.text and "Which color?" in str(result.final_output)


def main() -> int:
    if OFFLINE:
        set_tracing_disabled(True)  # nothing leaves the machine
    if "--check" not in sys.argv:
        app.run(port=int(os.environ.get("A2A_DEMO_PORT", "9292")))
        return 0
    with BackgroundServer(app.app) as server:
        return 0 if asyncio.run(check(server.url)) else 1


if __name__ == "__main__":
    sys.exit(main())
