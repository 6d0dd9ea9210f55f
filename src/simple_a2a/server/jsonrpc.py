"""The JSON-RPC 2.0 binding (spec §9): ``POST`` to the interface URL; translation only.

Serves the 1.0 method names, the 0.3 names and the Ruby seed's legacy aliases (0.3 wire shapes for
the latter two). Batches of non-streaming calls are served per JSON-RPC 2.0; a streaming method
inside a batch gets an error entry (a batch has one JSON answer, a stream cannot fit in it).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..auth.caller import scope_failure
from ..protocol import errors as e
from ..protocol import jsonrpc as rpc
from ..protocol.card import JSONRPC
from ..protocol.encoded import EVENTS
from ..protocol.logcontext import library_logger
from ..protocol.operations import OPERATIONS_BY_METHOD, V03_METHODS, Operation
from ..protocol.requests import StreamResponse
from ..protocol.versions import V03
from .context import CallContext
from .handler import RequestHandler
from .http import (
    CURRENT_REQUEST,
    Answer,
    call_context,
    header_map,
    json_bytes,
    read_json,
    result_json,
    service_headers,
    sse_error_response,
    sse_response,
    validate,
)
from .limits import check_raw_message
from .tasks import StreamItem

log = library_logger("simple_a2a.server")


def _v03() -> Any:
    from ..protocol import v03

    return v03


class JSONRPCBinding:
    """Serves one agent over JSON-RPC; :meth:`endpoint` is the Starlette route endpoint."""

    def __init__(self, handler: RequestHandler, *, max_body: int) -> None:
        self.handler = handler
        self.max_body = max_body
        self.keep_sent = handler.storage.tasks.takes_answer_json  # (http.result_json)

    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The endpoint as a plain ASGI app (``POST`` only; what :class:`A2AServer` calls)."""
        response = await self.endpoint(Request(scope, receive))
        await response(scope, receive, send)

    async def endpoint(self, request: Request) -> ASGIApp:
        """Every answer but a stream is ``application/json`` (§9.1; 0.3 §3.2.1: MUST), whatever
        the client's ``Accept``: ``application/a2a+json`` is the HTTP+JSON binding's (§14.1.1),
        and every peer's JSON-RPC server answers ``application/json`` (docs/interop.md)."""
        refused = scope_failure(request.scope)  # the auth middleware's verdict (docs/auth.md)
        if refused is not None:  # refused before a large body is read or parsed (#16 item 8)
            request_id = await _small_body_id(request)
            failure = rpc.failure(request_id, refused)
            return self._json(failure, None, _status(refused))
        limits = self.handler.limits
        try:
            payload = await read_json(
                request, self.max_body, offload_bytes=limits.offload_validation_bytes
            )
        except e.A2AError as err:
            return self._json(rpc.failure(None, err), None, err.http_status)
        if isinstance(payload, list):
            return await self._batch(request, payload)
        return await self._single(request, payload)

    async def _single(self, request: Request, payload: Any) -> ASGIApp:
        request_id = rpc.request_id_of(payload)
        call: CallContext | None = None
        req: rpc.JSONRPCRequest | None = None
        try:
            req = rpc.parse_request(payload)
            op = _operation(req)
            call = call_context(
                request, self.handler.card, is_v03_name=req.method in V03_METHODS, binding=JSONRPC
            )
            if op.streaming:
                return await self._streaming(request, op, req, call)
            result = await self._call(op, req.params, call)
            if req.is_notification:
                return Answer(status_code=204, headers=service_headers(call))
            return Answer(_framed(req.id, result), headers=service_headers(call))
        except e.A2AError as err:
            if req is not None and req.is_notification and _status(err) == 200:
                return Answer(status_code=204, headers=service_headers(call))  # JSON-RPC §4.1
            return self._json(rpc.failure(request_id, err), call, _status(err))
        except Exception:
            log.exception("internal error in JSON-RPC request")
            if req is not None and req.is_notification:
                return Answer(status_code=204, headers=service_headers(call))
            return self._json(rpc.failure(request_id, e.InternalError()), call, 500)

    async def _streaming(
        self, request: Request, op: Operation, req: rpc.JSONRPCRequest, call: CallContext
    ) -> ASGIApp:
        """A streaming method answers text/event-stream once its stream has started.

        An error known before that (an unknown or finished task, a capability refusal, invalid
        params) is, in 1.0, a plain JSON-RPC error response, as for a unary call: clients type
        it like any error (the JS SDK raises an untyped error for an SSE error event; issue 15
        item 7; 1.0 §9.4.2 shows only the stream of results). In 0.3 it is an SSE stream of one
        event, that JSON-RPC error response: 0.3 §3.3.1 and §6.11 say a streaming method answers
        an SSE stream whose every event is a JSON-RPC response, and the official 0.3.26 client
        reads nothing else (issue #33). Failures after the first event are SSE error events.
        """
        headers = service_headers(call)
        try:
            offload = self.handler.limits.offload_validation_bytes
            parsed = await validate(request, offload, self._parse, op, req.params, call)
            items = await self.handler.handle(op.name, parsed, call)
        except e.A2AError as err:
            failure = rpc.failure(req.id, err)
            if call.version == V03 and _status(err) == 200:
                return sse_error_response(json_bytes(failure), headers)
            return self._json(failure, call, _status(err))
        return sse_response(items, self._renderer(op, req.id, call), headers)

    async def _call(self, op: Operation, params: dict[str, Any], call: CallContext) -> bytes:
        limits = self.handler.limits
        offload = limits.offload_validation_bytes
        request = await validate(CURRENT_REQUEST.get(), offload, self._parse, op, params, call)
        result = await self.handler.handle(op.name, request, call)
        if call.version == V03:
            return json_bytes(_v03().result_to_v03(op.name, result.to_dict()))
        return result_json(op.name, result, keep_sent=self.keep_sent)

    def _parse(self, op: Operation, params: dict[str, Any], call: CallContext) -> Any:
        check_raw_message(self.handler.limits, params, "params.")
        if call.version == V03:
            params = _v03().request_from_v03(op.name, params)
        return op.request_type.from_dict(params, field_prefix="params")

    @staticmethod
    def _renderer(op: Operation, request_id: rpc.RequestId, call: CallContext) -> Any:
        prefix, tail = rpc.result_frame(request_id)
        if call.version == V03:
            convert = _v03().result_to_v03

            def render_v03(item: StreamItem) -> bytes:
                assert item.event is not None
                return prefix + json_bytes(convert(op.name, item.event.to_dict())) + tail

            return render_v03

        def render(item: StreamItem) -> bytes:
            event: StreamResponse | None = item.event
            assert event is not None
            return prefix + EVENTS.get(event) + tail

        return render

    async def _batch(self, request: Request, payload: list[Any]) -> ASGIApp:
        limits = self.handler.limits
        err: e.A2AError
        if not payload:
            err = e.InvalidRequestError("an empty batch is not a valid request")
            return self._json(rpc.failure(None, err), None, 200)
        if len(payload) > limits.max_batch_entries:  # refused whole, nothing run (#16 item 1)
            err = limits.refuse("max_batch_entries", len(payload))
            return self._json(rpc.failure(None, err), None, 200)
        answers: list[bytes] = []
        size = 2  # the brackets
        for item in payload:
            answer: bytes | None
            if size > limits.max_batch_answer_bytes:  # the entries left are refused, not run
                if isinstance(item, dict) and "id" not in item:
                    continue  # a notification is never answered
                refusal: e.A2AError = limits.refuse("max_batch_answer_bytes", size)
                answer = json_bytes(rpc.failure(rpc.request_id_of(item), refusal))
            else:
                answer = await self._batch_entry(request, item)
                await asyncio.sleep(0)  # other connections are served between entries
            if answer is not None:
                size += len(answer) + 1
                answers.append(answer)
        if not answers:
            return Answer(status_code=204)
        return Answer(b"[" + b",".join(answers) + b"]")

    async def _batch_entry(self, request: Request, item: Any) -> bytes | None:
        """One entry's answer; ``None`` for a notification, which is never answered."""
        request_id = rpc.request_id_of(item)
        req: rpc.JSONRPCRequest | None = None
        try:
            req = rpc.parse_request(item)
            op = _operation(req)
            if op.streaming:
                raise e.InvalidRequestError(
                    f"{req.method} streams its answer and cannot be part of a batch"
                )
            call = call_context(
                request, self.handler.card, is_v03_name=req.method in V03_METHODS, binding=JSONRPC
            )
            result = await self._call(op, req.params, call)
            if req.is_notification:
                return None
            return _framed(req.id, result)
        except e.A2AError as err:
            failure = rpc.failure(request_id, err)
        except Exception:
            log.exception("internal error in JSON-RPC batch entry")
            failure = rpc.failure(request_id, e.InternalError())
        return None if req is not None and req.is_notification else json_bytes(failure)

    @staticmethod
    def _json(obj: Any, call: CallContext | None, status: int) -> ASGIApp:
        return Answer(json_bytes(obj), status_code=status, headers=service_headers(call))


def _operation(req: rpc.JSONRPCRequest) -> Operation:
    op = OPERATIONS_BY_METHOD.get(req.method)
    if op is None:
        raise e.MethodNotFoundError(f"Method not found: {req.method!r}")
    return op


#: a refused request's body is read only up to this size, to answer with its id
_REFUSAL_PEEK = 4096


async def _small_body_id(request: Request) -> rpc.RequestId:
    """The id of a small single request, so a refusal can carry it; ``None`` otherwise: an
    unauthenticated caller never makes us read or parse a large body."""
    declared = header_map(request).get("content-length", "")
    if not declared.isdigit() or int(declared) > _REFUSAL_PEEK:
        return None
    try:
        payload = await read_json(request, _REFUSAL_PEEK)
    except e.A2AError:
        return None
    return rpc.request_id_of(payload) if isinstance(payload, dict) else None


def _framed(request_id: rpc.RequestId, result: bytes) -> bytes:
    head, tail = rpc.result_frame(request_id)
    return head + result + tail


def _status(err: e.A2AError) -> int:
    """JSON-RPC errors travel in HTTP 200, except refusals at the HTTP level: authentication
    (401/403, spec §7.4) and oversized bodies (413)."""
    return err.http_status if err.http_status in (401, 403, 413) else 200
