"""Signing the served Agent Card (spec §8.4) with the agent's key set.

One :class:`~.push.signing.SigningKeys` signs both the card and push notifications, and one JWKS
at ``/.well-known/jwks.json`` publishes it; the signature's ``jku`` points there and its ``kid``
names the active key. After :meth:`SigningKeys.rotate` the card is signed with the new key at
once, and the old public key stays in the JWKS for ``retire_after`` seconds so clients holding a
card signed with it can still verify it.

The 1.0 card (``AgentCard.to_dict()``) is what is signed; the 0.3 fields the server adds to the
same document for older clients are outside the signature (a verifier canonicalizes the card
it parsed, as the official SDK does).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..protocol.card_signing import card_payload, sign_payload
from ..protocol.push import JWKS_PATH
from .push import PushSettings
from .push.signing import SigningKeys

__all__ = ["CardSigner", "jwks_endpoint", "resolve_signing"]


class CardSigner:
    """Adds the ``signatures`` of the active key to card documents; caches the last one."""

    def __init__(self, keys: SigningKeys) -> None:
        self.keys = keys
        self._cache: tuple[bytes, str, str, dict[str, str]] | None = None

    def sign(self, card: dict[str, Any], base_url: str) -> dict[str, Any]:
        """``card`` (a 1.0 card dict) with one signature by the active key, ``jku`` under
        ``base_url``. Signatures already on the card are replaced."""
        payload = card_payload(card)
        key = self.keys.active
        jku = base_url.rstrip("/") + JWKS_PATH
        cached = self._cache
        if cached is not None and cached[:3] == (payload, key.kid, jku):
            signature = cached[3]
        else:
            signature = sign_payload(payload, key.private_key, alg=key.alg, kid=key.kid, jku=jku)
            self._cache = (payload, key.kid, jku, signature)
        return {**card, "signatures": [signature]}


def jwks_endpoint(keys: SigningKeys) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint of ``GET /.well-known/jwks.json``: the public keys, active and recently
    retired."""

    async def endpoint(request: Request) -> Response:
        body = json.dumps(keys.jwks(), separators=(",", ":"))
        return Response(
            body,
            media_type="application/jwk-set+json",
            headers={"Cache-Control": "public, max-age=300"},
        )

    return endpoint


def resolve_signing(
    card_signing: SigningKeys | bool, push: PushSettings | None, push_enabled: bool
) -> tuple[CardSigner | None, PushSettings | None]:
    """One key set for the card and push notifications.

    ``card_signing=True`` signs the card with the push key set (or a fresh RS256 key when push
    is off or unsigned); a :class:`SigningKeys` is used for both, and replaces push's ``"auto"``
    key. Two different key sets cannot share the one JWKS path: ``ValueError``."""
    if card_signing is False:
        return None, push
    settings = push or PushSettings()
    push_keys = settings.signing if isinstance(settings.signing, SigningKeys) else None
    keys = card_signing if isinstance(card_signing, SigningKeys) else None
    if keys is not None and push_keys is not None and keys is not push_keys:
        raise ValueError("card_signing and push signing must be the same SigningKeys")
    keys = keys or push_keys or SigningKeys.generate()
    if push_enabled and settings.signing is not None:
        settings = replace(settings, signing=keys)
    return CardSigner(keys), settings if push is not None or push_enabled else push
