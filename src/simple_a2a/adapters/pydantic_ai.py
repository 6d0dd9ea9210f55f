"""pydantic-ai agents served over A2A, and A2A agents as pydantic-ai tools.

See docs/adapters/pydantic-ai.md.

Needs the ``pydantic-ai`` extra (``pydantic-ai-slim``)::

    from pydantic_ai import Agent
    from simple_a2a.adapters.pydantic_ai import ask_human, executor

    agent = Agent("openai:gpt-4o", tools=[ask_human])
    simple_a2a.server(card, executor(agent)).run(port=8000)

What maps to what: the run's text deltas (``event_stream_handler``) are the answer's chunks;
the output is the artifact (a structured output as its JSON); the conversation is the run's
message history (``ModelMessagesTypeAdapter`` JSON) kept per ``contextId`` in the server's
storage; a deferred tool call (``CallDeferred``, as :func:`ask_human` raises, or a tool with
``requires_approval``) ends the turn ``input-required`` and the next message on the task is its
result (for an approval: "yes"/"no"), passed back as ``DeferredToolResults``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from pydantic import BaseModel
from pydantic_ai import (
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessagesTypeAdapter,
    RunContext,
    Tool,
)
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import (
    AgentStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.run import AgentRunResult

from ..protocol.logcontext import library_logger
from ..server.context import RequestContext
from ..server.executor import AgentExecutor
from ._common import (
    RemoteAgent,
    RunCancelled,
    TextStream,
    approves,
    failure_message,
    load_json,
    remote_agent,
    run_until_cancelled,
    save_json,
)

log = library_logger("simple_a2a.adapters")

#: The conversation state's key (``ctx.save_state``).
STATE_KEY = "pydantic-ai"


def ask_human(question: str) -> str:
    """Ask the user a question and wait for the answer.

    A tool for ``Agent(tools=[ask_human])``: served over A2A, the task ends ``input-required``
    with ``question`` as its status message; the user's next message on the task is the answer.
    """
    raise CallDeferred(metadata={"question": question}, kind="question")


def _question(call: ToolCallPart, requests: DeferredToolRequests, approval: bool) -> str:
    asked = requests.metadata.get(call.tool_call_id, {}).get("question")
    if asked:
        return str(asked)
    args = call.args_as_json_str()
    if approval:
        return f"May I call {call.tool_name} with {args}? (yes/no)"
    return f"{call.tool_name} needs your input: {args}"


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    return json.dumps(output, default=str)


class PydanticAIExecutor(AgentExecutor):
    """A pydantic-ai agent as an A2A executor (module docstring). ``deps`` is passed to every
    run; ``state_key`` names the conversation state (two agents sharing a storage and a
    context id keep apart with different keys)."""

    def __init__(
        self, agent: AbstractAgent[Any, Any], *, deps: Any = None, state_key: str = STATE_KEY
    ) -> None:
        self.agent = agent
        self.deps = deps
        self.state_key = state_key

    async def execute(self, ctx: RequestContext) -> None:
        state = await load_json(ctx, self.state_key) or {}
        history = ModelMessagesTypeAdapter.validate_python(state.get("messages") or [])
        pending = state.get("pending")
        prompt: str | None = ctx.text
        results = None
        if pending and pending.get("task") == ctx.task_id:  # this message answers the tool
            prompt = None
            approved = approves(ctx.text)
            results = DeferredToolResults(
                calls=dict.fromkeys(pending.get("calls", []), ctx.text),
                approvals=dict.fromkeys(pending.get("approvals", []), approved),
            )
        stream = TextStream(ctx)

        async def on_events(_run: RunContext[Any], events: Any) -> None:
            async for event in events:
                await _stream_text(stream, event)

        run: Awaitable[AgentRunResult[Any]] = self.agent.run(
            prompt,
            message_history=history,
            deferred_tool_results=results,
            output_type=[self.agent.output_type, DeferredToolRequests],
            deps=self.deps,
            event_stream_handler=on_events,
        )
        try:
            result = await run_until_cancelled(ctx, run)
        except RunCancelled:
            return None
        except Exception as exc:
            log.exception("pydantic-ai run failed for task %s", ctx.task_id)
            await ctx.fail(failure_message(exc))
            return None
        messages = ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")
        output = result.output
        if isinstance(output, DeferredToolRequests):
            asked = [_question(call, output, False) for call in output.calls]
            asked += [_question(call, output, True) for call in output.approvals]
            await save_json(
                ctx,
                self.state_key,
                {
                    "messages": messages,
                    "pending": {
                        "task": ctx.task_id,
                        "calls": [call.tool_call_id for call in output.calls],
                        "approvals": [call.tool_call_id for call in output.approvals],
                    },
                },
            )
            await ctx.require_input("\n".join(asked))
            return None
        await save_json(ctx, self.state_key, {"messages": messages, "pending": None})
        await stream.close(_as_text(output))
        return None


async def _stream_text(stream: TextStream, event: AgentStreamEvent) -> None:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        await stream.write(event.part.content)
    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        await stream.write(event.delta.content_delta)


def executor(
    agent: AbstractAgent[Any, Any], *, deps: Any = None, state_key: str = STATE_KEY
) -> PydanticAIExecutor:
    """Serve ``agent`` over A2A: ``simple_a2a.server(card, executor(agent))``."""
    return PydanticAIExecutor(agent, deps=deps, state_key=state_key)


async def remote_agent_tool(
    target: str | RemoteAgent,
    *,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> Tool[Any]:
    """A remote A2A agent (its URL, or a :class:`RemoteAgent`) as a pydantic-ai tool: named and
    described by its card, one argument ``message``, the agent's answer as the result. A failure
    of the remote agent is the tool's result too (the model reads it and carries on)."""
    remote = await remote_agent(target, headers=headers)

    async def call_remote_agent(message: str) -> str:
        return await remote.ask_or_error(message)

    return Tool(
        call_remote_agent,
        takes_ctx=False,
        name=name or remote.name,
        description=remote.description,
    )


__all__ = [
    "STATE_KEY",
    "PydanticAIExecutor",
    "ask_human",
    "executor",
    "remote_agent_tool",
]
