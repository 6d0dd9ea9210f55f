"""The binding-independent request handler: the 11 operations of spec §3, once, for every binding.

A binding (JSON-RPC, HTTP+JSON, gRPC) only parses its wire format into the request models of
:mod:`simple_a2a.protocol.requests`, calls :meth:`RequestHandler.handle` (or the method for the
operation) with a :class:`CallContext`, and renders the result or the raised ``A2AError``.
Streaming operations return an async iterator of :class:`StreamItem` *after* validating, so a
binding can still answer an error before it starts a stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..protocol import errors as e
from ..protocol import logcontext
from ..protocol import requests as rq
from ..protocol._base import replaced, trusted
from ..protocol.card import AgentCard
from ..protocol.logcontext import library_logger
from ..protocol.models import (
    TERMINAL_STATES,
    Message,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
    status_now,
    trusted_status,
)
from ..protocol.operations import OPERATIONS
from ..protocol.requests import StreamResponse
from ..protocol.states import FOLLOW_UPS, FollowUp, TaskTerminalError
from ..protocol.telemetry import TELEMETRY
from ..storage.base import Storage, StoredTask, TaskQuery
from . import recovery
from .context import CallContext, Caller, NewTaskStream, RequestContext
from .executor import AgentExecutor, as_executor, run_executor
from .leases import LeaseKeeper, bind_leases, claim_follow_up
from .limits import (
    DEFAULT_LIMITS,
    Limits,
    RunningTasks,
    check_identifiers,
    check_message,
)
from .paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_page_token,
    encode_page_token,
    trim_history,
)
from .push_configs import PushConfigOperations
from .stopping import stop_executions
from .tasks import StreamItem, TaskManager
from .telemetry import bind_execution, bind_request, traced_executor, traced_operation

if TYPE_CHECKING:
    from .push import PushService
    from .workqueue import WorkDispatch

log = library_logger("simple_a2a.server")

ExtendedCardProvider = Callable[[Caller | None], "AgentCard | Awaitable[AgentCard]"]
RESTART_MESSAGE = recovery.RESTART_MESSAGE


def _busy(task_id: str) -> e.A2AError:
    return e.UnsupportedOperationError(
        f"task {task_id} is still being worked on by its executor; send the message when it "
        "returns or asks for input",
        task_id=task_id,
    )


class _Execution(NamedTuple):
    ctx: RequestContext
    runner: asyncio.Task[None]


class RequestHandler(PushConfigOperations):
    """Serves one agent: its card, its executor and its storage."""

    def __init__(
        self,
        card: AgentCard,
        executor: AgentExecutor | Callable[..., Any],
        storage: Storage,
        *,
        extended_card: AgentCard | ExtendedCardProvider | None = None,
        max_history_length: int | None = 1000,
        executor_timeout: float | None = None,
        cancel_grace: float = 5.0,
        keepalive: float = 15.0,
        limits: Limits = DEFAULT_LIMITS,
        tasks: TaskManager | None = None,
        authorize: Callable[[Caller, str], Awaitable[None]] | None = None,
        push: PushService | None = None,
        leases: LeaseKeeper | None = None,
        work: WorkDispatch | None = None,
    ) -> None:
        self.card = card
        #: bounds on what one caller can make us hold (docs/security.md)
        self.limits = limits
        self.executor = as_executor(executor)
        self.storage = storage
        self.extended_card = extended_card
        self.max_history_length = max_history_length
        self.executor_timeout = executor_timeout
        self.cancel_grace = cancel_grace
        #: every change to a task goes through it (shared with push delivery, when given)
        self.tasks = tasks or TaskManager(storage, keepalive=keepalive)
        self._executions: dict[str, _Execution] = {}
        #: executions running per caller, bounded (Limits.max_running_tasks_per_caller)
        self.running = RunningTasks(limits)
        self._background: set[asyncio.Task[Any]] = set()
        #: ``authorize(caller, operation)`` raising PermissionDeniedError (``auth=``, spec §7.5)
        self.authorize = authorize
        #: push delivery (docs/push.md): built on the same ``tasks``; None without the capability
        self.push = push
        #: task leases: several processes on one storage (docs/guides/deployment.md)
        self.leases = leases
        if leases is not None:
            bind_leases(self, leases)
        #: the work queue and this replica's role (docs/cluster.md); None: run every message here
        self.work = work
        if work is not None:
            work.bind(self)

    # -- dispatch --
    async def handle(self, operation: str, request: Any, call: CallContext) -> Any:
        """Run an operation by its 1.0 name: the one entry of every binding and version.

        Streaming operations return ``AsyncIterator[StreamItem]`` once validated, so a binding
        can still answer an error before its stream starts. A tenant named in the request
        (a field of every request message, spec §3.2.6) fills ``call.tenant`` when the binding
        found none in the URL, so an executor sees the same tenant over every binding.
        """
        method = getattr(self, _METHODS[operation])
        if call.tenant is None:
            call.tenant = getattr(request, "tenant", None) or None
        token = bind_request(operation, request, call)  # logs, spans: docs/observability.md
        try:
            if TELEMETRY.on:
                run = functools.partial(self._run_operation, method, operation, request, call)
                return await traced_operation(run, operation, request, call)
            return await self._run_operation(method, operation, request, call)
        finally:
            logcontext.reset(token)

    async def _run_operation(
        self, method: Any, operation: str, request: Any, call: CallContext
    ) -> Any:
        if self.authorize is not None and call.caller is not None:
            # Spec §7.5, §13.1: the authorization hook runs before anything is looked up.
            await self.authorize(call.caller, operation)
        check_identifiers(request)  # SQL text holds no NUL: refused alike on every backend
        return await method(request, call)

    # -- SendMessage / SendStreamingMessage (spec §3.1.1, §3.1.2) --
    async def send_message(
        self, request: rq.SendMessageRequest, call: CallContext
    ) -> rq.SendMessageResponse:
        ctx, _seq = await self._start(request, call)
        config = request.configuration
        followed = False  # (settled by writes elsewhere: read them back, not our last write)
        if config is not None and config.return_immediately:
            ctx.commit()  # return at once: the task is the answer
        else:
            followed = await self._wait_settled(ctx)
            if self.push is not None and ctx.task.status.state.is_terminal:
                await self.push.settle(ctx.task_id)
        if ctx.reply_message is not None and not ctx.committed:
            return trusted(rq.SendMessageResponse, message=ctx.reply_message)
        stored = await (self.tasks.get if followed else self.tasks.latest)(ctx.task_id)
        task = stored.task if stored else ctx.task
        length = config.history_length if config else None
        return trusted(
            rq.SendMessageResponse, task=trim_history(task, length, self.max_history_length)
        )

    async def send_streaming_message(
        self, request: rq.SendMessageRequest, call: CallContext
    ) -> AsyncIterator[StreamItem]:
        self._require_streaming()
        ctx, seq = await self._start(request, call)
        return NewTaskStream(ctx, self.tasks) if not seq else self._stream_execution(ctx, seq)

    async def _stream_execution(self, ctx: RequestContext, seq: int) -> AsyncIterator[StreamItem]:
        # A follow-up to an existing task: its snapshot as of accepting the message first
        # (spec §3.1.2), then the live events after it. (A new task's: NewTaskStream.)
        snap = await self.tasks.snapshot(ctx.task_id)
        assert snap is not None
        task, last = snap
        yield StreamItem(last, StreamResponse(task=task))
        if not task.is_final:
            async for item in self.tasks.follow(ctx.task_id, last):
                yield item

    async def _wait_settled(self, ctx: RequestContext) -> bool:
        """Blocking send (spec §3.2.2): until a direct reply, or the task is terminal or
        interrupted — also when its executor returned early and left work running (detached),
        or runs on a worker; True when it followed the log to get there."""
        execution = self._executions.get(ctx.task_id)
        while True:
            ctx.changed.clear()
            if ctx.reply_message is not None and not ctx.committed:
                return False
            if ctx.task.is_final:
                return False
            if execution is None or execution.runner.done():
                break
            await ctx.changed.wait()
        # Work goes on outside the executor (ctx.detach(), or a cancel elsewhere): follow the
        # task's log, which every writer goes through, until the state settles.
        snap = await self.tasks.snapshot(ctx.task_id)
        if snap is None or snap[0].is_final:
            return True
        async for _item in self.tasks.follow(ctx.task_id, snap[1]):
            pass
        return True

    async def _start(
        self, request: rq.SendMessageRequest, call: CallContext
    ) -> tuple[RequestContext, int]:
        """Validate the message, store or resume its task, then launch the executor detached.

        Returns the context and, for a follow-up, the seq of the last event before it (0 for a
        new task). The task is stored before the executor runs: a storage failure is the
        caller's InternalError and no agent code runs for the message.
        """
        check_message(self.limits, request)
        message = request.message
        config = request.configuration
        push_config = config.task_push_notification_config if config is not None else None
        if push_config is not None:
            self._require_push()
            push_config = await self._checked_push_config(push_config)
        if config is not None and config.history_length is not None and config.history_length < 0:
            raise e.InvalidParamsError(
                "configuration.historyLength must be >= 0", field="configuration.historyLength"
            )
        if message.role.value != "ROLE_USER":
            raise e.InvalidParamsError(
                "message.role must be ROLE_USER for a client message", field="message.role"
            )
        # Limits.max_running_tasks_per_caller: refused before anything is stored
        with self.running.reserve(call.owner):
            # Through the work queue (role web, or at capacity): a worker runs it.
            work = self.work
            queued = work is not None and work.must_queue() and await work.admit()
            if message.task_id:
                task, message, seq, joined = await self._follow_up(message, call, queued)
            else:
                task = await self._new_task(message, request, call, queued)
                seq, joined, message = 0, False, task.history[-1]
            ctx = RequestContext(
                self.tasks,
                task,
                message=message,
                call=call,
                metadata=request.metadata,
                committed=bool(seq) or push_config is not None or queued,
            )
            # Joining work an executor left running (detached): that work still owns the
            # task's end, so this execution returning does not complete it.
            ctx.detached = joined
            if push_config is not None:
                try:
                    await self._store_push_config(push_config, task.id, call)
                except BaseException:
                    await self._release(task.id)
                    raise
            if not queued:
                self._launch(ctx, admitted=True)
                return ctx, seq
            assert self.work is not None
            await self._release(task.id)  # a follow-up's lease: the claiming worker takes it
            await self.work.enqueue(ctx)
        self.running.leave(call.owner)  # (counted by the worker that runs it)
        return ctx, seq

    async def _new_task(
        self, message: Message, request: rq.SendMessageRequest, call: CallContext, queued: bool
    ) -> Task:
        context_id = message.context_id or new_id()
        task_id = new_id()
        message = replaced(message, context_id=context_id, task_id=task_id)
        # Not validated again (``trusted``): the ids are ours, the message and metadata were
        # validated with the request.
        task = trusted(
            Task,
            id=task_id,
            context_id=context_id,
            status=trusted_status(TaskState.SUBMITTED),
            history=[message],
            metadata=request.metadata,
        )
        if self.leases is not None and not queued:
            self.leases.register(task_id)  # leased once it has run a moment
        try:
            await self.tasks.create(task, owner=call.owner)
        except Exception as exc:
            await self._release(task_id)
            log.error("could not store task %s: %s", task_id, exc)
            raise e.InternalError("the task could not be stored; nothing was run") from None
        return task

    async def _follow_up(
        self, message: Message, call: CallContext, queued: bool
    ) -> tuple[Task, Message, int, bool]:
        """A message for an existing task, by the rule of ``states.FOLLOW_UPS``."""
        assert message.task_id is not None
        stored = await self._visible_task(message.task_id, call)
        if stored.task.is_interrupted and stored.task.id in self._executions:
            # The executor asked for input and is still returning: let that turn end.
            await self._previous_turn(stored.task.id)
            stored = await self._visible_task(message.task_id, call)
        task = stored.task
        rule = FOLLOW_UPS[task.status.state]
        if rule is FollowUp.REFUSE:
            raise e.UnsupportedOperationError(
                f"task {task.id} is {task.status.state.value} (terminal) and accepts no "
                "further messages",
                task_id=task.id,
            )
        if message.context_id and task.context_id and message.context_id != task.context_id:
            raise e.InvalidParamsError(
                f"message.contextId {message.context_id!r} does not match the task's "
                f"contextId {task.context_id!r}",
                field="message.contextId",
            )
        if task.id in self._executions or (queued and rule is FollowUp.JOIN):
            raise _busy(task.id)  # (a queued one joins no work: it is queued or runs elsewhere)
        joins_local_work = rule is FollowUp.JOIN and self.leases and self.leases.holds(task.id)
        if self.leases is not None and not joins_local_work:
            # (A message joining detached work of this replica shares that work's lease; one
            # for work running on another replica is refused as busy by the claim.)
            task = await claim_follow_up(self.leases, task, lambda: self._visible_task(
                task.id, call
            ), _busy)  # fmt: skip
        message = replaced(message, context_id=task.context_id)
        try:
            events = [StreamResponse(message=message)]
            if rule is FollowUp.RESUME:
                events.append(
                    StreamResponse(
                        status_update=TaskStatusUpdateEvent(
                            task_id=task.id,
                            context_id=task.context_id or "",
                            status=status_now(TaskState.SUBMITTED),
                        )
                    )
                )
            task, seq = await self.tasks.record_all(task.id, events)  # one write
        except BaseException:
            if not joins_local_work:
                await self._release(task.id)
            raise
        return task, message, seq, rule is FollowUp.JOIN

    def _launch(self, ctx: RequestContext, *, admitted: bool = False) -> None:
        if not admitted:  # (recovered work: counted, never refused)
            self.running.add(ctx.call.owner)
        # Its own task, started at the next loop iteration. (Python 3.12's eager_start, which
        # would run the agent's first step here, measured -2 % instructions but 0.89x req/s at
        # c=32: bench/README "Round 11".)
        runner = asyncio.create_task(self._run(ctx), name=f"a2a-task-{ctx.task_id}")
        self._executions[ctx.task_id] = _Execution(ctx, runner)

    async def _release(self, task_id: str) -> None:
        if self.leases is not None:
            await self.leases.release(task_id)

    async def _previous_turn(self, task_id: str, timeout: float = 5.0) -> None:
        execution = self._executions.get(task_id)
        if execution is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(execution.runner), timeout)

    async def _run(self, ctx: RequestContext) -> None:
        bind_execution(ctx)  # log fields, in the runner's own task
        try:
            if TELEMETRY.on:
                run = functools.partial(
                    run_executor, self.executor, ctx, timeout=self.executor_timeout
                )
                await traced_executor(run, ctx)
            else:  # (no partial per execution without telemetry)
                await run_executor(self.executor, ctx, timeout=self.executor_timeout)
        finally:
            self._executions.pop(ctx.task_id, None)
            self.running.leave(ctx.call.owner)
            if not ctx.detached or ctx.task.is_final:  # a detached task keeps it until final
                await self._release(ctx.task_id)

    async def recover(self) -> int:
        """Recover the tasks of processes that died (see :func:`.recovery.recover`)."""
        return await recovery.recover(self)

    async def recover_task(self, task_id: str) -> bool:
        """Recover one task whose lease this process just took over (False: it was not)."""
        return await recovery.recover_task(self, task_id)

    # -- GetTask / ListTasks (spec §3.1.3, §3.1.4) --
    async def get_task(self, request: rq.GetTaskRequest, call: CallContext) -> Task:
        stored = await self._visible_task(request.id, call)
        return trim_history(stored.task, request.history_length, self.max_history_length)

    async def list_tasks(
        self, request: rq.ListTasksRequest, call: CallContext
    ) -> rq.ListTasksResponse:
        page_size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise e.InvalidParamsError(
                f"pageSize must be between 1 and {MAX_PAGE_SIZE}, got {page_size}",
                field="pageSize",
            )
        if request.status == TaskState.UNSPECIFIED:
            raise e.InvalidParamsError("status must be a real task state", field="status")
        after = decode_page_token(request.page_token) if request.page_token else None
        page = await self.storage.tasks.list(
            TaskQuery(
                limit=page_size,
                context_id=request.context_id or None,
                state=request.status,
                status_after=request.status_timestamp_after,
                owner=call.owner,
                after=after,
            )
        )
        tasks = []
        for stored in page.tasks:
            task = trim_history(stored.task, request.history_length, self.max_history_length)
            if not request.include_artifacts and task.artifacts:
                task = task.model_copy(update={"artifacts": []})
            tasks.append(task)
        token = encode_page_token(page.tasks[-1].task) if page.has_more and page.tasks else ""
        return rq.ListTasksResponse(
            tasks=tasks, next_page_token=token, page_size=page_size, total_size=page.total
        )

    # -- CancelTask / SubscribeToTask (spec §3.1.5, §3.1.6) --
    async def cancel_task(self, request: rq.CancelTaskRequest, call: CallContext) -> Task:
        stored = await self._visible_task(request.id, call)
        if stored.task.status.state in TERMINAL_STATES:
            raise e.TaskNotCancelableError(
                f"task {request.id} is already {stored.task.status.state.value}",
                task_id=request.id,
            )
        execution = self._executions.get(request.id)
        if execution is not None:
            await self._signal_cancel(execution)
        current = await self.tasks.get(request.id)
        if current is not None and current.task.status.state not in TERMINAL_STATES:
            try:
                task, _ = await self.tasks.record(
                    request.id,
                    StreamResponse(
                        status_update=TaskStatusUpdateEvent(
                            task_id=request.id,
                            context_id=current.task.context_id or "",
                            status=status_now(TaskState.CANCELED),
                        )
                    ),
                )
                if execution is not None:
                    execution.ctx.observe(task)  # the executor and a blocking send see it
                return task
            except TaskTerminalError:
                pass  # the executor finished the task meanwhile: answer its real state
        final = await self._visible_task(request.id, call)
        return final.task

    async def _signal_cancel(self, execution: _Execution) -> None:
        """``ctx.cancelled``, the executor's cancel hook, and a reaper after the grace period
        (a local CancelTask, or one served by another replica: :mod:`.leases`)."""
        ctx = execution.ctx
        ctx.cancelled.set()
        try:
            result = self.executor.cancel(ctx)
            if asyncio.iscoroutine(result):
                await result
        except Exception:
            log.exception("executor.cancel failed for task %s", ctx.task_id)
        self._spawn(self._reap(execution))

    async def _reap(self, execution: _Execution) -> None:
        """After the grace period, stop an executor that ignored the cancellation."""
        try:
            await asyncio.wait_for(asyncio.shield(execution.runner), self.cancel_grace)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            execution.runner.cancel()

    async def subscribe_to_task(
        self, request: rq.SubscribeToTaskRequest, call: CallContext
    ) -> AsyncIterator[StreamItem]:
        """Spec §3.1.6: the current task, then its events until it is terminal.

        Unlike SendStreamingMessage (§3.1.2 closes at an interrupted state), a subscription
        stays open through ``input-required``/``auth-required``: a later follow-up resumes the
        task and the subscriber sees it. ``call.last_event_id`` resumes after that event.
        """
        self._require_streaming()
        stored = await self._visible_task(request.id, call)
        if call.last_event_id is None and stored.task.is_terminal:
            raise e.UnsupportedOperationError(
                f"task {request.id} is {stored.task.status.state.value}; there is nothing to "
                "subscribe to",
                task_id=request.id,
            )
        return self._subscription(request.id, call.last_event_id)

    async def _subscription(
        self, task_id: str, last_event_id: int | None
    ) -> AsyncIterator[StreamItem]:
        if last_event_id is None:
            snap = await self.tasks.snapshot(task_id)
            if snap is None:
                return
            task, last_event_id = snap
            yield StreamItem(last_event_id, StreamResponse(task=task))
            if task.is_terminal:
                return
        async for item in self.tasks.follow(task_id, last_event_id, until=TERMINAL_STATES):
            yield item

    # -- GetExtendedAgentCard (spec §3.1.11, §3.3.4) --
    async def get_extended_agent_card(
        self, request: rq.GetExtendedAgentCardRequest, call: CallContext
    ) -> AgentCard:
        if not self.card.capabilities.extended_agent_card:
            raise e.UnsupportedOperationError("this agent declares no extended agent card")
        if self.extended_card is None:
            raise e.ExtendedAgentCardNotConfiguredError()
        if call.caller is None and self.card.security_requirements:
            raise e.AuthenticationError("the extended agent card needs an authenticated caller")
        if isinstance(self.extended_card, AgentCard):
            return self.extended_card
        card = self.extended_card(call.caller)
        return card if isinstance(card, AgentCard) else await card

    # -- helpers --
    async def _visible_task(self, task_id: str, call: CallContext) -> StoredTask:
        """The task, if it exists *and* the caller may see it; otherwise TaskNotFound (spec §7.5:
        never reveal that another caller's task exists)."""
        stored = await self.tasks.get(task_id)
        if stored is None or stored.owner != call.owner:
            raise e.TaskNotFoundError(f"task {task_id!r} not found", task_id=task_id)
        return stored

    def _require_streaming(self) -> None:
        if self.card.capabilities.streaming is False:
            raise e.UnsupportedOperationError("this agent does not support streaming")

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def shutdown(self, grace: float = 10.0) -> None:
        """Let running executions finish for ``grace`` seconds, then cancel them (they end
        ``canceled``, never stuck in ``working``); in cluster mode hand them over
        (:mod:`.stopping`)."""
        await stop_executions(self, grace)
        for task in list(self._background):
            task.cancel()


#: operation name -> handler method, derived from the operations table (``SendMessage`` ->
#: ``send_message``): adding an operation to the table without its method fails at import.
_METHODS = {op.name: re.sub(r"(?<!^)(?=[A-Z])", "_", op.name).lower() for op in OPERATIONS}
if _missing := [name for name in _METHODS.values() if not hasattr(RequestHandler, name)]:
    raise RuntimeError(f"RequestHandler lacks the methods {_missing}")
