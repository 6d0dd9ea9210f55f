"""JWT bearer tokens verified against an issuer's JWKS (OpenID Connect, RFC 7519/7517).

Signature (keys from the issuer's JWKS, fetched with httpx and cached), ``exp`` (required),
``nbf``, ``iss`` and ``aud`` are checked with PyJWT. Only asymmetric algorithms are accepted, so a
token cannot be "signed" with the public key (algorithm confusion).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import jwt as pyjwt
from starlette.requests import HTTPConnection

from ..protocol.card import HTTPAuthSecurityScheme, OpenIdConnectSecurityScheme, SecurityScheme
from ..protocol.errors import AuthenticationError, InternalError
from ..protocol.logcontext import library_logger
from .base import bearer_token
from .caller import Caller

log = library_logger("simple_a2a.auth")

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
DISCOVERY = "/.well-known/openid-configuration"


class JWKSCache:
    """An issuer's signing keys by ``kid``: fetched on first use, refreshed after ``ttl`` seconds
    and when a token names an unknown key (at most once per ``min_refresh`` seconds)."""

    def __init__(
        self,
        url: str | Callable[[], Any],
        *,
        ttl: float = 300.0,
        min_refresh: float = 10.0,
        http: Callable[[], httpx.AsyncClient] | None = None,
    ) -> None:
        self._url = url
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._http = http or (lambda: httpx.AsyncClient(timeout=10.0))
        self._keys: dict[str | None, pyjwt.PyJWK] = {}
        self._fetched = float("-inf")
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def key(self, kid: str | None) -> pyjwt.PyJWK:
        now = time.monotonic()
        if now - self._fetched > self.ttl or (
            self._lookup(kid) is None and now - self._fetched > self.min_refresh
        ):
            async with self._lock:
                if time.monotonic() - self._fetched > min(self.ttl, self.min_refresh):
                    await self._refresh()
        found = self._lookup(kid)
        if found is None:
            raise AuthenticationError("the token is not signed by a key of its issuer")
        return found

    def _lookup(self, kid: str | None) -> pyjwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        try:
            async with self._http() as http:
                url = self._url if isinstance(self._url, str) else await self._url()
                response = await http.get(url)
                response.raise_for_status()
                keys = pyjwt.PyJWKSet.from_dict(response.json()).keys
        except Exception as exc:  # the issuer is down or answers nonsense: not the caller's fault
            log.warning("could not fetch the JWKS: %s", exc)
            if self._keys:  # keep serving with the keys we had
                self._fetched = time.monotonic()
                return
            raise InternalError("the token issuer's keys are unavailable") from None
        self._keys = {k.key_id: k for k in keys if k.public_key_use in (None, "sig")}
        self._fetched = time.monotonic()
        self.fetches += 1


class JWTAuth:
    """Accept ``Authorization: Bearer <JWT>`` signed by a trusted issuer.

    - ``JWTAuth(issuer=..., audience=...)``: OpenID Connect — the JWKS URL comes from the
      issuer's ``/.well-known/openid-configuration``; declared as an ``openIdConnect`` scheme.
    - ``JWTAuth(jwks_url=..., issuer=..., audience=...)``: a JWKS URL given directly; declared as
      an HTTP ``Bearer`` scheme with ``bearerFormat: JWT``.

    The caller's identity is the ``identity_claim`` (``sub``); its claims are on
    :attr:`Caller.claims`. ``leeway`` seconds of clock skew are tolerated.
    """

    def __init__(
        self,
        *,
        issuer: str | None = None,
        audience: str | Sequence[str] | None = None,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = ASYMMETRIC,
        identity_claim: str = "sub",
        leeway: float = 30.0,
        cache_ttl: float = 300.0,
        scheme_name: str = "jwt",
        description: str | None = None,
        http: Callable[[], httpx.AsyncClient] | None = None,
    ) -> None:
        if jwks_url is None and issuer is None:
            raise ValueError("JWTAuth needs an issuer (OpenID Connect discovery) or a jwks_url")
        bad = [a for a in algorithms if a not in ASYMMETRIC and a != "EdDSA"]
        if bad:
            raise ValueError(f"only asymmetric algorithms can be checked against a JWKS: {bad}")
        self.scheme_name = scheme_name
        self.issuer = issuer
        self.audience = audience
        self.jwks_url = jwks_url
        self.algorithms = list(algorithms)
        self.identity_claim = identity_claim
        self.leeway = leeway
        self.description = description
        self._http = http or (lambda: httpx.AsyncClient(timeout=10.0))
        self.keys = JWKSCache(jwks_url or self._discover, ttl=cache_ttl, http=self._http)

    @property
    def discovery_url(self) -> str | None:
        return None if self.issuer is None else self.issuer.rstrip("/") + DISCOVERY

    async def _discover(self) -> str:
        assert self.discovery_url is not None
        async with self._http() as http:
            response = await http.get(self.discovery_url)
            response.raise_for_status()
            return str(response.json()["jwks_uri"])

    def security_scheme(self) -> SecurityScheme:
        if self.jwks_url is None and self.discovery_url is not None:
            return SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url=self.discovery_url, description=self.description
                )
            )
        return SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format="JWT", description=self.description
            )
        )

    async def authenticate(self, request: HTTPConnection) -> Caller | None:
        token = bearer_token(request)
        return None if token is None else await self.verify(token)

    async def verify(self, token: str) -> Caller:
        """The caller a token stands for; :class:`AuthenticationError` if it is not valid."""
        try:
            header = pyjwt.get_unverified_header(token)
        except pyjwt.InvalidTokenError:
            raise AuthenticationError("the bearer token is not a JWT") from None
        if header.get("alg") not in self.algorithms:
            raise AuthenticationError("the token's signing algorithm is not accepted")
        key = await self.keys.key(header.get("kid"))
        try:
            claims: dict[str, Any] = pyjwt.decode(
                token,
                key=key.key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", self.identity_claim]},
            )
        except pyjwt.ExpiredSignatureError:
            raise AuthenticationError("the token has expired") from None
        except pyjwt.InvalidAudienceError:
            raise AuthenticationError("the token is not meant for this agent (aud)") from None
        except pyjwt.InvalidIssuerError:
            raise AuthenticationError("the token's issuer is not trusted (iss)") from None
        except pyjwt.InvalidTokenError:
            raise AuthenticationError("the token is not valid") from None
        identity = claims.get(self.identity_claim)
        if not isinstance(identity, str) or not identity:
            raise AuthenticationError(f"the token has no {self.identity_claim} claim")
        return Caller(identity=identity, scheme=self.scheme_name, claims=claims)
