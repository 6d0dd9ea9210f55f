"""Push configs bounded per task and listed in pages; creation-time URL check (#16 items 2, 12)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response

from simple_a2a.server import Limits
from tests.push.push_helpers import Receiver, Steps, is_completed, make_server, send, settings
from tests.push.push_helpers import post_rpc as rpc


def _create(url: str, task_id: str, hook: str, config_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"taskId": task_id, "url": hook}
    if config_id:
        params["id"] = config_id
    return rpc(url, "CreateTaskPushNotificationConfig", params)


def test_configs_per_task_capped_with_an_error_naming_the_limit(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(make_server(limits=Limits(max_push_configs_per_task=3)).app)
    task = send(url)["id"]
    for i in range(3):
        assert "result" in _create(url, task, f"http://127.0.0.1:1/hook{i}", f"c{i}")
    refused = _create(url, task, "http://127.0.0.1:1/hook3", "c3")
    assert refused["error"]["code"] == -32602, refused
    assert "Limits.max_push_configs_per_task = 3" in refused["error"]["message"]
    # replacing an existing config is not a new one
    assert "result" in _create(url, task, "http://127.0.0.1:1/again", "c1")
    listed = rpc(url, "ListTaskPushNotificationConfigs", {"taskId": task})["result"]
    assert sorted(c["id"] for c in listed["configs"]) == ["c0", "c1", "c2"]


def test_list_configs_in_pages(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(make_server().app)
    task = send(url)["id"]
    for i in range(5):
        assert "result" in _create(url, task, f"http://127.0.0.1:1/h{i}", f"c{i}")
    seen: list[str] = []
    token = ""
    while True:
        params: dict[str, Any] = {"taskId": task, "pageSize": 2}
        if token:
            params["pageToken"] = token
        page = rpc(url, "ListTaskPushNotificationConfigs", params)["result"]
        assert len(page["configs"]) <= 2
        seen += [c["id"] for c in page["configs"]]
        token = page.get("nextPageToken") or ""
        if not token:
            break
    assert seen == ["c0", "c1", "c2", "c3", "c4"]


def test_unresolvable_name_accepted_at_creation(serve) -> None:  # type: ignore[no-untyped-def]
    """Split-horizon DNS and offline development: the connect-time check is the guard."""
    url = serve(make_server(push=settings(allow_hosts=[])).app)
    task = send(url)["id"]
    created = _create(url, task, "http://hooks.invalid/notify")  # RFC 2606: never resolves
    assert "result" in created, created
    # what is certainly forbidden is still refused at creation
    for hook in ("http://10.1.2.3/hook", "http://[::1]/hook", "http://localhost/hook"):
        refused = _create(url, task, hook)
        assert refused["error"]["code"] == -32602, (hook, refused)


class _CountingReceiver(Receiver):
    """Holds each notification a moment so deliveries overlap; records the most in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most_in_flight = 0

    async def endpoint(self, request: Request) -> Response:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.05)  # overlap, not a timing assertion
            return await super().endpoint(request)
        finally:
            self.in_flight -= 1


def test_deliveries_in_flight_bounded(serve) -> None:  # type: ignore[no-untyped-def]
    """Six configs on one task, two POSTs in flight at most; every config still gets its
    terminal notification (the semaphore queues fairly, nothing starves)."""
    receiver = _CountingReceiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps(n=2)
    limits = Limits(max_concurrent_deliveries=2, max_push_configs_per_task=6)
    url = serve(make_server(executor, limits=limits).app)
    task = send(url)["id"]
    for i in range(6):
        assert "result" in _create(url, task, hook, f"c{i}")
    executor.gate.set()
    receiver.wait_for(lambda evs: sum(is_completed(e) for e in evs) == 6, timeout=30)
    assert 1 <= receiver.most_in_flight <= 2


def test_unresolvable_at_connect_is_retried_then_delivered(serve) -> None:  # type: ignore[no-untyped-def]
    """A name that does not resolve yet is a failed attempt (retried), not a refusal: once DNS
    answers with an allowed address, the notification arrives."""
    receiver = Receiver()
    hook = serve(receiver.app)
    port = int(hook.rsplit(":", 1)[1])
    answers = {"ok": False, "asked": 0}

    async def resolver(host: str, _port: int) -> list[str]:
        answers["asked"] += 1
        if host == "late.test" and answers["ok"]:
            return ["127.0.0.1"]
        raise OSError(f"{host}: name not known")

    executor = Steps(n=1)
    srv = make_server(executor, push=settings(allow_hosts=["127.0.0.1"], resolver=resolver))
    url = serve(srv.app)
    task = send(url)["id"]
    assert "result" in _create(url, task, f"http://late.test:{port}/hook")
    executor.gate.set()
    deadline = time.monotonic() + 30
    while answers["asked"] < 2:  # once at creation, once for a delivery that failed
        assert time.monotonic() < deadline, "no delivery attempt"
        time.sleep(0.02)
    answers["ok"] = True
    receiver.wait_final(timeout=30)


def test_configs_per_caller_capped_across_their_tasks(serve) -> None:  # type: ignore[no-untyped-def]
    """#16 item 2: one caller cannot spread an unbounded number of configs over many tasks."""
    from simple_a2a.auth import BearerAuth

    srv = make_server(
        limits=Limits(max_push_configs_per_caller=3),
        auth=BearerAuth({"tok-a": "alice", "tok-b": "bob"}),
    )
    url = serve(srv.app)

    def call(token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer: dict[str, Any] = httpx.post(url, json=body, headers=headers, timeout=10).json()
        return answer

    def task(token: str) -> str:
        message = {
            "messageId": f"m-{time.time_ns()}",
            "role": "ROLE_USER",
            "parts": [{"text": "go"}],
        }
        params = {"message": message, "configuration": {"returnImmediately": True}}
        return str(call(token, "SendMessage", params)["result"]["task"]["id"])

    alice = [task("tok-a") for _ in range(4)]
    for i, task_id in enumerate(alice[:3]):
        params = {"taskId": task_id, "url": f"http://127.0.0.1:1/h{i}", "id": "c"}
        assert "result" in call("tok-a", "CreateTaskPushNotificationConfig", params)
    params = {"taskId": alice[3], "url": "http://127.0.0.1:1/h3", "id": "c"}
    refused = call("tok-a", "CreateTaskPushNotificationConfig", params)
    assert refused["error"]["code"] == -32602, refused
    assert "Limits.max_push_configs_per_caller = 3" in refused["error"]["message"]
    # replacing one of alice's configs is not a new one; bob has his own allowance
    params = {"taskId": alice[0], "url": "http://127.0.0.1:1/again", "id": "c"}
    assert "result" in call("tok-a", "CreateTaskPushNotificationConfig", params)
    params = {"taskId": task("tok-b"), "url": "http://127.0.0.1:1/bob", "id": "c"}
    assert "result" in call("tok-b", "CreateTaskPushNotificationConfig", params)
