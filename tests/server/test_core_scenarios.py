"""Server core scenarios over real HTTP (JSON-RPC binding, spec §9) on loopback.

Covers issue #3's list: two subscribers, reconnect with Last-Event-ID, cancel mid-stream, an
executor that raises, a client that disconnects mid-stream, multi-turn, 1,000 concurrent sends.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from simple_a2a.protocol import Message
from simple_a2a.server import AgentExecutor, RequestContext, server
from tests.support import card, rpc


class Steps(AgentExecutor):
    """Emits ``n`` artifact chunks, waiting for a go signal between steps when gated."""

    def __init__(self, n: int = 5, delay: float = 0.0) -> None:
        self.n = n
        self.delay = delay
        self.gate: asyncio.Event | None = None

    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        for i in range(self.n):
            if ctx.cancelled:
                return
            await asyncio.sleep(self.delay)
            await ctx.emit_artifact(
                {"artifactId": "out", "parts": [{"text": f"step {i}"}]},
                append=i > 0,
                last_chunk=i == self.n - 1,
            )
        await ctx.complete()


def send_params(text: str = "hi", **message: Any) -> dict[str, Any]:
    return {"message": Message.user(text, **message).to_dict()}


async def call(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    response = await client.post("/", json=rpc(method, params))
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return body["result"]


async def stream(
    client: httpx.AsyncClient,
    method: str,
    params: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    stop_after: int | None = None,
    into: list[tuple[str, dict[str, Any]]] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [] if into is None else into
    async with aconnect_sse(
        client, "POST", "/", json=rpc(method, params), headers=headers or {}
    ) as source:
        async for sse in source.aiter_sse():
            events.append((sse.id, json.loads(sse.data)))
            if stop_after is not None and len(events) >= stop_after:
                break
    return events


def kinds(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [next(iter(body["result"])) for _id, body in events]


@pytest.fixture
def steps_agent(serve: Any) -> tuple[str, Steps]:
    executor = Steps(n=5, delay=0.05)
    return serve(server(card(streaming=True), executor).app), executor


async def test_stream_starts_with_task_and_ids_increase(steps_agent: Any) -> None:
    """Spec §3.1.2: the stream begins with the Task; SSE ids are per-task sequence numbers."""
    url, _ = steps_agent
    async with httpx.AsyncClient(base_url=url) as client:
        events = await stream(client, "SendStreamingMessage", send_params())
    assert kinds(events)[0] == "task"
    assert kinds(events)[-1] == "statusUpdate"
    assert events[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [int(i) for i, _ in events] == list(range(1, len(events) + 1))
    assert all(body["id"] == 1 for _id, body in events)


async def test_two_subscribers_get_the_same_events(steps_agent: Any) -> None:
    """Spec §3.5.2: every concurrent subscriber receives every event in order."""
    url, _ = steps_agent
    async with httpx.AsyncClient(base_url=url) as client:
        result = await call(
            client,
            "SendMessage",
            {**send_params(), "configuration": {"returnImmediately": True}},
        )
        task_id = result["task"]["id"]
        first, second = await asyncio.gather(
            stream(client, "SubscribeToTask", {"id": task_id}),
            stream(client, "SubscribeToTask", {"id": task_id}),
        )
    assert kinds(first)[0] == "task" and kinds(second)[0] == "task"
    # After each one's snapshot, the tails are the same events.
    last_common = max(int(first[0][0]), int(second[0][0]))
    tail1 = [e for e in first[1:] if int(e[0]) > last_common]
    tail2 = [e for e in second[1:] if int(e[0]) > last_common]
    assert tail1 == tail2
    assert tail1[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_reconnect_with_last_event_id_misses_nothing(steps_agent: Any) -> None:
    """PRODUCT §3: a client reconnecting with Last-Event-ID gets exactly the missed events,
    even after the task finished meanwhile; the replay ends with the final event."""
    url, _ = steps_agent
    async with httpx.AsyncClient(base_url=url) as client:
        full = await stream(client, "SendStreamingMessage", send_params())
        task_id = full[0][1]["result"]["task"]["id"]
        replay = await stream(
            client, "SubscribeToTask", {"id": task_id}, headers={"Last-Event-ID": full[2][0]}
        )
    assert replay == [(i, {**body}) for i, body in full[3:]]


async def test_subscribe_to_terminal_task_is_an_error(steps_agent: Any) -> None:
    """Spec §3.1.6: SubscribeToTask on a terminal task → UnsupportedOperationError (-32004),
    known before any stream opens, so a plain JSON-RPC error response (issue 15 item 7)."""
    url, _ = steps_agent
    async with httpx.AsyncClient(base_url=url) as client:
        done = await call(client, "SendMessage", send_params())
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SubscribeToTask",
            "params": {"id": done["task"]["id"]},
        }
        r = await client.post("/", json=body, headers={"Accept": "text/event-stream"})
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"]["code"] == -32004


async def test_cancel_mid_stream(serve: Any) -> None:
    """Spec §3.1.5: cancel signals the executor; the stream ends with TASK_STATE_CANCELED."""
    url = serve(server(card(), Steps(n=50, delay=0.05)).app)
    async with httpx.AsyncClient(base_url=url) as client:
        events: list[tuple[str, dict[str, Any]]] = []

        consumer = asyncio.create_task(
            stream(client, "SendStreamingMessage", send_params(), into=events)
        )
        while len(events) < 1:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        task_id = (await call(client, "ListTasks", {}))["tasks"][0]["id"]
        canceled = await call(client, "CancelTask", {"id": task_id})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        await asyncio.wait_for(consumer, 5)
        again = await client.post("/", json=rpc("CancelTask", {"id": task_id}))
    assert events[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert again.json()["error"]["code"] == -32002  # TaskNotCancelableError


class Raises(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        raise RuntimeError("secret internal detail")


async def test_executor_that_raises_fails_the_task_safely(serve: Any) -> None:
    """An agent that raises leaves its task FAILED with a safe message, no traceback."""
    url = serve(server(card(), Raises()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        result = await call(client, "SendMessage", send_params())
    task = result["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "secret" not in json.dumps(result)
    assert task["status"]["message"]["parts"][0]["text"]


class SyncRaises(AgentExecutor):
    def execute(self, ctx: RequestContext) -> None:
        ctx.start()
        raise ValueError("boom")


async def test_plain_def_executor_runs_in_a_thread_and_fails_cleanly(serve: Any) -> None:
    url = serve(server(card(), SyncRaises()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        result = await call(client, "SendMessage", send_params())
    assert result["task"]["status"]["state"] == "TASK_STATE_FAILED"


async def test_client_disconnect_does_not_cancel_the_task(serve: Any) -> None:
    """Execution is detached from the HTTP request: the task goes on after the client leaves."""
    url = serve(server(card(), Steps(n=6, delay=0.05)).app)
    async with httpx.AsyncClient(base_url=url) as client:
        events = await stream(client, "SendStreamingMessage", send_params(), stop_after=2)
        task_id = events[0][1]["result"]["task"]["id"]
        for _ in range(100):
            task = await call(client, "GetTask", {"id": task_id})
            if task["status"]["state"] == "TASK_STATE_COMPLETED":
                break
            await asyncio.sleep(0.05)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "".join(f"step {i}" for i in range(6))


class Order(AgentExecutor):
    """input-required on the first turn, completes on the second (spec §3.4)."""

    async def execute(self, ctx: RequestContext) -> None:
        if len(ctx.history) == 1:
            await ctx.require_input("Which size?")
        else:
            await ctx.complete(f"Ordered size {ctx.text}")


async def test_multi_turn_input_required_then_completed(serve: Any) -> None:
    url = serve(server(card(), Order()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        first = (await call(client, "SendMessage", send_params("a pizza")))["task"]
        assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert first["status"]["message"]["parts"][0]["text"] == "Which size?"
        wrong_ctx = await client.post(
            "/",
            json=rpc("SendMessage", send_params("L", task_id=first["id"], context_id="other")),
        )
        assert wrong_ctx.json()["error"]["code"] == -32602
        second = (await call(client, "SendMessage", send_params("L", task_id=first["id"])))["task"]
        assert second["status"]["state"] == "TASK_STATE_COMPLETED"
        assert second["contextId"] == first["contextId"]
        assert [m["role"] for m in second["history"]] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]
        assert second["artifacts"][0]["parts"][0]["text"] == "Ordered size L"
        terminal = await client.post(
            "/", json=rpc("SendMessage", send_params("again", task_id=first["id"]))
        )
        assert terminal.json()["error"]["code"] == -32004  # spec §3.1.1
        unknown = await client.post(
            "/", json=rpc("SendMessage", send_params("x", task_id="no-such-task"))
        )
        assert unknown.json()["error"]["code"] == -32001


class Echo(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.complete(f"echo {ctx.text}")


async def _raw_post(port: int, body: bytes) -> Any:
    """One request on its own connection (httpx's pool degrades badly with 1,000 waiters, so
    this test speaks HTTP/1.1 directly to load the server, not the client)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    writer.write(head + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    status_line, _, rest = data.partition(b"\r\n")
    assert b" 200 " in status_line, status_line
    return json.loads(rest.partition(b"\r\n\r\n")[2])


async def test_thousand_concurrent_blocking_sends(serve: Any) -> None:
    """1,000 blocking SendMessage calls in flight at once, each on its own connection."""
    url = serve(server(card(), Echo()).app)
    port = int(url.rsplit(":", 1)[1])
    bodies = [json.dumps(rpc("SendMessage", send_params(f"m{i}"), i)).encode() for i in range(1000)]
    answers = await asyncio.gather(*(_raw_post(port, body) for body in bodies))
    results = [answer["result"] for answer in answers]
    assert [answer["id"] for answer in answers] == list(range(1000))
    assert {r["task"]["status"]["state"] for r in results} == {"TASK_STATE_COMPLETED"}
    assert {r["task"]["artifacts"][0]["parts"][0]["text"] for r in results} == {
        f"echo m{i}" for i in range(1000)
    }
    async with httpx.AsyncClient(base_url=url) as client:
        listed = await call(client, "ListTasks", {"pageSize": 1})
    assert listed["totalSize"] == 1000


async def test_direct_message_reply_stores_no_task(serve: Any) -> None:
    """Spec §3.1.1: an agent may answer with a Message instead of a Task."""

    async def hello(ctx: RequestContext) -> Message:
        return Message.agent(f"Howdy: {ctx.text}")

    url = serve(server(card(), hello).app)
    async with httpx.AsyncClient(base_url=url) as client:
        result = await call(client, "SendMessage", send_params("world"))
        events = await stream(client, "SendStreamingMessage", send_params("stream"))
        listed = await call(client, "ListTasks", {})
    assert result["message"]["parts"][0]["text"] == "Howdy: world"
    assert kinds(events) == ["message"]
    assert listed["tasks"] == [] and listed["totalSize"] == 0


async def test_sync_client_in_worker_thread_while_loop_runs(serve: Any) -> None:
    """A plain ``def`` executor may block (it runs in a worker thread, not on the loop)."""
    seen: list[str] = []

    def blocking(ctx: RequestContext) -> str:
        seen.append(threading.current_thread().name)
        return f"done {ctx.text}"

    url = serve(server(card(), blocking).app)
    async with httpx.AsyncClient(base_url=url) as client:
        result = await call(client, "SendMessage", send_params("x"))
    assert result["task"]["artifacts"][0]["parts"][0]["text"] == "done x"
    assert seen and seen[0] != "MainThread"
