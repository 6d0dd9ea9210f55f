"""The transport contract: one class per binding, speaking 1.0 dicts to the client above it.

Like httpx's transports, a :class:`Transport` knows how to move one request and its answer over
the wire, and nothing about policy (retries, reconnection, negotiation live in the client).
The contract is two methods, both in terms of 1.0 ProtoJSON dicts (camelCase):

- :meth:`Transport.call` sends one unary operation and returns its 1.0 result dict;
- :meth:`Transport.stream` opens a streaming operation and yields :class:`SSEEvent` objects,
  each carrying the SSE ``id:`` and the 1.0 ``StreamResponse`` dict.

When the agent speaks 0.3 (``version="0.3"``) the transport converts on the way out and in
with :mod:`simple_a2a.protocol.v03`, so the client above never sees a 0.3 shape.

Failures come out as the client's :mod:`~simple_a2a.client.errors` (transport level) or as the
protocol's typed :class:`~simple_a2a.protocol.errors.A2AError` (the agent's answer), which carry
the response's HTTP status as ``status_code``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import quote

import httpx

from simple_a2a.protocol import rest_v03, v03
from simple_a2a.protocol.errors import (
    A2AError,
    InvalidParamsError,
    error_from_jsonrpc,
    error_from_rest,
)
from simple_a2a.protocol.operations import OPERATIONS_BY_NAME
from simple_a2a.protocol.telemetry import TELEMETRY, inject_context

from .answers import (
    challenged,
    check_a2a_answer,
    invalid,
    map_httpx_error,
    read_body,
    send_unfollowed,
    with_status,
)
from .limits import ClientLimits, RawEvent, TooLargeError, loads, sse_events
from .rest_errors import rest_error

__all__ = ["JSONRPCTransport", "RESTTransport", "SSEEvent", "TimeoutTypes", "Transport"]

TimeoutTypes = float | httpx.Timeout | None

#: The default timeout of a call: use the ``httpx.AsyncClient``'s own.
DEFAULT: Any = httpx.USE_CLIENT_DEFAULT

JSON_TYPES = ("application/json", "application/a2a+json")


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event of a stream: its ``id:`` (``""`` if none) and 1.0 payload dict.

    ``fresh_id`` is false when the SSE ``id:`` was inherited from an earlier event of the same
    connection (the SSE last-event-ID buffer persists), so it does not identify this event.
    """

    id: str
    data: dict[str, Any]
    fresh_id: bool = True


class SSEStream:
    """The events of one streaming response; ``aclose()`` closes the response.

    A class rather than an async generator on purpose: when a program ends with a stream left
    open (``break`` out of ``async for``), asyncio closes every live async generator at once, and
    a generator that its parent is already closing then fails with "aclose(): asynchronous
    generator is already running". The client's stream is one async generator
    (:func:`~simple_a2a.client.streams.resilient_stream`) that closes this object itself.
    """

    def __init__(self, transport: Transport, operation: str, request: httpx.Request) -> None:
        self._transport = transport
        self._operation = operation
        self._request = request
        self._response: httpx.Response | None = None
        self._sse: AsyncIterator[RawEvent] | None = None
        self._closed = False

    def __aiter__(self) -> SSEStream:
        return self

    async def __anext__(self) -> SSEEvent:
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._sse is None:
                self._sse = await self._open()
            while True:
                sse = await self._sse.__anext__()
                if sse.data.strip():
                    return self._decode(sse)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except httpx.HTTPError as exc:
            await self.aclose()
            raise map_httpx_error(exc) from exc
        except TooLargeError as exc:
            await self.aclose()
            raise invalid(f"{self._operation}: {exc} (ClientLimits.max_event_bytes)") from None
        except Exception:
            await self.aclose()
            raise

    async def _open(self) -> AsyncIterator[RawEvent]:
        transport, operation = self._transport, self._operation
        self._response = response = await send_unfollowed(transport.http, self._request)
        ctype = response.headers.get("content-type", "").partition(";")[0].strip()
        if ctype != "text/event-stream" or response.is_redirect:
            limit = transport.limits.max_response_bytes
            body = await read_body(operation, response, limit)
            check_a2a_answer(response, body, v03_rest=transport.flat_errors)
            try:
                transport._raise_for_body(operation, body, response.status_code, self._request)
            except A2AError as err:
                raise challenged(err, response) from None
            raise invalid(
                f"{operation}: expected an event stream, got {ctype or 'no content type'}",
                response.status_code,
            )
        return sse_events(response, transport.limits.max_event_bytes)

    def _decode(self, sse: RawEvent) -> SSEEvent:
        try:
            payload = loads(sse.data, ValueError)
        except ValueError as exc:
            raise invalid(f"{self._operation}: an event is {exc}: {sse.data[:80]!r}") from None
        data = self._transport._event_result(self._operation, payload, self._request)
        return SSEEvent(sse.id, data, sse.fresh_id)

    async def aclose(self) -> None:
        """Close the response (idempotent)."""
        self._closed = True
        response, self._response = self._response, None
        if response is not None:
            await response.aclose()


class Transport:
    """Base of the bindings: one ``httpx.AsyncClient``, one interface URL, one version."""

    binding: ClassVar[str] = ""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        *,
        version: str = "1.0",
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        limits: ClientLimits | None = None,
    ) -> None:
        self.http = http
        self.limits = limits or ClientLimits()
        self.url = url  # as published: ``/prefix/`` of a mounted app (A2A calls follow no redirect)
        self.version = version
        self.headers = {"A2A-Version": version, **dict(headers or {})}
        self.query = dict(query or {})  #: credentials the card puts in the query (an API key)

    def _with_query(self, request: httpx.Request) -> httpx.Request:
        if self.query:
            request.url = request.url.copy_merge_params(self.query)
        return request

    @property
    def is_v03(self) -> bool:
        return self.version.startswith("0.")

    @property
    def flat_errors(self) -> bool:
        """Whether an error may come as the 0.3 SDKs' flat REST body (``{"message"}``)."""
        return self.is_v03 and self.binding == "HTTP+JSON"

    #: 1.0 request → the 0.3 wire shape, and the 0.3 answer → 1.0, for this binding
    #: (0.3 JSON-RPC's objects here; 0.3 REST carries the 0.3 proto's ProtoJSON instead).
    _request_to_v03 = staticmethod(v03.request_to_v03)
    _result_from_v03 = staticmethod(v03.result_from_v03)

    def _to_wire(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        if self.is_v03:
            return self._request_to_v03(operation, request)
        return request

    def _from_wire(self, operation: str, result: Any) -> dict[str, Any]:
        if self.is_v03:
            try:
                result = self._result_from_v03(operation, result)
            except A2AError as exc:
                raise invalid(f"{operation}: the agent's 0.3 answer is invalid: {exc}") from None
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise invalid(f"{operation}: expected a JSON object, got {type(result).__name__}")
        return result

    async def call(
        self, operation: str, request: dict[str, Any], *, timeout: Any = DEFAULT
    ) -> dict[str, Any]:
        """Send one unary operation; return its 1.0 result dict."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the transport holds besides the shared HTTP client (a gRPC channel)."""

    def stream(
        self,
        operation: str,
        request: dict[str, Any],
        *,
        timeout: Any = DEFAULT,
        last_event_id: str | None = None,
    ) -> AsyncIterator[SSEEvent]:
        """Open a streaming operation; yield its events until the server closes the stream."""
        raise NotImplementedError

    def _events(
        self, operation: str, request: httpx.Request, timeout: Any
    ) -> AsyncIterator[SSEEvent]:
        """Send a streaming request and decode its SSE events (both bindings)."""
        return SSEStream(self, operation, self._with_query(request))

    def _raise_for_body(
        self, operation: str, body: Any, status: int, request: httpx.Request
    ) -> None:
        """Raise the error a non-stream answer to a streaming request carries."""
        raise NotImplementedError

    def _event_result(self, operation: str, payload: Any, request: httpx.Request) -> dict[str, Any]:
        raise NotImplementedError


class HTTPTransport(Transport):
    """The HTTP bindings (JSON-RPC, HTTP+JSON): streams are SSE responses to a request that
    each binding builds its own way (:meth:`_build`)."""

    #: what a unary call accepts (1.0 HTTP+JSON adds application/a2a+json)
    accept = "application/json"

    def _build(
        self, operation: str, request: dict[str, Any], timeout: Any, extra: dict[str, str]
    ) -> httpx.Request:
        raise NotImplementedError

    async def call(
        self, operation: str, request: dict[str, Any], *, timeout: Any = DEFAULT
    ) -> dict[str, Any]:
        """One unary request; the binding's :meth:`_unwrap` finds the result or the error."""
        extra = {"Accept": self.accept}
        if TELEMETRY.on:  # W3C trace context (docs/observability.md)
            inject_context(extra)
        req = self._build(operation, request, timeout, extra)
        response = await send_unfollowed(self.http, self._with_query(req))
        body = await read_body(operation, response, self.limits.max_response_bytes)
        check_a2a_answer(response, body, v03_rest=self.flat_errors)
        try:
            result = self._unwrap(operation, body, response.status_code, req)
        except A2AError as err:
            raise challenged(err, response) from None
        return self._from_wire(operation, result)

    def _unwrap(self, operation: str, body: Any, status: int, request: httpx.Request) -> Any:
        raise NotImplementedError

    def stream(
        self,
        operation: str,
        request: dict[str, Any],
        *,
        timeout: Any = DEFAULT,
        last_event_id: str | None = None,
    ) -> AsyncIterator[SSEEvent]:
        extra = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if last_event_id:
            extra["Last-Event-ID"] = last_event_id
        if TELEMETRY.on:
            inject_context(extra)
        return self._events(operation, self._build(operation, request, timeout, extra), timeout)


class JSONRPCTransport(HTTPTransport):
    """JSON-RPC 2.0 over HTTP POST (spec §9); streams are SSE of JSON-RPC responses."""

    binding = "JSONRPC"
    _ids = itertools.count(1)

    def _method(self, operation: str) -> str:
        op = OPERATIONS_BY_NAME[operation]
        if self.is_v03:
            if op.v03_method is None:
                raise invalid(f"{operation} has no 0.3 JSON-RPC method")
            return op.v03_method
        return op.name

    def _build(
        self, operation: str, request: dict[str, Any], timeout: Any, extra: dict[str, str]
    ) -> httpx.Request:
        body = {
            "jsonrpc": "2.0",
            "id": (request_id := next(self._ids)),
            "method": self._method(operation),
            "params": self._to_wire(operation, request),
        }
        built = self.http.build_request(
            "POST",
            self.url,
            json=body,
            headers={**self.headers, **extra},
            timeout=timeout,
        )
        built.extensions["jsonrpc_id"] = request_id
        return built

    def _unwrap(self, operation: str, body: Any, status: int, request: httpx.Request) -> Any:
        sent = request.extensions.get("jsonrpc_id")
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            # JSON-RPC 2.0 §5: id is null when the server could not read the request's id.
            if body.get("id") not in (sent, None):
                raise invalid(
                    f"{operation}: the answer is for JSON-RPC id {body.get('id')!r}, not {sent}",
                    status,
                )
            raise with_status(error_from_jsonrpc(body["error"]), status)
        if isinstance(body, dict) and "result" in body:
            if body.get("id") != sent:
                raise invalid(
                    f"{operation}: the answer is for JSON-RPC id {body.get('id')!r}, not {sent}",
                    status,
                )
            return body["result"]
        if (
            operation in EMPTY_RESULT_OPERATIONS
            and status < 300
            and isinstance(body, dict)
            and body.get("jsonrpc") == "2.0"
        ):
            # JSON-RPC 2.0 requires ``result``, but the official Python SDKs (0.3.x, and 1.3.0's
            # 0.3 layer) answer a delete with ``{"jsonrpc", "id"}`` only: read it as null.
            return None
        if status >= 400:
            # Not JSON-RPC at all: an auth proxy, a 404 page, a REST-style error body.
            raise with_status(error_from_rest(body, status), status)
        raise invalid(f"{operation}: the answer is not a JSON-RPC response", status)

    def _raise_for_body(
        self, operation: str, body: Any, status: int, request: httpx.Request
    ) -> None:
        self._unwrap(operation, body, status, request)

    def _event_result(self, operation: str, payload: Any, request: httpx.Request) -> dict[str, Any]:
        return self._from_wire(operation, self._unwrap(operation, payload, 200, request))


class RESTTransport(HTTPTransport):
    """HTTP+JSON (spec §11): routes from the OPERATIONS table, camelCase query parameters.

    Over 0.3 the bodies are the 0.3 proto's ProtoJSON (:mod:`simple_a2a.protocol.rest_v03`).
    """

    binding = "HTTP+JSON"
    _request_to_v03 = staticmethod(rest_v03.request_down)
    _result_from_v03 = staticmethod(rest_v03.result_up)
    #: 0.3 CreateTaskPushNotificationConfig: the Python SDKs read the whole request as the
    #: body, the 0.3 proto (``body: "config"``) and the JS SDK the config alone. The first form
    #: goes first; once a peer refuses it as invalid params, this transport sends the second.
    _push_body_is_config = False

    async def call(
        self, operation: str, request: dict[str, Any], *, timeout: Any = DEFAULT
    ) -> dict[str, Any]:
        push_create = self.is_v03 and operation == "CreateTaskPushNotificationConfig"
        try:
            return await super().call(operation, request, timeout=timeout)
        except InvalidParamsError:
            if not push_create or self._push_body_is_config:
                raise
        self._push_body_is_config = True  # refused, so nothing was created: send it again
        return await super().call(operation, request, timeout=timeout)

    def _to_wire(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        if self._push_body_is_config and operation == "CreateTaskPushNotificationConfig":
            return rest_v03.push_config_down(request)
        return super()._to_wire(operation, request)

    @property
    def accept(self) -> str:  # type: ignore[override]
        return "application/json" if self.is_v03 else "application/a2a+json, application/json"

    @property
    def _media_type(self) -> str:
        # 1.0 HTTP+JSON: application/a2a+json SHOULD be used (§11.1; every 1.0 peer here takes
        # it); 0.3 names application/json. JSON-RPC stays application/json (§9.1), which the
        # JS SDK's JSON-RPC server requires (docs/interop.md).
        return "application/json" if self.is_v03 else "application/a2a+json"

    def _route(self, operation: str, request: dict[str, Any]) -> tuple[str, str, set[str]]:
        """(verb, URL, names of the request fields used in the path)."""
        op = OPERATIONS_BY_NAME[operation]
        path = op.v03_path if self.is_v03 else op.path
        if path is None:
            raise invalid(f"{operation} has no 0.3 REST route")
        used: set[str] = set()
        for placeholder, field in (("{id}", "id"), ("{task_id}", "taskId")):
            if placeholder in path:
                path = path.replace(placeholder, quote(str(request.get(field, "")), safe=""))
                used.add(field)
        tenant = request.get("tenant")
        if tenant and not self.is_v03:
            path = "/" + quote(str(tenant), safe="") + path
        used.add("tenant")
        verb = op.http_method
        if operation == "SubscribeToTask" and not self.is_v03:
            # 1.0's prose says POST (§5.3's table, §11.3.2), a2a.proto's http option GET; both
            # official 1.0 clients send POST and the JS SDK's 1.0 server answers only POST
            # (docs/interop.md). Our server takes both. 0.3 keeps GET, which its peers take.
            verb = "POST"
        return verb, self.url.rstrip("/") + path, used

    @staticmethod
    def _query(wire: dict[str, Any], used: set[str]) -> httpx.QueryParams:
        params: list[tuple[str, str]] = []
        for key, value in wire.items():
            if key in used or value is None or isinstance(value, dict):
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, bool):
                    params.append((key, "true" if item else "false"))
                elif not isinstance(item, dict):
                    params.append((key, str(item)))
        return httpx.QueryParams(tuple(params))

    def _build(
        self, operation: str, request: dict[str, Any], timeout: Any, extra: dict[str, str]
    ) -> httpx.Request:
        verb, url, used = self._route(operation, request)
        wire = self._to_wire(operation, request)
        headers = {**self.headers, **extra}
        if OPERATIONS_BY_NAME[operation].has_body:
            body = {k: v for k, v in wire.items() if k != "tenant"}
            return self.http.build_request(
                verb,
                url,
                content=json.dumps(body).encode(),
                headers={"Content-Type": self._media_type, **headers},
                timeout=timeout,
            )
        return self.http.build_request(
            verb, url, params=self._query(wire, used), headers=headers, timeout=timeout
        )

    def _raise_for_body(
        self, operation: str, body: Any, status: int, request: httpx.Request
    ) -> None:
        if status >= 400 or (isinstance(body, dict) and isinstance(body.get("error"), dict)):
            raise with_status(rest_error(operation, body, status), status)

    def _unwrap(self, operation: str, body: Any, status: int, request: httpx.Request) -> Any:
        if status >= 300:
            raise with_status(rest_error(operation, body, status), status)
        return body

    def _event_result(self, operation: str, payload: Any, request: httpx.Request) -> dict[str, Any]:
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            raise error_from_rest(payload, int(payload["error"].get("code") or 500))
        return self._from_wire(operation, payload)


#: Operations whose result is empty (``google.protobuf.Empty``).
EMPTY_RESULT_OPERATIONS = frozenset({"DeleteTaskPushNotificationConfig"})


TRANSPORTS: dict[str, type[Transport]] = {
    JSONRPCTransport.binding: JSONRPCTransport,
    RESTTransport.binding: RESTTransport,
}
