"""Receiving push notifications: verify them, then hand the ``StreamResponse`` to your code.

For webhook receivers (client-side apps). What is checked (see ``docs/push.md``):

- the JWT in ``A2A-Notification-Signature`` against the agent's JWKS (fetched with httpx,
  cached, refetched when a ``kid`` is unknown): signature, algorithm (RS256/ES256), ``exp`` and
  ``iat`` (with ``leeway``), the SHA-256 of the exact body (``request_body_sha256``), the task id,
  optionally ``iss`` and ``aud``;
- replay: a ``jti`` seen before (while its token is valid) is rejected;
- the config's token (``X-A2A-Notification-Token`` or ``A2A-Notification-Token``), when given.

Two ways in: :class:`NotificationVerifier` (async, fetches the JWKS) with
:func:`webhook_endpoint` / :func:`webhook_app` for Starlette/FastAPI, and
:func:`verify_notification`, a plain function over a JWKS document you already have.
Verification needs PyJWT with cryptography (``pip install 'simple-a2a[push]'``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .protocol._base import A2AModel
from .protocol.push import (
    CLAIM_BODY_SHA256,
    CLAIM_TASK_ID,
    JWKS_PATH,
    SIGNATURE_HEADER,
    TOKEN_HEADERS,
)
from .protocol.requests import StreamResponse

ALGORITHMS = ("RS256", "ES256")


class NotificationRejected(Exception):
    """The notification failed verification; ``reason`` says which check."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownKeyError(NotificationRejected):
    """The JWT names a ``kid`` the JWKS does not hold."""


@dataclass(frozen=True)
class Notification:
    """A verified notification: the event, its task id and the JWT claims (empty if unsigned)."""

    event: StreamResponse
    task_id: str | None
    claims: dict[str, Any] = field(default_factory=dict)


class ReplayCache:
    """The ``jti`` values seen, each kept until its token expires (plus leeway)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._seen: dict[str, float] = {}
        self.clock = clock

    def check_and_add(self, jti: str, expires: float) -> None:
        now = self.clock()
        if len(self._seen) > 1024:
            self._seen = {k: v for k, v in self._seen.items() if v > now}
        if jti in self._seen and self._seen[jti] > now:
            raise NotificationRejected(f"replayed notification (jti {jti} seen before)")
        self._seen[jti] = expires


def _jwt() -> Any:
    try:
        import jwt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "verifying signed notifications needs PyJWT and cryptography: "
            "pip install 'simple-a2a[push]'"
        ) from exc
    return jwt


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    return None


def _payload_task_id(event: StreamResponse) -> str | None:
    payload: A2AModel = event.payload
    if event.task is not None:
        return event.task.id
    value = getattr(payload, "task_id", None)
    return value if isinstance(value, str) and value else None


def check_token(headers: Mapping[str, str], expected: str) -> None:
    """The config token, in either header name, compared in constant time."""
    for name in TOKEN_HEADERS:
        got = _header(headers, name)
        if got is not None and hmac.compare_digest(got.encode(), expected.encode()):
            return
    raise NotificationRejected("missing or wrong notification token")


def verify_notification(
    headers: Mapping[str, str],
    body: bytes,
    *,
    jwks: Mapping[str, Any] | None,
    token: str | None = None,
    issuer: str | None = None,
    audience: str | None = None,
    leeway: float = 30.0,
    max_age: float = 600.0,
    replay_cache: ReplayCache | None = None,
) -> Notification:
    """Verify one notification with a JWKS document at hand; raise :class:`NotificationRejected`.

    ``jwks=None`` skips the signature (then pass ``token``: an unsigned notification is only
    as good as its shared secret). Pass a :class:`ReplayCache` shared across calls to reject
    replays.
    """
    if token is not None:
        check_token(headers, token)
    try:
        event = StreamResponse.from_json(body)
    except Exception:
        raise NotificationRejected("the body is not a StreamResponse") from None
    task_id = _payload_task_id(event)
    claims: dict[str, Any] = {}
    if jwks is not None:
        claims = _verify_jwt(headers, body, jwks, issuer, audience, leeway, max_age)
        if claims.get(CLAIM_TASK_ID) != task_id:
            raise NotificationRejected("the token was issued for another task")
        if replay_cache is not None:
            replay_cache.check_and_add(str(claims["jti"]), float(claims["exp"]) + leeway)
    return Notification(event, task_id, claims)


def _verify_jwt(
    headers: Mapping[str, str],
    body: bytes,
    jwks: Mapping[str, Any],
    issuer: str | None,
    audience: str | None,
    leeway: float,
    max_age: float,
) -> dict[str, Any]:
    jwt = _jwt()
    token = _header(headers, SIGNATURE_HEADER)
    if not token:
        raise NotificationRejected(f"missing {SIGNATURE_HEADER} header")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise NotificationRejected(f"malformed token: {exc}") from None
    kid, alg = header.get("kid"), header.get("alg")
    if alg not in ALGORITHMS:
        raise NotificationRejected(f"algorithm {alg!r} not accepted")
    jwk = next((k for k in jwks.get("keys", []) if k.get("kid") == kid), None)
    if jwk is None:
        raise UnknownKeyError(f"unknown signing key {kid!r}")
    try:
        key = jwt.PyJWK.from_dict(dict(jwk)).key
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[alg],
            issuer=issuer,
            audience=audience,
            leeway=leeway,
            options={
                "require": ["exp", "iat", "jti", CLAIM_BODY_SHA256],
                "verify_aud": audience is not None,
            },
        )
    except jwt.ExpiredSignatureError:
        raise NotificationRejected("the token has expired") from None
    except jwt.PyJWTError as exc:
        raise NotificationRejected(f"invalid token: {exc}") from None
    if time.time() - float(claims["iat"]) > max_age + leeway:
        raise NotificationRejected("the token is too old")
    digest = hashlib.sha256(body).hexdigest()
    if not hmac.compare_digest(str(claims[CLAIM_BODY_SHA256]), digest):
        raise NotificationRejected("the body does not match the signed hash")
    return claims


class NotificationVerifier:
    """Verifies notifications of one agent, fetching its JWKS.

    ``jwks_url`` is the agent's JWKS (the card's push-signature extension gives it as
    ``jwksUri``); ``agent_url`` is a shortcut for ``agent_url + "/.well-known/jwks.json"``.
    Neither given means unsigned notifications (then pass ``token``). Never take the JWKS URL
    from the notification itself.
    """

    def __init__(
        self,
        *,
        jwks_url: str | None = None,
        agent_url: str | None = None,
        token: str | None = None,
        issuer: str | None = None,
        audience: str | None = None,
        leeway: float = 30.0,
        max_age: float = 600.0,
        jwks_ttl: float = 300.0,
        min_refetch_interval: float = 5.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if jwks_url is None and agent_url is not None:
            jwks_url = agent_url.rstrip("/") + JWKS_PATH
        if jwks_url is None and token is None:
            raise ValueError("give jwks_url/agent_url (signed notifications) or token (or both)")
        self.jwks_url = jwks_url
        self.token = token
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.max_age = max_age
        self.jwks_ttl = jwks_ttl
        self.min_refetch_interval = min_refetch_interval
        self.replay_cache = ReplayCache()
        self._client = http_client
        self._jwks: dict[str, Any] | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def _fetch(self) -> dict[str, Any]:
        assert self.jwks_url is not None
        async with self._lock:
            if self._client is None:
                async with httpx.AsyncClient(timeout=10) as client:
                    response = await client.get(self.jwks_url)
            else:
                response = await self._client.get(self.jwks_url)
            response.raise_for_status()
            jwks = response.json()
            if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
                raise NotificationRejected("the agent's JWKS is not a JWK set")
            self._jwks, self._fetched_at = jwks, time.monotonic()
            return jwks

    async def jwks(self, *, refresh: bool = False) -> dict[str, Any]:
        stale = time.monotonic() - self._fetched_at > self.jwks_ttl
        if self._jwks is None or stale or refresh:
            return await self._fetch()
        return self._jwks

    async def verify(self, headers: Mapping[str, str], body: bytes) -> Notification:
        """Verify one notification; raise :class:`NotificationRejected`."""
        if self.jwks_url is None:
            return self._verify(headers, body, None)
        try:
            return self._verify(headers, body, await self.jwks())
        except UnknownKeyError:
            # The agent may have rotated its key: refetch (rate-limited) and try once more.
            if time.monotonic() - self._fetched_at < self.min_refetch_interval:
                raise
            return self._verify(headers, body, await self.jwks(refresh=True))

    def _verify(
        self, headers: Mapping[str, str], body: bytes, jwks: Mapping[str, Any] | None
    ) -> Notification:
        return verify_notification(
            headers,
            body,
            jwks=jwks,
            token=self.token,
            issuer=self.issuer,
            audience=self.audience,
            leeway=self.leeway,
            max_age=self.max_age,
            replay_cache=self.replay_cache,
        )


Callback = Callable[[Notification], "Awaitable[Any] | Any"]


def webhook_endpoint(
    callback: Callback, verifier: NotificationVerifier
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette/FastAPI endpoint: verify, then call ``callback(notification)`` (sync
    callbacks run in a worker thread). Answers 200 when handled, 401 when verification fails
    (the agent does not retry), 500 when the callback raises (the agent retries)."""

    async def endpoint(request: Request) -> Response:
        body = await request.body()
        try:
            notification = await verifier.verify(request.headers, body)
        except NotificationRejected as exc:
            return JSONResponse({"error": exc.reason}, status_code=401)
        except (httpx.HTTPError, json.JSONDecodeError):
            return JSONResponse({"error": "could not fetch the agent's JWKS"}, status_code=503)
        if inspect.iscoroutinefunction(callback):
            await callback(notification)
        else:
            result = await run_in_threadpool(callback, notification)
            if inspect.isawaitable(result):
                await result
        return JSONResponse({"ok": True})

    return endpoint


def webhook_app(
    callback: Callback, verifier: NotificationVerifier, *, path: str = "/"
) -> Starlette:
    """A small ASGI app that receives notifications at ``path`` (POST)."""
    return Starlette(routes=[Route(path, webhook_endpoint(callback, verifier), methods=["POST"])])


__all__ = [
    "Notification",
    "NotificationRejected",
    "NotificationVerifier",
    "ReplayCache",
    "UnknownKeyError",
    "check_token",
    "verify_notification",
    "webhook_app",
    "webhook_endpoint",
]
