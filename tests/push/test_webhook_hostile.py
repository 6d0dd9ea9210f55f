"""The webhook receiver against hostile senders (issue #16, items 19-20), over real HTTP.

A body of hundreds of megabytes is refused while reading (and not read at all without the
token), junk requests do not each trigger a JWKS fetch while the agent's JWKS is down, and a
notification signed for another receiver is refused by default.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from simple_a2a.protocol.models import TaskState, TaskStatusUpdateEvent, status_now
from simple_a2a.protocol.push import JWKS_PATH, SIGNATURE_HEADER
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server.push import SigningKeys
from simple_a2a.webhooks import NotificationVerifier, webhook_app

MiB = 1024 * 1024
BODY = StreamResponse(
    status_update=TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=status_now(TaskState.WORKING)
    )
).to_json()


class Counted:
    """A request body of ``total`` bytes that counts what the client managed to send."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        while self.sent < self.total:
            self.sent += MiB
            yield b"x" * MiB


def post_huge(url: str, headers: dict[str, str], body: Counted) -> int | None:
    """The status, or None when the receiver hung up on the rest of the body."""
    try:
        return httpx.post(url, content=iter(body), headers=headers, timeout=30).status_code
    except httpx.TransportError:
        return None


class Consumed:
    """ASGI middleware counting the body bytes the app itself read (what it could buffer)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bytes = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def counted() -> Any:
            message = await receive()
            self.bytes += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


def receiver(serve: Any, verifier: NotificationVerifier) -> tuple[str, list[Any]]:
    hook, got, _ = counted_receiver(serve, verifier)
    return hook, got


def counted_receiver(serve: Any, verifier: NotificationVerifier) -> tuple[str, list[Any], Consumed]:
    got: list[Any] = []
    app = Consumed(webhook_app(got.append, verifier, path="/hook"))
    return serve(app) + "/hook", got, app


def test_without_the_token_the_body_is_not_read(serve: Any) -> None:
    hook, got, app = counted_receiver(serve, NotificationVerifier(token="tok"))
    status = post_huge(hook, {"A2A-Notification-Token": "wrong"}, Counted(300 * MiB))
    assert status in (401, None) and got == []
    assert app.bytes == 0


def test_a_huge_body_is_refused_while_reading(serve: Any) -> None:
    verifier = NotificationVerifier(token="tok")  # default cap: 1 MiB
    hook, got, app = counted_receiver(serve, verifier)
    status = post_huge(hook, {"A2A-Notification-Token": "tok"}, Counted(300 * MiB))
    assert status in (413, None) and got == []
    assert app.bytes <= verifier.max_body_bytes + 2 * MiB  # the cap and one chunk, not 300 MB


def test_an_announced_huge_body_is_refused_before_reading(serve: Any) -> None:
    hook, got = receiver(serve, NotificationVerifier(token="tok"))
    parts = urlsplit(hook)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        head = (
            f"POST /hook HTTP/1.1\r\nHost: {parts.netloc}\r\nA2A-Notification-Token: tok\r\n"
            f"Content-Type: application/json\r\nContent-Length: {300 * MiB}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"{")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413")
    assert got == []


def test_a_notification_within_the_cap_still_arrives(serve: Any) -> None:
    hook, got = receiver(serve, NotificationVerifier(token="tok", max_body_bytes=len(BODY)))
    assert httpx.post(hook, content=BODY, headers={"A2A-Notification-Token": "tok"}).is_success
    assert len(got) == 1


def test_jwks_fetches_back_off_while_the_jwks_is_down(serve: Any) -> None:
    fetches: list[int] = []

    async def broken_jwks(request: Request) -> JSONResponse:
        fetches.append(1)
        return JSONResponse({"error": "down"}, status_code=500)

    agent = serve(Starlette(routes=[Route(JWKS_PATH, broken_jwks)]))
    verifier = NotificationVerifier(agent_url=agent, jwks_backoff=60)
    hook, got = receiver(serve, verifier)
    junk = {SIGNATURE_HEADER: SigningKeys.generate().sign(BODY, task_id="t1", audience=hook)}
    statuses = [httpx.post(hook, content=BODY, headers=junk).status_code for _ in range(20)]
    assert statuses == [503] * 20 and got == []
    assert len(fetches) == 1  # not one fetch per junk request


@pytest.fixture(scope="module")
def keys() -> SigningKeys:
    return SigningKeys.generate()


def agent_with(serve: Any, keys: SigningKeys) -> str:
    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse(keys.jwks())

    return str(serve(Starlette(routes=[Route(JWKS_PATH, jwks)])))


def test_the_audience_is_the_receivers_url_by_default(serve: Any, keys: SigningKeys) -> None:
    agent = agent_with(serve, keys)
    hook_a, got_a = receiver(serve, NotificationVerifier(agent_url=agent))
    hook_b, got_b = receiver(serve, NotificationVerifier(agent_url=agent))
    for_a = {SIGNATURE_HEADER: keys.sign(BODY, task_id="t1", audience=hook_a)}
    refused = httpx.post(hook_b, content=BODY, headers=for_a)
    assert refused.status_code == 401 and "audience" in refused.json()["error"].lower()
    assert httpx.post(hook_a, content=BODY, headers=for_a).is_success
    assert len(got_a) == 1 and got_b == []


def test_an_explicit_audience_wins(serve: Any, keys: SigningKeys) -> None:
    agent = agent_with(serve, keys)
    public = "https://hooks.example/a2a"  # the URL the agent was given, behind a proxy
    hook, got = receiver(serve, NotificationVerifier(agent_url=agent, audience=public))
    ok = {SIGNATURE_HEADER: keys.sign(BODY, task_id="t1", audience=public)}
    assert httpx.post(hook, content=BODY, headers=ok).is_success
    other = {SIGNATURE_HEADER: keys.sign(BODY, task_id="t1", audience=hook)}
    assert httpx.post(hook, content=BODY, headers=other).status_code == 401
    assert len(got) == 1
