"""The executor API agent authors write against, and the runner that drives it.

Two ways to write an agent::

    class Echo(AgentExecutor):
        async def execute(self, ctx):             # or a plain ``def``: runs in a worker thread
            await ctx.complete(f"You said: {ctx.text}")

    @agent
    async def echo(ctx):                          # return a string, parts, an artifact or a
        return f"You said: {ctx.text}"            # Message; or be an async generator of chunks

What ``execute`` returns is applied to the task: ``None`` leaves it as the verbs left it; a
string, part(s) or artifact(s) are added as an artifact; a ``Message`` is a direct reply. Then the
task is completed unless it already reached a terminal or interrupted state or was detached
(``ctx.detach()``). An executor that raises or times out fails the task with a safe message.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable
from types import AsyncGeneratorType
from typing import Any

import anyio.to_thread

from ..protocol import states
from ..protocol.logcontext import library_logger
from ..protocol.models import Artifact, Message, new_id
from ..protocol.states import TaskStateError
from .context import RequestContext, _as_artifacts
from .policy import DEFAULT as DEFAULT_RECOVERY
from .policy import RecoveryPolicy

log = library_logger("simple_a2a.server")

FAILURE_MESSAGE = "The agent failed while working on this task."
TIMEOUT_MESSAGE = "The agent did not finish in time."


class AgentExecutor:
    """Subclass and implement :meth:`execute` (``async def`` or plain ``def``)."""

    #: What happens to a task whose replica died while running it (docs/cluster.md "Recovery
    #: policy"): ``Fail()`` (the default) fails it with the restart message; ``Rerun(attempts=3,
    #: backoff=1.0, max_backoff=30.0)`` runs it again on the replica that took it over
    #: (``ctx.attempt`` counts from 1, ``ctx.resumed`` is True from attempt 2).
    recovery: RecoveryPolicy = DEFAULT_RECOVERY

    #: True (with the default ``recovery``): such tasks are handed back to this executor every
    #: time, at once (``ctx.resumed`` is True), instead of being failed: an unbounded ``Rerun``
    #: without back-off (docs/guides/deployment.md). An explicit ``recovery`` wins.
    resumable: bool = False

    def execute(self, ctx: RequestContext) -> Any:
        raise NotImplementedError

    def cancel(self, ctx: RequestContext) -> Any:
        """Called when the client cancels; ``ctx.cancelled`` is already set. The task is marked
        canceled after this returns unless the executor finished it otherwise."""
        return None


class FunctionExecutor(AgentExecutor):
    """An executor made from one function (see :func:`agent`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", "agent")

    def execute(self, ctx: RequestContext) -> Any:
        return self.fn(ctx)


def agent(fn: Callable[..., Any]) -> AgentExecutor:
    """Decorator: a function of the request context becomes an agent executor."""
    return FunctionExecutor(fn)


def as_executor(obj: AgentExecutor | Callable[..., Any]) -> AgentExecutor:
    if isinstance(obj, AgentExecutor):
        return obj
    if callable(obj):
        return FunctionExecutor(obj)
    raise TypeError(f"not an executor: {obj!r}")


@functools.lru_cache(maxsize=256)
def _kind(fn: Callable[..., Any]) -> str:
    """``"coroutine"``, ``"asyncgen"`` or ``"sync"``: how an execute function is called.

    Remembered per function (a bound ``execute`` by its ``__func__``, as ``inspect`` reads it):
    ``inspect``'s checks are ~6 Python calls, at every message (issue #36)."""
    if inspect.iscoroutinefunction(fn):
        return "coroutine"
    return "asyncgen" if inspect.isasyncgenfunction(fn) else "sync"


def _kind_of(fn: Callable[..., Any]) -> str:
    try:
        return _kind(getattr(fn, "__func__", fn))
    except TypeError:  # an unhashable callable object: not remembered
        return _kind.__wrapped__(fn)


async def _call_maybe_async(fn: Callable[..., Any], ctx: RequestContext) -> Any:
    kind = _kind_of(fn)
    if kind == "coroutine":
        return await fn(ctx)  # (a coroutine: awaitable; awaited once, as any awaitable result)
    if kind == "asyncgen":
        return fn(ctx)  # an async generator, which is not awaitable
    result = await anyio.to_thread.run_sync(fn, ctx, abandon_on_cancel=True)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _stream_chunks(ctx: RequestContext, chunks: AsyncIterator[Any]) -> None:
    """An async generator agent: each chunk extends one artifact (``append``); the last chunk
    carries ``last_chunk`` (so each chunk is held until the next one arrives)."""
    artifact_id = new_id()
    pending: Artifact | None = None
    sent = 0
    async for chunk in chunks:
        if ctx.cancelled.is_set():
            break
        if pending is not None:
            await ctx.emit_artifact(pending, append=sent > 0)
            sent += 1
        pending = _as_artifacts(chunk)[0].model_copy(update={"artifact_id": artifact_id})
    if pending is not None and ctx.state not in states.TERMINAL:  # e.g. canceled meanwhile
        await ctx.emit_artifact(pending, append=sent > 0, last_chunk=True)


async def _apply_result(ctx: RequestContext, result: Any) -> None:
    if isinstance(result, Message):
        await ctx.reply(result)
        return
    if result is not None and not isinstance(result, bool):
        for artifact in _as_artifacts(result):
            await ctx.emit_artifact(artifact)


async def run_executor(
    executor: AgentExecutor, ctx: RequestContext, *, timeout: float | None
) -> None:
    """Run one execution to the end; whatever happens, the task is left in a sane state."""
    try:
        with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
            target = executor.fn if isinstance(executor, FunctionExecutor) else executor.execute
            # An ``async def`` agent awaited here, not through _call_maybe_async (one coroutine
            # less per execution, issue #36).
            if _kind_of(target) == "coroutine":
                result = await target(ctx)
            else:
                result = await _call_maybe_async(target, ctx)
            if isinstance(result, AsyncGeneratorType):  # (inspect.isasyncgen, without a call)
                await ctx.start() if states.is_open(ctx.state) else None
                await _stream_chunks(ctx, result)
            elif result is not None:  # (None, the usual answer, has nothing to apply)
                await _apply_result(ctx, result)
        if ctx.reply_message is not None and not ctx.committed:
            return
        if ctx.cancelled.is_set() and ctx.state not in states.TERMINAL:
            await ctx.cancel()
        elif states.is_open(ctx.state) and not ctx.detached:
            await ctx.complete()
    except TimeoutError:
        await _fail_safely(ctx, TIMEOUT_MESSAGE)
    except asyncio.CancelledError:
        await _fail_safely(ctx, None, canceled=True)
        raise
    except TaskStateError as exc:
        log.warning("executor for task %s: %s", ctx.task_id, exc)
        await _fail_safely(ctx, FAILURE_MESSAGE)
    except Exception:
        log.exception("executor failed for task %s", ctx.task_id)
        await _fail_safely(ctx, FAILURE_MESSAGE)
    finally:
        ctx.changed.set()


async def _fail_safely(ctx: RequestContext, message: str | None, canceled: bool = False) -> None:
    if (
        ctx.state in states.TERMINAL
        or ctx.fenced
        or (ctx.reply_message is not None and not ctx.committed)
    ):
        return  # ended already, run elsewhere now, or answered by a direct reply
    try:
        if canceled or ctx.cancelled.is_set():
            await asyncio.shield(ctx.cancel(message))
        else:
            await ctx.fail(message)
    except Exception:
        log.exception("could not record the failure of task %s", ctx.task_id)
