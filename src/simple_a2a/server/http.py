"""HTTP plumbing shared by the HTTP bindings (JSON-RPC and HTTP+JSON): body limits, service
parameters (spec §3.2.6: A2A-Version, A2A-Extensions), content types, SSE responses."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import math
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pydantic_core
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..auth.caller import scope_caller, scope_failure
from ..protocol import errors as e
from ..protocol import sse
from ..protocol.asgi import route_path as route_path  # one rule for the whole stack
from ..protocol.card import AgentCard
from ..protocol.encoded import TASKS
from ..protocol.extensions import activate_extensions, split_list
from ..protocol.logcontext import library_logger
from ..protocol.versions import HEADER as VERSION_HEADER
from ..protocol.versions import negotiate
from .context import CallContext
from .tasks import StreamItem

if TYPE_CHECKING:
    pass

log = library_logger("simple_a2a.server")
T = TypeVar("T")

#: The HTTP request being served (set by :func:`call_context`), for what needs its URL.
CURRENT_REQUEST: contextvars.ContextVar[Request] = contextvars.ContextVar("a2a_http_request")

A2A_JSON = "application/a2a+json"
JSON = "application/json"
DEFAULT_MAX_BODY = 10 * 1024 * 1024


class BodyTooLarge(e.InvalidRequestError):
    http_status = 413
    reason = "PAYLOAD_TOO_LARGE"


_HEADERS = "simple_a2a.headers"


def header_map(request: Request) -> dict[str, str]:
    """The request headers as a dict (a repeated header: its first value, as Starlette's
    ``Headers.get``), built once per request: ``Headers.get`` scans the raw list on every call.
    """
    scope = request.scope
    raw = scope["headers"]
    cached = scope.get(_HEADERS)
    if cached is not None and cached[0] is raw:
        return cached[1]  # type: ignore[no-any-return]
    headers: dict[str, str] = {}
    for key, value in raw:
        name = key.decode("latin-1")  # ASGI header names arrive lower-cased
        if name not in headers:
            headers[name] = value.decode("latin-1")
    scope[_HEADERS] = (raw, headers)
    return headers


async def read_body(request: Request, limit: int, declared: str | None) -> bytes:
    """The request body, refusing more than ``limit`` bytes before reading them all
    (``declared``: its Content-Length header, if any)."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    # ASGI messages read straight from ``receive`` (Starlette's ``Request.stream()`` is an async
    # generator per request); nothing else reads this request's body.
    chunks: list[bytes] = []
    size = 0
    receive = request.receive
    while True:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect: the client is gone
            raise e.InvalidRequestError("the client disconnected before sending its request")
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(f"request body exceeds the limit of {limit} bytes")
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    request.scope[_BODY_SIZE] = len(body)
    return body


_BODY_SIZE = "simple_a2a.body_size"
#: A JSON number is parsed as a float of infinity (not JSON; #16 item 4) only if its exponent has
#: three digits or more (``1e400``) or, with a shorter one (at most ``e99``), its integer part has
#: at least 210 digits (``1000...0.0``: 10**309 overflows). Such a literal must start where a
#: value can (after ``:``, ``,`` or ``[``; a bare value is checked whatever it is), so the hex of
#: an id (``"...-4e123..."``) does not send every such request through the walk of ``_finite``.
_MAY_OVERFLOW = re.compile(rb"[:,\[]\s*-?(?:\d+(?:\.\d+)?[eE]\+?\d{3}|\d{200})")
#: The regular expression scans a 100-byte body in ~1.5 us, more than the parse itself; most
#: bodies have neither an ``e`` followed by three digits nor a run of 200 digits anywhere, which
#: a byte translation and a substring search (C, ~0.7 us) tell first.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_LONG_RUN = b"0" * 200


def _may_overflow(body: bytes) -> bool:
    shape = body.translate(_DIGITS_AS_ZERO)
    exponent = b"e000" in shape or b"e+000" in shape
    if not exponent and (len(body) < 200 or _LONG_RUN not in shape):
        return False
    return _MAY_OVERFLOW.search(body) is not None


def _parse_json(body: bytes) -> Any:
    try:
        value = pydantic_core.from_json(body, allow_inf_nan=False)  # NaN, Infinity: refused
    except ValueError as exc:
        raise e.JSONParseError(f"Invalid JSON payload: {exc}") from None
    bare = not isinstance(value, (dict, list))
    if (bare or _may_overflow(body)) and not _finite(value):
        raise e.JSONParseError("Invalid JSON payload: a number is out of range (#16 item 4)")
    return value


def _finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


async def read_json(
    request: Request, limit: int, *, allow_empty: bool = False, offload_bytes: int | None = None
) -> Any:
    """The JSON body (content type checked, size limited); ``None`` for an allowed empty body.

    A body above ``offload_bytes`` is parsed in a worker thread, so one large request does not
    stall every other connection (#16 item 3)."""
    headers = header_map(request)
    check_content_type(headers.get("content-type", ""))
    body = await read_body(request, limit, headers.get("content-length"))
    if allow_empty and not body.strip():
        return None
    if offload_bytes is not None and len(body) > offload_bytes:
        return await asyncio.to_thread(_parse_json, body)
    return _parse_json(body)


async def validate(request: Request, offload_bytes: int, parse: Callable[..., T], *args: Any) -> T:
    """``parse(*args)`` (a model validation), in a worker thread when the body was large."""
    if request.scope.get(_BODY_SIZE, 0) > offload_bytes:
        return await asyncio.to_thread(parse, *args)
    return parse(*args)


_PLAIN_JSON = frozenset((JSON, A2A_JSON, "", "application/json; charset=utf-8"))


def response_media_type(request: Request) -> str:
    """``application/json`` unless the client asked for ``application/a2a+json`` (PRODUCT §3)."""
    return A2A_JSON if A2A_JSON in header_map(request).get("accept", "") else JSON


def check_content_type(given: str) -> None:
    """Refuse a request body whose Content-Type header (``given``) is not JSON."""
    if given in _PLAIN_JSON:  # the usual spellings, without splitting and lower-casing
        return
    ctype = given.split(";")[0].strip().lower()
    if ctype and ctype not in (JSON, A2A_JSON) and not ctype.endswith("+json"):
        raise e.InvalidRequestError(
            f"Content-Type {ctype!r} is not supported; send application/json or {A2A_JSON}"
        )


_VERSION_KEY = VERSION_HEADER.lower()  # ASGI header names arrive lower-cased
_EXTENSION_HEADERS = ("a2a-extensions", "x-a2a-extensions")


def call_context(
    request: Request,
    card: AgentCard,
    *,
    is_v03_name: bool,
    tenant: str | None = None,
    binding: str = "",
) -> CallContext:
    """Service parameters of a request (spec §3.2.6), checked against the card (spec §3.3.4).
    Raises the refusal of the auth middleware, if any (docs/auth.md)."""
    failure = scope_failure(request.scope)
    if failure is not None:
        raise failure
    CURRENT_REQUEST.set(request)
    headers = dict(header_map(request))  # a copy: the executor may change its own
    requested = headers.get(_VERSION_KEY)
    if not requested and request.scope.get("query_string"):  # (no QueryParams otherwise)
        requested = request.query_params.get(VERSION_HEADER)
    version = negotiate(requested, is_v03_name=is_v03_name)
    # (most requests carry neither header: no comprehension, no parse for them)
    extensions = (
        [
            uri
            for name in _EXTENSION_HEADERS
            if name in headers
            for value in request.headers.getlist(name)  # repeated headers combine (RFC 9110 §5.3)
            for uri in split_list(value)
        ]
        if not headers.keys().isdisjoint(_EXTENSION_HEADERS)
        else []
    )
    activated = activate_extensions(card, extensions, carrier="A2A-Extensions header")
    last_event_id = None
    if "last-event-id" in headers:
        try:
            last_event_id = sse.parse_last_event_id(headers["last-event-id"])
        except ValueError as exc:
            raise e.InvalidParamsError(str(exc), field="Last-Event-ID") from None
    return CallContext(
        caller=scope_caller(request.scope),
        tenant=tenant,
        extensions=extensions,
        version=version,
        headers=headers,
        activated_extensions=activated,
        last_event_id=last_event_id,
        binding=binding,
    )


def service_headers(call: CallContext | None) -> dict[str, str]:
    headers = {VERSION_HEADER: call.version if call else "1.0"}
    if call and call.activated_extensions:
        headers["A2A-Extensions"] = ", ".join(call.activated_extensions)
    return headers


#: The asyncio tasks sending an SSE body now, and those of them that ``close_streams`` ends.
_STREAMING: set[asyncio.Task[Any]] = set()
_CLOSING: set[asyncio.Task[Any]] = set()


def close_streams() -> int:
    """End every SSE stream this event loop is sending, cleanly: the response ends as if the
    events ran out (a client resumes elsewhere with ``Last-Event-ID``; ours does). Called when
    the server stops, before uvicorn waits for open responses (an SSE stream never ends by
    itself). Returns how many streams were closed."""
    loop = asyncio.get_running_loop()
    closing = [task for task in _STREAMING if task.get_loop() is loop and not task.done()]
    for task in closing:
        _CLOSING.add(task)
        task.cancel()
    return len(closing)


def sse_response(
    items: AsyncIterator[StreamItem],
    render: Callable[[StreamItem], bytes],
    headers: dict[str, str],
) -> EventStream:
    """An SSE stream: one event per item, ``id:`` = sequence number, comments as keep-alive."""
    return EventStream(items, render, headers)


#: The headers of every SSE response (the content type as Starlette spelled it, as before).
_SSE_HEADERS = (
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", f"{sse.CONTENT_TYPE}; charset=utf-8".encode()),
)


class EventStream:
    """An SSE response: the start, then a body message per item, sent from the request's task.

    What Starlette's ``StreamingResponse`` did, with less machinery (issue #36): under uvicorn
    (ASGI spec 2.3) it ran the body in a second task of an anyio task group, with a cancel
    scope, the request's task listening for the disconnect, and one more async generator
    layer per chunk. Here the body runs in the request's task and a small task waits for
    ``http.disconnect`` (uvicorn ignores sends to a closed connection, so without it a stream
    whose task is idle would stay open until the task ends); when it comes, the body is
    cancelled and the response ends quietly, as :func:`close_streams` ends it."""

    __slots__ = ("items", "raw_headers", "render")

    def __init__(
        self,
        items: AsyncIterator[StreamItem],
        render: Callable[[StreamItem], bytes],
        headers: Mapping[str, str],
    ) -> None:
        self.items = items
        self.render = render
        self.raw_headers = [*_SSE_HEADERS, *map(_raw_header, headers.keys(), headers.values())]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        me = asyncio.current_task()
        assert me is not None
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        watcher = asyncio.ensure_future(_until_disconnect(receive))
        watcher.add_done_callback(functools.partial(_client_gone, me))
        _STREAMING.add(me)
        render = self.render
        frame = sse.frame
        try:
            async for item in self.items:
                event = item.event
                body = sse.KEEPALIVE if event is None else frame(render(item), item.seq)
                await send({"type": "http.response.body", "body": body, "more_body": True})
        except asyncio.CancelledError:
            if me not in _CLOSING:
                raise
            if hasattr(me, "uncancel"):  # Python 3.11+: this cancellation is handled
                me.uncancel()
        except e.A2AError:
            raise
        except Exception:
            log.exception("stream failed")
        finally:
            _STREAMING.discard(me)
            _CLOSING.discard(me)
            watcher.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _client_gone(stream: asyncio.Task[Any], watcher: asyncio.Future[None]) -> None:
    """The disconnect watcher ended: if the client left while its stream is still sending,
    end the stream (the body is cancelled, and handled as a close)."""
    if watcher.cancelled():
        return
    watcher.exception()  # (retrieved: a receive that failed means the client is gone too)
    if stream in _STREAMING:
        _CLOSING.add(stream)
        stream.cancel()


def sse_error_response(error: bytes, headers: dict[str, str]) -> Response:
    """An SSE stream of one event, ``error`` (a JSON-RPC error response), then its end: how
    0.3 answers a streaming method that fails before its first event (``jsonrpc.py``)."""
    return Response(
        sse.frame(error),
        media_type=sse.CONTENT_TYPE,
        headers={"Cache-Control": "no-cache", **headers},
    )


_MEDIA_TYPES = {JSON: JSON.encode(), A2A_JSON: A2A_JSON.encode()}
_NO_BODY = (204, 304)


@functools.lru_cache(maxsize=128)  # mostly the same few (A2A-Version: 1.0, ...)
def _raw_header(name: str, value: str) -> tuple[bytes, bytes]:
    return name.lower().encode("latin-1"), value.encode("latin-1")


class Answer:
    """A whole response in one body message: every answer of the bindings but a stream.

    What Starlette's ``Response`` sends, without its per-request work (header objects, a
    background-task hook): ~10 us of every request on the hot path (issue #19). Header names are
    given as the spec spells them and sent lower-cased, as HTTP/2 and ASGI want them.
    """

    __slots__ = ("body", "raw_headers", "status_code")

    def __init__(
        self,
        body: bytes = b"",
        status_code: int = 200,
        media_type: str | None = JSON,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        raw: list[tuple[bytes, bytes]] = []
        if status_code not in _NO_BODY:
            raw.append((b"content-length", b"%d" % len(body)))
            if media_type is not None:
                raw.append((b"content-type", _MEDIA_TYPES.get(media_type) or media_type.encode()))
        if headers:  # (map: no Python frame per header, as a comprehension's would be)
            raw += map(_raw_header, headers.keys(), headers.values())
        self.body = body
        self.status_code = status_code
        self.raw_headers = raw

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        start["headers"] = self.raw_headers
        await send(start)
        await send({"type": "http.response.body", "body": self.body})


def result_json(operation: str, result: Any, *, keep_sent: bool = False) -> bytes:
    """The JSON of an operation's 1.0 result. A GetTask answer is encoded once per snapshot
    (``protocol/encoded.py``): a client polling an unchanged task gets the previous poll's
    bytes. With ``keep_sent`` (the store's ``takes_answer_json``: the memory store) a
    SendMessage answer's task bytes are kept too, for the store to take when it cools the task
    rather than encode it again; other stores would only hold them for nothing."""
    if operation == "GetTask":
        return TASKS.get(result)
    if keep_sent and operation == "SendMessage" and result.task is not None:
        # SendMessageResponse's JSON: its one set field (the oneof), the task's bytes inside
        return b'{"task":%b}' % TASKS.get(result.task)
    return bytes(result.to_json())


def json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
