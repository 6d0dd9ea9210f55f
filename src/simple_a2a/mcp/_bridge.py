"""The MCP server of one A2A agent: tools from its card, calls as A2A messages.

A call is SendStreamingMessage when the card says the agent streams (each event is an MCP
progress notification for the caller's ``progressToken``), else a blocking SendMessage. An MCP
``notifications/cancelled`` interrupts the call; the task it started is then canceled with
CancelTask (spec §3.1.5). Whatever goes wrong is a tool result with ``isError`` and one line
saying what, never a traceback (MCP: tool errors are results, so the model can read them).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import httpx
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from starlette.applications import Starlette

from simple_a2a.client import AsyncClient, ClientError, ConnectError, TaskAccumulator
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.errors import A2AError
from simple_a2a.protocol.models import Message, Task, TaskArtifactUpdateEvent
from simple_a2a.protocol.requests import StreamEvent

from ._answers import AnswerLimits, error_result, state_name, tool_result
from ._tools import ArgumentsError, ToolCall, Toolset

log = logging.getLogger("simple_a2a.mcp")

ToolMode = Literal["skills", "send"]
#: Text of one progress notification (a streamed chunk is cut there; the answer is not).
MAX_PROGRESS_CHARS = 1_000
#: How long a canceled call waits for the agent's answer to CancelTask.
CANCEL_TIMEOUT = 5.0
#: The request metadata key naming the skill a tool stands for (a routing hint for the agent).
SKILL_METADATA_KEY = "skillId"
#: The server's name until the card names it.
DEFAULT_NAME = "a2a-agent"


def describe_error(exc: BaseException, where: str) -> str:
    """One line for the model: what failed, in words (never a traceback)."""
    if isinstance(exc, ConnectError):
        return f"cannot reach the A2A agent at {where}: {exc}"
    if isinstance(exc, A2AError):
        return f"the A2A agent answered {type(exc).__name__}: {exc.message}"
    if isinstance(exc, ClientError):
        return f"calling the A2A agent at {where} failed ({type(exc).__name__}): {exc}"
    return f"internal error of the MCP bridge ({type(exc).__name__})"


def _progress_text(event: StreamEvent) -> str:
    """What a streamed A2A event says, for a progress notification."""
    if isinstance(event, Task):
        text = f"task {event.id}: {state_name(event.status.state)}"
    elif isinstance(event, Message):
        text = event.text
    elif isinstance(event, TaskArtifactUpdateEvent):
        text = (
            event.artifact.text or f"artifact {event.artifact.name or event.artifact.artifact_id}"
        )
    else:
        said = event.status.message.text if event.status.message is not None else ""
        text = (
            f"{state_name(event.status.state)}: {said}" if said else state_name(event.status.state)
        )
    return text[:MAX_PROGRESS_CHARS]


class A2AMCPServer(Server[Any]):
    """An MCP server (the official SDK's low-level ``Server``) exposing one A2A agent.

    Made by :func:`mcp_server`; serve it with :meth:`run_stdio`, :meth:`run_http` or mount
    :meth:`http_app`. One agent client is used for every MCP session; when the server made
    it from a URL it closes it when the server stops.
    """

    def __init__(
        self,
        agent: str | AsyncClient,
        *,
        tools: ToolMode = "skills",
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        name: str | None = None,
        limits: AnswerLimits | None = None,
        timeout: float = 30.0,
    ) -> None:
        if tools not in ("skills", "send"):
            raise ValueError(f"tools must be 'skills' or 'send', not {tools!r}")
        super().__init__(
            name or DEFAULT_NAME,
            lifespan=_lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._named = name is not None
        self.mode: ToolMode = tools
        self.limits = limits or AnswerLimits()
        self._given = agent if isinstance(agent, AsyncClient) else None
        self._url = agent if isinstance(agent, str) else None
        self._client_options: dict[str, Any] = {
            "headers": dict(headers or {}),
            "bearer_token": bearer_token,
            # A blocking SendMessage waits for the agent as long as it works; the MCP client's
            # own timeout, or its cancellation, ends the wait.
            "timeout": httpx.Timeout(timeout, read=None),
        }
        self._owned: AsyncClient | None = None

    # -- the agent -----------------------------------------------------------------------------

    @property
    def agent(self) -> AsyncClient:
        """The A2A client (made on first use when the server was given a URL)."""
        if self._given is not None:
            return self._given
        if self._owned is None:
            assert self._url is not None
            self._owned = AsyncClient(self._url, **self._client_options)
        return self._owned

    @property
    def where(self) -> str:
        interface = self.agent.interface
        return self._url or (interface.url if interface is not None else "the agent")

    async def aclose(self) -> None:
        """Close the A2A client if this server made it (a given one is its owner's)."""
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.aclose()

    async def describe_agent(self) -> AgentCard | None:
        """Read the card and take the server's name, description and instructions from it
        (unless a name was given); ``None`` when the agent cannot be reached now."""
        try:
            card = await self.agent.agent_card()
        except (ClientError, A2AError) as exc:
            log.warning("%s", describe_error(exc, self.where))
            return None
        if not self._named:
            self.name = card.name
            self.version = card.version
            self.description = card.description
            self.instructions = (
                f"{card.name}, an A2A agent: {card.description} Each tool sends a message "
                "and answers with the agent's reply; continue a conversation with the "
                "context_id of a result, answer an input-required task with its task_id."
            )
        return card

    # -- serving -------------------------------------------------------------------------------

    def http_app(self, *, path: str = "/mcp", host: str = "127.0.0.1") -> Starlette:
        """The streamable HTTP app (an ASGI app; its lifespan runs the sessions). ``host`` is
        where it listens: on loopback the SDK refuses other Host and Origin headers (DNS
        rebinding)."""
        return self.streamable_http_app(streamable_http_path=path, host=host)

    async def run_stdio(self) -> None:
        """Serve one MCP client on stdin/stdout (what Claude Desktop and Cursor spawn)."""
        from mcp.server.stdio import stdio_server

        await self.describe_agent()
        async with stdio_server() as (read, write):
            await self.run(read, write, self.create_initialization_options())

    async def run_http(
        self, *, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp"
    ) -> None:
        """Serve streamable HTTP at ``http://host:port/path`` until stopped."""
        import uvicorn

        await self.describe_agent()
        app = self.http_app(path=path, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        await uvicorn.Server(config).serve()

    # -- MCP handlers --------------------------------------------------------------------------

    async def _toolset(self) -> Toolset:
        try:
            card: AgentCard | None = await self.agent.agent_card()
        except (ClientError, A2AError):
            if self.mode == "skills":
                raise
            card = None  # the send tool needs no card to be listed
        return Toolset.build(card, self.mode)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        from mcp.shared.exceptions import MCPError

        try:
            toolset = await self._toolset()
        except (ClientError, A2AError) as exc:
            raise MCPError(types.INTERNAL_ERROR, describe_error(exc, self.where)) from None
        return types.ListToolsResult(tools=toolset.tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            call = (await self._toolset()).call(params.name, params.arguments)
        except ArgumentsError as exc:
            return error_result(f"invalid call: {exc}")
        except Exception as exc:
            return error_result(describe_error(exc, self.where))
        started: list[str] = []  # the task this call started, for CancelTask
        try:
            result = await self._ask(ctx, call, started)
        except anyio.get_cancelled_exc_class():
            await self._cancel(started, call)
            raise
        except Exception as exc:
            if not isinstance(exc, (ClientError, A2AError)):
                log.exception("tool call %s failed", params.name)
            return error_result(describe_error(exc, self.where))
        return tool_result(result, self.limits)

    async def _ask(
        self, ctx: ServerRequestContext[Any], call: ToolCall, started: list[str]
    ) -> Task | Message:
        options: dict[str, Any] = {"context_id": call.context_id, "task_id": call.task_id}
        if call.skill_id is not None:
            options["metadata"] = {SKILL_METADATA_KEY: call.skill_id}
        if call.task_id is not None:
            started.append(call.task_id)
        card = await self.agent.agent_card()
        if not card.capabilities.streaming:
            return await self.agent.send(call.message, **options)
        fold = TaskAccumulator()
        count = 0
        async for event in self.agent.stream(call.message, **options):
            fold.apply(event)
            if not started and fold.task is not None:
                started.append(fold.task.id)
            count += 1
            # A no-op unless the caller sent a progressToken (MCP: progress is opt-in).
            await ctx.session.report_progress(count, None, _progress_text(event))
        if fold.result is None:
            raise ClientError("the agent's stream ended without a task or message")
        return fold.result

    async def _cancel(self, started: list[str], call: ToolCall) -> None:
        """CancelTask for the task of a call the MCP client canceled (shielded: the call's
        scope is being cancelled). A task the call only continued is canceled too."""
        if not started:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT):
            try:
                await self.agent.cancel(started[0])
            except (ClientError, A2AError) as exc:
                log.warning("canceling task %s: %s", started[0], describe_error(exc, self.where))


@asynccontextmanager
async def _lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    """Before the first session: the server's name and instructions from the card (streamable
    HTTP enters this once, at startup). At the end: close the client the server made."""
    assert isinstance(server, A2AMCPServer)
    if server.name == DEFAULT_NAME and not server._named:
        await server.describe_agent()
    try:
        yield {}
    finally:
        await server.aclose()
