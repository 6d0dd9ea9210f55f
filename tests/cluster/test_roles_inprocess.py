"""Roles in one process (a web and a worker server on one MemoryStorage): the queue's depth
bound refuses with RateLimitError before anything is stored, the queue gauges, the settings'
checks, and a role the storage cannot serve."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simple_a2a.protocol import AgentCard
from simple_a2a.protocol.card import AgentCapabilities
from simple_a2a.protocol.telemetry import disable_metrics
from simple_a2a.server import RequestContext, server
from simple_a2a.server.metrics import enable_metrics
from simple_a2a.server.workqueue import QueueSettings
from simple_a2a.storage.memory import MemoryStorage

CARD = AgentCard(
    name="roles", description="d", version="1", capabilities=AgentCapabilities(streaming=True)
)


async def echo(ctx: RequestContext) -> str:
    return f"ran: {ctx.text}"


def _send(text: str, **config: Any) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    params: dict[str, Any] = {"message": message}
    if config:
        params["configuration"] = config
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}


@pytest.fixture
def metrics() -> Iterator[None]:
    enable_metrics()
    try:
        yield
    finally:
        disable_metrics()


async def test_a_full_queue_refuses_before_storing_and_gauges_report_it(metrics: None) -> None:
    storage = MemoryStorage()
    web = server(
        CARD, echo, storage=storage, role="web", metrics_path="/metrics",
        queue=QueueSettings(max_depth=2, retry_after=3),
    )  # fmt: skip
    await web.startup()
    try:
        transport = httpx.ASGITransport(app=web.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://web") as client:
            for n in range(2):  # no worker yet: they wait
                answer = await client.post("/", json=_send(f"m{n}", returnImmediately=True))
                assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
            refused = (await client.post("/", json=_send("m2", returnImmediately=True))).json()
            assert refused["error"]["code"] == -32603, refused  # RateLimitError (spec §3.3.2)
            assert "QueueSettings.max_depth" in refused["error"]["message"]
            assert len(await storage.tasks.active_tasks()) == 2  # the refused one: not stored
            assert web.work is not None
            await web.work.refresh_stats()
            text = (await client.get("/metrics")).text
            assert "a2a_server_queue_depth 2" in text.replace(".0", ""), text
            assert "a2a_server_queue_oldest_age_seconds" in text
        worker = server(CARD, echo, storage=storage, role="worker")
        await worker.startup()
        try:
            assert worker.work is not None
            await worker.work.claim_once()
            assert web.work.queue is storage.queue
            assert (await storage.queue.stats()).depth == 0  # type: ignore[union-attr]
        finally:
            await worker.shutdown()
    finally:
        await web.shutdown()


def test_settings_and_roles_are_checked() -> None:
    with pytest.raises(ValueError, match="max_concurrent_tasks"):
        QueueSettings(max_concurrent_tasks=0)
    with pytest.raises(ValueError, match="role"):
        server(CARD, echo, role="cook")  # type: ignore[arg-type]
    worker = server(CARD, echo, role="worker")
    assert worker.work is not None and worker.work.capacity == 100  # the worker default
    everything = server(CARD, echo)
    assert everything.work is not None and everything.work.capacity is None  # as before
