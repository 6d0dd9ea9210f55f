"""Each scheme over both bindings: no, wrong, expired and right credentials (spec §7.4)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from simple_a2a.auth import APIKeyAuth, BearerAuth, JWTAuth
from simple_a2a.protocol import errors as e
from tests.auth.auth_support import AUDIENCE, PLAIN, Issuer, adapter, serve_agent, user

BINDINGS = ["JSONRPC", "HTTP+JSON"]
Creds = dict[str, Any]  # httpx.AsyncClient keyword arguments carrying the credentials


async def _verify(token: str) -> str | None:
    return token.removeprefix("ok-") if token.startswith("ok-") else None


@dataclass
class Scheme:
    name: str  #: the scheme's name in the card
    challenge: str  #: the WWW-Authenticate auth-scheme
    auth: Callable[[Issuer], Any]
    good: Callable[[Issuer], Creds]
    bad: Callable[[Issuer], Creds]


def bearer(token: str) -> Creds:
    return {"headers": {"Authorization": f"Bearer {token}"}}


SCHEMES = {
    "bearer": Scheme(
        "bearer",
        "Bearer",
        lambda _: BearerAuth(tokens={"tok-alice": "alice"}),
        lambda _: bearer("tok-alice"),
        lambda _: bearer("tok-mallory"),
    ),
    "bearer-verifier": Scheme(
        "bearer",
        "Bearer",
        lambda _: BearerAuth(verify=_verify),
        lambda _: bearer("ok-alice"),
        lambda _: bearer("nope"),
    ),
    "apikey-header": Scheme(
        "apiKey",
        "ApiKey",
        lambda _: APIKeyAuth(keys={"k-alice": "alice"}),
        lambda _: {"headers": {"X-API-Key": "k-alice"}},
        lambda _: {"headers": {"X-API-Key": "k-mallory"}},
    ),
    "apikey-query": Scheme(
        "apiKey",
        "ApiKey",
        lambda _: APIKeyAuth(keys={"k-alice": "alice"}, location="query", name="api_key"),
        lambda _: {"params": {"api_key": "k-alice"}},
        lambda _: {"params": {"api_key": "k-mallory"}},
    ),
    "apikey-cookie": Scheme(
        "apiKey",
        "ApiKey",
        lambda _: APIKeyAuth(keys={"k-alice": "alice"}, location="cookie", name="session"),
        lambda _: {"cookies": {"session": "k-alice"}},
        lambda _: {"cookies": {"session": "k-mallory"}},
    ),
    "jwt": Scheme(
        "jwt",
        "Bearer",
        lambda iss: JWTAuth(jwks_url=iss.url + "/jwks.json", issuer=iss.url, audience=AUDIENCE),
        lambda iss: bearer(iss.token("alice")),
        lambda iss: bearer(Issuer().token("alice", iss=iss.url)),  # a key the issuer never had
    ),
    "oidc": Scheme(
        "jwt",
        "Bearer",
        lambda iss: JWTAuth(issuer=iss.url, audience=AUDIENCE),
        lambda iss: bearer(iss.token("alice")),
        lambda iss: bearer(iss.token("alice", aud="https://someone-else.example.com")),
    ),
}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer().running() as iss:
        yield iss


@pytest.fixture(scope="module")
def servers(issuer: Issuer) -> Iterator[dict[str, str]]:
    with contextlib.ExitStack() as stack:
        yield {
            key: stack.enter_context(serve_agent(scheme.auth(issuer)))
            for key, scheme in SCHEMES.items()
        }


@contextlib.asynccontextmanager
async def connect(url: str, creds: Creds | None = None) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=url, timeout=10, verify=PLAIN, **(creds or {})) as client:
        yield client


def assert_refused(out: Any, binding: str, scheme: Scheme, *, invalid: bool) -> None:
    assert out.status == 401
    assert out.reason == "UNAUTHENTICATED"
    assert out.code == (e.AuthenticationError.code if binding == "JSONRPC" else 401)
    challenge = out.headers["www-authenticate"]
    assert challenge.startswith(scheme.challenge + " ")
    assert f'scheme="{scheme.name}"' in challenge
    assert ('error="invalid_token"' in challenge) == (invalid and scheme.challenge == "Bearer")


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("key", list(SCHEMES))
async def test_no_wrong_and_right_credentials(
    servers: dict[str, str], issuer: Issuer, key: str, binding: str
) -> None:
    scheme = SCHEMES[key]
    url = servers[key]
    params = {"message": user("hello")}
    async with connect(url) as client:
        out = await adapter(binding, client).call("SendMessage", params)
        assert_refused(out, binding, scheme, invalid=False)
        assert scheme.name in out.message
        # a stream is refused before it starts: a JSON 401, not an event stream
        streamed = await adapter(binding, client).call("SendStreamingMessage", params)
        assert_refused(streamed, binding, scheme, invalid=False)
    async with connect(url, scheme.bad(issuer)) as client:
        out = await adapter(binding, client).call("SendMessage", params)
        assert_refused(out, binding, scheme, invalid=True)
        assert "mallory" not in out.message and "alice" not in out.message
    async with connect(url, scheme.good(issuer)) as client:
        out = await adapter(binding, client).call("SendMessage", params)
        assert out.ok, out
        task = out.result["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        got = await adapter(binding, client).call("GetTask", {"id": task["id"]})
        assert got.ok and got.result["id"] == task["id"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_expired_jwt(servers: dict[str, str], issuer: Issuer, binding: str) -> None:
    for key in ("jwt", "oidc"):
        async with connect(servers[key], bearer(issuer.token(expires_in=-120))) as client:
            out = await adapter(binding, client).call("SendMessage", {"message": user("hi")})
        assert_refused(out, binding, SCHEMES[key], invalid=True)
        assert "expired" in out.message


@pytest.mark.parametrize("binding", BINDINGS)
async def test_jwt_from_another_issuer(
    servers: dict[str, str], issuer: Issuer, binding: str
) -> None:
    forged = issuer.token(iss="https://evil.example.com")
    async with connect(servers["jwt"], bearer(forged)) as client:
        out = await adapter(binding, client).call("SendMessage", {"message": user("hi")})
    assert_refused(out, binding, SCHEMES["jwt"], invalid=True)


async def test_jsonrpc_batch_is_refused_whole(servers: dict[str, str]) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
        {"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
    ]
    async with connect(servers["bearer"]) as client:
        r = await client.post("/", json=batch)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == e.AuthenticationError.code
    assert "Bearer" in r.headers["www-authenticate"]


async def test_jsonrpc_refusal_keeps_the_request_id(servers: dict[str, str]) -> None:
    async with connect(servers["bearer"]) as client:
        r = await client.post(
            "/", json={"jsonrpc": "2.0", "id": "abc", "method": "ListTasks", "params": {}}
        )
    assert r.status_code == 401 and r.json()["id"] == "abc"


@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/.well-known/agent.json"])
async def test_the_card_stays_public(servers: dict[str, str], path: str) -> None:
    async with connect(servers["bearer"]) as client:
        r = await client.get(path)
    assert r.status_code == 200
    assert "www-authenticate" not in r.headers
