"""The inspector inside an agent (``server(..., inspector=True)``): ``/inspector/`` of the agent.

A development tool, off by default (docs/inspector.md). The page's backend calls the agent over
HTTP at the address the page was opened with, like any client, so its wire view shows what a
real client sees; the agent's own authentication applies to those calls.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol.asgi import route_path
from .app import inspector_app

__all__ = ["PATH", "with_inspector"]

PATH = "/inspector"


class _WithInspector:
    def __init__(self, agent: ASGIApp, path: str) -> None:
        self._agent = agent
        self._path = path
        self._inspector = Starlette(routes=[Mount(path, app=inspector_app())])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = route_path(scope)
            if path == self._path or path.startswith(self._path + "/"):
                await self._inspector(scope, receive, send)
                return
        await self._agent(scope, receive, send)


def with_inspector(agent: ASGIApp, path: str = PATH) -> ASGIApp:
    """``agent`` with the inspector's page at ``path``/ (every other request goes to ``agent``)."""
    return _WithInspector(agent, path)
