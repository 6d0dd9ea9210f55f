"""Server metrics from the Prometheus endpoint after a scripted workload (docs/observability.md).

A real server on loopback with push on, a webhook receiver that refuses its first POST (503), and
a workload over JSON-RPC and HTTP+JSON: completed tasks, a stream, a failing executor, an unknown
task. Every number asserted is what that workload must produce.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from simple_a2a import AsyncClient
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.errors import TaskNotFoundError
from simple_a2a.protocol.models import Message
from simple_a2a.protocol.telemetry import TELEMETRY, disable_metrics
from simple_a2a.server import server
from simple_a2a.server.metrics import enable_metrics
from simple_a2a.server.push import PushSettings, RetryPolicy

CARD = AgentCard.from_dict(
    {
        "name": "Measured",
        "description": "metrics test",
        "version": "1",
        "capabilities": {"streaming": True, "pushNotifications": True},
    }
)


async def work(ctx: Any) -> str:
    if ctx.text == "fail":
        raise RuntimeError("boom")
    return f"done: {ctx.text}"


@pytest.fixture
def metrics() -> Iterator[None]:
    enable_metrics()
    try:
        yield
    finally:
        disable_metrics()
    assert not TELEMETRY.on


def _receiver() -> tuple[Starlette, list[int]]:
    answers: list[int] = []

    async def hook(request: Request) -> Response:
        await request.body()
        status = 503 if not answers else 200
        answers.append(status)
        return Response(status_code=status, headers={"Retry-After": "0"})

    return Starlette(routes=[Route("/hook", hook, methods=["POST"])]), answers


def _samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value, labels in the order written (sorted by us)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def _sum(samples: dict[str, float], name: str, **labels: str) -> float:
    want = [f'{k}="{v}"' for k, v in labels.items()]
    return sum(
        v
        for key, v in samples.items()
        if re.fullmatch(re.escape(name) + r"(\{.*\})?", key) and all(w in key for w in want)
    )


async def test_prometheus_endpoint_after_a_workload(serve: Any, metrics: None) -> None:
    receiver, answers = _receiver()
    hook_url = serve(receiver) + "/hook"
    push = PushSettings(
        allow_hosts=["127.0.0.1"], retry=RetryPolicy(initial_delay=0.01, jitter=0), signing=None
    )
    url = serve(server(CARD, work, push=push, metrics_path="/metrics").app)

    async with AsyncClient(url, bindings=["JSONRPC"]) as client:
        for i in range(3):
            await client.send(f"job {i}")
        await client.send("fail")
        with pytest.raises(TaskNotFoundError):
            await client.get("no-such-task")
    async with AsyncClient(url, bindings=["HTTP+JSON"]) as client:
        events = [e async for e in client.stream("streamed")]
        assert events
    async with httpx.AsyncClient() as http:
        params = {
            "message": Message.user("pushed").to_dict(),
            "configuration": {"taskPushNotificationConfig": {"url": hook_url}},
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
        assert "result" in (await http.post(url, json=body)).json()
        deadline = time.monotonic() + 10
        while True:  # the receiver answers before the dispatcher counts: poll the endpoint
            response = await http.get(url + "/metrics")
            ok = 'a2a_server_push_attempts_total{a2a_outcome="ok"}' in response.text
            if ok or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert "# TYPE rpc_server_call_duration_seconds histogram" in text
    assert "# TYPE a2a_server_requests_total counter" in text
    samples = _samples(text)

    send = {"rpc_method": "SendMessage"}
    assert _sum(samples, "a2a_server_requests_total", a2a_binding="JSONRPC", **send) == 5
    assert _sum(samples, "a2a_server_requests_total", a2a_outcome="TaskNotFoundError") == 1
    stream = {"rpc_method": "SendStreamingMessage", "a2a_binding": "HTTP+JSON"}
    assert _sum(samples, "a2a_server_requests_total", a2a_outcome="ok", **stream) == 1
    assert _sum(samples, "rpc_server_call_duration_seconds_count", **send) == 5
    inf = _sum(samples, "rpc_server_call_duration_seconds_bucket", le="+Inf", **send)
    assert inf == 5
    assert _sum(samples, "rpc_server_call_duration_seconds_sum", **send) > 0

    # tasks by state: 5 completed (3 jobs, the stream, the pushed one), 1 failed, none working
    assert _sum(samples, "a2a_server_tasks", a2a_task_state="TASK_STATE_COMPLETED") == 5
    assert _sum(samples, "a2a_server_tasks", a2a_task_state="TASK_STATE_FAILED") == 1
    assert _sum(samples, "a2a_server_tasks", a2a_task_state="TASK_STATE_WORKING") == 0
    assert _sum(samples, "a2a_server_executors_running") == 0
    assert _sum(samples, "a2a_server_streams_open") == 0

    # push: the first POST got 503, then every notification was accepted
    assert answers[0] == 503
    assert _sum(samples, "a2a_server_push_attempts_total", a2a_outcome="failed") == 1
    delivered = _sum(samples, "a2a_server_push_attempts_total", a2a_outcome="ok")
    assert 1 <= delivered <= answers.count(200)
    assert _sum(samples, "a2a_server_push_retries_total") == 1
    assert "a2a_server_push_suspended_total" not in text or (
        _sum(samples, "a2a_server_push_suspended_total") == 0
    )
    assert "# TYPE a2a_server_push_backlog gauge" in text


async def test_metrics_route_is_opt_in(serve: Any) -> None:
    url = serve(server(CARD, work).app)
    async with httpx.AsyncClient() as http:
        assert (await http.get(url + "/metrics")).status_code in (404, 405)


async def test_lease_takeovers_are_counted(metrics: None) -> None:
    """A push lease left by a replica that stopped renewing is taken over by another's scan."""
    from simple_a2a.server.leases import LeaseKeeper
    from simple_a2a.server.metrics import prometheus_text
    from simple_a2a.storage import open_storage

    storage = open_storage("memory")
    await storage.open()
    assert storage.leases is not None
    assert await storage.leases.acquire("push", "t-1/c-1", "dead-replica", 0.01)
    await asyncio.sleep(0.05)  # the dead replica never renews it
    keeper = LeaseKeeper(storage.leases, kind="push", owner="live-replica", ttl=5)
    assert await keeper.scan() == 1
    assert TELEMETRY.metrics is not None
    samples = _samples(prometheus_text(TELEMETRY.metrics.reader))
    assert _sum(samples, "a2a_server_lease_takeovers_total", a2a_lease_kind="push") == 1
