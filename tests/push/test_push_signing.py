"""Signed notifications: JWKS publication, verification, tampering, expiry, replay, rotation."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import httpx
import jwt
import pytest

from simple_a2a.protocol.models import TaskState, TaskStatusUpdateEvent, status_now
from simple_a2a.protocol.push import SIGNATURE_HEADER, SIGNING_EXTENSION_URI
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server.push import SigningKey, SigningKeys
from simple_a2a.webhooks import (
    NotificationRejected,
    NotificationVerifier,
    ReplayCache,
    verify_notification,
    webhook_app,
)
from tests.push.push_helpers import Receiver, Steps, make_server, send, settings

BODY = StreamResponse(
    status_update=TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=status_now(TaskState.WORKING)
    )
).to_json()


def signed(keys: SigningKeys, body: bytes = BODY, task_id: str = "t1") -> dict[str, str]:
    return {SIGNATURE_HEADER: keys.sign(body, task_id=task_id, audience="https://hook")}


@pytest.fixture(scope="module")
def keys() -> SigningKeys:
    return SigningKeys.generate()


def test_valid_notification(keys: SigningKeys) -> None:
    note = verify_notification(signed(keys), BODY, jwks=keys.jwks(), audience="https://hook")
    assert note.task_id == "t1" and note.event.status_update is not None
    assert note.claims["request_body_sha256"] == hashlib.sha256(BODY).hexdigest()
    header = jwt.get_unverified_header(signed(keys)[SIGNATURE_HEADER])
    assert header["alg"] == "RS256" and header["kid"] == keys.active.kid


def test_tampered_body(keys: SigningKeys) -> None:
    headers = signed(keys)
    tampered = BODY.replace(b"TASK_STATE_WORKING", b"TASK_STATE_FAILED")
    with pytest.raises(NotificationRejected, match="body does not match"):
        verify_notification(headers, tampered, jwks=keys.jwks())


def test_expired_token(keys: SigningKeys) -> None:
    old = SigningKeys(keys.active, ttl=60, clock=lambda: time.time() - 3600)
    with pytest.raises(NotificationRejected, match="expired"):
        verify_notification(signed(old), BODY, jwks=keys.jwks())


def test_replay_rejected(keys: SigningKeys) -> None:
    cache = ReplayCache()
    headers = signed(keys)
    verify_notification(headers, BODY, jwks=keys.jwks(), replay_cache=cache)
    with pytest.raises(NotificationRejected, match="replayed"):
        verify_notification(headers, BODY, jwks=keys.jwks(), replay_cache=cache)


def test_wrong_key(keys: SigningKeys) -> None:
    stranger = SigningKeys.generate()
    with pytest.raises(NotificationRejected, match="unknown signing key"):
        verify_notification(signed(stranger), BODY, jwks=keys.jwks())
    # a forger reusing the published kid with their own key: bad signature
    forged = SigningKeys(SigningKey(stranger.active.private_key, "RS256", kid=keys.active.kid))
    with pytest.raises(NotificationRejected, match="invalid token"):
        verify_notification(signed(forged), BODY, jwks=keys.jwks())


def test_other_task_and_missing_header(keys: SigningKeys) -> None:
    with pytest.raises(NotificationRejected, match="another task"):
        verify_notification(signed(keys, task_id="t2"), BODY, jwks=keys.jwks())
    with pytest.raises(NotificationRejected, match="missing"):
        verify_notification({}, BODY, jwks=keys.jwks())
    with pytest.raises(NotificationRejected, match=r"(?i)audience"):
        verify_notification(signed(keys), BODY, jwks=keys.jwks(), audience="https://other")


def test_hs256_and_none_refused(keys: SigningKeys) -> None:
    for alg, key in (("HS256", "s" * 32), ("none", None)):
        token = jwt.encode({"iat": 1}, key, algorithm=alg, headers={"kid": keys.active.kid})
        with pytest.raises(NotificationRejected, match="not accepted"):
            verify_notification({SIGNATURE_HEADER: token}, BODY, jwks=keys.jwks())


def test_token_check() -> None:
    headers = {"A2A-Notification-Token": "s3cret"}
    assert verify_notification(headers, BODY, jwks=None, token="s3cret").task_id == "t1"
    with pytest.raises(NotificationRejected, match="token"):
        verify_notification({"X-A2A-Notification-Token": "nope"}, BODY, jwks=None, token="s3cret")


def test_es256() -> None:
    keys = SigningKeys.generate("ES256")
    assert keys.jwks()["keys"][0]["kty"] == "EC"
    assert verify_notification(signed(keys), BODY, jwks=keys.jwks()).claims["taskId"] == "t1"


def test_rotation_keeps_old_key_for_a_while() -> None:
    now = [1000.0]
    keys = SigningKeys.generate(retire_after=600, clock=lambda: now[0])
    old_kid = keys.active.kid
    keys.rotate()
    assert [k["kid"] for k in keys.jwks()["keys"]] == [keys.active.kid, old_kid]
    now[0] += 601
    assert [k["kid"] for k in keys.jwks()["keys"]] == [keys.active.kid]


async def test_verifier_refetches_jwks_after_rotation(serve) -> None:  # type: ignore[no-untyped-def]
    keys = SigningKeys.generate()
    srv = make_server(push=settings(signing=keys))
    url = serve(srv.app)
    verifier = NotificationVerifier(agent_url=url, min_refetch_interval=0)
    await verifier.verify(signed(keys), BODY)
    old = signed(keys)
    keys.rotate()
    await verifier.verify(signed(keys), BODY)  # unknown kid -> refetch -> ok
    await verifier.verify(old, BODY)  # the old key is still published


def test_card_announces_jwks_and_end_to_end_receiver(serve) -> None:  # type: ignore[no-untyped-def]
    executor = Steps(n=2)
    srv = make_server(executor)
    url = serve(srv.app)
    card = httpx.get(url + "/.well-known/agent-card.json").json()
    (ext,) = [x for x in card["capabilities"]["extensions"] if x["uri"] == SIGNING_EXTENSION_URI]
    assert ext["params"]["jwksUri"] == url + "/.well-known/jwks.json"
    assert ext["params"]["algorithms"] == ["RS256"]
    jwks = httpx.get(ext["params"]["jwksUri"]).json()
    assert jwks["keys"][0]["kid"] and "d" not in jwks["keys"][0]  # public only

    got: list[Any] = []
    receiver = Receiver()  # records what passed verification
    verifier = NotificationVerifier(jwks_url=ext["params"]["jwksUri"], token="tok")

    def on_notification(note: Any) -> None:  # a sync callback runs in a thread
        got.append(note)
        receiver.received.append(({}, note.event.to_json()))

    hook = serve(webhook_app(on_notification, verifier, path="/hook")) + "/hook"
    send(url, push={"url": hook, "token": "tok"})
    executor.gate.set()
    events = receiver.wait_final()
    assert len(events) == 5 and all(n.claims["aud"] == hook for n in got)
    # the same endpoint refuses a forged notification
    forged = httpx.post(hook, content=BODY, headers={"A2A-Notification-Token": "tok"})
    assert forged.status_code == 401 and "missing" in forged.json()["error"]
