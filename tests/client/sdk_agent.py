"""A real agent served by the official SDK (``a2a`` 1.3.0), for interoperability tests.

The executor dispatches on the first word of the user's text:

- ``echo ...`` (default): a task with one artifact ``echo: <text>``, completed;
- ``count N``: a streamed task, N artifact chunks (append) then completed;
- ``slow``: a task that keeps working until it is canceled;
- ``reply ...``: a direct Message instead of a task.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
    TaskState,
)
from starlette.applications import Starlette


class DemoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        word, _, rest = text.partition(" ")
        if word == "reply":
            await event_queue.enqueue_event(
                new_text_message(
                    f"reply: {rest}", context_id=context.context_id, role=Role.ROLE_AGENT
                )
            )
            return
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if word == "count":
            n = int(rest or "3")
            for i in range(n):
                await asyncio.sleep(0.02)
                await updater.add_artifact(
                    [new_text_part(f"{i} ")],
                    artifact_id="count",
                    append=i > 0,
                    last_chunk=i == n - 1,
                )
            await updater.complete()
        elif word == "slow":
            while True:
                await asyncio.sleep(0.05)
        else:
            await updater.add_artifact([new_text_part(f"echo: {text}")], artifact_id="echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.update_status(TaskState.TASK_STATE_CANCELED)


def build_app(base_url: str, *, v03: bool = False) -> Any:
    card = AgentCard(
        name="SDK demo agent",
        description="echo, count, slow, reply",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
        supported_interfaces=[
            AgentInterface(
                url=f"{base_url}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            AgentInterface(
                url=f"{base_url}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=DemoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/rpc", enable_v0_3_compat=v03),
        *create_rest_routes(handler, enable_v0_3_compat=v03, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


def build_v03_app(base_url: str, binding: str = "JSONRPC") -> Any:
    """The same agent presenting itself as a 0.3-only agent: a 0.3 card at agent.json only,
    the SDK's JSON-RPC or HTTP+JSON endpoint with its 0.3 compatibility layer."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    app = build_app(base_url, v03=True)
    card = {
        "name": "SDK demo agent (0.3)",
        "description": "echo, count, slow, reply",
        "version": "1.0.0",
        "protocolVersion": "0.3.0",
        "url": f"{base_url}/rpc" if binding == "JSONRPC" else f"{base_url}/rest",
        "preferredTransport": binding,
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }

    async def v03_card(request: Request) -> Response:
        return JSONResponse(card)

    async def no_card(request: Request) -> Response:
        return Response(status_code=404)

    app.router.routes.insert(0, Route("/.well-known/agent.json", v03_card))
    app.router.routes.insert(0, Route("/.well-known/agent-card.json", no_card))
    return app
