"""Push test helpers: a recording webhook receiver, a gated agent, fast retry settings.

Imported as ``tests.push.push_helpers`` (``tests`` is a package).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from simple_a2a.protocol import AgentCard, Message
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server.app import A2AServer
from simple_a2a.server.push import PushSettings, RetryPolicy
from tests.support import rpc

FAST_RETRY = RetryPolicy(initial_delay=0.02, max_delay=0.2, max_attempts=100, jitter=0.5)


def _root_conftest() -> Any:
    """tests/conftest.py by path (its module name ``conftest`` is ambiguous in a full run)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "conftest.py"
    spec = importlib.util.spec_from_file_location("_simple_a2a_tests_root_conftest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: ``with serve_in_thread(app) as url:`` — a server that stops when the block ends.
serve_in_thread = _root_conftest().serve_in_thread


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def push_card(push: bool = True) -> AgentCard:
    return AgentCard.from_dict(
        {
            "name": "Push agent",
            "description": "test",
            "version": "1.0",
            "capabilities": {"pushNotifications": push},
        }
    )


def settings(**options: Any) -> PushSettings:
    options.setdefault("allow_hosts", ["127.0.0.1", "localhost"])
    options.setdefault("retry", FAST_RETRY)
    options.setdefault("idle_timeout", 1.0)
    return PushSettings(**options)


class Steps(AgentExecutor):
    """Waits for ``gate`` (a threading.Event), then emits ``n`` artifact chunks and completes."""

    def __init__(self, n: int = 5) -> None:
        self.n = n
        self.gate = threading.Event()

    async def execute(self, ctx: RequestContext) -> None:
        while not self.gate.is_set():  # polled: a blocked thread would delay shutdown
            await asyncio.sleep(0.01)
        await ctx.start()
        for i in range(self.n):
            await ctx.emit_artifact(
                {"artifactId": "out", "parts": [{"text": f"step {i}"}]},
                append=i > 0,
                last_chunk=i == self.n - 1,
            )
        await ctx.complete()


def make_server(executor: AgentExecutor | None = None, **options: Any) -> A2AServer:
    options.setdefault("push", settings())
    options.setdefault("shutdown_grace", 0.2)
    return server(push_card(), executor or Steps(), **options)


class Receiver:
    """A webhook that records what it gets; ``fail`` makes the next N requests answer ``status``."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.attempts = 0
        self.fail = 0
        self.fail_status = 503
        self.retry_after: str | None = None
        self.delay = 0.0  # seconds before answering each POST (a slow webhook)
        self.reject: Callable[[StreamResponse], int | None] | None = None
        self.lock = threading.Lock()
        self.app = Starlette(routes=[Route("/hook", self.endpoint, methods=["POST"])])

    async def endpoint(self, request: Request) -> Response:
        body = await request.body()
        await asyncio.sleep(self.delay)
        with self.lock:
            self.attempts += 1
            if self.fail > 0:
                self.fail -= 1
                headers = {"Retry-After": self.retry_after} if self.retry_after else {}
                return Response(status_code=self.fail_status, headers=headers)
            if self.reject is not None:
                status = self.reject(StreamResponse.from_json(body))
                if status:
                    return Response(status_code=status)
            self.received.append((dict(request.headers), body))
        return JSONResponse({"ok": True})

    @property
    def events(self) -> list[StreamResponse]:
        with self.lock:
            return [StreamResponse.from_json(body) for _h, body in self.received]

    def wait_for(
        self, predicate: Callable[[list[StreamResponse]], bool], timeout: float = 10
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.events):
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out; received {[summary(e) for e in self.events]}")

    def wait_final(self, timeout: float = 10) -> list[StreamResponse]:
        self.wait_for(lambda evs: any(is_completed(e) for e in evs), timeout)
        return self.events


def is_completed(event: StreamResponse) -> bool:
    if event.status_update is not None:
        return event.status_update.status.state.is_terminal
    return event.task is not None and event.task.is_terminal


def summary(event: StreamResponse) -> str:
    if event.task is not None:
        return f"task:{event.task.status.state.value}"
    if event.status_update is not None:
        return f"status:{event.status_update.status.state.value}"
    if event.artifact_update is not None:
        return "artifact:" + "".join(p.text or "" for p in event.artifact_update.artifact.parts)
    return "message"


def post_rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        url,
        json=rpc(method, params),
        headers={"A2A-Version": "1.0"},
        timeout=10,
    )
    data: dict[str, Any] = response.json()
    return data


def send(url: str, text: str = "go", push: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"returnImmediately": True}
    if push is not None:
        config["taskPushNotificationConfig"] = push
    reply = post_rpc(
        url,
        "SendMessage",
        {"message": Message.user(text).to_dict(), "configuration": config},
    )
    assert "result" in reply, reply
    task: dict[str, Any] = reply["result"]["task"]
    return task


def logged(srv: A2AServer, task_id: str) -> list[StreamResponse]:
    """The task's event log, read on the server's loop."""
    items = asyncio.run(srv.storage.events.read(task_id, 0))
    return [item.event for item in items]


def dumps(events: list[StreamResponse]) -> list[str]:
    return [json.dumps(e.to_dict(), sort_keys=True) for e in events]
