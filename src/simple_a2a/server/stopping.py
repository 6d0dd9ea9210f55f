"""Stopping a server (docs/cluster.md "Stopping"): what the first Ctrl-C / SIGTERM waits for,
a second one stopping at once, and in cluster mode handing running tasks over instead.

- The first signal ends open streams and stops taking work (``serving.py``), then
  :func:`stop_executions` says what it waits for — n running tasks, up to ``shutdown_grace``
  seconds — and waits; tasks still running after that are cancelled (they end ``canceled``).
- A second signal (Ctrl-C or SIGTERM) calls :func:`stop_now`: the wait ends within
  :data:`POLL` seconds and every running task is cancelled.
- In cluster mode (leases on a storage other replicas share) the tasks of an executor that is
  recovered by running it again (``recovery = Rerun(...)``, or ``resumable``) are not waited
  for: each is *handed over* —
  its executor is stopped without writing anything more (fenced, as when a lease is lost) and
  its lease is made to expire now, so the next recovery scan of any replica takes it over
  (within ``scan_interval``) instead of after ``lease_ttl``; the run there is the task's next
  attempt (``ctx.attempt``, the policy's back-off). A task of another executor would
  only be failed by the replica taking it over, so it is waited for as above.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..protocol.logcontext import library_logger
from ..storage.memory import MemoryStorage
from .policy import Rerun, policy_of

if TYPE_CHECKING:
    from .handler import RequestHandler

log = library_logger("simple_a2a.server")

#: How often the grace wait looks for a second signal (seconds). A signal handler cannot wake
#: the event loop safely, so the wait polls a flag, as uvicorn's own main loop does.
POLL = 0.1

_stop_now = False


def stop_now() -> None:
    """End every grace wait at once (the second Ctrl-C / SIGTERM; safe in a signal handler)."""
    global _stop_now
    _stop_now = True


def stopping_now() -> bool:
    return _stop_now


def reset() -> None:
    """Forget an earlier :func:`stop_now` (a new server in the same process)."""
    global _stop_now
    _stop_now = False


def hands_over(handler: RequestHandler) -> bool:
    """Whether this handler's running tasks are handed over rather than waited for."""
    return (
        handler.leases is not None
        and not isinstance(handler.storage, MemoryStorage)  # no other replica could see them
        and isinstance(policy_of(handler.executor), Rerun)
    )


async def hand_over(handler: RequestHandler) -> int:
    """Stop every running execution and let its lease expire now; returns how many."""
    leases = handler.leases
    assert leases is not None
    executions = list(handler._executions.items())
    for task_id, execution in executions:
        execution.ctx.fence()  # the next owner writes from now on; this one writes nothing
        await leases.expire_now(task_id)  # (before the runner ends: its release is a no-op)
        execution.ctx.cancelled.set()
        execution.runner.cancel()
    if executions:
        await asyncio.wait([execution.runner for _, execution in executions], timeout=5)
    return len(executions)


async def stop_executions(handler: RequestHandler, grace: float) -> None:
    """Hand over or let running executions finish for ``grace`` seconds (less if
    :func:`stop_now` is called), then cancel the rest."""
    if hands_over(handler) and handler._executions:
        count = await hand_over(handler)
        log.warning("stopping: handed %d running task(s) over to the other replicas", count)
        return
    runners = [execution.runner for execution in handler._executions.values()]
    if not runners:
        return
    log.warning(
        "stopping: waiting for %d running task(s), up to %g s (press Ctrl-C again to stop now)",
        len(runners),
        grace,
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    pending = set(runners)
    while pending and not _stop_now and (left := deadline - loop.time()) > 0:
        _done, pending = await asyncio.wait(pending, timeout=min(POLL, left))
    if pending:
        why = "stopping now" if _stop_now else f"still running after {grace:g} s"
        log.warning("stopping: cancelling %d task(s) (%s)", len(pending), why)
        for runner in pending:
            runner.cancel()
        await asyncio.wait(pending, timeout=5)
