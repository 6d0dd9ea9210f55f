"""Google ADK agents served over A2A, and A2A agents as ADK tools (docs/adapters/adk.md).

Needs the ``adk`` extra (``google-adk``)::

    from google.adk.agents import LlmAgent
    from simple_a2a.adapters.adk import ask_human, executor

    agent = LlmAgent(name="assistant", model="gemini-2.5-flash", tools=[ask_human])
    simple_a2a.server(card, executor(agent)).run(port=8000)

What maps to what: the run's partial events (``StreamingMode.SSE``) are the answer's chunks; the
final response's text is the artifact (an ``output_schema`` answer is its JSON); the
conversation is ADK's own ``Session`` (its events and state), kept per ``contextId`` in the
server's storage by :class:`ConversationSessionService`; a long-running tool call left waiting
(``LongRunningFunctionTool``, as :data:`ask_human` is, ADK's ``request_input``, or a tool
confirmation) ends the turn ``input-required``, and the next message on the task is sent back
as that call's ``FunctionResponse`` (for a confirmation: "yes"/"no") so the run resumes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.base_agent import BaseAgent

# StreamingMode: ADK's documented import path, which its module does not re-export explicitly.
from google.adk.agents.run_config import (  # type: ignore[attr-defined]
    RunConfig,
    StreamingMode,
)
from google.adk.apps.app import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.utils._function_call_names import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from google.genai import types

from ..protocol.logcontext import library_logger
from ..protocol.models import Part
from ..server.context import RequestContext
from ..server.executor import FAILURE_MESSAGE, AgentExecutor
from ._common import (
    RemoteAgent,
    RemoteAgentError,
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
STATE_KEY = "adk"

#: How many session events (messages, tool calls, tool responses) of a conversation are kept:
#: older ones are dropped, whole turns at a time.
MAX_HISTORY_EVENTS = 1000

#: The human tool's default name (the conformance suite's and the docs').
HUMAN_TOOL_NAME = "ask_human"

# The user id ADK sessions get when the caller is not authenticated (the storage scopes
# conversations by caller already; ADK only needs a name).
_ANONYMOUS = "anonymous"


def human_tool(
    name: str = HUMAN_TOOL_NAME,
    description: str = "Ask the user a question and wait for the answer.",
) -> LongRunningFunctionTool:
    """A tool that asks the user a question (``question: str``) and returns the answer.

    It is a ``LongRunningFunctionTool`` whose function returns nothing: the model's call pauses
    the run (ADK's human-in-the-loop idiom); served by :func:`executor`, the task ends
    ``input-required`` with the question as its status message, and the user's next message on
    the task is the call's ``FunctionResponse`` (``{"result": answer}``) when the run resumes.
    """

    def ask(question: str) -> None:
        return None  # None: ADK leaves a long-running call waiting for its response

    ask.__name__ = ask.__qualname__ = name
    ask.__doc__ = description
    return LongRunningFunctionTool(ask)


#: The ready-made human tool: ``LlmAgent(tools=[ask_human])``.
ask_human: LongRunningFunctionTool = human_tool()


# -- the conversation: an ADK session in the server's storage ------------------------------------


class ConversationSessionService(BaseSessionService):
    """ADK's session service on the server's storage, for one execution: the session is the
    conversation of ``ctx.context_id`` (``ctx.load_state`` / ``ctx.save_state``, so it survives
    restarts and is shared by replicas, per caller). Events are buffered in memory during the
    run and written by :meth:`flush`; at most ``max_events`` are kept, whole turns at a time.

    State prefixed ``app:`` or ``user:`` is kept with this conversation's session like any
    other: ADK's sharing of it across sessions has no counterpart in one conversation's state.
    """

    def __init__(
        self, ctx: RequestContext, *, key: str = STATE_KEY, max_events: int = MAX_HISTORY_EVENTS
    ) -> None:
        self._ctx = ctx
        self._key = key
        self._max_events = max_events
        self._session: Session | None = None
        self._loaded = False
        #: the long-running calls the last turn left waiting (:class:`_Waiting`), and its task
        self.waiting: _Waiting | None = None

    async def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        stored = await load_json(self._ctx, self._key)
        if stored:
            self._session = Session.model_validate(stored["session"])
            self.waiting = _Waiting.from_json(stored.get("waiting"))

    def _check(self, session_id: str) -> None:
        if session_id != self._ctx.context_id:
            raise ValueError(
                f"this session service keeps only the conversation {self._ctx.context_id!r}"
            )

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        await self.load()
        self._check(session_id or self._ctx.context_id)
        self._session = Session(
            id=self._ctx.context_id, app_name=app_name, user_id=user_id, state=dict(state or {})
        )
        self.waiting = None
        return self._session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        await self.load()
        if self._session is None or session_id != self._ctx.context_id:
            return None
        if config is None:
            return self._session  # one execution's runner: no other reader to isolate from
        events = self._session.events
        if config.after_timestamp is not None:
            events = [e for e in events if e.timestamp >= config.after_timestamp]
        if config.num_recent_events is not None:
            events = events[len(events) - config.num_recent_events :] if events else []
        return self._session.model_copy(update={"events": list(events)})

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        await self.load()
        if self._session is None:
            return ListSessionsResponse()
        return ListSessionsResponse(sessions=[self._session.model_copy(update={"events": []})])

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await self.load()
        self._check(session_id)
        self._session, self.waiting = None, None
        await save_json(self._ctx, self._key, None)

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        await super().append_event(session, event)
        session.last_update_time = event.timestamp
        stored = self._session
        if stored is not None and stored is not session:  # a filtered copy (get_session config)
            stored.events.append(event)
            self._update_session_state(stored, event)
            stored.last_update_time = event.timestamp
        return event

    def close_unanswered(self, waiting: _Waiting) -> None:
        """Answer the calls a turn left waiting when the user starts a new task instead: the
        model's API wants every call answered, and ADK refuses a message with both function
        responses and text, so the responses are an event of their own."""
        if self._session is not None:
            content = types.Content(role="user", parts=waiting.unanswered())
            self._session.events.append(Event(author="user", content=content))

    async def flush(self) -> None:
        """Write the session (its last ``max_events`` events) and the waiting calls."""
        if self._session is None:
            return
        session = self._session
        kept = _trimmed(session.events, self._max_events)
        if len(kept) != len(session.events):
            session = session.model_copy(update={"events": kept})
        await save_json(
            self._ctx,
            self._key,
            {
                "session": session.model_dump(mode="json", exclude_none=True),
                "waiting": None if self.waiting is None else self.waiting.to_json(),
            },
        )


def _is_user_text(event: Event) -> bool:
    parts = event.content.parts if event.content is not None else None
    return (
        event.author == "user"
        and bool(parts)
        and all(p.function_response is None for p in parts or [])
    )


def _trimmed(events: list[Event], limit: int) -> list[Event]:
    """The last ``limit`` events, starting at a user message: a tool response or model answer
    cut from its call or its question would be refused by the model's API."""
    if len(events) <= limit:
        return events
    kept = events[len(events) - limit :]
    for start, event in enumerate(kept):
        if _is_user_text(event):
            return kept[start:]
    return []


# -- calls left waiting for the user ------------------------------------------------------------

_DEFAULT_HINT = "Please approve or reject the tool call"  # ADK's, written for developers


@dataclass
class _Waiting:
    """The long-running calls a turn left waiting, on the task that asked."""

    task_id: str
    calls: list[dict[str, Any]] = field(default_factory=list)  # FunctionCall JSON

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task_id, "calls": self.calls}

    @classmethod
    def from_json(cls, value: Any) -> _Waiting | None:
        if not value:
            return None
        return cls(task_id=value["task"], calls=list(value["calls"]))

    def question(self) -> str:
        return "\n".join(_question(call) for call in self._calls())

    def answered(self, answer: str) -> list[types.Part]:
        """Each waiting call's response with the user's ``answer``."""
        return [_response(call, _answer(call, answer)) for call in self._calls()]

    def unanswered(self) -> list[types.Part]:
        """Each waiting call's response when the user started a new task instead of answering:
        the model's API wants every call answered."""
        note = {"error": "The user did not answer; they sent a new message instead."}
        return [_response(call, note) for call in self._calls()]

    def _calls(self) -> list[types.FunctionCall]:
        return [types.FunctionCall.model_validate(call) for call in self.calls]


def _question(call: types.FunctionCall) -> str:
    args = dict(call.args or {})
    if call.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
        original = args.get("originalFunctionCall") or {}
        hint = str((args.get("toolConfirmation") or {}).get("hint") or "")
        if hint and not hint.startswith(_DEFAULT_HINT):
            return f"{hint} (yes/no)"
        called = json.dumps(original.get("args") or {}, separators=(",", ":"))
        return f"May I call {original.get('name')} with {called}? (yes/no)"
    for name in ("question", "message"):  # ask_human's, ADK's request_input's
        if isinstance(args.get(name), str) and args[name]:
            return str(args[name])
    return f"{call.name} is waiting for your answer: {json.dumps(args, default=str)}"


def _answer(call: types.FunctionCall, answer: str) -> dict[str, Any]:
    if call.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME:
        return {"confirmed": approves(answer)}  # a ToolConfirmation
    return {"result": answer}  # what ADK's FunctionTool makes of a returned value


def _response(call: types.FunctionCall, response: dict[str, Any]) -> types.Part:
    reply = types.FunctionResponse(id=call.id, name=call.name, response=response)
    return types.Part(function_response=reply)


def _genai_parts(parts: list[Part]) -> list[types.Part]:
    """A2A message parts as Gemini content parts (spec §4.1.6)."""
    out: list[types.Part] = []
    for part in parts:
        if part.text is not None:
            out.append(types.Part(text=part.text))
        elif part.raw is not None:
            mime = part.media_type or "application/octet-stream"
            out.append(types.Part(inline_data=types.Blob(data=part.raw, mime_type=mime)))
        elif part.url is not None:
            out.append(
                types.Part(file_data=types.FileData(file_uri=part.url, mime_type=part.media_type))
            )
        else:
            out.append(types.Part(text=json.dumps(part.data, default=str)))
    return out


# -- serve ---------------------------------------------------------------------------------------

_SAFE_CODE = re.compile(r"[^A-Za-z0-9_.-]+")


class _ModelError(Exception):
    """The run ended with an error event (a provider's error code) and no answer."""


@dataclass
class _Outcome:
    answer: str | None = None  # the last final response's text
    waiting: list[dict[str, Any]] = field(default_factory=list)
    error_code: str | None = None


def _text(event: Event) -> str:
    parts = event.content.parts if event.content is not None else None
    return "".join(p.text for p in parts or [] if p.text and not p.thought)


class ADKExecutor(AgentExecutor):
    """A Google ADK agent (or ``App``) as an A2A executor (module docstring).

    ``run_config`` is passed to ``Runner.run_async`` (default: SSE streaming, which gives the
    token deltas); ``max_history_events`` bounds the session kept (:data:`MAX_HISTORY_EVENTS`);
    ``state_key`` names the conversation state (two agents sharing a storage and a context id
    keep apart with different keys). A ``Runner`` is made per execution, on that execution's
    :class:`ConversationSessionService`; ``runner_options`` go to it (artifact, memory,
    credential services).
    """

    def __init__(
        self,
        agent: BaseAgent | App,
        *,
        app_name: str | None = None,
        run_config: RunConfig | None = None,
        max_history_events: int = MAX_HISTORY_EVENTS,
        state_key: str = STATE_KEY,
        runner_options: dict[str, Any] | None = None,
    ) -> None:
        self.agent = agent
        self.app_name = app_name or (agent.name if isinstance(agent, App) else "simple_a2a")
        self.run_config = run_config or RunConfig(streaming_mode=StreamingMode.SSE)
        self.max_history_events = max_history_events
        self.state_key = state_key
        self.runner_options = dict(runner_options or {})

    def _runner(self, sessions: BaseSessionService) -> Runner:
        return Runner(
            app=self.agent if isinstance(self.agent, App) else None,
            agent=None if isinstance(self.agent, App) else self.agent,
            app_name=self.app_name,
            session_service=sessions,
            auto_create_session=True,
            **self.runner_options,
        )

    async def execute(self, ctx: RequestContext) -> None:
        sessions = ConversationSessionService(
            ctx, key=self.state_key, max_events=self.max_history_events
        )
        await sessions.load()
        waiting, sessions.waiting = sessions.waiting, None
        if waiting is not None and waiting.task_id == ctx.task_id:  # the answer to the calls
            parts = waiting.answered(ctx.text)
        else:  # a new turn
            if waiting is not None:
                sessions.close_unanswered(waiting)
            parts = _genai_parts(ctx.message.parts)
        message = types.Content(role="user", parts=parts)
        stream = TextStream(ctx)
        user_id = ctx.caller.task_owner if ctx.caller and ctx.caller.task_owner else _ANONYMOUS
        try:
            outcome = await run_until_cancelled(
                ctx, self._run(sessions, user_id, ctx.context_id, message, stream)
            )
            if outcome.error_code and not outcome.answer and not outcome.waiting:
                raise _ModelError(outcome.error_code)
        except RunCancelled:
            await sessions.flush()  # what the run did before the cancel stays in the session
            return None
        except Exception as exc:
            log.exception("ADK run failed for task %s", ctx.task_id)
            await sessions.flush()
            await ctx.fail(_failure(exc))
            return None
        if outcome.waiting:
            sessions.waiting = _Waiting(ctx.task_id, outcome.waiting)
            await sessions.flush()  # before input-required: the answer may come at once
            await ctx.require_input(sessions.waiting.question())
            return None
        await sessions.flush()
        await stream.close(outcome.answer)
        return None

    async def _run(
        self,
        sessions: ConversationSessionService,
        user_id: str,
        session_id: str,
        message: types.Content,
        stream: TextStream,
    ) -> _Outcome:
        outcome = _Outcome()
        runner = self._runner(sessions)
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message, run_config=self.run_config
        ):
            if event.error_code:
                outcome.error_code = event.error_code
            if event.author == "user" or event.content is None:
                continue
            if event.partial:
                await stream.write(_text(event))
                continue
            waiting_ids = event.long_running_tool_ids or set()
            for call in event.get_function_calls():
                if call.id in waiting_ids:
                    outcome.waiting.append(call.model_dump(mode="json", exclude_none=True))
            if event.is_final_response() and _text(event):
                outcome.answer = _text(event)
        return outcome


def _failure(exc: Exception) -> str:
    if isinstance(exc, _ModelError):  # the provider's error code (e.g. SAFETY), never its text
        code = _SAFE_CODE.sub("_", str(exc))[:64]
        return f"{FAILURE_MESSAGE} ({code})"
    return failure_message(exc)


def executor(
    agent: BaseAgent | App,
    *,
    app_name: str | None = None,
    run_config: RunConfig | None = None,
    max_history_events: int = MAX_HISTORY_EVENTS,
    state_key: str = STATE_KEY,
    runner_options: dict[str, Any] | None = None,
) -> ADKExecutor:
    """Serve ``agent`` (an ADK agent or ``App``) over A2A: ``simple_a2a.server(card,
    executor(agent))``."""
    return ADKExecutor(
        agent,
        app_name=app_name,
        run_config=run_config,
        max_history_events=max_history_events,
        state_key=state_key,
        runner_options=runner_options,
    )


# -- call ----------------------------------------------------------------------------------------


async def remote_agent_tool(
    target: str | RemoteAgent,
    *,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> FunctionTool:
    """A remote A2A agent (its URL, or a :class:`RemoteAgent`) as an ADK ``FunctionTool``:
    named and described by its card, one argument ``message``, the agent's answer as the result
    (``{"result": answer}``). A failure of the remote agent (:class:`RemoteAgentError`) is the
    tool's result too, ``{"error": ...}``, so the model reads what failed and carries on. (ADK
    streams a tool's output only in live mode; the answer is read whole.)"""
    remote = await remote_agent(target, headers=headers)

    async def call_remote_agent(message: str) -> dict[str, str]:
        try:
            return {"result": await remote.ask(message)}
        except RemoteAgentError as exc:
            return {"error": str(exc)}

    call_remote_agent.__name__ = call_remote_agent.__qualname__ = name or remote.name
    call_remote_agent.__doc__ = remote.description
    return FunctionTool(call_remote_agent)


__all__ = [
    "HUMAN_TOOL_NAME",
    "MAX_HISTORY_EVENTS",
    "STATE_KEY",
    "ADKExecutor",
    "ConversationSessionService",
    "ask_human",
    "executor",
    "human_tool",
    "remote_agent_tool",
]
