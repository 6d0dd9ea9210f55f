"""The inspector's backend: a small Starlette app that serves the page and runs A2A for it.

Why a backend rather than A2A spoken from the browser: the page then works against *any*
agent — one that sends no CORS headers, one that speaks 0.3, JSON-RPC or HTTP+JSON — through
our own client (the same discovery, negotiation and reconnection users get), and the wire
view records the real exchange between client and agent, which a browser's ``fetch`` cannot
fully see (it hides headers and cannot set ``Last-Event-ID`` on a resumed stream).

Safety (the inspector is a development tool):

- the API answers only requests that carry ``X-A2A-Inspector: 1``; a form or a plain link on
  another site cannot set it, and a script on another origin needs a CORS preflight we never
  grant, so other pages cannot drive the inspector;
- ``allowed_hosts`` (the ``inspect`` command: loopback names) rejects a foreign ``Host``
  header (DNS rebinding);
- every answer carries a strict Content-Security-Policy (only our own files, no inline script,
  no framing) and ``nosniff``; the page keeps nothing in storage or cookies;
- credentials given to the ``inspect`` command stay in this process: the wire view shows
  ``[redacted]`` in their place.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .session import Session, error_json

__all__ = ["CSP", "inspector_app"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "inspector.js": ("inspector.js", "text/javascript; charset=utf-8"),
    "inspector.css": ("inspector.css", "text/css; charset=utf-8"),
}
#: Most sessions one inspector keeps (one per agent URL; the oldest is closed beyond this).
MAX_SESSIONS = 8
MAX_BODY = 16 * 1024 * 1024  #: the largest message (files included) the page may send
#: Most timelines (streams to the agent) one inspector follows at once; beyond, the page is told.
MAX_STREAMS = 16

Handler = Callable[[Request, Session], Awaitable[Any]]


def _static(name: str) -> bytes:
    return resources.files("simple_a2a.inspector").joinpath("static").joinpath(name).read_bytes()


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=SECURITY_HEADERS)


def inspector_app(
    target: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    bearer_token: str | None = None,
    api_key: str | None = None,
    bindings: Sequence[str] | None = None,
    allowed_hosts: Collection[str] | None = None,
    timeout: float = 30.0,
) -> Starlette:
    """The inspector for the agent at ``target`` (a base URL or a card URL).

    With ``target=None`` the inspector is mounted inside an agent (``server(...,
    inspector=True)``) and inspects that agent: its URL is where the inspector is mounted,
    one path segment up. ``headers``, ``bearer_token`` and ``api_key`` go to the agent as
    :class:`AsyncClient` sends them, and are never shown to the page. ``bindings``: the
    bindings the client may choose, in order of preference (default: the card's order).
    ``allowed_hosts``: the ``Host`` names the app answers (``None``: any).
    """
    sessions: dict[str, Session] = {}

    def agent_url(request: Request) -> str:
        if target is not None:
            return target
        # root_path is where the inspector is mounted (…/inspector); the agent is one level up.
        mounted = request.url.replace(path=request.scope.get("root_path", ""), query="")
        return str(mounted).rstrip("/").rsplit("/", 1)[0]

    async def session_for(request: Request) -> Session:
        url = agent_url(request)
        if url not in sessions:
            if len(sessions) >= MAX_SESSIONS:
                await sessions.pop(next(iter(sessions))).aclose()
            sessions[url] = Session(
                url,
                headers=headers,
                bearer_token=bearer_token,
                api_key=api_key,
                bindings=bindings,
                timeout=timeout,
            )
        return sessions[url]

    def refused(request: Request) -> Response | None:
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if allowed_hosts is not None and host not in allowed_hosts:
            return _json({"error": {"type": "Forbidden", "message": "unknown Host"}}, 403)
        return None

    async def page(request: Request) -> Response:
        if (no := refused(request)) is not None:
            return no
        entry = STATIC.get(request.path_params.get("name", ""))
        if entry is None:
            return _json({"error": {"type": "NotFound", "message": "no such file"}}, 404)
        name, media_type = entry
        return Response(_static(name), media_type=media_type, headers=SECURITY_HEADERS)

    def api(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if (no := refused(request)) is not None:
                return no
            if request.headers.get("x-a2a-inspector") != "1":
                message = "the inspector's API answers only its own page (X-A2A-Inspector)"
                return _json({"error": {"type": "Forbidden", "message": message}}, 403)
            try:
                result = await handler(request, await session_for(request))
            except Exception as exc:  # the agent's error, shown on the page, no traceback
                return _json({"error": error_json(exc)}, 502)
            if isinstance(result, Response):
                return result
            return _json(result)

        return endpoint

    async def body(request: Request) -> dict[str, Any]:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ValueError(f"the message is larger than {MAX_BODY} bytes")
        data = json.loads(raw or b"{}")
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return data

    following = [0]  # timelines open now (counted while they run, so none can leak)

    def timeline(events: AsyncIterator[dict[str, Any]]) -> StreamingResponse:
        async def lines() -> AsyncIterator[bytes]:
            if following[0] >= MAX_STREAMS:
                message = f"{MAX_STREAMS} streams are open already: close one and try again"
                error = {"type": "TooManyStreams", "message": message}
                yield json.dumps({"kind": "error", "error": error}).encode() + b"\n"
                yield json.dumps({"kind": "end"}).encode() + b"\n"
                return
            following[0] += 1
            try:
                async for entry in events:
                    yield json.dumps(entry).encode() + b"\n"
            finally:
                following[0] -= 1

        return StreamingResponse(
            lines(), media_type="application/x-ndjson", headers=SECURITY_HEADERS
        )

    async def card(request: Request, session: Session) -> Any:
        return await session.card()

    async def send(request: Request, session: Session) -> Any:
        data = await body(request)
        parts = data.get("parts") or []
        if not isinstance(parts, list) or not parts:
            raise ValueError("a message needs at least one part")
        task_id, context_id = data.get("taskId"), data.get("contextId")
        if data.get("stream"):
            return timeline(session.stream(parts, task_id=task_id, context_id=context_id))
        return await session.send(
            parts,
            task_id=task_id,
            context_id=context_id,
            return_immediately=bool(data.get("returnImmediately")),
        )

    async def subscribe(request: Request, session: Session) -> Any:
        return timeline(session.subscribe(request.path_params["id"]))

    async def get_task(request: Request, session: Session) -> Any:
        return await session.get(request.path_params["id"])

    async def cancel(request: Request, session: Session) -> Any:
        return await session.cancel(request.path_params["id"])

    async def push(request: Request, session: Session) -> Any:
        return await session.push_configs(request.path_params["id"])

    async def list_tasks(request: Request, session: Session) -> Any:
        q = request.query_params
        size = q.get("pageSize")
        return await session.list(
            context_id=q.get("contextId"),
            status=q.get("status"),
            page_size=int(size) if size else None,
            page_token=q.get("pageToken"),
        )

    async def wire(request: Request, session: Session) -> Any:
        after = int(request.query_params.get("after") or 0)
        return {"exchanges": session.wire.since(after)}

    async def clear_wire(request: Request, session: Session) -> Any:
        session.wire.clear()
        return {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for session in sessions.values():
            await session.aclose()
        sessions.clear()

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/", page),
            Route("/static/{name}", page),
            Route("/api/card", api(card)),
            Route("/api/send", api(send), methods=["POST"]),
            Route("/api/tasks", api(list_tasks)),
            Route("/api/tasks/{id}", api(get_task)),
            Route("/api/tasks/{id}/cancel", api(cancel), methods=["POST"]),
            Route("/api/tasks/{id}/subscribe", api(subscribe), methods=["POST"]),
            Route("/api/tasks/{id}/push", api(push)),
            Route("/api/wire", api(wire)),
            Route("/api/wire/clear", api(clear_wire), methods=["POST"]),
        ],
    )
