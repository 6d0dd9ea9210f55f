"""The three servers under test, each an ASGI app built in its own process (see ``serve.py``).

- ``ours``: simple-a2a with an echo executor;
- ``sdk``: the official SDK (``a2a``, pinned 1.3.0) with the equivalent executor, its
  ``DefaultRequestHandler`` and ``InMemoryTaskStore``, JSON-RPC at ``/`` and REST routes;
- ``ceiling``: a raw ASGI app answering a fixed JSON-RPC body (what uvicorn alone can do);
- ``floor``: the least an A2A agent can do for SendMessage and GetTask (JSON-RPC and HTTP+JSON),
  on our protocol models (see :func:`floor_app`): how far below ours any design on them could go.

The executors answer by the first word of the user's text:

- ``stream N``: a task with N artifact chunks (append, the last one ``lastChunk``), then completed;
- ``fanout PATH N MS``: a working task that waits until the file PATH exists, then emits N artifact
  chunks MS milliseconds apart, each carrying ``t=<time.time_ns()>`` so subscribers can measure
  delivery latency;
- ``tokens N MS``: a working task that emits N small artifact chunks (a token's worth of
  text, ``t=<time.time_ns()>``) MS milliseconds apart, as an LLM agent streams, then completes
  (``bench/streams.py``: many such streams at once);
- anything else: a task with one artifact ``echo <text>``, completed.

``sse_floor``: no A2A at all, a bare Starlette SSE endpoint that answers ``tokens N MS`` with the
same JSON-RPC frames (a task, N artifact updates, the completed status): the floor of a stream.
``sse_fanout_floor``: the same for ``fanout``, one task's events broadcast to N SubscribeToTask
streams (``bench/fanout.py``).
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Any

CARD = {
    "name": "Bench echo agent",
    "description": "echo, stream, fanout",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "echo", "description": "echo", "tags": ["echo"]}],
}
BASE_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)


async def _wait_for_file(path: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not os.path.exists(path) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


# -- ours --------------------------------------------------------------------------------------
def no_lease_timers() -> None:
    """The lease keeper's loops (heartbeat, scan, cancel watch) do not start, and the work
    queue's idle poll waits an hour (``NOTIMERS=1``): under valgrind, 50x slower, they would fire
    50x more often per request, and the poll (~30k instructions a second on the memory store)
    landed on a streamed chunk's count. An enqueue in this process still wakes the worker."""
    from simple_a2a.server import leases, workqueue

    leases.LeaseKeeper.start = lambda self, *, scan: None  # type: ignore[method-assign]
    checked = workqueue.QueueSettings.__post_init__

    def hour_poll(self: workqueue.QueueSettings) -> None:
        checked(self)
        object.__setattr__(self, "poll_interval", 3600.0)

    workqueue.QueueSettings.__post_init__ = hour_poll  # type: ignore[method-assign]


def ours_app(storage: str | None, tasks: int) -> tuple[Any, Any]:
    from simple_a2a.protocol import AgentCard
    from simple_a2a.protocol.models import Artifact, Part
    from simple_a2a.server import AgentExecutor, RequestContext, server

    class Echo(AgentExecutor):
        async def execute(self, ctx: RequestContext) -> None:
            text = ctx.text
            word, _, rest = text.partition(" ")
            if word == "stream":
                n = int(rest)
                for i in range(n):
                    await ctx.emit_artifact(
                        Artifact(artifact_id="s", parts=[Part.text(f"{i} ")]),
                        append=i > 0,
                        last_chunk=i == n - 1,
                    )
                await ctx.complete()
            elif word == "tokens":
                count, interval = (int(x) for x in rest.split(" "))
                await ctx.start()
                for i in range(count):
                    await asyncio.sleep(interval / 1000)
                    await ctx.emit_artifact(
                        Artifact(artifact_id="t", parts=[Part.text(f"t={time.time_ns()} ")]),
                        append=i > 0,
                        last_chunk=i == count - 1,
                    )
                await ctx.complete()
            elif word == "fanout":
                path, count, interval = rest.split(" ")
                await ctx.start()
                await _wait_for_file(path)
                for i in range(int(count)):
                    await ctx.emit_artifact(
                        Artifact(artifact_id="f", parts=[Part.text(f"t={time.time_ns()}")]),
                        append=i > 0,
                    )
                    await asyncio.sleep(int(interval) / 1000)
                await ctx.complete()
            else:
                await ctx.complete(f"echo {text}")

    from simple_a2a.server import Limits

    # bench/streams.py holds more executions open than the default bound of running tasks per
    # caller (1,000; every anonymous caller is one): it raises it, as a router agent would.
    running = (
        int(os.environ.get("BENCH_RUNNING_LIMIT", "0")) or Limits().max_running_tasks_per_caller
    )
    limits = Limits(max_running_tasks_per_caller=running)
    srv = server(AgentCard.from_dict(CARD), Echo(), storage=storage, limits=limits)

    async def populate() -> None:
        await srv.startup()
        if tasks:
            await _populate_ours(srv.storage, tasks)

    return srv.app, populate


def ours_task(i: int) -> Any:
    from simple_a2a.protocol.models import (
        Artifact,
        Message,
        Part,
        Role,
        Task,
        TaskState,
        TaskStatus,
    )

    task_id, context_id = f"task-{i}", f"ctx-{i % 1000}"
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(
            state=TaskState.COMPLETED, timestamp=BASE_TIME + timedelta(milliseconds=i)
        ),
        history=[
            Message(
                message_id=f"msg-{i}",
                role=Role.USER,
                parts=[Part.text(f"hello {i}")],
                task_id=task_id,
                context_id=context_id,
            )
        ],
        artifacts=[Artifact(artifact_id=f"art-{i}", parts=[Part.text(f"echo hello {i}")])],
    )


async def _populate_ours(storage: Any, n: int) -> None:
    for i in range(n):
        await storage.tasks.create(ours_task(i))


# -- the official SDK ------------------------------------------------------------------------
def sdk_app(tasks: int) -> tuple[Any, Any]:
    from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.context import ServerCallContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            text = context.get_user_input()
            word, _, rest = text.partition(" ")
            task = context.current_task or new_task_from_user_message(context.message)
            if context.current_task is None:
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            if word == "stream":
                n = int(rest)
                for i in range(n):
                    await updater.add_artifact(
                        [new_text_part(f"{i} ")],
                        artifact_id="s",
                        append=i > 0,
                        last_chunk=i == n - 1,
                    )
                await updater.complete()
            elif word == "tokens":
                count, interval = (int(x) for x in rest.split(" "))
                await updater.start_work()
                for i in range(count):
                    await asyncio.sleep(interval / 1000)
                    await updater.add_artifact(
                        [new_text_part(f"t={time.time_ns()} ")],
                        artifact_id="t",
                        append=i > 0,
                        last_chunk=i == count - 1,
                    )
                await updater.complete()
            elif word == "fanout":
                path, count, interval = rest.split(" ")
                await updater.start_work()
                await _wait_for_file(path)
                for i in range(int(count)):
                    await updater.add_artifact(
                        [new_text_part(f"t={time.time_ns()}")], artifact_id="f", append=i > 0
                    )
                    await asyncio.sleep(int(interval) / 1000)
                await updater.complete()
            else:
                await updater.add_artifact([new_text_part(f"echo {text}")], artifact_id="echo")
                await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    card = AgentCard(
        name=CARD["name"],
        description=CARD["description"],
        version=CARD["version"],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
        supported_interfaces=[
            AgentInterface(
                url="http://127.0.0.1/", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            AgentInterface(
                url="http://127.0.0.1/", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
    )
    store = InMemoryTaskStore()
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=store, agent_card=card)
    routes = [*create_jsonrpc_routes(handler, "/"), *create_rest_routes(handler)]
    app = Starlette(routes=routes)

    async def populate() -> None:
        if not tasks:
            return
        context = ServerCallContext()
        for i in range(tasks):
            await store.save(sdk_task(i), context)

    return app, populate


def sdk_task(i: int) -> Any:
    from a2a.types import a2a_pb2 as pb

    task_id, context_id = f"task-{i}", f"ctx-{i % 1000}"
    status = pb.TaskStatus(state=pb.TaskState.TASK_STATE_COMPLETED)
    status.timestamp.FromDatetime(BASE_TIME + timedelta(milliseconds=i))
    return pb.Task(
        id=task_id,
        context_id=context_id,
        status=status,
        history=[
            pb.Message(
                message_id=f"msg-{i}",
                role=pb.Role.ROLE_USER,
                parts=[pb.Part(text=f"hello {i}")],
                task_id=task_id,
                context_id=context_id,
            )
        ],
        artifacts=[pb.Artifact(artifact_id=f"art-{i}", parts=[pb.Part(text=f"echo hello {i}")])],
    )


# -- the ceiling -----------------------------------------------------------------------------
CEILING_BODY = (
    b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"0b7f4b8e-3c1f-4d61-9a8e-1f2d3c4b5a69",'
    b'"contextId":"5e1c2d3b-4a59-4f68-8e7d-6c5b4a392817","status":{"state":"TASK_STATE_COMPLETED",'
    b'"timestamp":"2025-01-01T00:00:00.000Z"},"artifacts":[{"artifactId":"a1","parts":[{"text":'
    b'"echo hi"}]}],"history":[{"messageId":"m-1",'
    b'"contextId":"5e1c2d3b-4a59-4f68-8e7d-6c5b4a392817",'
    b'"taskId":"0b7f4b8e-3c1f-4d61-9a8e-1f2d3c4b5a69","role":"ROLE_USER","parts":[{"text":"hi"}]}]}}}'
)


def ceiling_app() -> tuple[Any, Any]:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(CEILING_BODY)).encode()),
    ]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:  # read the whole request body
            message = await receive()
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": CEILING_BODY})

    async def populate() -> None:
        return None

    return app, populate


def floor_app(tasks: int = 0) -> tuple[Any, Any]:
    """The least work a SendMessage and GetTask can be with our protocol models: the
    body parsed, the request validated (``SendMessageRequest``), the echo agent's completed
    task built (``trusted``, as ours builds its own objects), its JSON kept in a dict and sent.

    Not a server anyone should run: no event log, no state machine, no executor, no limits, no
    version or extension headers, no error answers but a bare 500. It bounds from below what
    any implementation on these models costs per request, so that ``bench/instructions.py``
    can tell how much of ours is the design and how much is Python, pydantic and uvicorn
    (issue #19's CPU goals, bench/README "Round 11").
    """
    import pydantic_core

    from simple_a2a.protocol._base import replaced, trusted
    from simple_a2a.protocol.models import (
        Artifact,
        Part,
        Task,
        TaskState,
        new_id,
        trusted_status,
    )
    from simple_a2a.protocol.requests import GetTaskRequest, SendMessageRequest

    stored: dict[str, bytes] = {}  # bytes: nothing for the garbage collector to walk
    headers = [(b"content-type", b"application/json")]

    def send_message(params: Any) -> bytes:
        message = SendMessageRequest.from_dict(params).message
        task_id, context_id = new_id(), message.context_id or new_id()
        parts = [Part.text(f"echo {message.text}")]
        artifact = trusted(Artifact, artifact_id=new_id(), parts=parts)
        task = trusted(
            Task,
            id=task_id,
            context_id=context_id,
            status=trusted_status(TaskState.COMPLETED),
            history=[replaced(message, task_id=task_id, context_id=context_id)],
            artifacts=[artifact],
        )
        encoded = stored[task_id] = bytes(task.to_json())
        return b'{"task":%b}' % encoded

    def get_task(params: Any) -> bytes:
        return stored[GetTaskRequest.from_dict(params).id]

    methods = {"SendMessage": send_message, "GetTask": get_task}

    def answer(scope: dict[str, Any], body: bytes) -> bytes:
        path = scope["path"]
        if path == "/":  # JSON-RPC
            request = pydantic_core.from_json(body)
            result = methods[request["method"]](request["params"])
            request_id = pydantic_core.to_json(request.get("id"))
            return b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (request_id, result)
        if path == "/message:send":  # HTTP+JSON
            return send_message(pydantic_core.from_json(body))
        return get_task({"id": path.removeprefix("/tasks/")})

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        try:
            status, body = 200, answer(scope, b"".join(chunks))
        except Exception:
            status, body = 500, b""
        start_headers = [*headers, (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": start_headers})
        await send({"type": "http.response.body", "body": body})

    async def populate() -> None:
        for i in range(tasks):
            task = ours_task(i)
            stored[task.id] = bytes(task.to_json())

    return app, populate


def sse_floor_app() -> tuple[Any, Any]:
    """A bare Starlette SSE endpoint (no A2A): ``tokens N MS`` answered with the frames ours
    sends — the working task, N artifact updates ``t=<time_ns>``, the completed status — built
    with ``json.dumps`` per event. What any Python SSE server pays per event, the floor of
    ``bench/streams.py``."""
    import json
    import uuid

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> StreamingResponse:
        body = await request.json()
        text = body["params"]["message"]["parts"][0]["text"]
        count, interval = (int(x) for x in text.split(" ")[1:3])
        task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())

        def frame(result: dict[str, Any]) -> bytes:
            answer = {"jsonrpc": "2.0", "id": body.get("id"), "result": result}
            return b"data: " + json.dumps(answer, separators=(",", ":")).encode() + b"\n\n"

        def status(state: str) -> dict[str, Any]:
            stamp = datetime.now(timezone.utc).isoformat()
            return {"taskId": task_id, "contextId": context_id,
                    "status": {"state": state, "timestamp": stamp}}  # fmt: skip

        async def events() -> Any:
            task = {"id": task_id, "contextId": context_id, "status": status("x")["status"]}
            task["status"]["state"] = "TASK_STATE_WORKING"
            yield frame({"task": task})
            for i in range(count):
                await asyncio.sleep(interval / 1000)
                chunk = {"artifactId": "t", "parts": [{"text": f"t={time.time_ns()} "}]}
                update = {"taskId": task_id, "contextId": context_id, "artifact": chunk,
                          "append": i > 0, "lastChunk": i == count - 1}  # fmt: skip
                yield frame({"artifactUpdate": update})
            yield frame({"statusUpdate": status("TASK_STATE_COMPLETED")})

        return StreamingResponse(events(), media_type="text/event-stream")

    async def populate() -> None:
        return None

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])]), populate


def sse_fanout_floor_app() -> tuple[Any, Any]:
    """A bare Starlette SSE broadcaster (no A2A), the floor of ``bench/fanout.py``: SendMessage
    ``fanout PATH N MS`` answers a working task at once and, once PATH exists, sends N artifact
    updates ``t=<time_ns>`` MS apart, then the completed status, to every SubscribeToTask of it
    (the task as first event, as A2A §3.1.6 asks). Each event's JSON is built once and framed
    per subscriber with its JSON-RPC id: the least a Python broadcast costs per copy."""
    import json
    import uuid

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    subscribers: dict[str, list[asyncio.Queue[bytes | None]]] = {}
    snapshots: dict[str, bytes] = {}
    running: set[asyncio.Task[None]] = set()

    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    def status(state: str) -> dict[str, Any]:
        return {"state": state, "timestamp": datetime.now(timezone.utc).isoformat()}

    async def broadcast(task_id: str, context_id: str, path: str, count: int, ms: int) -> None:
        def send(result: bytes) -> None:
            for queue in subscribers[task_id]:
                queue.put_nowait(result)

        await _wait_for_file(path)
        for i in range(count):
            chunk = {"artifactId": "f", "parts": [{"text": f"t={time.time_ns()}"}]}
            update = {"taskId": task_id, "contextId": context_id, "artifact": chunk,
                      "append": i > 0}  # fmt: skip
            send(dumps({"artifactUpdate": update}))
            await asyncio.sleep(ms / 1000)
        update = {"taskId": task_id, "contextId": context_id,
                  "status": status("TASK_STATE_COMPLETED")}  # fmt: skip
        send(dumps({"statusUpdate": update}))
        for queue in subscribers.pop(task_id):
            queue.put_nowait(None)
        snapshots.pop(task_id)

    async def endpoint(request: Request) -> Response:
        body = await request.json()
        rid = dumps(body.get("id"))
        if body["method"] == "SendMessage":
            text = body["params"]["message"]["parts"][0]["text"]
            _, path, count, ms = text.split(" ")
            task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
            task = {"id": task_id, "contextId": context_id, "status": status("TASK_STATE_WORKING")}
            snapshots[task_id] = snapshot = dumps(task)
            subscribers[task_id] = []
            job = asyncio.create_task(broadcast(task_id, context_id, path, int(count), int(ms)))
            running.add(job)
            job.add_done_callback(running.discard)
            answer = b'{"jsonrpc":"2.0","id":%b,"result":{"task":%b}}' % (rid, snapshot)
            return Response(answer, media_type="application/json")
        task_id = body["params"]["id"]  # SubscribeToTask
        if task_id not in subscribers:
            error = b'{"jsonrpc":"2.0","id":%b,"error":{"code":-32001,"message":"no task"}}'
            return Response(error % rid, media_type="application/json")
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        subscribers[task_id].append(queue)
        first = snapshots[task_id]

        async def events() -> Any:
            yield b'data: {"jsonrpc":"2.0","id":%b,"result":{"task":%b}}\n\n' % (rid, first)
            while (result := await queue.get()) is not None:
                yield b'data: {"jsonrpc":"2.0","id":%b,"result":%b}\n\n' % (rid, result)

        return StreamingResponse(events(), media_type="text/event-stream")

    async def populate() -> None:
        return None

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])]), populate
