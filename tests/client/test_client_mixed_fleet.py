"""Our client in a mixed fleet (issue #33): the version it sends, which interface it picks,
where it goes when that one cannot be reached, and a reconnect refused because the task ended.

Real servers on loopback: ours (tests/support/agents.py) behind cards written here, a port
nobody listens on, and a small agent that behaves as the SDK 0.3.26 does on a resubscribe (F3,
docs/interop.md): it ends a stream without the final status, then refuses the reconnect.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from simple_a2a import Task, TaskState
from simple_a2a.client import AsyncClient, ConnectError, NegotiationError, TransportError, afold
from simple_a2a.protocol.errors import UnsupportedOperationError
from simple_a2a.server import server
from tests.client.servers import ServerThread, free_port
from tests.support.agents import TestAgent, make_card, serving


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    with serving(server(make_card(), TestAgent()).app) as base:
        yield base


def card_with(*interfaces: tuple[str, str, str]) -> dict[str, Any]:
    """A card whose interfaces are (url, binding, protocolVersion), in this order."""
    return {
        "name": "Mixed",
        "description": "d",
        "version": "1",
        "capabilities": {"streaming": True},
        "supportedInterfaces": [
            {"url": u, "protocolBinding": b, "protocolVersion": v} for u, b, v in interfaces
        ],
    }


class Recorder:
    """An httpx client that records each request's A2A-Version header and URL."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None]] = []
        self.http = httpx.AsyncClient(event_hooks={"request": [self._record]}, timeout=10)

    async def _record(self, request: httpx.Request) -> None:
        self.sent.append((str(request.url), request.headers.get("A2A-Version")))


# -- the version sent is the one spoken ------------------------------------------------------


@pytest.mark.parametrize("declared", ["1.1", "1.0.1", "1", ""])
async def test_a2a_version_is_the_version_spoken(ours: str, declared: str) -> None:
    """A card that says 1.1 (or 1.0.1, 1, or "" read as absent: 1.0) gets ``A2A-Version: 1.0``,
    the version this client speaks (§3.6.2), never the card's spelling."""
    rec = Recorder()
    card = card_with((ours + "/", "JSONRPC", declared))
    async with AsyncClient(card, http_client=rec.http) as client:
        task = await client.send("hi")
        assert isinstance(task, Task) and task.text == "echo: hi"
        assert client.protocol_version == "1.0"
    await rec.http.aclose()
    assert [v for _, v in rec.sent] == ["1.0"]


async def test_an_empty_protocol_version_is_not_refused(ours: str) -> None:
    card = card_with((ours + "/", "JSONRPC", ""))
    async with AsyncClient(card) as client:
        assert (await client.agent_card()).name == "Mixed"


# -- which interface, and the warning only when it is true ---------------------------------------


async def test_1_0_first_whatever_the_card_order(ours: str) -> None:
    card = card_with((ours + "/", "JSONRPC", "0.3"), (ours + "/", "HTTP+JSON", "1.0"))
    async with AsyncClient(card) as client:
        await client.agent_card()
        assert client.interface is not None
        assert (client.interface.protocol_binding, client.protocol_version) == ("HTTP+JSON", "1.0")


async def test_the_v03_warning_says_why(ours: str, caplog: pytest.LogCaptureFixture) -> None:
    card = card_with((ours + "/", "JSONRPC", "0.3"), (ours + "/", "HTTP+JSON", "1.0"))
    with caplog.at_level(logging.WARNING, logger="simple_a2a.client"):
        async with AsyncClient(card, bindings=["JSONRPC"]) as client:
            await client.agent_card()
            assert client.protocol_version == "0.3"
    text = caplog.text
    assert "offers A2A 1.0 only over HTTP+JSON" in text and "offers only" not in text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="simple_a2a.client"):
        async with AsyncClient(card_with((ours + "/", "JSONRPC", "0.3"))) as client:
            await client.agent_card()
    assert "offers only A2A 0.3" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="simple_a2a.client"):
        async with AsyncClient(card) as client:
            await client.agent_card()
    assert "0.3" not in caplog.text  # 1.0 spoken: nothing to warn about


# -- fallback to the next interface (§5.2) ----------------------------------------------------


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/"  # nobody listens: connection refused


async def test_a_send_falls_back_to_the_next_interface(
    ours: str, caplog: pytest.LogCaptureFixture
) -> None:
    dead = dead_url()
    card = card_with((dead, "JSONRPC", "1.0"), (ours + "/", "HTTP+JSON", "1.0"))
    rec = Recorder()
    with caplog.at_level(logging.WARNING, logger="simple_a2a.client"):
        async with AsyncClient(card, http_client=rec.http) as client:
            task = await client.send("hi")
            assert isinstance(task, Task) and task.state is TaskState.COMPLETED
            assert client.interface is not None and client.interface.protocol_binding == "HTTP+JSON"
            assert (await client.get(task.id)).id == task.id  # later calls stay there
    await rec.http.aclose()
    assert f"could not connect to JSONRPC {dead}" in caplog.text
    assert [u.startswith(dead) for u, _ in rec.sent].count(True) >= 1
    assert all(not u.startswith(dead) for u, _ in rec.sent[-2:])


async def test_a_stream_falls_back_to_the_next_interface(ours: str) -> None:
    card = card_with((dead_url(), "HTTP+JSON", "1.0"), (ours + "/", "JSONRPC", "1.0"))
    async with AsyncClient(card) as client:
        final = await afold(client.stream("steps 3"))
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED


async def test_no_fallback_from_1_0_to_0_3(ours: str) -> None:
    """The fallbacks are the other interfaces of the chosen version (§3.6.3): an agent that
    offers 1.0 is not spoken to in 0.3 because its 1.0 interface is down."""
    card = card_with((dead_url(), "JSONRPC", "1.0"), (ours + "/", "HTTP+JSON", "0.3"))
    async with AsyncClient(card) as client:
        with pytest.raises(ConnectError):
            await client.send("hi")


async def test_no_interface_at_all_is_a_negotiation_error() -> None:
    with pytest.raises(NegotiationError):
        async with AsyncClient(card_with(("x", "CARRIER-PIGEON", "1.0"))) as client:
            await client.agent_card()


# -- a reconnect refused because the task ended -----------------------------------------------


def ended_agent(base: str, *, drop: bool = False) -> Starlette:
    """SDK 0.3.26-like (F3): the stream ends after the working Task, without the final status
    (``drop``: the connection breaks mid-body, as its HTTP+JSON does); SubscribeToTask then
    answers UnsupportedOperationError (the task is terminal, §3.1.6); GetTask answers the
    completed task."""
    task = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
    done = {
        **task,
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}],
    }
    calls: list[str] = []

    async def rpc(request: Request) -> Response:
        body = await request.json()
        calls.append(body["method"])
        rid = body["id"]
        if body["method"] == "SendStreamingMessage":

            async def sse() -> Any:
                answer = {"jsonrpc": "2.0", "id": rid, "result": {"task": task}}
                yield f"id: 1\ndata: {json.dumps(answer)}\n\n"
                if drop:
                    raise ConnectionResetError("the agent drops the stream")

            return StreamingResponse(sse(), media_type="text/event-stream")
        if body["method"] == "SubscribeToTask":
            error = {"code": -32004, "message": "Task t1 is in a terminal state"}
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": error})
        if body["method"] == "GetTask":
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": done})
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601}})

    app = Starlette(routes=[Route("/", rpc, methods=["POST"])])
    app.state.calls = calls
    return app


async def test_a_refused_reconnect_to_an_ended_task_ends_with_the_task() -> None:
    with ServerThread(lambda base: ended_agent(base, drop=True)) as agent:
        card = card_with((agent.url + "/", "JSONRPC", "1.0"))
        async with AsyncClient(card) as client:
            events = [event async for event in client.stream("go")]
        final = events[-1]
        assert isinstance(final, Task) and final.state is TaskState.COMPLETED
        assert final.text == "done"
        calls = agent.server.config.app.state.calls
        assert calls == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
        async with AsyncClient(card) as client:
            with pytest.raises(UnsupportedOperationError):  # a first subscribe still raises
                await afold(client.subscribe("t1"))


async def test_a_stream_closed_short_of_the_end_asks_get_task_first() -> None:
    """A clean close before the final state: GetTask shows the task ended, so the stream ends
    with it, without a reconnect the server would refuse."""
    with ServerThread(ended_agent) as agent:
        card = card_with((agent.url + "/", "JSONRPC", "1.0"))
        async with AsyncClient(card) as client:
            events = [event async for event in client.stream("go")]
        assert isinstance(events[-1], Task) and events[-1].state is TaskState.COMPLETED
        assert agent.server.config.app.state.calls == ["SendStreamingMessage", "GetTask"]


# -- what counts as "could not connect" (fallback, and resending a SendMessage) ----------------


async def test_a_tls_handshake_failure_falls_back(ours: str) -> None:
    """``https://`` to a plain-HTTP port: the handshake fails before any request (a
    ConnectError), so the next interface is tried."""
    tls = ours.replace("http://", "https://") + "/"
    card = card_with((tls, "JSONRPC", "1.0"), (ours + "/", "HTTP+JSON", "1.0"))
    async with AsyncClient(card) as client:
        task = await client.send("hi")
        assert isinstance(task, Task) and task.state is TaskState.COMPLETED
        assert client.interface is not None and client.interface.protocol_binding == "HTTP+JSON"


async def test_a_dead_grpc_interface_falls_back(ours: str) -> None:
    card = card_with((f"127.0.0.1:{free_port()}", "GRPC", "1.0"), (ours + "/", "JSONRPC", "1.0"))
    async with AsyncClient(card) as client:
        task = await client.send("hi")
        assert isinstance(task, Task) and task.state is TaskState.COMPLETED
        assert client.interface is not None and client.interface.protocol_binding == "JSONRPC"


class HangUp:
    """A TCP server on loopback that reads each request in full, then closes without answering:
    the request reached the server, so it must not be sent again anywhere."""

    def __init__(self) -> None:
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                self.requests += 1

    def close(self) -> None:
        self._listener.close()


async def test_a_send_lost_after_it_was_sent_is_not_resent_elsewhere(ours: str) -> None:
    hang_up = HangUp()
    rec = Recorder()
    card = card_with((hang_up.url, "JSONRPC", "1.0"), (ours + "/", "HTTP+JSON", "1.0"))
    try:
        async with AsyncClient(card, http_client=rec.http) as client:
            with pytest.raises(TransportError) as info:
                await client.send("hi")
            assert not isinstance(info.value, ConnectError)
            assert client.interface is not None and client.interface.protocol_binding == "JSONRPC"
    finally:
        hang_up.close()
        await rec.http.aclose()
    assert hang_up.requests == 1  # not retried: it may have been acted on
    assert all(url.startswith(hang_up.url) for url, _ in rec.sent)  # nothing went elsewhere


DYING_GRPC = """
import os, sys, time
from concurrent import futures
import grpc

def die(request, context):
    os._exit(0)  # the request arrived: the connection is lost mid-call

handler = grpc.method_handlers_generic_handler(
    "lf.a2a.v1.A2AService", {"SendMessage": grpc.unary_unary_rpc_method_handler(die)}
)
server = grpc.server(futures.ThreadPoolExecutor(2))
server.add_generic_rpc_handlers((handler,))
server.add_insecure_port("127.0.0.1:" + sys.argv[1])
server.start()
print("up", flush=True)
server.wait_for_termination()
"""


async def test_a_grpc_call_lost_mid_call_is_not_a_connect_error(ours: str) -> None:
    """grpc says UNAVAILABLE both when it could not connect and when the connection broke
    during the call; only the first is a ConnectError (resent, fallen back from)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", DYING_GRPC, str(port)], stdout=subprocess.PIPE, text=True
    )
    rec = Recorder()
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "up"
        card = card_with((f"127.0.0.1:{port}", "GRPC", "1.0"), (ours + "/", "JSONRPC", "1.0"))
        async with AsyncClient(card, http_client=rec.http) as client:
            with pytest.raises(TransportError, match="lost") as info:
                await client.send("hi")
            assert not isinstance(info.value, ConnectError)
        assert process.wait(10) == 0  # it got the request, and died of it
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        await rec.http.aclose()
    assert rec.sent == []  # not resent over JSON-RPC
