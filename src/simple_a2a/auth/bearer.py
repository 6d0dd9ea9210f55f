"""Bearer tokens (``Authorization: Bearer <token>``, RFC 6750): a static table or a verifier."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import HTTPConnection

from ..protocol.card import HTTPAuthSecurityScheme, SecurityScheme
from .base import StaticCredentials, Verifier, bearer_token
from .caller import Caller


class BearerAuth:
    """Accept ``Authorization: Bearer <token>``; declared as an HTTP ``Bearer`` scheme.

    ``tokens`` maps each token to its caller's identity (or a :class:`Caller`); ``verify`` is a
    callable (sync or async) from the token to an identity, a :class:`Caller` or ``None``::

        BearerAuth(tokens={"s3cret": "alice"})
        BearerAuth(verify=lambda token: lookup_user(token))
    """

    def __init__(
        self,
        tokens: Mapping[str, str | Caller] | None = None,
        *,
        verify: Verifier | None = None,
        scheme_name: str = "bearer",
        bearer_format: str | None = None,
        description: str | None = None,
    ) -> None:
        self.scheme_name = scheme_name
        self.bearer_format = bearer_format
        self.description = description
        self._credentials = StaticCredentials(scheme_name, tokens, verify, "bearer token")

    def security_scheme(self) -> SecurityScheme:
        return SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format=self.bearer_format, description=self.description
            )
        )

    async def authenticate(self, request: HTTPConnection) -> Caller | None:
        token = bearer_token(request)
        return None if token is None else await self._credentials.check(token)
