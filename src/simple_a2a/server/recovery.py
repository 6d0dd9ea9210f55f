"""Recovery of tasks whose process died, by the executor's recovery policy (:mod:`.policy`):
failed with :data:`RESTART_MESSAGE` (``Fail``, the default), or run again (``Rerun``, or
``resumable``) after a back-off, up to its attempts, then failed with
:func:`~.policy.exhausted_message`. Driven by the lease scan (:mod:`.leases`) and, at startup,
by :meth:`~simple_a2a.server.handler.RequestHandler.recover`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..protocol.logcontext import library_logger
from ..protocol.models import ACTIVE_STATES, Message, TaskState, TaskStatusUpdateEvent, status_now
from ..protocol.requests import StreamResponse
from ..protocol.states import InvalidTransitionError
from ..storage.base import StoredTask
from .context import CallContext, Caller, RequestContext
from .policy import (
    Rerun,
    attempt_record,
    attempt_text,
    attempts_made,
    exhausted_message,
    policy_of,
)

if TYPE_CHECKING:
    from .handler import RequestHandler

log = library_logger("simple_a2a.server")

RESTART_MESSAGE = "The server restarted while this task was running; it was not finished."


async def recover(handler: RequestHandler) -> int:
    """Recover tasks left ``submitted``/``working`` by a process that died: each is failed
    with :data:`RESTART_MESSAGE` — or, by a ``Rerun`` policy (or ``resumable = True``), run
    again (``ctx.resumed``, ``ctx.attempt``). Returns how many tasks were recovered now.

    With leases (every shipped storage) this is safe in any number of processes at once:
    it is one lease scan (:mod:`.leases`): it takes over the tasks whose lease expired and
    the unleased ones older than the lease ttl; a task whose replica is alive is left alone, and
    the scan keeps recovering as replicas die. Without leases (a custom
    storage) every active task is taken for an orphan: run it in one process only.
    """
    if handler.leases is not None:
        return await handler.leases.scan()
    active = await handler.storage.tasks.active_tasks()
    recovered = 0
    for stored in active:
        if stored.task.id not in handler._executions and await recover_stored(handler, stored):
            recovered += 1  # only what was really failed or resumed counts
    if recovered:
        log.warning("recovered %d task(s) interrupted by a restart", recovered)
    return recovered


async def recover_task(handler: RequestHandler, task_id: str) -> bool:
    """Recover one task whose lease this process just took over (see :meth:`recover`);
    False when there was nothing to recover or recording its failure failed."""
    stored = await handler.tasks.get(task_id)
    if task_id in handler._executions:
        return False
    if stored is None or stored.task.status.state not in ACTIVE_STATES:
        await handler._release(task_id)  # it ended, or waits for input: nothing to run
        return False
    return await recover_stored(handler, stored)


async def recover_stored(handler: RequestHandler, stored: StoredTask) -> bool:
    """Run again or fail one task; False when even failing it could not be recorded."""
    task = stored.task
    policy = policy_of(handler.executor)
    reason = RESTART_MESSAGE
    if isinstance(policy, Rerun):
        message = next((m for m in reversed(task.history) if m.role.value == "ROLE_USER"), None)
        if message is not None:
            made = attempts_made(task, message)
            if made < policy.attempts:
                attempt = made + 1
                delay = policy.delay(attempt)
                if delay <= 0:
                    return await _start_attempt(handler, stored, message, attempt, policy)
                log.warning("task %s: attempt %d starts in %g s", task.id, attempt, delay)
                handler._spawn(_later(handler, stored, message, attempt, policy, delay))
                return True
            reason = exhausted_message(made)
    return await _fail(handler, stored, reason)


async def _later(
    handler: RequestHandler,
    stored: StoredTask,
    message: Message,
    attempt: int,
    policy: Rerun,
    delay: float,
) -> None:
    """The back-off, then the attempt. The lease stays held meanwhile (the heartbeat renews
    it); a cancel meanwhile ends the task and lets the lease go, so nothing starts."""
    await asyncio.sleep(delay)
    try:
        await _start_attempt(handler, stored, message, attempt, policy)
    except Exception:  # the lease expires; the next owner tries this attempt again
        log.exception("could not start attempt %d of task %s", attempt, stored.task.id)


async def _start_attempt(
    handler: RequestHandler, stored: StoredTask, message: Message, attempt: int, policy: Rerun
) -> bool:
    """Record that attempt ``attempt`` starts (status ``working``, the count in the task's
    metadata: one write) and launch the executor; False if the task ended or went elsewhere
    meanwhile."""
    task_id = stored.task.id
    leases = handler.leases
    if task_id in handler._executions or (leases is not None and not leases.holds(task_id)):
        return False  # released (canceled meanwhile) or lost to another replica
    record = attempt_record(attempt, message)
    status = status_now(
        TaskState.WORKING,
        Message.agent(
            attempt_text(attempt, policy),
            task_id=task_id,
            context_id=stored.task.context_id,
            metadata=record,
        ),
    )
    event = StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id, context_id=stored.task.context_id or "", status=status
        )
    )
    try:
        task, _seq = await handler.tasks.record_all(task_id, (event,), metadata=record)
    except (InvalidTransitionError, KeyError):  # ended (or was deleted) meanwhile
        await handler._release(task_id)
        return False
    except Exception as exc:  # not recovered: the lease scan or the next start tries again
        log.error("could not start attempt %d of task %s: %s", attempt, task_id, exc)
        await handler._release(task_id)
        return False
    call = CallContext(caller=Caller(stored.owner) if stored.owner else None)
    ctx = RequestContext(
        handler.tasks, task, message=message, call=call, metadata=None, committed=True
    )
    ctx.resumed = True
    ctx.attempt = attempt
    handler._launch(ctx)
    return True


async def _fail(handler: RequestHandler, stored: StoredTask, reason: str) -> bool:
    task = stored.task
    try:
        await handler.tasks.record(
            task.id,
            StreamResponse(
                status_update=TaskStatusUpdateEvent(
                    task_id=task.id,
                    context_id=task.context_id or "",
                    status=status_now(
                        TaskState.FAILED,
                        Message.agent(reason, task_id=task.id, context_id=task.context_id),
                    ),
                )
            ),
        )
    except Exception as exc:  # not recovered: the lease scan or the next start tries again
        log.error("could not fail task %s interrupted by a restart: %s", task.id, exc)
        await handler._release(task.id)
        return False
    await handler._release(task.id)
    return True
