"""Where an ASGI request is, below the point its app is mounted at: one rule for every layer of
the stack (the auth middleware's public paths, the inspector, multi_server, the router)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def route_path(scope: Mapping[str, Any]) -> str:
    """The request path below where the app is mounted (``root_path``), as Starlette routes it:
    ``/agent/tasks/1`` under ``root_path="/agent"`` is ``/tasks/1``; ``/agentX`` is not under
    ``/agent`` and stays as it is."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :] or "/"
    return path
