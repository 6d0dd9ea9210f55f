"""The one router of an agent (server/routing.py), over real HTTP on loopback.

Fixed paths (JSON-RPC, the card, the JWKS, metrics) are served with or without a trailing slash
and never redirect; a method a fixed path does not serve is a 405 in the HTTP+JSON error format
(spec §11.6) with ``Allow``; every other path is the HTTP+JSON binding's (spec §11.3), which
answers its own 404s; an endpoint that fails answers 500 without its exception text.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import pytest

from simple_a2a import server
from simple_a2a.server.routing import Route, Router, serve_lifespan

from ..conftest import free_port
from ..support.agents import TestAgent, make_card, user

CARD = "/.well-known/agent-card.json"


async def test_fixed_paths_with_and_without_trailing_slash(serve: Any) -> None:
    url = serve(server(make_card(), TestAgent(), metrics_path="/metrics").app)
    async with httpx.AsyncClient(base_url=url) as client:
        for path in (CARD, CARD + "/", "/agentCard", "/agentCard/"):
            r = await client.get(path)
            assert r.status_code == 200, path  # served in place: no redirect to follow
            assert r.json()["name"] == make_card().name
        assert (await client.get("/metrics/")).status_code == 200
        head = await client.head(CARD)
        assert head.status_code == 200 and head.content == b""


async def test_wrong_method_at_a_fixed_path_is_405_with_allow(serve: Any) -> None:
    url = serve(server(make_card(), TestAgent()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        r = await client.post(CARD, json={})
        assert r.status_code == 405
        assert r.headers["allow"] == "GET, HEAD"
        error = r.json()["error"]
        assert error["code"] == 405 and error["details"][0]["reason"] == "METHOD_NOT_ALLOWED"
        rpc_get = await client.get("/")
        assert rpc_get.status_code == 405 and rpc_get.headers["allow"] == "POST"
        assert rpc_get.headers["content-type"].startswith("application/json")


async def test_every_other_path_is_the_http_json_binding(serve: Any) -> None:
    url = serve(server(make_card(), TestAgent()).app)
    async with httpx.AsyncClient(base_url=url, headers={"A2A-Version": "1.0"}) as client:
        sent = await client.post("/message:send", json={"message": user("hi")})
        assert sent.status_code == 200
        task_id = sent.json()["task"]["id"]
        assert (await client.get(f"/tasks/{task_id}")).json()["id"] == task_id
        missing = await client.get("/no/such/route")
        assert missing.status_code == 404
        assert "error" in missing.json()  # a google.rpc.Status body, not Starlette's text


async def test_a_failing_endpoint_answers_500_without_a_traceback(serve: Any) -> None:
    secret = "the-secret-detail-of-the-failure"

    async def broken(_request: Any) -> Any:
        raise RuntimeError(secret)

    @contextlib.asynccontextmanager
    async def lifespan() -> Any:
        yield

    router = Router([Route.endpoint("/broken", broken)], _not_found, lifespan)
    url = serve(router)
    async with httpx.AsyncClient(base_url=url) as client:
        r = await client.get("/broken")
    assert r.status_code == 500
    assert secret not in r.text and "Traceback" not in r.text
    assert r.json()["error"]["status"] == "INTERNAL"


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_a_failed_startup_stops_the_server(serve: Any) -> None:
    """Storage that cannot open (nothing listens at the PostgreSQL URL) fails the lifespan
    startup: uvicorn refuses to serve rather than answering every request with an error."""
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    agent = server(make_card(), TestAgent(), storage=dead)
    with pytest.raises(RuntimeError, match="did not start"):
        serve(agent.app)


async def test_lifespan_reports_a_startup_failure() -> None:
    """The ASGI lifespan protocol as the server sees it: ``startup.failed`` with the reason."""

    class Refusing:
        async def __aenter__(self) -> None:
            raise OSError("the database file is read-only")

        async def __aexit__(self, *_: Any) -> None:
            raise AssertionError("never entered, never exited")

    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await serve_lifespan(Refusing, inbox.get, send)  # type: ignore[arg-type]
    assert sent == [
        {"type": "lifespan.startup.failed", "message": "the database file is read-only"}
    ]
