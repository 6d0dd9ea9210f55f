"""Regression tests for the task lifecycle, over every binding: JSON-RPC, HTTP+JSON and gRPC.

One agent is served over real HTTP (uvicorn on loopback) and gRPC (grpc.aio) in the test's event
loop; our client speaks one binding per parametrised run. Each test names the bug it guards
(issue #13) and the spec rule it follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from simple_a2a import AsyncClient
from simple_a2a.client import afold
from simple_a2a.protocol import AgentCard, Message, Task, TaskState
from simple_a2a.protocol import errors as e
from simple_a2a.server import A2AServer, AgentExecutor, RequestContext
from simple_a2a.storage import StorageError
from simple_a2a.storage.sqlite import SQLiteStorage

pytest.importorskip("grpc")
from simple_a2a.server.grpc import serve_grpc

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]

CARD = AgentCard.from_dict(
    {
        "name": "Lifecycle",
        "description": "lifecycle regressions",
        "version": "1.0",
        "capabilities": {"streaming": True},
    }
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LifecycleAgent(AgentExecutor):
    """``detach``: working, then finished by background work once ``release`` is set;
    a follow-up to such a task adds an artifact and returns; ``ask``: input-required, a
    follow-up completes it; ``whoami``: the tenant; anything else: echoed."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.runs: list[str] = []

    async def execute(self, ctx: RequestContext) -> Any:
        self.runs.append(ctx.text)
        word = ctx.text.split(" ")[0]
        if ctx.state is TaskState.WORKING and ctx.detached:  # a follow-up joining the work
            await ctx.emit_artifact(f"noted: {ctx.text}")
            return None
        if word == "detach":
            await ctx.start("queued")
            handle = ctx.detach()

            async def finish_later() -> None:
                await self.release.wait()
                await handle.complete("finished later")

            asyncio.get_running_loop().create_task(finish_later())
            return None
        if word == "ask":
            if len(ctx.history) > 1:
                await ctx.complete(f"thanks for {ctx.text}")
            else:
                await ctx.require_input("what size?")
            return None
        if word == "whoami":
            return f"tenant={ctx.tenant}"
        return f"echo: {ctx.text}"


@contextlib.asynccontextmanager
async def serving(a2a: A2AServer) -> AsyncIterator[AgentCard]:
    """The agent over HTTP (JSON-RPC + HTTP+JSON) and gRPC; yields its public card."""
    await a2a.startup()
    port = free_port()
    config = uvicorn.Config(a2a.app, host="127.0.0.1", port=port, log_level="warning")
    http = uvicorn.Server(config)
    runner = asyncio.create_task(http.serve())
    while not http.started:
        await asyncio.sleep(0.01)
    grpc_server = await serve_grpc(a2a, "127.0.0.1", 0)
    try:
        yield a2a.public_card(f"http://127.0.0.1:{port}")
    finally:
        await grpc_server.stop(0)
        http.should_exit = True
        await runner
        await a2a.shutdown()


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def agent() -> LifecycleAgent:
    return LifecycleAgent()


@pytest.fixture
async def card(agent: LifecycleAgent) -> AsyncIterator[AgentCard]:
    async with serving(A2AServer(CARD, agent)) as served:
        yield served


async def test_follow_up_to_a_detached_working_task_is_accepted(
    card: AgentCard, agent: LifecycleAgent, binding: str
) -> None:
    """Bug 1: a message for a task left ``working`` by a detached executor runs the executor
    for it on the same task, which stays working (§3.1.1, ``states.FOLLOW_UPS``); it never
    answers an internal error."""
    async with AsyncClient(card, bindings=[binding]) as client:
        first = await client.send("detach", return_immediately=True)
        assert isinstance(first, Task)
        for _ in range(100):  # until the executor has returned (the task stays working)
            if "detach" in agent.runs and (await client.get(first.id)).status.state is (
                TaskState.WORKING
            ):
                break
            await asyncio.sleep(0.02)
        follow_up = await client.send("more details", task_id=first.id, return_immediately=True)
        assert isinstance(follow_up, Task) and follow_up.id == first.id
        assert follow_up.status.state is TaskState.WORKING
        for _ in range(100):
            current = await client.get(first.id)
            if current.artifacts:
                break
            await asyncio.sleep(0.02)
        assert current.status.state is TaskState.WORKING
        assert [a.parts[0].text for a in current.artifacts] == ["noted: more details"]
        assert [m.text for m in current.history if m.role.value == "ROLE_USER"] == [
            "detach",
            "more details",
        ]
        agent.release.set()  # the background work finishes the task
        for _ in range(100):
            current = await client.get(first.id)
            if current.status.state is TaskState.COMPLETED:
                break
            await asyncio.sleep(0.02)
        assert current.status.state is TaskState.COMPLETED


async def test_blocking_send_waits_for_detached_work(
    card: AgentCard, agent: LifecycleAgent, binding: str
) -> None:
    """Bug 2: a blocking SendMessage returns when the task is terminal or interrupted, with
    all its artifacts (§3.2.2), not when a detaching executor returns."""
    async with AsyncClient(card, bindings=[binding]) as client:
        sending = asyncio.ensure_future(client.send("detach"))
        await asyncio.sleep(0.3)
        assert not sending.done()
        agent.release.set()
        task = await asyncio.wait_for(sending, 10)
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert task.text == "finished later"


async def test_the_tenant_is_the_same_on_every_binding_unary_and_streamed(
    card: AgentCard, binding: str
) -> None:
    """Bug 3: ``ctx.tenant`` is the request's tenant (§3.2.6) whatever the binding or mode."""
    interfaces = [i.model_copy(update={"tenant": "acme"}) for i in card.supported_interfaces]
    tenant_card = card.model_copy(update={"supported_interfaces": interfaces})
    async with AsyncClient(tenant_card, bindings=[binding]) as client:
        unary = await client.send("whoami")
        streamed = await afold(client.stream("whoami"))
    assert isinstance(unary, Task) and unary.text == "tenant=acme"
    assert isinstance(streamed, Task) and streamed.text == "tenant=acme"


async def test_a_subscription_stays_open_through_input_required(
    card: AgentCard, binding: str
) -> None:
    """Bug 4: SubscribeToTask ends only at a terminal state (§3.1.6); a follow-up resumes
    the task and the subscriber sees it finish. SendStreamingMessage still ends at the
    interrupted state (§3.1.2)."""
    async with AsyncClient(card, bindings=[binding]) as client:
        streamed = [event async for event in client.stream("ask")]
        assert streamed[-1].status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
        task_id = streamed[0].id  # type: ignore[union-attr]
        seen: list[Any] = []
        subscribed = asyncio.Event()

        async def subscribe() -> None:
            async for event in client.subscribe(task_id):
                seen.append(event)
                subscribed.set()

        subscriber = asyncio.ensure_future(subscribe())
        await asyncio.wait_for(subscribed.wait(), 5)
        await asyncio.sleep(0.2)
        assert not subscriber.done()  # still open while the task waits for input
        done = await client.send("large", task_id=task_id)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        await asyncio.wait_for(subscriber, 10)
    states = [getattr(getattr(x, "status", None), "state", None) for x in seen]
    assert states[0] is TaskState.INPUT_REQUIRED  # the snapshot
    assert states[-1] is TaskState.COMPLETED


async def test_a_failed_storage_write_is_an_internal_error_and_runs_nothing(
    tmp_path: Path, binding: str
) -> None:
    """Bug 5: the task is stored before the executor runs. A store that cannot write (here a
    real SQLite file whose tasks table is gone) answers InternalError and no agent code runs;
    nothing claims a task that was never stored."""
    agent = LifecycleAgent()
    path = tmp_path / "tasks.db"
    async with serving(A2AServer(CARD, agent, storage=SQLiteStorage(path))) as card:
        with sqlite3.connect(path) as conn:  # break the store under the running server
            conn.execute("DROP TABLE tasks")
        async with AsyncClient(card, bindings=[binding]) as client:
            with pytest.raises(e.InternalError) as raised:
                await client.send("hello")
            assert "Traceback" not in str(raised.value)
            with pytest.raises(e.InternalError):
                async for _event in client.stream("hello"):
                    pass
    assert agent.runs == []


async def test_a_direct_reply_leaves_no_task(card: AgentCard, binding: str) -> None:
    """Storing first keeps §3.1.1: an executor answering with a direct Message before it
    touched the task leaves no task behind (the stored one is discarded)."""

    class Replier(AgentExecutor):
        async def execute(self, ctx: RequestContext) -> None:
            await ctx.reply(Message.agent(f"hi {ctx.text}"))

    async with (
        serving(A2AServer(CARD, Replier())) as reply_card,
        AsyncClient(reply_card, bindings=[binding]) as client,
    ):
        answer = await client.send("there")
        assert isinstance(answer, Message) and answer.text == "hi there"
        streamed = [event async for event in client.stream("you")]
        assert len(streamed) == 1 and isinstance(streamed[0], Message)
        page = await client.list()
        assert page.tasks == []


def _immutable(path: Path, on: bool) -> bool:
    """``chattr +i``: a file even root cannot write (root ignores permission bits)."""
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


async def test_a_read_only_sqlite_file_is_refused_at_open(tmp_path: Path) -> None:
    """Bug 6: ``open()`` proves the file writable and names it; a server would otherwise
    start and fail every message later."""
    path = tmp_path / "tasks.db"
    store = SQLiteStorage(path)
    await store.open()
    await store.close()
    for name in os.listdir(tmp_path):  # the database and anything beside it
        if not _immutable(tmp_path / name, True):
            pytest.skip("chattr +i is not available on this file system")
    try:
        with pytest.raises(StorageError, match=str(path)):
            await SQLiteStorage(path).open()
    finally:
        for name in os.listdir(tmp_path):
            _immutable(tmp_path / name, False)


async def test_a_failed_recovery_is_not_counted(tmp_path: Path) -> None:
    """Bug 6: restart recovery counts only the tasks it really failed (or resumed)."""
    path = tmp_path / "tasks.db"
    store = SQLiteStorage(path)
    await store.open()
    working = Task.from_dict(
        {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
    )
    await store.tasks.create(working)
    await store.close()
    with sqlite3.connect(path) as conn:  # the failure cannot be logged: recovery fails
        conn.execute("DROP TABLE events")
    restarted = A2AServer(CARD, LifecycleAgent(), storage=SQLiteStorage(path))
    restarted.recover_interrupted_tasks = False
    await restarted.startup()
    try:
        assert await restarted.handler.recover() == 0
    finally:
        await restarted.shutdown()
