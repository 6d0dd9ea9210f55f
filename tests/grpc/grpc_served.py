"""Our A2AServer served over grpc.aio on loopback (port 0), in the test's event loop."""

from __future__ import annotations

from typing import Any

from simple_a2a import AsyncClient
from simple_a2a.server import A2AServer
from simple_a2a.server.grpc import serve_grpc
from simple_a2a.server.push import PushSettings
from tests.support.agents import EXT, TestAgent, make_card

__all__ = ["EXT", "GRPC_ONLY", "Served", "make_card", "start"]

GRPC_ONLY = ["GRPC"]


class Served:
    """An agent served over gRPC (its ASGI app shares the handler, for cross-binding checks)."""

    def __init__(self, a2a: A2AServer, server: Any) -> None:
        self.a2a = a2a
        self.server = server
        self.port: int = server.a2a_port
        self.target = f"127.0.0.1:{self.port}"

    def card(self) -> Any:
        return self.a2a.public_card("http://testserver")

    def client(self, **options: Any) -> AsyncClient:
        """Our client, speaking gRPC to it (the card lists the GRPC interface)."""
        return AsyncClient(self.card(), bindings=GRPC_ONLY, **options)

    async def close(self) -> None:
        await self.server.stop(0)
        await self.a2a.shutdown()


async def start(
    card: Any = None, executor: Any = None, *, v03: bool = True, port: int = 0, **options: Any
) -> Served:
    """Serve on ``port`` (0: a free one; give one when the card must name it beforehand)."""
    options.setdefault("push", PushSettings(allow_hosts=["127.0.0.1"], signing=None))
    a2a = A2AServer(card or make_card(pushNotifications=True), executor or TestAgent(), **options)
    return Served(a2a, await serve_grpc(a2a, "127.0.0.1", port, v03=v03))
