"""Agent Card signatures (spec §8.4): the canonical payload and the detached JWS, no I/O.

The payload is the RFC 8785 (JCS) form of the card without ``signatures``, after removing
default values (§8.4.1): ``null``, and empty strings, lists and objects — except the fields the
proto marks REQUIRED, which stay even when empty (the spec's example keeps ``"description": ""``
and ``"skills": []``). Booleans and numbers are kept as sent: ProtoJSON already omits unset
non-``optional`` scalars, and an ``optional`` one sent as ``false`` was set explicitly (§5.7).
Free-form ``Struct`` values (extension ``params``, ``metadata``) are signed verbatim.

A signature is a JWS with a detached payload (§8.4.2): ``protected`` (base64url header with
``alg``, ``typ: JOSE``, ``kid``, optionally ``jku``) and ``signature``; the signing input is
``protected + "." + base64url(payload)``.

Verification accepts a signature over either the spec's canonical form or the form the official
Python SDK 1.3 signs (it drops *every* empty string, list and object, REQUIRED ones too), so
cards signed by either verify; the two differ only in empty values, which carry no meaning.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

__all__ = [
    "ALGORITHMS",
    "CardSignatureError",
    "ParsedSignature",
    "canonical_payloads",
    "card_payload",
    "parse_signature",
    "sign_payload",
    "verify_payload",
]

#: Accepted signature algorithms; ``none`` and HMAC are never accepted (algorithm confusion).
ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "EdDSA")
_MAX_DEPTH = 64


class CardSignatureError(ValueError):
    """The card cannot be canonicalized or a signature is malformed or invalid."""


@dataclass(frozen=True)
class _Shape:
    required: frozenset[str] = frozenset()
    fields: tuple[tuple[str, _Shape], ...] = ()
    items: bool = False  #: a list of this shape
    values: bool = False  #: a map whose values have this shape
    verbatim: bool = False  #: a Struct: signed as sent

    def child(self, key: str) -> _Shape | None:
        return dict(self.fields).get(key)


def _shape(required: str = "", **fields: _Shape) -> _Shape:
    return _Shape(frozenset(required.split()), tuple(fields.items()))


def _list(shape: _Shape) -> _Shape:
    return _Shape(shape.required, shape.fields, items=True)


def _map(shape: _Shape) -> _Shape:
    return _Shape(shape.required, shape.fields, values=True)


_STRUCT = _Shape(verbatim=True)
_FLOW = _shape("authorizationUrl tokenUrl deviceAuthorizationUrl scopes")
_SCHEME = _shape(
    apiKeySecurityScheme=_shape("location name"),
    httpAuthSecurityScheme=_shape("scheme"),
    oauth2SecurityScheme=_shape(
        "flows",
        flows=_shape(
            authorizationCode=_FLOW,
            clientCredentials=_FLOW,
            deviceCode=_FLOW,
            implicit=_shape("scopes"),
            password=_shape("scopes"),
        ),
    ),
    openIdConnectSecurityScheme=_shape("openIdConnectUrl"),
)
_EXTENSION = _shape(params=_STRUCT)
#: Where the proto marks fields REQUIRED (spec §4.4); everything else drops when empty.
CARD_SHAPE = _shape(
    "name description supportedInterfaces version capabilities defaultInputModes "
    "defaultOutputModes skills",
    supportedInterfaces=_list(_shape("url protocolBinding protocolVersion")),
    provider=_shape("url organization"),
    capabilities=_shape(extensions=_list(_EXTENSION)),
    securitySchemes=_map(_SCHEME),
    skills=_list(_shape("id name description tags")),
    metadata=_STRUCT,
)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _clean(value: Any, shape: _Shape | None, depth: int, keep_required: bool) -> Any:
    if depth > _MAX_DEPTH:
        raise CardSignatureError(f"the card nests deeper than {_MAX_DEPTH} levels")
    if shape is not None and shape.verbatim:
        return value
    if isinstance(value, list):
        item = shape if shape is not None and shape.items else None
        if item is not None:
            item = _Shape(item.required, item.fields)
        cleaned = [_clean(v, item, depth + 1, keep_required) for v in value]
        return [v for v in cleaned if not _empty(v)]
    if isinstance(value, dict):
        if shape is not None and shape.values:
            inner = _Shape(shape.required, shape.fields)
            return {k: _clean(v, inner, depth + 1, keep_required) for k, v in value.items()}
        out = {}
        for key, raw in value.items():
            child = shape.child(key) if shape is not None else None
            cleaned = _clean(raw, child, depth + 1, keep_required)
            required = keep_required and shape is not None and key in shape.required
            if (required and raw is not None) or not _empty(cleaned):
                out[key] = cleaned
        return out
    return value


def card_payload(card: Mapping[str, Any], *, sdk_compatible: bool = False) -> bytes:
    """The canonical bytes a card signature covers (spec §8.4.1).

    ``sdk_compatible=True`` gives the form the official Python SDK signs (every empty value
    dropped, REQUIRED ones too)."""
    body = {k: v for k, v in card.items() if k != "signatures"}
    cleaned = _clean(body, CARD_SHAPE, 0, keep_required=not sdk_compatible)
    try:
        return rfc8785.dumps(cleaned)
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise CardSignatureError(f"the card cannot be canonicalized: {exc}") from exc


def canonical_payloads(*cards: Mapping[str, Any]) -> list[bytes]:
    """Every canonical form a signature over these card documents may cover, without repeats."""
    forms: list[bytes] = []
    for card in cards:
        for sdk in (False, True):
            form = card_payload(card, sdk_compatible=sdk)
            if form not in forms:
                forms.append(form)
    return forms


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_payload(
    payload: bytes, private_key: Any, *, alg: str, kid: str, jku: str | None = None
) -> dict[str, str]:
    """One ``AgentCardSignature`` (as a dict) over ``payload`` (spec §8.4.2)."""
    import jwt

    header: dict[str, str] = {"alg": alg, "typ": "JOSE", "kid": kid}
    if jku:
        header["jku"] = jku
    protected = _b64(json.dumps(header, separators=(",", ":")).encode())
    algorithm = jwt.get_algorithm_by_name(alg)
    signing_input = f"{protected}.{_b64(payload)}".encode()
    signature = algorithm.sign(signing_input, algorithm.prepare_key(private_key))
    return {"protected": protected, "signature": _b64(signature)}


@dataclass(frozen=True)
class ParsedSignature:
    """A signature's decoded protected header and its raw parts."""

    protected: str
    signature: str
    header: dict[str, Any]

    @property
    def alg(self) -> str:
        return str(self.header.get("alg", ""))

    @property
    def kid(self) -> str | None:
        kid = self.header.get("kid")
        return kid if isinstance(kid, str) else None

    @property
    def jku(self) -> str | None:
        jku = self.header.get("jku")
        return jku if isinstance(jku, str) else None


def parse_signature(entry: Any) -> ParsedSignature:
    """Decode one entry of ``signatures``; :class:`CardSignatureError` when malformed."""
    if not isinstance(entry, Mapping):
        raise CardSignatureError("a signature is not an object")
    protected, signature = entry.get("protected"), entry.get("signature")
    if not isinstance(protected, str) or not isinstance(signature, str):
        raise CardSignatureError("a signature lacks 'protected' or 'signature'")
    try:
        header = json.loads(_unb64(protected))
    except (binascii.Error, ValueError) as exc:
        raise CardSignatureError("a signature's protected header is not base64url JSON") from exc
    if not isinstance(header, dict):
        raise CardSignatureError("a signature's protected header is not a JSON object")
    if header.get("alg") not in ALGORITHMS:
        raise CardSignatureError(f"signature algorithm {header.get('alg')!r} is not accepted")
    if "crit" in header:
        # RFC 7515 §4.1.11: extensions we do not understand make the signature invalid.
        raise CardSignatureError("a signature has critical header parameters we do not support")
    return ParsedSignature(protected, signature, header)


def verify_payload(sig: ParsedSignature, payload: bytes, public_jwk: Mapping[str, Any]) -> bool:
    """Whether ``sig`` is a valid signature of ``payload`` by the key ``public_jwk``."""
    import jwt

    if public_jwk.get("alg") not in (None, sig.alg):
        return False
    try:
        algorithm = jwt.get_algorithm_by_name(sig.alg)
        key = algorithm.from_jwk(dict(public_jwk))
        raw = _unb64(sig.signature)
    except (jwt.PyJWTError, binascii.Error, ValueError, KeyError, TypeError):
        return False
    signing_input = f"{sig.protected}.{_b64(payload)}".encode()
    return bool(algorithm.verify(signing_input, key, raw))
