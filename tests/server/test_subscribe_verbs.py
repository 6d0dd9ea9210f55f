"""HTTP+JSON SubscribeToTask by POST and by GET (issue #33).

The spec contradicts itself: its prose says ``POST /tasks/{id}:subscribe`` (§5.3's table,
§11.3.2's list), a2a.proto's ``google.api.http`` option says ``get``. Both official 1.0 clients
send POST (with no body), the JS SDK's 1.0 server answers only POST; we serve both verbs and
our client sends POST (docs/interop.md).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simple_a2a.client import AsyncClient
from simple_a2a.server import server
from tests.support.agents import TestAgent, cancel_while_subscribed, make_card, serving, user


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(server(make_card(), TestAgent()).app) as base:
        yield base


async def _events(http: httpx.AsyncClient, verb: str, path: str, body: bytes | None) -> list[Any]:
    events = []
    headers = {"A2A-Version": "1.0"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    async with http.stream(verb, path, headers=headers, content=body) as answer:
        assert answer.status_code == 200, await answer.aread()
        assert answer.headers["content-type"].startswith("text/event-stream")
        async for line in answer.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
    return events


@pytest.mark.parametrize(
    ("verb", "body"),
    [("POST", None), ("POST", b"{}"), ("GET", None)],
    ids=["post", "post{}", "get"],
)
async def test_subscribe_by_either_verb_follows_the_task(
    url: str, verb: str, body: bytes | None
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        sent = await http.post(
            "/message:send",
            json={"message": user("slow"), "configuration": {"returnImmediately": True}},
            headers={"A2A-Version": "1.0"},
        )
        task_id = sent.json()["task"]["id"]
        live = asyncio.create_task(_events(http, verb, f"/tasks/{task_id}:subscribe", body))
        await asyncio.sleep(0.3)
        await http.post(f"/tasks/{task_id}:cancel", json={}, headers={"A2A-Version": "1.0"})
        events = await asyncio.wait_for(live, 5)
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_our_client_subscribes_by_post(url: str) -> None:
    """Our client's HTTP+JSON 1.0 subscribe is a POST (what the JS SDK's 1.0 server needs)."""
    verbs: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.url.path.endswith(":subscribe"):
            verbs.append(request.method)

    http = httpx.AsyncClient(event_hooks={"request": [record]}, timeout=10)
    async with AsyncClient(url, bindings=["HTTP+JSON"], http_client=http) as client:
        task = await client.send("slow", return_immediately=True)
        _, seen = await cancel_while_subscribed(client, task.id, settle=0.3, timeout=5)
    await http.aclose()
    assert verbs == ["POST"] and seen
