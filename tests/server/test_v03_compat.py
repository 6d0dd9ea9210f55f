"""0.3 clients on the same URL (spec/v1.0 whats-new-v1.md; 0.3 specification.md §3, §7).

No ``A2A-Version`` header anywhere here: the liberal rule (docs/server.md) serves a 0.3 method
name or a ``/v1/...`` route as 0.3 (spec §3.6.2: empty means 0.3) and a 1.0-only name as 1.0.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from simple_a2a.server import server
from tests.support import rpc
from tests.support.agents import TestAgent, make_card, serving


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(server(make_card(pushNotifications=True), TestAgent()).app) as url:
        yield url


@pytest.fixture
async def client(base: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base, timeout=10) as c:
        yield c


def msg03(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": f"m-{text}",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


async def call_v03(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    r = await client.post("/", json=rpc(method, params))
    body = r.json()
    assert "error" not in body, body
    assert r.headers["a2a-version"] == "0.3"
    return body["result"]


async def sse(client: httpx.AsyncClient, method: str, url: str, **kw: Any) -> list[Any]:
    async with aconnect_sse(client, method, url, **kw) as src:
        return [json.loads(ev.data) async for ev in src.aiter_sse()]


@pytest.mark.parametrize("send", ["message/send", "tasks/send"])
async def test_send_and_get_in_03_shapes(client: httpx.AsyncClient, send: str) -> None:
    task = await call_v03(client, send, {"message": msg03("hello")})
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0] == {"kind": "text", "text": "echo: hello"}
    got = await call_v03(client, "tasks/get", {"id": task["id"], "historyLength": 1})
    assert got["id"] == task["id"] and len(got["history"]) == 1


@pytest.mark.parametrize("method", ["message/stream", "tasks/sendSubscribe"])
async def test_stream_in_03_shapes(client: httpx.AsyncClient, method: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": msg03("steps 2")}}
    events = [e["result"] for e in await sse(client, "POST", "/", json=body)]
    assert events[0]["kind"] == "task"
    assert [e["kind"] for e in events[1:]].count("artifact-update") == 2
    assert events[-1]["kind"] == "status-update" and events[-1]["final"] is True
    assert events[-1]["status"]["state"] == "completed"


async def test_cancel_resubscribe_and_errors(client: httpx.AsyncClient) -> None:
    params = {"message": msg03("slow"), "configuration": {"blocking": False}}
    task = await call_v03(client, "message/send", params)
    body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": task["id"]}}
    live = asyncio.create_task(sse(client, "POST", "/", json=body))
    await asyncio.sleep(0.2)
    canceled = await call_v03(client, "tasks/cancel", {"id": task["id"]})
    assert canceled["status"]["state"] == "canceled"
    events = [e["result"] for e in await asyncio.wait_for(live, 5)]
    assert events[-1]["status"]["state"] == "canceled" and events[-1]["final"] is True
    r = await client.post(
        "/", json={"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"id": "zz"}}
    )
    assert r.json()["error"]["code"] == -32001


@pytest.mark.parametrize("prefix", ["tasks/pushNotificationConfig", "tasks/pushNotification"])
async def test_push_config_methods(client: httpx.AsyncClient, prefix: str) -> None:
    task = await call_v03(client, "message/send", {"message": msg03("x")})
    config = {"url": "https://93.184.216.34/hook", "token": "t"}
    made = await call_v03(
        client, f"{prefix}/set", {"taskId": task["id"], "pushNotificationConfig": config}
    )
    assert made["pushNotificationConfig"]["url"] == config["url"]
    got = await call_v03(client, f"{prefix}/get", {"id": task["id"]})  # 0.3: config id optional
    assert got["taskId"] == task["id"]
    listed = await call_v03(client, f"{prefix}/list", {"id": task["id"]})
    assert len(listed) == 1
    await call_v03(
        client,
        f"{prefix}/delete",
        {"id": task["id"], "pushNotificationConfigId": made["pushNotificationConfig"]["id"]},
    )


async def test_x_a2a_extensions_header(client: httpx.AsyncClient) -> None:
    from tests.support.agents import EXT

    r = await client.post(
        "/",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {"message": msg03("whoami")},
        },
        headers={"X-A2A-Extensions": EXT},
    )
    assert EXT in r.json()["result"]["artifacts"][0]["parts"][0]["text"]


# -- 0.3 REST: /v1/... routes, 0.3 ProtoJSON --


async def test_v1_rest_routes(client: httpx.AsyncClient) -> None:
    send = {
        "request": {"message_id": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]},
        "configuration": {"blocking": True},
    }
    r = await client.post("/v1/message:send", json=send)
    assert r.headers["a2a-version"] == "0.3"
    task = r.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["history"][0]["content"] == [{"text": "hi"}]
    got = (await client.get(f"/v1/tasks/{task['id']}", params={"historyLength": 0})).json()
    assert got["id"] == task["id"] and "history" not in got
    # the 0.3 JSON-RPC shapes are accepted too (liberal input)
    r = await client.post("/v1/message:send", json={"message": msg03("again")})
    assert r.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # non-blocking (proto3: absent blocking is false), cancel → CANCELLED (0.3 spelling)
    r = await client.post(
        "/v1/message:send",
        json={"message": {"messageId": "m2", "role": "ROLE_USER", "content": [{"text": "slow"}]}},
    )
    slow = r.json()["task"]
    assert slow["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    live = asyncio.create_task(sse(client, "POST", f"/v1/tasks/{slow['id']}:subscribe"))
    await asyncio.sleep(0.2)
    r = await client.post(f"/v1/tasks/{slow['id']}:cancel")
    assert r.json()["status"]["state"] == "TASK_STATE_CANCELLED"
    events = await asyncio.wait_for(live, 5)
    assert events[-1]["statusUpdate"]["final"] is True
    r = await client.get("/v1/tasks/nope")
    assert r.status_code == 404 and r.json()["type"] == "TaskNotFoundError"
    assert r.json()["code"] == -32001  # the JSON-RPC code, for the JS 0.3 client (issue 15)
    assert r.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


async def test_v1_rest_stream_and_push(client: httpx.AsyncClient) -> None:
    body = {"message": {"messageId": "m3", "role": "ROLE_USER", "content": [{"text": "steps 2"}]}}
    events = await sse(client, "POST", "/v1/message:stream", json=body)
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    tid = events[0]["task"]["id"]
    create = {
        "parent": f"tasks/{tid}",
        "config_id": "c1",
        "config": {"push_notification_config": {"url": "https://93.184.216.34/h"}},
    }
    made = (await client.post(f"/v1/tasks/{tid}/pushNotificationConfigs", json=create)).json()
    assert made["name"] == f"tasks/{tid}/pushNotificationConfigs/c1"
    got = (await client.get(f"/v1/tasks/{tid}/pushNotificationConfigs/c1")).json()
    assert got["pushNotificationConfig"]["url"] == "https://93.184.216.34/h"
    listed = (await client.get(f"/v1/tasks/{tid}/pushNotificationConfigs")).json()
    assert [c["pushNotificationConfig"]["id"] for c in listed["configs"]] == ["c1"]
    r = await client.delete(f"/v1/tasks/{tid}/pushNotificationConfigs/c1")
    assert r.status_code == 200
