"""The client's credentials meet the card's schemes; refusals are typed and name the scheme."""

from __future__ import annotations

from collections.abc import Generator, Iterator

import httpx
import pytest

from simple_a2a import AsyncClient
from simple_a2a.auth import APIKeyAuth, BearerAuth
from simple_a2a.protocol import errors as e
from tests.auth.auth_support import serve_agent

BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with (
        serve_agent(BearerAuth(tokens={"tok-alice": "alice"})) as bearer,
        serve_agent(APIKeyAuth(keys={"k": "alice"}, location="query", name="api_key")) as query,
        serve_agent(APIKeyAuth(keys={"k": "alice"}, location="cookie", name="sid")) as cookie,
        serve_agent(APIKeyAuth(keys={"k": "alice"}, name="X-Agent-Key")) as header,
    ):
        yield {"bearer": bearer, "query": query, "cookie": cookie, "header": header}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("where", ["query", "cookie", "header"])
async def test_api_key_goes_where_the_card_says(
    urls: dict[str, str], where: str, binding: str
) -> None:
    async with AsyncClient(urls[where], api_key="k", bindings=[binding]) as client:
        task = await client.send("hello")
        assert (await client.get(task.id)).id == task.id
    async with AsyncClient(urls[where], api_key="wrong", bindings=[binding]) as client:
        with pytest.raises(e.AuthenticationError) as refused:
            await client.send("hello")
    assert refused.value.schemes == ["apiKey"]  # type: ignore[attr-defined]
    assert refused.value.status_code == 401  # type: ignore[attr-defined]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_bearer_token_and_typed_refusals(urls: dict[str, str], binding: str) -> None:
    async with AsyncClient(urls["bearer"], bearer_token="tok-alice", bindings=[binding]) as c:
        assert (await c.send("hello")).status.state.value == "TASK_STATE_COMPLETED"
    async with AsyncClient(urls["bearer"], bindings=[binding]) as client:
        card = await client.agent_card()  # the card is public
        assert list(card.security_schemes) == ["bearer"]
        with pytest.raises(e.AuthenticationError) as refused:
            await client.send("hello")
        assert refused.value.schemes == ["bearer"]  # type: ignore[attr-defined]
        assert refused.value.challenges[0].startswith("Bearer ")  # type: ignore[attr-defined]
        with pytest.raises(e.AuthenticationError):
            async for _ in client.stream("hello"):
                pass
    async with AsyncClient(urls["bearer"], bearer_token="nope", bindings=[binding]) as client:
        with pytest.raises(e.AuthenticationError) as refused:
            await client.send("hello")
        assert 'error="invalid_token"' in refused.value.challenges[0]  # type: ignore[attr-defined]


class TokenAuth(httpx.Auth):
    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = "Bearer tok-alice"
        yield request


async def test_any_httpx_auth(urls: dict[str, str]) -> None:
    async with AsyncClient(urls["bearer"], auth=TokenAuth()) as client:
        assert (await client.send("hello")).status.state.value == "TASK_STATE_COMPLETED"
