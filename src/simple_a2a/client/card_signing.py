"""A built-in ``card_verifier``: Agent Card signatures (spec §8.4.3).

``Client(url, card_verifier=CardSignatureVerifier(allowed_jku_origins=["https://agent.example"]))``
refuses a card unless at least one of its signatures verifies with a key found by ``kid``:

- in ``trusted_keys`` (a JWKS you hold: a trusted key store, §8.4.3), or
- in the JWKS at the signature's ``jku``, fetched only when the URL's origin is in
  ``allowed_jku_origins`` (a ``jku`` elsewhere is ignored: otherwise anyone could sign a card
  with their own key and point at it). Fetched JWKS are cached for ``cache_ttl`` seconds; an
  unknown ``kid`` refetches (the agent rotated its key) at most once per ``refetch_interval``.

``require_signature=False`` lets unsigned cards through but still refuses a card whose signatures
are all invalid. Algorithms ``none`` and HMAC are never accepted.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.card_signing import (
    CardSignatureError,
    ParsedSignature,
    canonical_payloads,
    parse_signature,
    verify_payload,
)

from .errors import CardVerificationError

__all__ = ["CardSignatureVerifier"]

#: Bounds on what a card can make us fetch and hold.
MAX_JWKS_BYTES = 64 * 1024
MAX_CACHED_JWKS = 64
MAX_SIGNATURES = 8


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class CardSignatureVerifier:
    """Verify Agent Card signatures; pass as ``card_verifier=`` to a client."""

    def __init__(
        self,
        *,
        allowed_jku_origins: Sequence[str] = (),
        trusted_keys: Mapping[str, Any] | None = None,
        require_signature: bool = True,
        cache_ttl: float = 300.0,
        refetch_interval: float = 30.0,
        timeout: float = 10.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.allowed_origins = frozenset(_origin(o) for o in allowed_jku_origins)
        self.trusted_keys = list((trusted_keys or {}).get("keys", []))
        self.require_signature = require_signature
        self.cache_ttl = cache_ttl
        self.refetch_interval = refetch_interval
        self.timeout = timeout
        self._http = http
        #: jku -> (keys, fetched at, monotonic)
        self._cache: OrderedDict[str, tuple[list[dict[str, Any]], float]] = OrderedDict()

    async def __call__(self, card: AgentCard, raw: dict[str, Any]) -> bool:
        entries = raw.get("signatures") or []
        if not isinstance(entries, list):
            raise CardVerificationError("the card's 'signatures' is not a list")
        if not entries:
            if self.require_signature:
                raise CardVerificationError("the card is not signed")
            return True
        try:
            payloads = canonical_payloads(card.to_dict(), raw)
        except CardSignatureError as exc:
            raise CardVerificationError(str(exc)) from exc
        reasons: list[str] = []
        for entry in entries[:MAX_SIGNATURES]:
            try:
                signature = parse_signature(entry)
            except CardSignatureError as exc:
                reasons.append(str(exc))
                continue
            reason = await self._check(signature, payloads)
            if reason is None:
                return True
            reasons.append(reason)
        raise CardVerificationError("no valid card signature: " + "; ".join(reasons))

    async def _check(self, signature: ParsedSignature, payloads: list[bytes]) -> str | None:
        """None when ``signature`` verifies; otherwise why not."""
        keys = [k for k in self.trusted_keys if k.get("kid") == signature.kid]
        jku = signature.jku
        if jku is not None and _origin(jku) in self.allowed_origins:
            keys += await self._jku_keys(jku, signature.kid)
        elif not keys:
            where = f"jku {jku} is not an allowed origin" if jku else "no jku"
            return f"key {signature.kid!r} is not trusted ({where})"
        if not keys:
            return f"key {signature.kid!r} is not published"
        for key in keys:
            if any(verify_payload(signature, payload, key) for payload in payloads):
                return None
        return f"the signature by key {signature.kid!r} does not match the card"

    async def _jku_keys(self, jku: str, kid: str | None) -> list[dict[str, Any]]:
        now = time.monotonic()
        cached = self._cache.get(jku)
        fresh = cached is not None and now - cached[1] < self.cache_ttl
        if cached is not None and fresh and any(k.get("kid") == kid for k in cached[0]):
            return [k for k in cached[0] if k.get("kid") == kid]
        if cached is None or not fresh or now - cached[1] >= self.refetch_interval:
            keys = await self._fetch(jku)
            self._cache[jku] = (keys, now)
            self._cache.move_to_end(jku)
            while len(self._cache) > MAX_CACHED_JWKS:
                self._cache.popitem(last=False)
            cached = self._cache[jku]
        return [k for k in cached[0] if k.get("kid") == kid]

    async def _fetch(self, jku: str) -> list[dict[str, Any]]:
        try:
            if self._http is not None:
                response = await self._http.get(jku, timeout=self.timeout)
            else:
                async with httpx.AsyncClient(timeout=self.timeout) as http:
                    response = await http.get(jku)
        except httpx.HTTPError as exc:
            raise CardVerificationError(f"fetching the JWKS at {jku} failed: {exc}") from exc
        if response.status_code != 200:
            raise CardVerificationError(f"the JWKS at {jku} answered HTTP {response.status_code}")
        if len(response.content) > MAX_JWKS_BYTES:
            raise CardVerificationError(f"the JWKS at {jku} is over {MAX_JWKS_BYTES} bytes")
        try:
            document = response.json()
        except ValueError:
            raise CardVerificationError(f"the JWKS at {jku} is not JSON") from None
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            raise CardVerificationError(f"the JWKS at {jku} has no 'keys' list")
        return [k for k in keys if isinstance(k, dict)]
