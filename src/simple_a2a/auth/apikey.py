"""API keys in a header, a query parameter or a cookie (``APIKeySecurityScheme``, spec §4.5.2)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import HTTPConnection

from ..protocol.card import APIKeySecurityScheme, SecurityScheme
from .base import StaticCredentials, Verifier
from .caller import Caller

LOCATIONS = ("header", "query", "cookie")


class APIKeyAuth:
    """Accept an API key where the card says: ``location`` ``"header"`` (default), ``"query"``
    or ``"cookie"``, under ``name``::

        APIKeyAuth(keys={"k-123": "alice"})                       # X-API-Key: k-123
        APIKeyAuth(keys={...}, location="query", name="api_key")  # ?api_key=k-123
        APIKeyAuth(verify=check_key, location="cookie", name="session")
    """

    def __init__(
        self,
        keys: Mapping[str, str | Caller] | None = None,
        *,
        verify: Verifier | None = None,
        name: str = "X-API-Key",
        location: str = "header",
        scheme_name: str = "apiKey",
        description: str | None = None,
    ) -> None:
        if location not in LOCATIONS:
            raise ValueError(f"location must be one of {LOCATIONS}, not {location!r}")
        self.scheme_name = scheme_name
        self.name = name
        self.location = location
        self.description = description
        self._credentials = StaticCredentials(scheme_name, keys, verify, "API key")

    def security_scheme(self) -> SecurityScheme:
        return SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                location=self.location, name=self.name, description=self.description
            )
        )

    def _read(self, request: HTTPConnection) -> str | None:
        if self.location == "header":
            return request.headers.get(self.name)
        if self.location == "query":
            return request.query_params.get(self.name)
        return request.cookies.get(self.name)

    async def authenticate(self, request: HTTPConnection) -> Caller | None:
        key = self._read(request)
        return None if key is None else await self._credentials.check(key)
