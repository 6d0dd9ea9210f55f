"""Agent Card signatures (spec §8.4): JCS vectors, served signed cards, the client verifier,
rotation, one JWKS for card and push, and interop with the official SDK (a2a-sdk 1.3.0)."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from simple_a2a.client import AsyncClient, CardSignatureVerifier, CardVerificationError
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.card_signing import card_payload, parse_signature
from simple_a2a.protocol.push import JWKS_PATH, SIGNING_EXTENSION_URI
from simple_a2a.server import server
from simple_a2a.server.push import PushSettings, SigningKey, SigningKeys

CARD = {
    "name": "Signed agent",
    "description": "signs its card — ünïcode",
    "version": "1.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
}


async def echo(ctx: Any) -> str:
    return f"echo: {ctx.text}"


# -- RFC 8785 (JCS): the published vectors, through the payload function ------------------------


def _payload_of_metadata(value: Any) -> str:
    """``metadata`` is a Struct: signed verbatim, so it carries raw JCS input."""
    return card_payload({"metadata": value}).decode()[len('{"metadata":') : -1]


def test_rfc8785_section_3_2_2_example() -> None:
    data = json.loads(
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert _payload_of_metadata(data) == expected


def test_rfc8785_section_3_2_3_sorting() -> None:
    data = json.loads(
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With'
        ' Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",'
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}'
    )
    keys = list(json.loads(_payload_of_metadata(data)))
    # UTF-16 code unit order: the emoji (a surrogate pair, 0xD83D) sorts before U+FB33.
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        ("0000000000000000", "0"),
        ("8000000000000000", "0"),
        ("0000000000000001", "5e-324"),
        ("7fefffffffffffff", "1.7976931348623157e+308"),
        ("4340000000000000", "9007199254740992"),
        ("44b52d02c7e14af6", "1e+23"),
        ("3eb0c6f7a0b5ed8d", "0.000001"),
        ("41b3de4355555555", "333333333.3333333"),
    ],
)
def test_rfc8785_appendix_b_numbers(bits: str, text: str) -> None:
    (number,) = struct.unpack(">d", bytes.fromhex(bits))
    assert _payload_of_metadata(number) == text


def test_spec_8_4_1_default_removal_example() -> None:
    """§8.4.1's worked example, to the byte."""
    card = {
        "name": "Example Agent",
        "description": "",
        "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []},
        "skills": [],
        "signatures": [{"protected": "x", "signature": "y"}],
    }
    assert card_payload(card) == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},'
        b'"description":"","name":"Example Agent","skills":[]}'
    )


# -- served cards and the client verifier --------------------------------------------------------


def _card(**update: Any) -> AgentCard:
    return AgentCard.from_dict({**CARD, **update})


async def _fetch(url: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        return (await http.get(url + "/.well-known/agent-card.json")).json()  # type: ignore[no-any-return]


async def test_served_card_is_signed_and_verifies(serve: Any) -> None:
    keys = SigningKeys.generate("ES256")
    url = serve(server(_card(), echo, card_signing=keys).app)
    raw = await _fetch(url)
    (entry,) = raw["signatures"]
    sig = parse_signature(entry)
    assert sig.header == {
        "alg": "ES256",
        "typ": "JOSE",
        "kid": keys.active.kid,
        "jku": url + JWKS_PATH,
    }
    verifier = CardSignatureVerifier(allowed_jku_origins=[url])
    async with AsyncClient(url, card_verifier=verifier) as client:
        assert (await client.send("hi")).text == "echo: hi"  # type: ignore[union-attr]
        assert (await client.agent_card()).signatures


async def test_verifier_refuses_tampered_foreign_and_unsigned_cards(serve: Any) -> None:
    url = serve(server(_card(), echo, card_signing=True).app)
    raw = await _fetch(url)
    verifier = CardSignatureVerifier(allowed_jku_origins=[url])
    assert await verifier(AgentCard.from_dict(raw), raw)

    tampered = {**raw, "description": "something else"}
    with pytest.raises(CardVerificationError, match="does not match"):
        await verifier(AgentCard.from_dict(tampered), tampered)

    stranger = CardSignatureVerifier(allowed_jku_origins=["https://elsewhere.example"])
    with pytest.raises(CardVerificationError, match="not an allowed origin"):
        await stranger(AgentCard.from_dict(raw), raw)

    unsigned = {k: v for k, v in raw.items() if k != "signatures"}
    with pytest.raises(CardVerificationError, match="not signed"):
        await verifier(AgentCard.from_dict(unsigned), unsigned)
    lenient = CardSignatureVerifier(allowed_jku_origins=[url], require_signature=False)
    assert await lenient(AgentCard.from_dict(unsigned), unsigned)
    with pytest.raises(CardVerificationError):
        await lenient(AgentCard.from_dict(tampered), tampered)

    # alg "none" and HMAC are refused whatever the key (algorithm confusion).
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","kid":"k"}').decode().rstrip("=")
    forged = {**raw, "signatures": [{"protected": header, "signature": "AAAA"}]}
    with pytest.raises(CardVerificationError, match="not accepted"):
        await verifier(AgentCard.from_dict(forged), forged)


async def test_client_refuses_a_badly_signed_card(serve: Any) -> None:
    url = serve(server(_card(), echo, card_signing=True).app)
    other = SigningKeys.generate()  # a key the agent's JWKS does not publish
    verifier = CardSignatureVerifier(trusted_keys=other.jwks())
    async with AsyncClient(url, card_verifier=verifier) as client:
        with pytest.raises(CardVerificationError, match="not trusted"):
            await client.agent_card()


async def test_rotation_keeps_old_signatures_verifiable_for_the_grace_period(serve: Any) -> None:
    now = [1000.0]
    keys = SigningKeys(SigningKey.generate("ES256"), retire_after=600, clock=lambda: now[0])
    url = serve(server(_card(), echo, card_signing=keys).app)
    verifier = CardSignatureVerifier(allowed_jku_origins=[url], refetch_interval=0)
    old = await _fetch(url)
    assert await verifier(AgentCard.from_dict(old), old)  # caches the JWKS with the old key

    new_key = keys.rotate()
    new = await _fetch(url)
    assert parse_signature(new["signatures"][0]).kid == new_key.kid
    assert await verifier(AgentCard.from_dict(new), new)  # unknown kid: refetched
    assert await verifier(AgentCard.from_dict(old), old)  # old key still published

    now[0] += 601  # the grace period is over: the old key is gone from the JWKS
    fresh = CardSignatureVerifier(allowed_jku_origins=[url])
    with pytest.raises(CardVerificationError, match="not published"):
        await fresh(AgentCard.from_dict(old), old)


async def test_card_and_push_share_one_key_set(serve: Any) -> None:
    app = server(
        _card(capabilities={"pushNotifications": True}),
        echo,
        push=PushSettings(allow_hosts=["127.0.0.1"]),
        card_signing=True,
    )
    url = serve(app.app)
    raw = await _fetch(url)
    assert app.push is not None and app.card_signer is not None
    assert app.push.keys is app.card_signer.keys
    (extension,) = [
        x for x in raw["capabilities"]["extensions"] if x["uri"] == SIGNING_EXTENSION_URI
    ]
    sig = parse_signature(raw["signatures"][0])
    assert extension["params"]["jwksUri"] == sig.jku
    async with httpx.AsyncClient() as http:
        jwks = (await http.get(url + JWKS_PATH)).json()
    assert [k["kid"] for k in jwks["keys"]] == [sig.kid]
    with pytest.raises(ValueError, match="same SigningKeys"):
        server(
            _card(capabilities={"pushNotifications": True}),
            echo,
            push=PushSettings(signing=SigningKeys.generate()),
            card_signing=SigningKeys.generate(),
        )


async def test_keys_from_pem_and_jwk_sign_verifiable_cards(serve: Any) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    from_pem = SigningKey.from_pem(pem, kid="pem-key")
    import jwt

    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private))
    from_jwk = SigningKey.from_jwk({**jwk, "kid": "jwk-key"})
    assert from_jwk.kid == "jwk-key" and from_jwk.public_jwk["x"] == from_pem.public_jwk["x"]
    with pytest.raises(ValueError, match="private"):
        SigningKey.from_jwk(from_pem.public_jwk)
    for key in (from_pem, from_jwk):
        url = serve(server(_card(), echo, card_signing=SigningKeys(key)).app)
        raw = await _fetch(url)
        assert parse_signature(raw["signatures"][0]).kid == key.kid
        assert await CardSignatureVerifier(allowed_jku_origins=[url])(AgentCard.from_dict(raw), raw)


async def test_extended_card_is_signed(serve: Any) -> None:
    extended = _card(name="Extended", capabilities={"extendedAgentCard": True})
    app = server(
        _card(capabilities={"extendedAgentCard": True}),
        echo,
        extended_card=extended,
        card_signing=True,
    )
    url = serve(app.app)
    verifier = CardSignatureVerifier(allowed_jku_origins=[url])
    async with AsyncClient(url, card_verifier=verifier) as client:
        card = await client.extended_card()
    assert card.name == "Extended" and card.signatures


# -- interop with the official SDK (a2a-sdk 1.3.0, a2a.utils.signing) -----------------------------


def _sdk_card(data: dict[str, Any]) -> Any:
    from a2a.types import AgentCard as SDKCard
    from google.protobuf.json_format import ParseDict

    return ParseDict(data, SDKCard(), ignore_unknown_fields=True)


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
async def test_card_signed_by_the_official_sdk_verifies_with_ours(alg: str) -> None:
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict

    keys = SigningKeys.generate(alg)
    key = keys.active
    signer = create_agent_card_signer(
        signing_key=key.private_key,
        protected_header={"kid": key.kid, "alg": alg, "jku": None, "typ": "JOSE"},
    )
    interfaces = [{"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    raw = MessageToDict(signer(_sdk_card({**CARD, "supportedInterfaces": interfaces})))
    verifier = CardSignatureVerifier(trusted_keys=keys.jwks())
    assert await verifier(AgentCard.from_dict(raw), raw)
    tampered = {**raw, "version": "2.0"}
    with pytest.raises(CardVerificationError):
        await verifier(AgentCard.from_dict(tampered), tampered)


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
async def test_card_signed_by_us_verifies_with_the_official_sdk(serve: Any, alg: str) -> None:
    from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier
    from jwt import PyJWK

    keys = SigningKeys.generate(alg)
    url = serve(server(_card(), echo, card_signing=keys).app)
    raw = await _fetch(url)  # the served document, 0.3 fields and all
    jwks = {k["kid"]: k for k in keys.jwks()["keys"]}

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        assert jku == url + JWKS_PATH
        return PyJWK(jwks[kid])

    verify = create_signature_verifier(key_provider, [alg])
    verify(_sdk_card(raw))  # raises when no signature verifies
    with pytest.raises(InvalidSignaturesError):
        verify(_sdk_card({**raw, "name": "Impostor"}))
