"""The executor API (PRODUCT.md §2) driven through the request handler, without HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from simple_a2a.protocol import (
    AgentCard,
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from simple_a2a.protocol import errors as e
from simple_a2a.protocol.states import InvalidTransitionError
from simple_a2a.server import AgentExecutor, CallContext, RequestContext, RequestHandler, agent
from simple_a2a.storage import MemoryStorage

CARD = AgentCard(name="t", description="t", version="1")


def handler(executor: Any, **options: Any) -> RequestHandler:
    return RequestHandler(CARD, executor, MemoryStorage(), **options)


async def send(h: RequestHandler, text: str = "hi", **config: Any) -> Task | Message:
    request = SendMessageRequest(
        message=Message.user(text),
        configuration=SendMessageConfiguration(**config) if config else None,
    )
    return (await h.send_message(request, CallContext())).payload


async def test_decorated_function_returning_a_string_completes_with_an_artifact() -> None:
    @agent
    async def hello(ctx: RequestContext) -> str:
        return f"Howdy: {ctx.text}"

    task = await send(handler(hello), "world")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.text == "Howdy: world"


async def test_plain_function_returning_parts() -> None:
    def parts(ctx: RequestContext) -> list[Part]:
        return [Part.text("a"), Part.data({"b": 1})]

    task = await send(handler(parts))
    assert isinstance(task, Task)
    assert [p.is_text for p in task.artifacts[0].parts] == [True, False]
    assert task.artifacts[0].parts[1].data == {"b": 1}


async def test_async_generator_streams_chunks_into_one_artifact() -> None:
    async def words(ctx: RequestContext) -> AsyncIterator[str]:
        for word in ["one ", "two ", "three"]:
            yield word

    h = handler(words)
    request = SendMessageRequest(message=Message.user("go"))
    items = [item async for item in await h.send_streaming_message(request, CallContext())]
    chunks = [i.event.artifact_update for i in items if i.event and i.event.artifact_update]
    assert [c.append for c in chunks] == [None, True, True]
    assert [c.last_chunk for c in chunks] == [None, None, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    final = items[-1].event
    assert final is not None and final.status_update is not None
    assert final.status_update.status.state is TaskState.COMPLETED
    stored = await h.get_task(GetTaskRequest(id=chunks[0].task_id), CallContext())
    assert stored.artifacts[0].text == "one two three"  # appended text parts are joined


async def test_returning_an_artifact_and_a_message() -> None:
    async def art(ctx: RequestContext) -> Artifact:
        return Artifact.of("x", name="report")

    task = await send(handler(art))
    assert isinstance(task, Task) and task.artifacts[0].name == "report"

    async def msg(ctx: RequestContext) -> Message:
        return Message.agent("direct")

    reply = await send(handler(msg))
    assert isinstance(reply, Message) and reply.text == "direct" and reply.task_id is None


async def test_illegal_transition_raises_and_the_task_stays_terminal() -> None:
    seen: list[BaseException] = []

    class Twice(AgentExecutor):
        async def execute(self, ctx: RequestContext) -> None:
            await ctx.complete("done")
            try:
                await ctx.fail("too late")
            except InvalidTransitionError as exc:
                seen.append(exc)

    task = await send(handler(Twice()))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert seen and "terminal" in str(seen[0])


async def test_timeout_fails_the_task() -> None:
    async def slow(ctx: RequestContext) -> None:
        await asyncio.sleep(10)

    task = await send(handler(slow, executor_timeout=0.1))
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED


async def test_detached_task_keeps_working_after_execute_returns() -> None:
    """An executor may hand its task to background work through ``ctx.detach()``."""
    release = asyncio.Event()

    async def background(ctx: RequestContext) -> None:
        handle = ctx.detach()
        await handle.start("queued")

        async def job() -> None:
            await release.wait()
            await handle.complete("finished later")

        asyncio.get_running_loop().create_task(job())

    h = handler(background)
    # returnImmediately: the task as it is, not finished
    task = await send(h, return_immediately=True)
    assert isinstance(task, Task) and not task.is_final
    # a blocking send waits for the background work (spec §3.2.2), not for execute()
    blocking = asyncio.ensure_future(send(h))
    await asyncio.sleep(0.2)
    assert not blocking.done()
    release.set()
    done = await asyncio.wait_for(blocking, 5)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert done.text == "finished later"
    current = await h.get_task(GetTaskRequest(id=task.id), CallContext())
    assert current.status.state is TaskState.COMPLETED and current.text == "finished later"


async def test_return_immediately_then_cooperative_cancel() -> None:
    """Spec §3.2.2 returnImmediately; §3.1.5 cancel sets ``ctx.cancelled``."""
    observed = asyncio.Event()
    waiting = asyncio.Event()

    async def waits(ctx: RequestContext) -> None:
        await ctx.start()
        waiting.set()
        await ctx.cancelled
        observed.set()

    h = handler(waits)
    task = await send(h, return_immediately=True)
    assert isinstance(task, Task) and not task.is_terminal
    await asyncio.wait_for(waiting.wait(), 2)
    canceled = await h.cancel_task(CancelTaskRequest(id=task.id), CallContext())
    assert canceled.status.state is TaskState.CANCELED
    await asyncio.wait_for(observed.wait(), 2)
    with pytest.raises(e.TaskNotCancelableError):
        await h.cancel_task(CancelTaskRequest(id=task.id), CallContext())


async def test_history_length_semantics() -> None:
    """Spec §3.2.4: unset → all; 0 → none; n → the last n."""

    async def chatty(ctx: RequestContext) -> None:
        await ctx.start("thinking")
        await ctx.complete(message="done")

    h = handler(chatty)
    task = await send(h)
    assert isinstance(task, Task)
    full = await h.get_task(GetTaskRequest(id=task.id), CallContext())
    assert len(full.history) == 3
    none = await h.get_task(GetTaskRequest(id=task.id, history_length=0), CallContext())
    assert none.history == []
    last = await h.get_task(GetTaskRequest(id=task.id, history_length=1), CallContext())
    assert [m.text for m in last.history] == ["done"]
    with pytest.raises(e.InvalidParamsError, match="historyLength"):
        await h.get_task(GetTaskRequest(id=task.id, history_length=-1), CallContext())


async def test_list_tasks_pages_and_validation() -> None:
    """Spec §3.1.4: pageSize 1-100, opaque tokens, newest first, totalSize."""
    h = handler(lambda ctx: "ok")
    ids = []
    for i in range(7):
        task = await send(h, f"m{i}")
        assert isinstance(task, Task)
        ids.append(task.id)
        await asyncio.sleep(0.003)  # distinct status timestamps (millisecond precision)
    seen: list[str] = []
    token = ""
    while True:
        page = await h.list_tasks(ListTasksRequest(page_size=3, page_token=token), CallContext())
        assert page.total_size == 7 and page.page_size == 3
        assert all(t.artifacts == [] for t in page.tasks)  # includeArtifacts defaults to false
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == list(reversed(ids))
    for bad in (0, 101):
        with pytest.raises(e.InvalidParamsError, match="pageSize"):
            await h.list_tasks(ListTasksRequest(page_size=bad), CallContext())
    with pytest.raises(e.InvalidParamsError, match="pageToken"):
        await h.list_tasks(ListTasksRequest(page_token="garbage!"), CallContext())
    with_artifacts = await h.list_tasks(ListTasksRequest(include_artifacts=True), CallContext())
    assert with_artifacts.tasks[0].artifacts


async def test_tasks_are_scoped_to_their_owner() -> None:
    """Spec §7.5/§13.1: another caller's task is indistinguishable from a missing one."""
    from simple_a2a.server import Caller

    h = handler(lambda ctx: "ok")
    alice = CallContext(caller=Caller("alice"))
    bob = CallContext(caller=Caller("bob"))
    request = SendMessageRequest(message=Message.user("secret"))
    task = (await h.send_message(request, alice)).payload
    assert isinstance(task, Task)
    with pytest.raises(e.TaskNotFoundError):
        await h.get_task(GetTaskRequest(id=task.id), bob)
    with pytest.raises(e.TaskNotFoundError):
        await h.subscribe_to_task(SubscribeToTaskRequest(id=task.id), bob)
    assert (await h.list_tasks(ListTasksRequest(), bob)).total_size == 0
    assert (await h.list_tasks(ListTasksRequest(), alice)).total_size == 1


async def test_shutdown_cancels_stuck_executions() -> None:
    """Graceful shutdown: within the grace period, then canceled — never stuck working."""

    async def stuck(ctx: RequestContext) -> None:
        await ctx.start()
        await asyncio.sleep(60)

    h = handler(stuck)
    task = await send(h, return_immediately=True)
    assert isinstance(task, Task)
    await asyncio.sleep(0.05)
    await h.shutdown(grace=0.1)
    final = await h.get_task(GetTaskRequest(id=task.id), CallContext())
    assert final.status.state is TaskState.CANCELED


async def test_follow_up_right_after_input_required_waits_for_the_turn_to_end() -> None:
    """Spec §3.4: an interrupted task accepts the client's answer, even while the executor
    that asked is still returning."""

    async def ask(ctx: RequestContext) -> str | None:
        if len(ctx.history) == 1:
            await ctx.require_input("which size?")
            await asyncio.sleep(0.3)
            return None
        return f"got {ctx.text}"

    h = handler(ask)
    first = await send(h, "pizza")
    assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
    request = SendMessageRequest(message=Message.user("large", task_id=first.id))
    second = (await h.send_message(request, CallContext())).payload
    assert isinstance(second, Task) and second.status.state is TaskState.COMPLETED
    assert second.text == "got large"


async def test_cancel_served_by_another_replica_stops_the_executor_cleanly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two handlers on one storage (two replicas): B cancels a task A is running. A's executor
    learns it at its next update — ``ctx.cancelled`` is set — and nothing logs an error."""
    storage = MemoryStorage()
    saw_cancel = asyncio.Event()

    async def busy(ctx: RequestContext) -> None:
        await ctx.start()
        while True:
            try:
                await ctx.emit_status("still working")
            except InvalidTransitionError:
                if ctx.cancelled:
                    saw_cancel.set()
                raise
            await asyncio.sleep(0.01)

    replica_a = RequestHandler(CARD, busy, storage)
    replica_b = RequestHandler(CARD, busy, storage)
    task = (
        await replica_a.send_message(
            SendMessageRequest(
                message=Message.user("go"),
                configuration=SendMessageConfiguration(return_immediately=True),
            ),
            CallContext(),
        )
    ).payload
    assert isinstance(task, Task)
    await asyncio.sleep(0.05)
    canceled = await replica_b.cancel_task(CancelTaskRequest(id=task.id), CallContext())
    assert canceled.status.state is TaskState.CANCELED
    await asyncio.wait_for(saw_cancel.wait(), 2)
    await asyncio.sleep(0.05)
    final = await replica_a.get_task(GetTaskRequest(id=task.id), CallContext())
    assert final.status.state is TaskState.CANCELED
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
