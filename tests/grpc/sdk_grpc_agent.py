"""The official SDK's demo agent (tests/client/sdk_agent.py) served over gRPC by the SDK itself,
for our client's interop tests: 1.0 (``GrpcHandler``, ``lf.a2a.v1``) or 0.3
(``CompatGrpcHandler``, ``a2a.v1``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, a2a_pb2_grpc

import grpc
from tests.client.sdk_agent import DemoExecutor


def _add_service(
    protocol_version: str, handler: DefaultRequestHandler, server: grpc.aio.Server
) -> None:
    if protocol_version == "0.3":
        from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
        from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler

        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    else:
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)


@asynccontextmanager
async def sdk_grpc_agent(name: str, protocol_version: str) -> AsyncIterator[AgentCard]:
    """Serve the SDK's demo agent on a free loopback port; yields its card (the SDK's type)."""
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    card = AgentCard(
        name=name,
        description="echo, count, slow, reply",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        supported_interfaces=[
            AgentInterface(
                url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version=protocol_version
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=DemoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    _add_service(protocol_version, handler, server)
    await server.start()
    try:
        yield card
    finally:
        await server.stop(0)
