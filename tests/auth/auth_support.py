"""Helpers for the auth suite: keys, a JWKS issuer on loopback, servers with authenticators.

The binding adapters and the test agent are the server suite's (tests/server), so the auth
tests speak to the bindings exactly as the behavioural suite does.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import simple_a2a
from tests.support.agents import TestAgent, make_card, serving, user
from tests.support.bindings import JSONRPC, REST, Outcome

__all__ = [
    "JSONRPC",
    "PLAIN",
    "REST",
    "Issuer",
    "Outcome",
    "TestAgent",
    "adapter",
    "make_card",
    "serve_agent",
    "serving",
    "user",
]

AUDIENCE = "https://agent.example.com"
#: A TLS context for loopback http:// clients: building httpx's default one costs ~0.1 s each.
PLAIN = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class Issuer:
    """A token issuer: RSA keys generated here, its JWKS and OpenID configuration served by a
    Starlette app on loopback (``with issuer.running(): ...``)."""

    def __init__(self) -> None:
        self.keys = {"k1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.url = ""
        self.jwks_requests = 0
        self.fail = False

    def add_key(self, kid: str) -> None:
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def token(
        self,
        sub: str = "alice",
        *,
        kid: str = "k1",
        expires_in: float = 300,
        aud: str = AUDIENCE,
        iss: str | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "sub": sub,
            "aud": aud,
            "iss": iss or self.url,
            "iat": now,
            "exp": now + int(expires_in),
            **claims,
        }
        return jwt.encode(payload, self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def app(self) -> Starlette:
        async def jwks(_: Request) -> JSONResponse:
            self.jwks_requests += 1
            if self.fail:
                return JSONResponse({"error": "down"}, status_code=503)
            return JSONResponse(self.jwks())

        async def discovery(_: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.url, "jwks_uri": self.url + "/jwks.json"})

        return Starlette(
            routes=[
                Route("/jwks.json", jwks),
                Route("/.well-known/openid-configuration", discovery),
            ]
        )

    @contextlib.contextmanager
    def running(self) -> Iterator[Issuer]:
        with serving(self.app()) as url:
            self.url = url
            yield self


@contextlib.contextmanager
def serve_agent(auth: Any, card: Any = None, **options: Any) -> Iterator[str]:
    """The test agent behind ``auth`` (streaming and push declared), on loopback."""
    caps = {"streaming": True, "pushNotifications": True, **options.pop("capabilities", {})}
    card = card or make_card(**caps)
    app = simple_a2a.server(card, TestAgent(), auth=auth, **options).app
    with serving(app) as url:
        yield url


def adapter(binding: str, client: httpx.AsyncClient) -> JSONRPC | REST:
    return JSONRPC(client) if binding == "JSONRPC" else REST(client)
