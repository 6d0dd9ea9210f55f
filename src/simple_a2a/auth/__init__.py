"""Authentication and per-caller authorization for A2A servers (spec §7, docs/auth.md).

``simple_a2a.server(card, executor, auth=BearerAuth(tokens={"s3cret": "alice"}))``: the card
declares the scheme, every A2A operation requires it (the card stays public), and each caller
sees only its own tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .apikey import APIKeyAuth
from .base import (
    Authenticator,
    AuthLike,
    Authorize,
    AuthPolicy,
    OwnerOf,
    Verifier,
    as_policy,
    bearer_token,
)
from .bearer import BearerAuth
from .caller import CALLER_KEY, FAILURE_KEY, Caller, scope_caller, scope_failure
from .middleware import AuthMiddleware

if TYPE_CHECKING:
    from .jwt import JWKSCache, JWTAuth

__all__ = [
    "CALLER_KEY",
    "FAILURE_KEY",
    "APIKeyAuth",
    "AuthLike",
    "AuthMiddleware",
    "AuthPolicy",
    "Authenticator",
    "Authorize",
    "BearerAuth",
    "Caller",
    "JWKSCache",
    "JWTAuth",
    "OwnerOf",
    "Verifier",
    "as_policy",
    "bearer_token",
    "scope_caller",
    "scope_failure",
]


def __getattr__(name: str) -> Any:
    """The JWT authenticator loads PyJWT and cryptography only when used."""
    if name in ("JWTAuth", "JWKSCache"):
        from . import jwt

        return getattr(jwt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
