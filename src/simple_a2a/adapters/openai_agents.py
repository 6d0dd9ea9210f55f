"""OpenAI Agents SDK agents served over A2A, and A2A agents as their tools
(docs/adapters/openai-agents.md).

Needs the ``openai-agents`` extra::

    from agents import Agent
    from simple_a2a.adapters.openai_agents import ask_human, executor

    agent = Agent(name="Assistant", instructions="...", tools=[ask_human])
    simple_a2a.server(card, executor(agent)).run(port=8000)

What maps to what: the streamed run's text deltas (``Runner.run_streamed``, raw
``ResponseTextDeltaEvent``) are the answer's chunks; ``final_output`` is the artifact (a
structured output as its JSON); the conversation is the run's input list
(``result.to_input_list()``) kept per ``contextId`` in the server's storage; a tool call waiting
for approval (``needs_approval``, as :data:`ask_human` has) is an interruption: its
``RunState`` is kept with the conversation, the turn ends ``input-required``, and the next
message on the task resumes it: the answer to :data:`ask_human` becomes that tool's result, any
other tool is approved by "yes" (:data:`APPROVALS`) and rejected otherwise.
"""

from __future__ import annotations

import base64
import contextvars
import json
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    Runner,
    RunResultStreaming,
    RunState,
    ToolApprovalItem,
    function_tool,
)
from agents.run import DEFAULT_MAX_TURNS
from agents.tool_context import ToolContext
from openai.types.responses import ResponseTextDeltaEvent
from pydantic import BaseModel

from ..protocol.logcontext import library_logger
from ..protocol.models import Message
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
STATE_KEY = "openai-agents"


#: How many input items (messages, tool calls, tool outputs) of a conversation are kept and sent
#: to the model again: older ones are dropped, whole turns at a time.
MAX_HISTORY_ITEMS = 1000

#: The human tool's default name (the conformance suite's and the docs').
HUMAN_TOOL_NAME = "ask_human"

# The human's answers for the run being resumed, by tool call id: set by the executor before it
# starts the resumed run, whose tasks copy it (contextvars), read by the human tool's body.
_ANSWERS: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "simple_a2a_openai_agents_answers", default=None
)

# Marks the FunctionTools human_tool() made, so that an interruption on one is a question (its
# answer is the result) and not an approval (yes/no).
_HUMAN_MARK = "_simple_a2a_human_tool"


def human_tool(
    name: str = HUMAN_TOOL_NAME,
    description: str = "Ask the user a question and wait for the answer.",
) -> FunctionTool:
    """A tool that asks the user a question (``question: str``) and returns the answer.

    It is a ``function_tool`` with ``needs_approval=True``: the model's call interrupts the run
    (the SDK's human-in-the-loop idiom); served by :func:`executor`, the task ends
    ``input-required`` with the question as its status message, and the user's next message on
    the task is the tool's result when the run resumes. Outside :func:`executor` the tool has no
    answer to give and its call fails (the model is told so).
    """

    async def ask(ctx: ToolContext[Any], question: str) -> str:
        answer = (_ANSWERS.get() or {}).get(ctx.tool_call_id)
        if answer is None:
            raise RuntimeError(f"{name} was approved without an answer (serve it with executor())")
        return answer

    tool = function_tool(
        ask, name_override=name, description_override=description, needs_approval=True
    )
    setattr(tool, _HUMAN_MARK, True)
    return tool


#: The ready-made human tool: ``Agent(tools=[ask_human])``.
ask_human: FunctionTool = human_tool()


def _is_human(item: ToolApprovalItem) -> bool:
    tools = getattr(item.agent, "tools", None) or []
    return any(
        getattr(tool, _HUMAN_MARK, False) and getattr(tool, "name", None) == item.name
        for tool in tools
    )


def _question(item: ToolApprovalItem) -> str:
    args = item.arguments or "{}"
    if _is_human(item):
        try:
            asked = json.loads(args).get("question")
        except (ValueError, AttributeError):
            asked = None
        return str(asked) if asked else args
    return f"May I call {item.name} with {args}? (yes/no)"


def _trimmed(items: list[Any], limit: int) -> list[Any]:
    """The last ``limit`` items, starting at a user message: a tool output or an assistant
    item cut from its call or its question would be refused by the model's API."""
    if len(items) <= limit:
        return items
    kept = items[len(items) - limit :]
    for start, item in enumerate(kept):
        if isinstance(item, dict) and item.get("role") == "user":
            return kept[start:]
    return []


def _user_item(message: Message) -> dict[str, Any]:
    """An A2A message as a Responses API user input item (spec §4.1.6 parts): text and data as
    text, bytes as data URLs, URLs as such; images as ``input_image``, others as
    ``input_file``. A text-only message is a plain string, as the SDK writes it."""
    if all(part.text is not None for part in message.parts):
        return {"role": "user", "content": message.text}
    content: list[dict[str, Any]] = []
    for part in message.parts:
        media_type = part.media_type or "application/octet-stream"
        if part.text is not None:
            content.append({"type": "input_text", "text": part.text})
        elif part.raw is not None or part.url is not None:
            if part.raw is not None:
                link = f"data:{media_type};base64,{base64.b64encode(part.raw).decode()}"
            else:
                link = str(part.url)
            if media_type.startswith("image/"):
                content.append({"type": "input_image", "image_url": link, "detail": "auto"})
            elif part.raw is not None:
                name = part.filename or "file"
                content.append({"type": "input_file", "file_data": link, "filename": name})
            else:
                content.append({"type": "input_file", "file_url": link})
        else:
            content.append({"type": "input_text", "text": json.dumps(part.data, default=str)})
    return {"role": "user", "content": content}


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    if is_dataclass(output) and not isinstance(output, type):
        return json.dumps(asdict(output), default=str)
    return json.dumps(output, default=str)


class OpenAIAgentsExecutor(AgentExecutor):
    """An OpenAI Agents SDK agent as an A2A executor (module docstring).

    ``context`` is the run context every run gets (never stored: a resumed run gets it too);
    ``run_config`` and ``max_turns`` are passed to ``Runner.run_streamed``;
    ``max_history_items`` bounds the conversation kept (:data:`MAX_HISTORY_ITEMS`); ``state_key``
    names the conversation state (two agents sharing a storage and a context id keep apart with
    different keys).
    """

    def __init__(
        self,
        agent: Agent[Any],
        *,
        context: Any = None,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_history_items: int = MAX_HISTORY_ITEMS,
        state_key: str = STATE_KEY,
    ) -> None:
        self.agent = agent
        self.context = context
        self.run_config = run_config
        self.max_turns = max_turns
        self.max_history_items = max_history_items
        self.state_key = state_key

    async def execute(self, ctx: RequestContext) -> None:
        state = await load_json(ctx, self.state_key) or {}
        items: list[Any] = state.get("items") or []
        pending = state.get("pending")
        run_input: list[Any] | RunState[Any, Any]
        answers: dict[str, str] = {}
        if pending and pending.get("task") == ctx.task_id:  # this message answers the interruption
            run_input = await self._resumed(pending["run_state"], ctx.text, answers)
        else:  # a new turn; an interruption left unanswered on another task is dropped
            run_input = [*items, _user_item(ctx.message)]
        stream = TextStream(ctx)
        try:
            result = await run_until_cancelled(ctx, self._run(run_input, answers, stream))
        except RunCancelled:
            return None
        except Exception as exc:
            log.exception("OpenAI Agents run failed for task %s", ctx.task_id)
            await ctx.fail(failure_message(exc))
            return None
        if result.interruptions:
            run_state = result.to_state().to_json(context_serializer=_forget_context)
            await save_json(
                ctx,
                self.state_key,
                {"items": items, "pending": {"task": ctx.task_id, "run_state": run_state}},
            )
            await ctx.require_input("\n".join(_question(item) for item in result.interruptions))
            return None
        history = _trimmed(result.to_input_list(), self.max_history_items)
        await save_json(ctx, self.state_key, {"items": history, "pending": None})
        await stream.close(_as_text(result.final_output))
        return None

    async def _resumed(
        self, saved: dict[str, Any], answer: str, answers: dict[str, str]
    ) -> RunState[Any, Any]:
        """The interrupted run, each waiting call answered: a human tool's call gets ``answer``
        as its result (put in ``answers`` by call id), any other is approved by a yes."""
        run_state = await RunState.from_json(self.agent, saved, context_override=self.context)
        approved = approves(answer)
        for item in run_state.get_interruptions():
            if _is_human(item):
                answers[item.call_id or ""] = answer
                run_state.approve(item)
            elif approved:
                run_state.approve(item)
            else:
                run_state.reject(item, rejection_message=f"The user did not approve: {answer}")
        return run_state

    async def _run(
        self,
        run_input: list[Any] | RunState[Any, Any],
        answers: Mapping[str, str],
        stream: TextStream,
    ) -> RunResultStreaming:
        # This coroutine runs as a task of its own (run_until_cancelled), in a copy of the
        # context: the answers reach the run's tasks, which copy it in turn, and nothing else.
        _ANSWERS.set(answers)
        result = Runner.run_streamed(
            self.agent,
            run_input,
            context=self.context,
            max_turns=self.max_turns,
            run_config=self.run_config,
        )
        # Cancelling this coroutine while it waits for an event cancels the run's tasks
        # (RunResultStreaming.stream_events cancels the run on CancelledError).
        async for event in result.stream_events():
            if event.type == "raw_response_event" and isinstance(
                event.data, ResponseTextDeltaEvent
            ):
                await stream.write(event.data.delta)
        return result


def _forget_context(_context: Any) -> Mapping[str, Any]:
    # The run context is the executor's (context_override on resume): it is not stored.
    return {}


def executor(
    agent: Agent[Any],
    *,
    context: Any = None,
    run_config: RunConfig | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_history_items: int = MAX_HISTORY_ITEMS,
    state_key: str = STATE_KEY,
) -> OpenAIAgentsExecutor:
    """Serve ``agent`` over A2A: ``simple_a2a.server(card, executor(agent))``."""
    return OpenAIAgentsExecutor(
        agent,
        context=context,
        run_config=run_config,
        max_turns=max_turns,
        max_history_items=max_history_items,
        state_key=state_key,
    )


async def remote_agent_tool(
    target: str | RemoteAgent,
    *,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> FunctionTool:
    """A remote A2A agent (its URL, or a :class:`RemoteAgent`) as an OpenAI Agents
    ``FunctionTool``: named and described by its card, one argument ``message``, the agent's
    answer as the result. A failure of the remote agent (:class:`RemoteAgentError`) is the
    tool's result too, ``"Error: ..."``, so the model reads what failed (the SDK's default
    ``failure_error_function`` would hide it) and carries on."""
    remote = await remote_agent(target, headers=headers)

    async def call_remote_agent(message: str) -> str:
        return await remote.ask_or_error(message)

    return function_tool(
        call_remote_agent,
        name_override=name or remote.name,
        description_override=remote.description,
        use_docstring_info=False,
    )


__all__ = [
    "HUMAN_TOOL_NAME",
    "MAX_HISTORY_ITEMS",
    "STATE_KEY",
    "OpenAIAgentsExecutor",
    "ask_human",
    "executor",
    "human_tool",
    "remote_agent_tool",
]
