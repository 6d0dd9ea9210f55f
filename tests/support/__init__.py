"""Helpers shared by the test suites (``tests`` is a package: import them as
``from tests.support import card, rpc``; no ``sys.path`` changes anywhere)."""

from __future__ import annotations

from typing import Any

from simple_a2a.protocol import AgentCard


def card(
    name: str = "Test agent", *, extensions: list[str] | None = None, **caps: Any
) -> AgentCard:
    """A minimal valid Agent Card; ``caps`` are its capabilities (``streaming=False``, ...),
    ``extensions`` the URIs of the extensions it declares."""
    if extensions:
        caps = {"extensions": [{"uri": uri} for uri in extensions], **caps}
    return AgentCard.from_dict(
        {"name": name, "description": "test", "version": "1.0", "capabilities": caps}
    )


def rpc(method: str, params: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    """A JSON-RPC 2.0 request object (spec §9)."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
