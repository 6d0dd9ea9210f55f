"""The policy: the card it declares, several schemes, the authorize and owner_of hooks, the
extended card per caller, custom authenticators, and the JWKS cache."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.requests import HTTPConnection

from simple_a2a.auth import APIKeyAuth, AuthPolicy, BearerAuth, Caller, JWTAuth
from simple_a2a.protocol import AgentCard
from simple_a2a.protocol import errors as e
from simple_a2a.protocol.card import HTTPAuthSecurityScheme, SecurityScheme
from tests.auth.auth_support import AUDIENCE, PLAIN, Issuer, adapter, make_card, serve_agent, user

BINDINGS = ["JSONRPC", "HTTP+JSON"]
TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
ALICE = {"Authorization": "Bearer tok-alice"}
BOB = {"Authorization": "Bearer tok-bob"}


def conn(headers: dict[str, str] | None = None, query: str = "") -> HTTPConnection:
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    return HTTPConnection(
        {"type": "http", "path": "/", "headers": raw, "query_string": query.encode()}
    )


@contextlib.asynccontextmanager
async def connect(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Any]:
    options: dict[str, Any] = {"headers": headers or {}, "timeout": 10, "verify": PLAIN}
    async with httpx.AsyncClient(base_url=url, **options) as client:
        yield client


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer().running() as iss:
        yield iss


# -- the card ---------------------------------------------------------------------------------


def test_the_served_card_lists_exactly_the_enforced_schemes(issuer: Issuer) -> None:
    bogus = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Basic"))
    declared = make_card().model_copy(update={"security_schemes": {"basic": bogus}})
    auth = [
        BearerAuth(tokens={"t": "a"}),
        APIKeyAuth(keys={"k": "a"}, location="query", name="key"),
        JWTAuth(issuer=issuer.url, audience=AUDIENCE),
    ]
    with serve_agent(auth, card=declared) as url:
        for path in ("/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard"):
            r = httpx.get(url + path, timeout=10)  # public: no credentials
            assert r.status_code == 200
        card = r.json()
    schemes = card["securitySchemes"]  # 1.0 members (and 0.3's flat ones beside them)
    assert set(schemes) == {"bearer", "apiKey", "jwt"}
    assert schemes["bearer"]["httpAuthSecurityScheme"] == {"scheme": "Bearer"}
    assert schemes["apiKey"]["apiKeySecurityScheme"] == {"location": "query", "name": "key"}
    assert schemes["jwt"]["openIdConnectSecurityScheme"] == {
        "openIdConnectUrl": issuer.url + "/.well-known/openid-configuration"
    }
    assert card["security"] == [{"bearer": []}, {"apiKey": []}, {"jwt": []}]  # 0.3 clients
    parsed = AgentCard.from_dict(card)
    assert [list(r.schemes) for r in parsed.security_requirements] == [
        ["bearer"],
        ["apiKey"],
        ["jwt"],
    ]


def test_an_unauthenticated_card_declares_nothing() -> None:
    with serve_agent(None) as url:
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=10).json()
    assert not card.get("securitySchemes") and not card.get("securityRequirements")


def test_requirements_with_scopes_and_combinations() -> None:
    policy = AuthPolicy(
        [BearerAuth(tokens={"t": "a"}), APIKeyAuth(keys={"k": "a"})],
        requirements=[{"bearer": ["read"]}, ["bearer", "apiKey"]],
    )
    card = policy.decorate_card(make_card()).to_dict()
    assert card["securityRequirements"] == [
        {"schemes": {"bearer": {"list": ["read"]}}},
        {"schemes": {"bearer": {"list": []}, "apiKey": {"list": []}}},
    ]
    with pytest.raises(ValueError, match="names no enforced scheme"):
        AuthPolicy([BearerAuth(tokens={})], requirements=[["oauth"]])
    with pytest.raises(ValueError, match="two authenticators"):
        AuthPolicy([BearerAuth(tokens={}), BearerAuth(tokens={})])
    with pytest.raises(ValueError):
        BearerAuth()
    with pytest.raises(ValueError):
        APIKeyAuth(keys={}, location="body")
    with pytest.raises(ValueError):
        JWTAuth(jwks_url="https://x/jwks", algorithms=["HS256"])


# -- several schemes at once (any one requirement; all schemes of a requirement) ---------------


async def test_any_one_requirement_satisfies() -> None:
    policy = AuthPolicy([BearerAuth(tokens={"t": "alice"}), APIKeyAuth(keys={"k": "bob"})])
    assert (await policy.authenticate(conn({"Authorization": "Bearer t"}))).identity == "alice"
    assert (await policy.authenticate(conn({"X-API-Key": "k"}))).identity == "bob"
    # a wrong bearer token does not spoil a valid API key
    both = conn({"Authorization": "Bearer nope", "X-API-Key": "k"})
    assert (await policy.authenticate(both)).scheme == "apiKey"
    with pytest.raises(e.AuthenticationError) as missing:
        await policy.authenticate(conn())
    assert "bearer or apiKey" in missing.value.message
    assert len(missing.value.challenges) == 2  # type: ignore[attr-defined]


async def test_a_combined_requirement_needs_every_scheme() -> None:
    policy = AuthPolicy(
        [BearerAuth(tokens={"t": "alice"}), APIKeyAuth(keys={"k": "app"})],
        requirements=[["bearer", "apiKey"]],
    )
    with pytest.raises(e.AuthenticationError, match="bearer and apiKey"):
        await policy.authenticate(conn({"Authorization": "Bearer t"}))
    caller = await policy.authenticate(conn({"Authorization": "Bearer t", "X-API-Key": "k"}))
    assert caller.identity == "alice" and caller.scheme == "bearer"


async def test_verifiers_sync_async_and_caller_objects() -> None:
    rich = Caller("carol", claims={"role": "admin"})
    sync = BearerAuth(verify=lambda t: rich if t == "c" else None)
    got = await sync.authenticate(conn({"Authorization": "Bearer c"}))
    assert got == Caller("carol", scheme="bearer", claims={"role": "admin"})
    assert await sync.authenticate(conn({"Authorization": "Basic Zm9vOmJhcg=="})) is None
    with pytest.raises(e.AuthenticationError):
        await sync.authenticate(conn({"Authorization": "Bearer "}))

    async def check(key: str) -> bool | str:
        return "dave" if key == "d" else False

    query = APIKeyAuth(verify=check, location="query", name="api_key")
    assert (await query.authenticate(conn(query="api_key=d"))).identity == "dave"  # type: ignore[union-attr]
    with pytest.raises(e.AuthenticationError, match="API key is not valid"):
        await query.authenticate(conn(query="api_key=x"))


async def test_a_custom_authenticator_is_three_members() -> None:
    class TeamHeader:
        scheme_name = "team"

        def security_scheme(self) -> SecurityScheme:
            return SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="X-Team"))

        async def authenticate(self, request: HTTPConnection) -> Caller | None:
            team = request.headers.get("x-team")
            return Caller(team, scheme="team") if team else None

    policy = AuthPolicy(TeamHeader())
    assert (await policy.authenticate(conn({"X-Team": "red"}))).identity == "red"
    assert policy.security_schemes()["team"].http_auth_security_scheme is not None


# -- authorize (403) and owner_of -----------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_authorize_hook_refuses_with_403(binding: str) -> None:
    async def authorize(caller: Caller, operation: str) -> bool:
        return caller.identity == "alice" or operation in ("GetTask", "ListTasks")

    policy = AuthPolicy(BearerAuth(tokens=TOKENS), authorize=authorize)
    with serve_agent(policy) as url:
        async with connect(url, BOB) as bob:
            out = await adapter(binding, bob).call("SendMessage", {"message": user("hi")})
            assert out.status == 403 and out.reason == "PERMISSION_DENIED"
            assert out.code == (e.PermissionDeniedError.code if binding == "JSONRPC" else 403)
            assert "www-authenticate" not in out.headers
            streamed = await adapter(binding, bob).call(
                "SubscribeToTask", {"id": "0f7e1b7a-0000-4000-8000-000000000000"}
            )
            assert streamed.status == 403
            listed = await adapter(binding, bob).call("ListTasks", {})
            assert listed.ok
        async with connect(url, ALICE) as alice:
            out = await adapter(binding, alice).call("SendMessage", {"message": user("hi")})
            assert out.ok


async def test_owner_of_shares_tasks_within_a_team() -> None:
    teams = {"alice": "red", "bob": "red", "carol": "blue"}
    policy = AuthPolicy(
        BearerAuth(tokens={"a": "alice", "b": "bob", "c": "carol"}),
        owner_of=lambda caller: teams[caller.identity],
    )
    with serve_agent(policy) as url:
        async with connect(url, {"Authorization": "Bearer a"}) as alice:
            sent = await adapter("JSONRPC", alice).call("SendMessage", {"message": user("hi")})
        task_id = sent.result["task"]["id"]
        async with connect(url, {"Authorization": "Bearer b"}) as bob:
            assert (await adapter("JSONRPC", bob).call("GetTask", {"id": task_id})).ok
        async with connect(url, {"Authorization": "Bearer c"}) as carol:
            out = await adapter("JSONRPC", carol).call("GetTask", {"id": task_id})
            assert out.reason == "TASK_NOT_FOUND"


# -- the extended card (spec §13.3) ---------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_extended_card_is_per_caller_and_needs_credentials(binding: str) -> None:
    def extended(caller: Caller | None) -> AgentCard:
        assert caller is not None
        return make_card().model_copy(update={"name": f"agent for {caller.identity}"})

    with serve_agent(
        BearerAuth(tokens=TOKENS),
        capabilities={"extendedAgentCard": True},
        extended_card=extended,
    ) as url:
        async with connect(url) as anonymous:
            out = await adapter(binding, anonymous).call("GetExtendedAgentCard", {})
            assert out.status == 401 and out.reason == "UNAUTHENTICATED"
        for headers, name in ((ALICE, "alice"), (BOB, "bob")):
            async with connect(url, headers) as client:
                out = await adapter(binding, client).call("GetExtendedAgentCard", {})
                assert out.ok and out.result["name"] == f"agent for {name}"


# -- JWT details -------------------------------------------------------------------------------


async def test_jwks_is_cached_and_refetched_for_a_new_key(issuer: Issuer) -> None:
    auth = JWTAuth(jwks_url=issuer.url + "/jwks.json", issuer=issuer.url, audience=AUDIENCE)
    for _ in range(3):
        caller = await auth.verify(issuer.token("alice", role="admin"))
    assert caller.identity == "alice" and caller.claims["role"] == "admin"
    assert auth.keys.fetches == 1
    issuer.add_key("k2")  # key rotation: an unknown kid triggers one refetch
    auth.keys.min_refresh = 0
    assert (await auth.verify(issuer.token("bob", kid="k2"))).identity == "bob"
    assert auth.keys.fetches == 2


async def test_jwt_refusals(issuer: Issuer) -> None:
    auth = JWTAuth(jwks_url=issuer.url + "/jwks.json", issuer=issuer.url, audience=AUDIENCE)
    import jwt

    unsigned = jwt.encode({"sub": "alice", "exp": 2**40}, key=None, algorithm="none")
    symmetric = jwt.encode({"sub": "alice", "exp": 2**40}, "s" * 32, algorithm="HS256")
    foreign = Issuer()
    foreign.keys = {"k9": foreign.keys["k1"]}
    for token, why in (
        ("not-a-jwt", "not a JWT"),
        (unsigned, "algorithm"),
        (symmetric, "algorithm"),
        (issuer.token(aud="https://other.example.com"), "aud"),
        (issuer.token(expires_in=-3600), "expired"),
        (foreign.token(kid="k9"), "not signed by a key"),
        (issuer.token(sub=""), "no sub claim"),
    ):
        with pytest.raises(e.AuthenticationError, match=why):
            await auth.verify(token)


async def test_an_unreachable_issuer_is_a_server_error(issuer: Issuer) -> None:
    auth = JWTAuth(jwks_url=issuer.url + "/jwks.json", issuer=issuer.url, audience=AUDIENCE)
    issuer.fail = True
    try:
        with pytest.raises(e.InternalError):
            await auth.verify(issuer.token())
    finally:
        issuer.fail = False
    assert (await auth.verify(issuer.token())).identity == "alice"


async def test_owners_namespaced_by_scheme_on_a_multi_scheme_server() -> None:
    """A bearer token for "alice" and an API key held by "alice" do not share tasks by default
    (#16 item 10); ``owner_of`` joins them on purpose."""
    bearer = BearerAuth(tokens={"t": "alice"})
    apikey = APIKeyAuth(keys={"k": "alice"})
    as_bearer, as_key = {"Authorization": "Bearer t"}, {"X-API-Key": "k"}
    with serve_agent(AuthPolicy([bearer, apikey])) as url:
        async with connect(url, as_bearer) as client:
            sent = await adapter("JSONRPC", client).call("SendMessage", {"message": user("hi")})
        task_id = sent.result["task"]["id"]
        async with connect(url, as_key) as client:
            out = await adapter("JSONRPC", client).call("GetTask", {"id": task_id})
            assert out.reason == "TASK_NOT_FOUND"
            listed = await adapter("JSONRPC", client).call("ListTasks", {})
            assert listed.result["tasks"] == []
    joined = AuthPolicy([bearer, apikey], owner_of=lambda caller: caller.identity)
    with serve_agent(joined) as url:
        async with connect(url, as_bearer) as client:
            sent = await adapter("JSONRPC", client).call("SendMessage", {"message": user("hi")})
        async with connect(url, as_key) as client:
            out = await adapter("JSONRPC", client).call(
                "GetTask", {"id": sent.result["task"]["id"]}
            )
            assert out.ok
