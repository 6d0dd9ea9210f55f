"""Several agents in one process, each under its own path (the Ruby seed's ``multi_server``).

::

    multi_server({
        "/research": {"agent_card": research_card, "executor": Research()},
        "/evaluator": server(evaluator_card, Evaluator(), storage="sqlite:///eval.db"),
    }).run(port=9292)

Each agent keeps its own card (``/research/.well-known/agent-card.json``), executor, storage and
event log: a task of one agent is unknown to the other. Requests go to the longest matching
prefix; the prefix itself (``POST /research``, no trailing slash) is the agent's JSON-RPC URL.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.types import Receive, Scope, Send

from ..protocol.rest import RouteNotFoundError
from .app import EXACT_MOUNT, A2AServer, server
from .http import Answer, json_bytes, route_path
from .limits import uvicorn_options as limits_uvicorn_options
from .routing import serve_lifespan
from .serving import run_uvicorn

AgentSpec = A2AServer | Mapping[str, Any]


def _normalize(prefix: str) -> str:
    prefix = "/" + prefix.strip("/")
    if prefix == "/":
        raise ValueError("every agent needs a non-empty path prefix, like '/research'")
    return prefix


class MultiServer:
    """An ASGI app serving several :class:`A2AServer` under path prefixes."""

    def __init__(self, agents: Mapping[str, AgentSpec], *, shutdown_grace: float = 10.0) -> None:
        if not agents:
            raise ValueError("multi_server needs at least one agent")
        self.servers: dict[str, A2AServer] = {}
        for prefix, spec in agents.items():
            key = _normalize(prefix)
            if key in self.servers:
                raise ValueError(f"two agents at {key}")
            self.servers[key] = spec if isinstance(spec, A2AServer) else server(**spec)
        self._order = sorted(self.servers, key=len, reverse=True)
        self.shutdown_grace = shutdown_grace
        self.app = self

    def __getitem__(self, prefix: str) -> A2AServer:
        return self.servers[_normalize(prefix)]

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncIterator[None]:
        """Open every agent's storage; on exit let tasks finish and close them."""
        started: list[A2AServer] = []
        try:
            for srv in self.servers.values():
                await srv.startup()
                started.append(srv)
            yield
        finally:
            for srv in reversed(started):
                await srv.shutdown()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(self.lifespan, receive, send)
            return
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        rel = route_path(scope)
        for prefix in self._order:
            if rel == prefix or rel.startswith(prefix + "/"):
                child = dict(scope)
                child["root_path"] = root + prefix
                child[EXACT_MOUNT] = True
                if rel == prefix:  # the base URL itself is the JSON-RPC endpoint
                    child["path"] = path + "/"
                    child["raw_path"] = child["path"].encode()
                await self.servers[prefix].app(child, receive, send)
                return
        if scope["type"] == "http":
            err = RouteNotFoundError(
                f"no agent at {rel}; agents: {', '.join(sorted(self.servers))}"
            )
            await Answer(json_bytes(err.to_rest()), status_code=404)(scope, receive, send)

    def run(self, host: str = "127.0.0.1", port: int = 9292, **uvicorn_options: Any) -> None:
        """Serve every agent with uvicorn until interrupted (blocks); see ``A2AServer.run``."""
        options = limits_uvicorn_options(self.shutdown_grace, uvicorn_options)
        run_uvicorn(self, host, port, **options)


def multi_server(agents: Mapping[str, AgentSpec], **options: Any) -> MultiServer:
    """Several agents under path prefixes; ``.run(port=...)`` serves them, ``.app`` is the ASGI
    app. Each value is an :class:`A2AServer` or a dict of :func:`server` keyword arguments."""
    return MultiServer(agents, **options)
