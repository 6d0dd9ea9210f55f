"""Receiving push notifications: verify them, then hand the ``StreamResponse`` to your code.

For webhook receivers (client-side apps). What is checked (see ``docs/push.md``):

- the JWT in ``A2A-Notification-Signature`` against the agent's JWKS (fetched with httpx,
  cached, refetched when a ``kid`` is unknown): signature, algorithm (RS256/ES256), ``exp`` and
  ``iat`` (with ``leeway``), the SHA-256 of the exact body (``request_body_sha256``), the task id,
  optionally ``iss`` and ``aud``;
- replay: a ``jti`` seen before (while its token is valid) is rejected;
- the config's token (``X-A2A-Notification-Token`` or ``A2A-Notification-Token``), when given.

Hostile senders (issue #16): the endpoint checks the token and the JWT *before* reading the
body, reads at most ``max_body_bytes`` (413 beyond), binds the JWT's ``aud`` to the receiver's
own URL by default, and backs off JWKS fetches that fail (503 meanwhile, no fetch per request).

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
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class JWKSUnavailableError(Exception):
    """The agent's JWKS could not be fetched (lately): answer 503, the agent retries later."""


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


class ReplayStore(Protocol):
    """Where a verifier remembers the ``jti`` it accepted: in memory (:class:`MemoryReplayStore`,
    the default), or durable and shared: ``simple_a2a.storage.replay.SQLiteReplayStore`` /
    ``PostgresReplayStore``."""

    async def remember(self, jti: str, expires: float) -> bool:
        """True the first time ``jti`` is seen (until ``expires``, a Unix time)."""
        ...


class MemoryReplayStore:
    """A :class:`ReplayStore` in this process's memory (lost on restart, not shared)."""

    def __init__(self) -> None:
        self.cache = ReplayCache()

    async def remember(self, jti: str, expires: float) -> bool:
        try:
            self.cache.check_and_add(jti, expires)
        except NotificationRejected:
            return False
        return True


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
        claims = _verify_jwt(headers, jwks, issuer, audience, leeway, max_age)
        check_body_hash(claims, body)
        if claims.get(CLAIM_TASK_ID) != task_id:
            raise NotificationRejected("the token was issued for another task")
        if replay_cache is not None:
            replay_cache.check_and_add(str(claims["jti"]), float(claims["exp"]) + leeway)
    return Notification(event, task_id, claims)


def _verify_jwt(
    headers: Mapping[str, str],
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
    return claims


def check_body_hash(claims: Mapping[str, Any], body: bytes) -> None:
    """The body is the one the JWT signed (``request_body_sha256``)."""
    digest = hashlib.sha256(body).hexdigest()
    if not hmac.compare_digest(str(claims[CLAIM_BODY_SHA256]), digest):
        raise NotificationRejected("the body does not match the signed hash")


class NotificationVerifier:
    """Verifies notifications of one agent, fetching its JWKS.

    ``jwks_url`` is the agent's JWKS (the card's push-signature extension gives it as
    ``jwksUri``); ``agent_url`` is a shortcut for ``agent_url + "/.well-known/jwks.json"``.
    Neither given means unsigned notifications (then pass ``token``). Never take the JWKS URL
    from the notification itself.

    ``audience`` is the URL the agent was given for this webhook (the JWT's ``aud``); by
    default the URL the notification arrived at, so a notification signed for another receiver
    is refused (give it explicitly behind a proxy that changes the URL). ``max_body_bytes``
    bounds the body read (413 beyond). A failed JWKS fetch is not retried for
    ``jwks_backoff`` seconds, doubling up to ``max_jwks_backoff`` while it keeps failing.
    ``replay_store`` remembers accepted ``jti`` values (default: in memory; a SQLite or
    PostgreSQL one from ``simple_a2a.storage.replay`` survives restarts and spans replicas).
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
        max_body_bytes: int = 1024 * 1024,
        jwks_backoff: float = 1.0,
        max_jwks_backoff: float = 300.0,
        replay_store: ReplayStore | None = None,
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
        self.max_body_bytes = max_body_bytes
        self.jwks_backoff = jwks_backoff
        self.max_jwks_backoff = max_jwks_backoff
        self._backoff = jwks_backoff
        self._retry_at = 0.0  # monotonic time before which a failed fetch is not retried
        self.replay_store: ReplayStore = replay_store or MemoryReplayStore()
        self._client = http_client
        self._jwks: dict[str, Any] | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def _fetch(self) -> dict[str, Any]:
        assert self.jwks_url is not None
        async with self._lock:
            now = time.monotonic()
            if now < self._retry_at:
                raise JWKSUnavailableError(
                    f"the agent's JWKS failed to load; next try in {self._retry_at - now:.1f}s"
                )
            try:
                jwks = await self._get_jwks(self.jwks_url)
            except (httpx.HTTPError, ValueError) as exc:
                self._retry_at = time.monotonic() + self._backoff
                self._backoff = min(self._backoff * 2, self.max_jwks_backoff)
                raise JWKSUnavailableError(f"could not fetch the agent's JWKS: {exc}") from exc
            self._backoff, self._retry_at = self.jwks_backoff, 0.0
            if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
                raise NotificationRejected("the agent's JWKS is not a JWK set")
            self._jwks, self._fetched_at = jwks, time.monotonic()
            return jwks

    async def _get_jwks(self, url: str) -> Any:
        if self._client is None:
            async with httpx.AsyncClient(timeout=10) as client:
                response = await client.get(url)
        else:
            response = await self._client.get(url)
        response.raise_for_status()
        return response.json()

    async def jwks(self, *, refresh: bool = False) -> dict[str, Any]:
        stale = time.monotonic() - self._fetched_at > self.jwks_ttl
        if self._jwks is None or stale or refresh:
            return await self._fetch()
        return self._jwks

    async def verify_headers(
        self, headers: Mapping[str, str], url: str | None = None
    ) -> dict[str, Any]:
        """What can be checked before reading the body: the token, then the JWT (signature,
        expiry, issuer, audience — ``url`` is the receiver's, the default audience). Returns
        the claims (empty when unsigned); raise :class:`NotificationRejected`."""
        if self.token is not None:
            check_token(headers, self.token)
        if self.jwks_url is None:
            return {}
        try:
            return self._claims(headers, await self.jwks(), url)
        except UnknownKeyError:
            # The agent may have rotated its key: refetch (rate-limited) and try once more.
            if time.monotonic() - self._fetched_at < self.min_refetch_interval:
                raise
            return self._claims(headers, await self.jwks(refresh=True), url)

    def _claims(
        self, headers: Mapping[str, str], jwks: Mapping[str, Any], url: str | None
    ) -> dict[str, Any]:
        audience = self.audience or url
        return _verify_jwt(headers, jwks, self.issuer, audience, self.leeway, self.max_age)

    async def verify_body(self, claims: Mapping[str, Any], body: bytes) -> Notification:
        """The rest, once :meth:`verify_headers` passed: body hash, task, replay."""
        try:
            event = StreamResponse.from_json(body)
        except Exception:
            raise NotificationRejected("the body is not a StreamResponse") from None
        task_id = _payload_task_id(event)
        if claims:
            check_body_hash(claims, body)
            if claims.get(CLAIM_TASK_ID) != task_id:
                raise NotificationRejected("the token was issued for another task")
            jti, expires = str(claims["jti"]), float(claims["exp"]) + self.leeway
            if not await self.replay_store.remember(jti, expires):
                raise NotificationRejected(f"replayed notification (jti {jti} seen before)")
        return Notification(event, task_id, dict(claims))

    async def verify(
        self, headers: Mapping[str, str], body: bytes, *, url: str | None = None
    ) -> Notification:
        """Verify one notification; raise :class:`NotificationRejected`."""
        return await self.verify_body(await self.verify_headers(headers, url), body)


class BodyTooLargeError(Exception):
    """The body passed ``max_body_bytes``."""


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError
        chunks.append(chunk)
    return b"".join(chunks)


Callback = Callable[[Notification], "Awaitable[Any] | Any"]


def webhook_endpoint(
    callback: Callback, verifier: NotificationVerifier
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette/FastAPI endpoint: verify, then call ``callback(notification)`` (sync
    callbacks run in a worker thread). Answers 200 when handled, 401 when verification fails
    (the agent does not retry), 500 when the callback raises (the agent retries)."""

    async def endpoint(request: Request) -> Response:
        try:
            # Headers first: an unauthenticated body is never read, let alone parsed.
            claims = await verifier.verify_headers(request.headers, str(request.url))
            body = await _read_body(request, verifier.max_body_bytes)
            notification = await verifier.verify_body(claims, body)
        except NotificationRejected as exc:
            return JSONResponse({"error": exc.reason}, status_code=401)
        except BodyTooLargeError:
            limit = verifier.max_body_bytes
            return JSONResponse({"error": f"body over {limit} bytes"}, status_code=413)
        except JWKSUnavailableError:
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
    "JWKSUnavailableError",
    "MemoryReplayStore",
    "Notification",
    "NotificationRejected",
    "NotificationVerifier",
    "ReplayCache",
    "ReplayStore",
    "UnknownKeyError",
    "check_token",
    "verify_notification",
    "webhook_app",
    "webhook_endpoint",
]
