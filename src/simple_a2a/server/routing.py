"""The one router of an agent's HTTP app, and the ASGI lifespan protocol it answers.

An agent serves a handful of fixed paths (JSON-RPC, the Agent Card, the JWKS, metrics) and,
for everything else, the HTTP+JSON binding, whose route table (a2a.proto's ``google.api.http``
routes, :class:`~simple_a2a.protocol.rest.RouteTable`) does its own matching. So the router is
one dict lookup on the path below the mount point (:func:`~simple_a2a.protocol.asgi.route_path`,
the rule every layer shares) and a default: no pattern matching, no per-request objects before a
binding sees the request. A fixed path is served with or without a trailing slash (never a
redirect: clients do not follow one on a ``POST``); a method it does not serve gets 405 with an
``Allow`` header in the HTTP+JSON error format (spec §11.6), as every other refusal here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import NamedTuple

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol import errors as e
from ..protocol.asgi import route_path
from ..protocol.logcontext import library_logger
from ..protocol.rest import MethodNotAllowedError
from .http import response_media_type
from .rest import error_response

log = library_logger("simple_a2a.server")

#: A request/response endpoint of a fixed path (the card, the JWKS, metrics).
Endpoint = Callable[[Request], Awaitable[ASGIApp]]
Lifespan = Callable[[], contextlib.AbstractAsyncContextManager[None]]


class Route(NamedTuple):
    """A fixed path, the methods it serves and the ASGI app that serves them."""

    path: str
    methods: frozenset[str]
    app: ASGIApp

    @classmethod
    def endpoint(cls, path: str, endpoint: Endpoint, methods: Iterable[str] = ("GET",)) -> Route:
        """A route whose endpoint takes a request and returns a response; ``GET`` also
        serves ``HEAD`` (the server drops the body)."""
        allowed = frozenset(methods) | ({"HEAD"} if "GET" in methods else set())
        return cls(path, allowed, _request_response(endpoint))


def _request_response(endpoint: Endpoint) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response: ASGIApp
        try:
            response = await endpoint(request)
        except e.A2AError as err:
            response = error_response(err, response_media_type(request), None)
        except Exception:  # an answer never carries a traceback (the log has it)
            log.exception("internal error at %s", route_path(scope))
            response = error_response(e.InternalError(), response_media_type(request), None)
        await response(scope, receive, send)

    return app


class Router:
    """Fixed paths first, then ``default`` (the HTTP+JSON binding); lifespan to ``lifespan``."""

    def __init__(self, routes: Iterable[Route], default: ASGIApp, lifespan: Lifespan) -> None:
        self.routes: dict[str, Route] = {}
        for route in routes:
            self.routes.setdefault(route.path, route)  # the first wins, as in a route list
        self.default = default
        self.lifespan = lifespan

    def match(self, path: str) -> Route | None:
        """The fixed route of ``path``, with or without its trailing slash."""
        routes = self.routes
        route = routes.get(path)
        if route is None and len(path) > 1:
            route = routes.get(path[:-1] if path.endswith("/") else path + "/")
        return route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            route = self.match(route_path(scope))
            if route is None:
                await self.default(scope, receive, send)
            elif scope["method"] in route.methods:
                await route.app(scope, receive, send)
            else:
                await _method_not_allowed(route, scope, receive, send)
        elif kind == "lifespan":
            await serve_lifespan(self.lifespan, receive, send)
        elif kind == "websocket":  # no A2A binding runs over websockets
            await send({"type": "websocket.close", "code": 1000})


async def _method_not_allowed(route: Route, scope: Scope, receive: Receive, send: Send) -> None:
    allowed = sorted(route.methods)
    err = MethodNotAllowedError(
        f"{scope['method']} is not allowed at {route.path}; allowed: {', '.join(allowed)}",
        allowed=allowed,
    )
    response = error_response(err, response_media_type(Request(scope)), None)
    await response(scope, receive, send)


async def serve_lifespan(lifespan: Lifespan, receive: Receive, send: Send) -> None:
    """The ASGI lifespan protocol around one async context manager: enter at startup (a
    failure is reported to the server, which then refuses to start), exit at shutdown."""
    message = await receive()
    if message["type"] != "lifespan.startup":  # pragma: no cover - the ASGI spec's order
        return
    manager = lifespan()
    try:
        await manager.__aenter__()
    except Exception as exc:
        log.exception("startup failed")
        await send({"type": "lifespan.startup.failed", "message": str(exc) or type(exc).__name__})
        return
    await send({"type": "lifespan.startup.complete"})
    await receive()  # lifespan.shutdown
    try:
        await manager.__aexit__(None, None, None)
    except Exception as exc:
        log.exception("shutdown failed")
        message_text = str(exc) or type(exc).__name__
        await send({"type": "lifespan.shutdown.failed", "message": message_text})
        return
    await send({"type": "lifespan.shutdown.complete"})
