"""gRPC fixtures: our A2AServer served over grpc.aio on loopback (port 0), in the test's loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("grpc", reason="the grpc extra is not installed")

from tests.server.agents import TestAgent, make_card

from simple_a2a import AsyncClient
from simple_a2a.server import A2AServer
from simple_a2a.server.grpc import serve_grpc

GRPC_ONLY = ["GRPC"]


class Served:
    """An agent served over gRPC (and its ASGI app, for cross-binding checks)."""

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


async def start(**options: Any) -> Served:
    card = options.pop("card", None) or make_card(pushNotifications=True)
    a2a = A2AServer(card, options.pop("executor", None) or TestAgent(), **options)
    server = await serve_grpc(a2a, "127.0.0.1", 0)
    return Served(a2a, server)


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    s = await start()
    try:
        yield s
    finally:
        await s.server.stop(0)
        await s.a2a.shutdown()
