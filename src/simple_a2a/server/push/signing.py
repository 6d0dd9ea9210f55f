"""Signed push notifications: JWTs over the request body, public keys as a JWKS.

Every notification carries a short-lived JWT (compact JWS) in the ``A2A-Notification-Signature``
header, signed with the active key (RS256 by default, ES256 supported). Claims: ``iss`` (the
agent), ``iat``, ``exp`` (``iat`` + ``ttl``, 5 minutes by default), ``jti`` (unique, for replay
detection), ``aud`` (the webhook URL), ``taskId`` and ``request_body_sha256`` (hex SHA-256 of the
exact body bytes). The header's ``kid`` names the key in the JWKS.

Rotation without downtime: :meth:`SigningKeys.rotate` makes a new key active and keeps the old
public keys in the JWKS for ``retire_after`` seconds, longer than any token they signed lives
and than receivers cache the JWKS. Needs PyJWT with cryptography (``pip install
'simple-a2a[push]'``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...protocol.push import CLAIM_BODY_SHA256, CLAIM_TASK_ID

ALGORITHMS = ("RS256", "ES256")
_MISSING = "signed push notifications need PyJWT and cryptography: pip install 'simple-a2a[push]'"


def _jwt() -> Any:
    try:
        import jwt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_MISSING) from exc
    return jwt


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 JWK thumbprint: a stable, collision-free ``kid``."""
    members = ("e", "kty", "n") if jwk["kty"] == "RSA" else ("crv", "kty", "x", "y")
    canonical = json.dumps({k: jwk[k] for k in members}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode()).digest())


@dataclass
class SigningKey:
    """A private key, its algorithm and its public JWK (with ``kid``)."""

    private_key: Any
    alg: str
    kid: str = ""
    public_jwk: dict[str, Any] = field(default_factory=dict)
    retired_at: float | None = None  #: when it stopped signing (None: never active or active)

    def __post_init__(self) -> None:
        if self.alg not in ALGORITHMS:
            raise ValueError(f"unsupported signing algorithm {self.alg!r}; use one of {ALGORITHMS}")
        jwt = _jwt()
        family = jwt.algorithms.RSAAlgorithm if self.alg == "RS256" else jwt.algorithms.ECAlgorithm
        jwk: dict[str, Any] = family.to_jwk(self.private_key.public_key(), as_dict=True)
        self.kid = self.kid or _thumbprint(jwk)
        jwk.update({"kid": self.kid, "alg": self.alg, "use": "sig"})
        self.public_jwk = jwk

    @classmethod
    def generate(cls, alg: str = "RS256", *, kid: str = "") -> SigningKey:
        """A fresh key: RSA 2048 for RS256, P-256 for ES256."""
        _jwt()
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        if alg == "RS256":
            key: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            key = ec.generate_private_key(ec.SECP256R1())
        else:
            raise ValueError(f"unsupported signing algorithm {alg!r}; use one of {ALGORITHMS}")
        return cls(key, alg, kid)

    @classmethod
    def from_pem(
        cls, pem: str | bytes, *, kid: str = "", password: bytes | None = None
    ) -> SigningKey:
        """Load a PEM private key; RSA keys sign RS256, EC P-256 keys ES256."""
        _jwt()
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        data = pem.encode() if isinstance(pem, str) else pem
        key = load_pem_private_key(data, password=password)
        if isinstance(key, rsa.RSAPrivateKey):
            return cls(key, "RS256", kid)
        if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            return cls(key, "ES256", kid)
        raise ValueError("only RSA and EC P-256 private keys are supported")

    @classmethod
    def from_jwk(cls, jwk: str | dict[str, Any], *, kid: str = "") -> SigningKey:
        """Load a private key from a JWK (a dict or its JSON); its ``kid`` is kept unless given."""
        data: dict[str, Any] = json.loads(jwk) if isinstance(jwk, str) else dict(jwk)
        jwt = _jwt()
        family = (
            jwt.algorithms.RSAAlgorithm if data.get("kty") == "RSA" else jwt.algorithms.ECAlgorithm
        )
        key = family.from_jwk(data)
        if not hasattr(key, "public_key"):
            raise ValueError("the JWK holds a public key; signing needs the private one")
        alg = "RS256" if data.get("kty") == "RSA" else "ES256"
        return cls(key, alg, kid or str(data.get("kid", "")))


class SigningKeys:
    """The agent's key ring: one active key, recently retired ones still published."""

    def __init__(
        self,
        keys: SigningKey | Sequence[SigningKey] | None = None,
        *,
        issuer: str | None = None,
        ttl: float = 300.0,
        retire_after: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(keys, SigningKey):
            keys = [keys]
        self._keys: list[SigningKey] = list(keys or [SigningKey.generate()])
        self.issuer = issuer
        self.ttl = ttl
        self.retire_after = retire_after
        self.clock = clock

    @classmethod
    def generate(cls, alg: str = "RS256", **options: Any) -> SigningKeys:
        return cls(SigningKey.generate(alg), **options)

    @property
    def active(self) -> SigningKey:
        return self._keys[-1]

    @property
    def algorithms(self) -> list[str]:
        return sorted({key.alg for key in self._published()})

    def rotate(self, new: SigningKey | None = None) -> SigningKey:
        """Sign with ``new`` (a fresh key of the same algorithm by default) from now on; the
        old public key stays in the JWKS for ``retire_after`` seconds."""
        new = new or SigningKey.generate(self.active.alg)
        now = self.clock()
        for key in self._keys:
            if key.retired_at is None:
                key.retired_at = now
        self._keys.append(new)
        self._prune()
        return new

    def _prune(self) -> None:
        horizon = self.clock() - self.retire_after
        self._keys = [k for k in self._keys if k.retired_at is None or k.retired_at > horizon]

    def _published(self) -> list[SigningKey]:
        self._prune()
        return self._keys

    def jwks(self) -> dict[str, Any]:
        """The JWKS document: the active key and the keys retired less than ``retire_after`` ago."""
        return {"keys": [dict(key.public_jwk) for key in reversed(self._published())]}

    def sign(
        self, body: bytes, *, task_id: str, audience: str | None = None, issuer: str | None = None
    ) -> str:
        """The JWT for one notification body."""
        now = int(self.clock())
        claims: dict[str, Any] = {
            "iat": now,
            "exp": now + int(self.ttl),
            "jti": uuid.uuid4().hex,
            CLAIM_TASK_ID: task_id,
            CLAIM_BODY_SHA256: hashlib.sha256(body).hexdigest(),
        }
        if issuer or self.issuer:
            claims["iss"] = issuer or self.issuer
        if audience:
            claims["aud"] = audience
        key = self.active
        token: str = _jwt().encode(
            claims, key.private_key, algorithm=key.alg, headers={"kid": key.kid, "typ": "JWT"}
        )
        return token


__all__ = ["ALGORITHMS", "SigningKey", "SigningKeys"]
