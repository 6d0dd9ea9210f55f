"""The official Python SDK 0.3.26's demo agent, run as a process from ``.venv-sdk03``
(``scripts/peers``): ``python sdk03_agent.py PORT GRPC_PORT``. Not imported by the test suite.

0.3 JSON-RPC at ``/rpc``, 0.3 HTTP+JSON at ``/rest`` (``/rest/v1/...``) and 0.3 gRPC
(``a2a.v1.A2AService``, the SDK's ``GrpcHandler``) on ``127.0.0.1:GRPC_PORT``, one handler,
push notifications sent by the SDK's own sender. The executor dispatches on the first word:
``count N`` (N artifact chunks), ``slow`` (works until canceled), ``reply X`` (a direct
Message), anything else ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
import sys

import httpx
import uvicorn
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task

import grpc


class DemoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        word, _, rest = text.partition(" ")
        if word == "reply":
            reply = new_agent_text_message(f"reply: {rest}", context_id=context.context_id)
            await event_queue.enqueue_event(reply)
            return
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if word == "count":
            n = int(rest or "3")
            for i in range(n):
                await asyncio.sleep(0.02)
                await updater.add_artifact(
                    [Part(root=TextPart(text=f"{i} "))],
                    artifact_id="count",
                    append=i > 0,
                    last_chunk=i == n - 1,
                )
            await updater.complete()
        elif word == "slow":
            while True:
                await asyncio.sleep(0.05)
        else:
            await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], "echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.update_status(TaskState.canceled, final=True)


async def main() -> None:
    port, grpc_port = int(sys.argv[1]), int(sys.argv[2])
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="SDK 0.3.26 demo agent",
        description="echo, count, slow, reply",
        version="1.0.0",
        protocol_version="0.3.0",
        url=f"{base}/rpc",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=f"{base}/rpc", transport="JSONRPC"),
            AgentInterface(url=f"{base}/rest", transport="HTTP+JSON"),
            AgentInterface(url=f"127.0.0.1:{grpc_port}", transport="GRPC"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    )
    store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=DemoExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=store,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(), store),
    )
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(rpc_url="/rest")
    jsonrpc = A2AStarletteApplication(agent_card=card, http_handler=handler)
    app.router.routes.extend(jsonrpc.routes(rpc_url="/rpc"))
    rpc = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), rpc)
    rpc.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await rpc.start()  # before the card answers: the test waits for the card
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await rpc.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
