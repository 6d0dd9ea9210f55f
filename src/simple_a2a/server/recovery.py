"""Recovery of tasks whose process died: failed with :data:`RESTART_MESSAGE`, or handed back
to a ``resumable`` executor. Driven by the lease scan (:mod:`.leases`) and, at startup, by
:meth:`~simple_a2a.server.handler.RequestHandler.recover`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.logcontext import library_logger
from ..protocol.models import ACTIVE_STATES, Message, TaskState, TaskStatusUpdateEvent, status_now
from ..protocol.requests import StreamResponse
from ..storage.base import StoredTask
from .context import CallContext, Caller, RequestContext

if TYPE_CHECKING:
    from .handler import RequestHandler

log = library_logger("simple_a2a.server")

RESTART_MESSAGE = "The server restarted while this task was running; it was not finished."


async def recover(handler: RequestHandler) -> int:
    """Recover tasks left ``submitted``/``working`` by a process that died: each is failed
    with :data:`RESTART_MESSAGE` — or, when the executor declares ``resumable = True``,
    handed back to it (``ctx.resumed``). Returns how many tasks were recovered now.

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
    """Resume or fail one task; False when even failing it could not be recorded."""
    task = stored.task
    if handler.executor.resumable:
        message = next((m for m in reversed(task.history) if m.role.value == "ROLE_USER"), None)
        if message is not None:
            call = CallContext(caller=Caller(stored.owner) if stored.owner else None)
            ctx = RequestContext(
                handler.tasks, task, message=message, call=call, metadata=None, committed=True
            )
            ctx.resumed = True
            handler._launch(ctx)
            return True
    try:
        await handler.tasks.record(
            task.id,
            StreamResponse(
                status_update=TaskStatusUpdateEvent(
                    task_id=task.id,
                    context_id=task.context_id or "",
                    status=status_now(
                        TaskState.FAILED,
                        Message.agent(RESTART_MESSAGE, task_id=task.id, context_id=task.context_id),
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
