"""Unit tests with httpx.MockTransport: headers, negotiation, discovery, error mapping, retries."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from simple_a2a import (
    AuthenticationError,
    InvalidAgentResponseError,
    Message,
    Task,
    TaskNotFoundError,
    TaskState,
    VersionNotSupportedError,
)
from simple_a2a.client import (
    AsyncClient,
    CardVerificationError,
    ClientTimeoutError,
    ConnectError,
    DiscoveryError,
    NegotiationError,
    RetryPolicy,
)

BASE = "http://agent.test"
TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
NO_WAIT = RetryPolicy(max_attempts=3, backoff=0)


def card(*interfaces: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    return {
        "name": "mock",
        "description": "mock agent",
        "version": "1",
        "supportedInterfaces": [
            {"protocolBinding": b, "protocolVersion": v, "url": BASE + path}
            for b, v, path in interfaces
        ],
        "capabilities": {"streaming": True},
        "skills": [],
        **extra,
    }


JSONRPC_10 = ("JSONRPC", "1.0", "/rpc")
REST_10 = ("HTTP+JSON", "1.0", "/rest")


class Recorder:
    """A mock agent: serves ``card_body`` and answers calls with ``answer(request)``."""

    def __init__(
        self, card_body: dict[str, Any] | None, answer: Callable[[httpx.Request], httpx.Response]
    ) -> None:
        self.card_body = card_body
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.card_body is None:
            return self.answer(request)
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=self.card_body)
        return self.answer(request)

    def client(self, **options: Any) -> AsyncClient:
        return AsyncClient(BASE, transport=httpx.MockTransport(self), **options)

    @property
    def calls(self) -> list[httpx.Request]:
        return [r for r in self.requests if not r.url.path.startswith("/.well-known/")]


def rpc_result(result: Any) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})

    return answer


async def test_headers_on_every_request() -> None:
    agent = Recorder(
        card(
            JSONRPC_10,
            securitySchemes={
                "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Secret"}}
            },
        ),
        rpc_result({"task": TASK}),
    )
    async with agent.client(
        headers={"X-Trace": "1"}, bearer_token="tok", api_key="k", extensions=["urn:e1", "urn:e2"]
    ) as client:
        task = await client.send("hi")
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    call = agent.calls[0]
    assert call.headers["A2A-Version"] == "1.0"
    assert call.headers["Authorization"] == "Bearer tok"
    assert call.headers["X-Secret"] == "k"
    assert call.headers["X-Trace"] == "1"
    assert call.headers["A2A-Extensions"] == "urn:e1,urn:e2"
    body = json.loads(call.content)
    assert body["method"] == "SendMessage"
    assert body["params"]["message"]["parts"] == [{"text": "hi"}]
    assert "configuration" not in body["params"]
    assert all(r.headers["A2A-Version"] == "1.0" for r in agent.requests)


async def test_send_options_and_message_continuation() -> None:
    agent = Recorder(
        card(JSONRPC_10),
        rpc_result(
            {"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}}
        ),
    )
    async with agent.client() as client:
        reply = await client.send(
            Message.user("more"),
            task_id="t1",
            context_id="c1",
            return_immediately=True,
            history_length=2,
        )
    assert isinstance(reply, Message) and reply.text == "ok"
    params = json.loads(agent.calls[0].content)["params"]
    assert params["message"]["taskId"] == "t1" and params["message"]["contextId"] == "c1"
    assert params["configuration"] == {"returnImmediately": True, "historyLength": 2}


async def test_rest_paths_query_params_and_tenant() -> None:
    iface = ("HTTP+JSON", "1.0", "/rest")
    body = card(iface)
    body["supportedInterfaces"][0]["tenant"] = "acme"

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/tasks"):
            return httpx.Response(200, json={"tasks": [TASK], "nextPageToken": ""})
        return httpx.Response(200, json=TASK)

    agent = Recorder(body, answer)
    async with agent.client() as client:
        await client.list(
            context_id="c1", status="TASK_STATE_WORKING", page_size=5, include_artifacts=True
        )
        await client.get("t 1", history_length=3)
        await client.cancel("t1")
    listing, get, cancel = agent.calls
    assert listing.method == "GET" and listing.url.path == "/rest/acme/tasks"
    assert dict(listing.url.params) == {
        "contextId": "c1",
        "status": "TASK_STATE_WORKING",
        "pageSize": "5",
        "includeArtifacts": "true",
    }
    assert get.url.raw_path == b"/rest/acme/tasks/t%201?historyLength=3"
    assert cancel.method == "POST" and cancel.url.path == "/rest/acme/tasks/t1:cancel"
    assert json.loads(cancel.content) == {"id": "t1"}


async def test_jsonrpc_carries_the_interface_tenant() -> None:
    body = card(JSONRPC_10)
    body["supportedInterfaces"][0]["tenant"] = "acme"
    agent = Recorder(body, rpc_result(TASK))
    async with agent.client() as client:
        await client.get("t1")
    assert json.loads(agent.calls[0].content)["params"] == {"tenant": "acme", "id": "t1"}


async def test_negotiation_prefers_1_0_and_the_given_bindings() -> None:
    # (GRPC after REST: with the grpc extra installed, GRPC is a binding the client speaks)
    body = card(("JSONRPC", "0.3", "/v03"), REST_10, ("GRPC", "1.0", "/grpc"), JSONRPC_10)
    agent = Recorder(body, lambda r: httpx.Response(200, json=TASK))
    async with agent.client() as client:
        await client.get("t1")
        assert client.protocol_version == "1.0"
        assert client.interface is not None and client.interface.url == BASE + "/rest"
    agent = Recorder(body, rpc_result(TASK))
    async with agent.client(bindings=["JSONRPC", "HTTP+JSON"]) as client:
        await client.get("t1")
        assert client.interface is not None and client.interface.url == BASE + "/rpc"


async def test_only_0_3_requires_consent() -> None:
    agent = Recorder(card(("JSONRPC", "0.3", "/rpc")), rpc_result(TASK))
    async with agent.client(allow_v03=False) as client:
        with pytest.raises(NegotiationError, match="allow_v03"):
            await client.get("t1")
    async with agent.client(bindings=["GRPC"]) as client:
        with pytest.raises(NegotiationError):
            await client.get("t1")


async def test_a_0_3_agent_found_at_agent_json_is_spoken_to_in_0_3() -> None:
    v03_card = {
        "name": "old",
        "description": "0.3 agent",
        "version": "1",
        "url": BASE + "/rpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {},
        "skills": [],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent.json":
            return httpx.Response(200, json=v03_card)
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(404)
        body = json.loads(request.content)
        result = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})

    agent = Recorder(None, handler)
    async with agent.client() as client:
        task = await client.send("hi")
        assert client.protocol_version == "0.3"
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    call = agent.calls[-1]
    assert json.loads(call.content)["method"] == "message/send"
    assert json.loads(call.content)["params"]["message"]["role"] == "user"
    assert call.headers["A2A-Version"] == "0.3"


async def test_a_card_can_be_given_and_verified() -> None:
    seen: list[str] = []

    async def verifier(card_obj: Any, raw: dict[str, Any]) -> bool:
        seen.append(card_obj.name)
        return True

    agent = Recorder(None, rpc_result(TASK))
    client = AsyncClient(
        card(JSONRPC_10), transport=httpx.MockTransport(agent), card_verifier=verifier
    )
    await client.get("t1")
    assert seen == ["mock"] and not any("well-known" in str(r.url) for r in agent.requests)

    def reject(card_obj: Any, raw: dict[str, Any]) -> bool:
        return False

    agent = Recorder(card(JSONRPC_10), rpc_result(TASK))
    with pytest.raises(CardVerificationError):
        await agent.client(card_verifier=reject).get("t1")


async def test_no_card_is_a_discovery_error() -> None:
    agent = Recorder(None, lambda r: httpx.Response(404))
    with pytest.raises(DiscoveryError, match=r"agent\.json"):
        await agent.client().get("t1")


@pytest.mark.parametrize(
    ("status", "body", "error", "code"),
    [
        (
            200,
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "nope"}},
            TaskNotFoundError,
            200,
        ),
        (
            200,
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32009, "message": "v"}},
            VersionNotSupportedError,
            200,
        ),
        (401, "Unauthorized", AuthenticationError, 401),
        (200, "<html>", InvalidAgentResponseError, 200),
        (200, {"jsonrpc": "2.0", "id": 1, "result": {"id": ""}}, InvalidAgentResponseError, 200),
    ],
)
async def test_jsonrpc_error_mapping(status: int, body: Any, error: type, code: int) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        sent_id = json.loads(request.content)["id"]  # a JSON-RPC answer echoes the id
        return httpx.Response(status, json={**body, "id": sent_id} if "id" in body else body)

    agent = Recorder(card(JSONRPC_10), answer)
    with pytest.raises(error) as info:
        await agent.client().get("t1")
    assert info.value.status_code == code


async def test_rest_error_mapping() -> None:
    error_body = {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task t1 not found",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "TASK_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                    "metadata": {"taskId": "t1"},
                }
            ],
        }
    }
    agent = Recorder(card(REST_10), lambda r: httpx.Response(404, json=error_body))
    with pytest.raises(TaskNotFoundError) as info:
        await agent.client().get("t1")
    assert info.value.status_code == 404
    assert info.value.metadata["taskId"] == "t1"
    assert info.value.message == "Task t1 not found"


def flaky(exc: Exception, failures: int, then: Callable[[httpx.Request], httpx.Response]) -> Any:
    count = {"n": 0}

    def answer(request: httpx.Request) -> httpx.Response:
        count["n"] += 1
        if count["n"] <= failures:
            raise exc
        return then(request)

    return answer


async def test_connect_errors_are_retried_for_every_operation() -> None:
    refused = httpx.ConnectError("refused")
    agent = Recorder(card(JSONRPC_10), flaky(refused, 2, rpc_result({"task": TASK})))
    assert isinstance(await agent.client(retry=NO_WAIT).send("hi"), Task)
    assert len(agent.calls) == 3
    agent = Recorder(card(JSONRPC_10), flaky(refused, 5, rpc_result({"task": TASK})))
    with pytest.raises(ConnectError):
        await agent.client(retry=NO_WAIT).send("hi")
    assert len(agent.calls) == 3


async def test_read_timeouts_are_retried_only_for_idempotent_reads() -> None:
    timeout = httpx.ReadTimeout("slow")
    agent = Recorder(card(JSONRPC_10), flaky(timeout, 1, rpc_result({"task": TASK})))
    with pytest.raises(ClientTimeoutError):
        await agent.client(retry=NO_WAIT).send("hi")
    assert len(agent.calls) == 1
    agent = Recorder(card(JSONRPC_10), flaky(timeout, 1, rpc_result(TASK)))
    assert (await agent.client(retry=NO_WAIT).get("t1")).id == "t1"
    assert len(agent.calls) == 2


async def test_per_call_timeout() -> None:
    agent = Recorder(card(JSONRPC_10), rpc_result(TASK))
    async with agent.client(timeout=7.0) as client:
        await client.get("t1")
        await client.get("t1", timeout=0.5)
    first, second = agent.calls
    assert first.extensions["timeout"]["read"] == 7.0
    assert second.extensions["timeout"]["read"] == 0.5


async def test_an_injected_http_client_is_used_and_not_closed() -> None:
    agent = Recorder(card(JSONRPC_10), rpc_result(TASK))
    http = httpx.AsyncClient(transport=httpx.MockTransport(agent))
    async with AsyncClient(BASE, http_client=http) as client:
        await client.get("t1")
    assert not http.is_closed
    await http.aclose()
