"""How an execution starts (``RequestHandler._launch``): in an asyncio task of its own, so that
nothing that ends the request ends the agent's work, and so that the books of running work are
empty when it is done. A way of starting it sooner (Python 3.12's ``eager_start``, measured in
bench/README "Round 11") must keep these; ``scripts/newer_python`` runs them on 3.12+ too."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simple_a2a.protocol import (
    AgentCard,
    GetTaskRequest,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from simple_a2a.server import CallContext, RequestContext, RequestHandler
from simple_a2a.storage import MemoryStorage

CARD = AgentCard(name="t", description="t", version="1")


def request(text: str = "hi", **config: Any) -> SendMessageRequest:
    configuration = SendMessageConfiguration(**config) if config else None
    return SendMessageRequest(message=Message.user(text), configuration=configuration)


async def test_an_agent_that_never_waits_is_answered_and_forgotten() -> None:
    """Nothing of a finished execution stays in the handler's books (an execution started
    eagerly would be done before ``_launch`` records it)."""
    seen: list[asyncio.Task[Any] | None] = []

    async def echo(ctx: RequestContext) -> None:
        seen.append(asyncio.current_task())
        await ctx.complete(f"echo {ctx.text}")

    h = RequestHandler(CARD, echo, MemoryStorage())
    request_task = asyncio.current_task()
    for i in range(3):
        task = (await h.send_message(request(f"m{i}"), CallContext())).payload
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED and task.text == f"echo m{i}"
    assert h._executions == {} and len(h.running) == 0
    # The agent ran in a task of its own, named for its task, never in the request's.
    assert all(t is not None and t is not request_task for t in seen)
    assert all(t is not None and t.get_name().startswith("a2a-task-") for t in seen)


async def test_cancelling_the_request_does_not_cancel_the_agents_work() -> None:
    """An ASGI server or a gRPC deadline may cancel the request's task; the agent, in its own
    task, goes on and completes the task."""
    release = asyncio.Event()

    async def slow(ctx: RequestContext) -> None:
        await release.wait()
        await ctx.complete("done")

    h = RequestHandler(CARD, slow, MemoryStorage())
    waiting = asyncio.create_task(h.send_message(request(), CallContext()))
    while not h._executions:
        await asyncio.sleep(0)
    task_id = next(iter(h._executions))
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    runner = h._executions[task_id].runner
    await runner
    stored = await h.get_task(GetTaskRequest(id=task_id), CallContext())
    assert stored.status.state is TaskState.COMPLETED and stored.text == "done"
    assert h._executions == {} and len(h.running) == 0


async def test_an_agents_own_timeout_cancels_only_the_agents_wait() -> None:
    """``asyncio.timeout()`` entered in the agent's first step cancels the agent's task, not the
    request's (the trap of starting it inside the request's task, bench/README "Round 7")."""

    async def impatient(ctx: RequestContext) -> None:
        try:
            async with asyncio.timeout(0.05):
                await asyncio.sleep(5)
        except TimeoutError:
            await ctx.complete("gave up waiting")

    h = RequestHandler(CARD, impatient, MemoryStorage())
    task = (await h.send_message(request(), CallContext())).payload
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED and task.text == "gave up waiting"
    assert asyncio.current_task() is not None and not asyncio.current_task().cancelling()


async def test_return_immediately_answers_the_task_before_the_agent_ran() -> None:
    """The answer to ``returnImmediately`` is the task as stored before the agent ran, even for
    an agent that would finish without waiting."""

    async def echo(ctx: RequestContext) -> None:
        await ctx.complete("echo")

    h = RequestHandler(CARD, echo, MemoryStorage())
    task = (await h.send_message(request(return_immediately=True), CallContext())).payload
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    await asyncio.gather(*(x.runner for x in h._executions.values()))
    stored = await h.get_task(GetTaskRequest(id=task.id), CallContext())
    assert stored.status.state is TaskState.COMPLETED


async def test_a_streaming_send_of_an_agent_that_never_waits_streams_every_event() -> None:
    async def echo(ctx: RequestContext) -> None:
        await ctx.start()
        await ctx.complete("echo")

    h = RequestHandler(CARD, echo, MemoryStorage())
    items = [item async for item in await h.send_streaming_message(request(), CallContext())]
    kinds = [item.event.payload.__class__.__name__ for item in items if item.event]
    assert kinds == ["Task", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent",
                     "TaskStatusUpdateEvent"]  # fmt: skip
    assert [item.seq for item in items] == [1, 2, 3, 4]
    assert h._executions == {}
