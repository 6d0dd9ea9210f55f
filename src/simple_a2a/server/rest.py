"""The HTTP+JSON binding (spec §11): REST routes to the handler; translation only.

The routes come from the operations table (:class:`~simple_a2a.protocol.rest.RouteTable`):
every ``google.api.http`` route of a2a.proto, its ``/{tenant}/...`` variant, ``SubscribeToTask``
by GET and POST, and 0.3's ``/v1/...`` paths (answered in 0.3's wire shapes). Errors are
``google.rpc.Status`` bodies (spec §11.6) with the §5.4 HTTP status; streams are SSE with the
task's event sequence numbers as ``id:``, exactly as over JSON-RPC.

The binding is an ASGI app; :class:`~simple_a2a.server.app.A2AServer` hands it every request
that is not JSON-RPC or the Agent Card. ``prefix`` is where the routes live below the agent's
base URL (``""`` by default: ``<base>/message:send``).
"""

from __future__ import annotations

import math
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol import errors as e
from ..protocol import rest_v03
from ..protocol.card import HTTP_JSON
from ..protocol.encoded import EVENTS
from ..protocol.logcontext import library_logger
from ..protocol.operations import Operation
from ..protocol.rest import MethodNotAllowedError, RouteNotFoundError, RouteTable, parse_query
from ..protocol.versions import V03
from .context import CallContext
from .handler import RequestHandler
from .http import (
    JSON,
    Answer,
    call_context,
    header_map,
    json_bytes,
    read_json,
    response_media_type,
    result_json,
    route_path,
    service_headers,
    sse_response,
    validate,
)
from .limits import check_raw_message
from .tasks import StreamItem

log = library_logger("simple_a2a.server")

ROUTES = RouteTable()


class RESTBinding:
    """Serves one agent over HTTP+JSON; an ASGI app."""

    def __init__(self, handler: RequestHandler, *, max_body: int, prefix: str = "") -> None:
        self.handler = handler
        self.max_body = max_body
        self.keep_sent = handler.storage.tasks.takes_answer_json  # (http.result_json)
        self.prefix = prefix.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # pragma: no cover - websockets have no A2A route
            return
        response = await self.dispatch(Request(scope, receive))
        await response(scope, receive, send)

    async def dispatch(self, request: Request) -> ASGIApp:
        media_type = response_media_type(request)
        call: CallContext | None = None
        try:
            path = route_path(request.scope)
            if self.prefix:
                if path != self.prefix and not path.startswith(self.prefix + "/"):
                    raise RouteNotFoundError(f"no A2A route matches {request.method} {path}")
                path = path[len(self.prefix) :]
            if path.startswith("//"):  # a route joined onto an interface URL ending in "/"
                path = path[1:]
            match = ROUTES.match(request.method, path)
            op = match.operation
            call = call_context(
                request,
                self.handler.card,
                is_v03_name=match.v03,
                tenant=match.params.get("tenant"),
                binding=HTTP_JSON,
            )
            if call.version == V03:
                media_type = JSON  # 0.3 §3.2.3 says MUST, whatever the client accepts
            params = await self._params(request, op, match.params, call)
            if op.streaming:
                items = await self.handler.handle(op.name, params, call)
                return sse_response(items, _renderer(op, call), service_headers(call))
            result = await self.handler.handle(op.name, params, call)
            if call.version == V03:
                body = json_bytes(rest_v03.result_down(op.name, result.to_dict()))
            else:
                body = result_json(op.name, result, keep_sent=self.keep_sent)
            return Answer(body, media_type=media_type, headers=service_headers(call))
        except e.A2AError as err:
            return error_response(err, media_type, call)
        except Exception:
            log.exception("internal error in HTTP+JSON request")
            return error_response(e.InternalError(), media_type, call)

    async def _params(
        self, request: Request, op: Operation, path_params: dict[str, str], call: CallContext
    ) -> Any:
        """The request model from body (``body: "*"``), query (spec §11.5) and path."""
        body: dict[str, Any] = {}
        if op.has_body or header_map(request).get("content-length", "0") != "0":
            offload = self.handler.limits.offload_validation_bytes
            payload = await read_json(
                request, self.max_body, allow_empty=True, offload_bytes=offload
            )
            if payload is not None and not isinstance(payload, dict):
                raise e.InvalidRequestError("the request body must be a JSON object")
            body = payload or {}
        if call.version == V03:
            body = rest_v03.request_up(op.name, body)
        # (Starlette's QueryParams only for a request that has a query string)
        items = request.query_params.multi_items() if request.scope.get("query_string") else ()
        query = parse_query(op.request_type, items, ignore=path_params)
        data = {**body, **query, **path_params}
        check_raw_message(self.handler.limits, data)
        offload = self.handler.limits.offload_validation_bytes
        return await validate(request, offload, op.request_type.from_dict, data)


def _renderer(op: Operation, call: CallContext) -> Any:
    if call.version == V03:

        def render_v03(item: StreamItem) -> bytes:
            assert item.event is not None
            return json_bytes(rest_v03.result_down(op.name, item.event.to_dict()))

        return render_v03

    def render(item: StreamItem) -> bytes:
        assert item.event is not None
        return EVENTS.get(item.event)

    return render


def error_response(err: e.A2AError, media_type: str, call: CallContext | None) -> ASGIApp:
    """A ``google.rpc.Status`` body with the error's §5.4 HTTP status (spec §11.6); for a 0.3
    request also the ``type``/``message``/``code`` members 0.3 clients read."""
    headers = service_headers(call)
    if isinstance(err, MethodNotAllowedError):
        headers["Allow"] = ", ".join(err.allowed)
    elif isinstance(err, e.RateLimitError) and err.retry_after is not None:
        headers["Retry-After"] = str(math.ceil(err.retry_after))  # whole seconds (RFC 9110)
    body = err.to_rest()
    if call is not None and call.version == V03:
        body |= rest_v03.error_extras(type(err).__name__, err.message, err.code)
    return Answer(
        json_bytes(body),
        status_code=err.http_status,
        media_type=media_type,
        headers=headers,
    )
