"""The memory event log's waits: one timer per log, not per wait (issue #36), and each waiter
still timed out at its own deadline, never earlier."""

from __future__ import annotations

import asyncio
import time

from simple_a2a.protocol._base import trusted
from simple_a2a.protocol.models import Task, TaskState, TaskStatus
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.storage.memory import MemoryEventLog

from ..support.timers import counted_timers


def _event() -> StreamResponse:
    task = Task(id="t1", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    return trusted(StreamResponse, task=task)


async def test_a_wait_after_a_wake_up_times_out_at_its_own_deadline() -> None:
    """The log's timer, set by the first waiter, fires before a later waiter is due: that
    waiter must wait on to its own deadline."""
    log = MemoryEventLog()
    first = asyncio.create_task(log.wait("t1", 0, timeout=0.3))
    await asyncio.sleep(0.1)
    await log.append("t1", _event())
    assert await first is True
    started = time.monotonic()
    assert await log.wait("t1", 1, timeout=0.5) is False
    waited = time.monotonic() - started
    assert 0.45 <= waited < 2, waited


async def test_a_shorter_timeout_moves_the_timer_earlier() -> None:
    log = MemoryEventLog()
    long = asyncio.create_task(log.wait("t1", 0, timeout=5))
    started = time.monotonic()
    assert await log.wait("t1", 0, timeout=0.1) is False
    assert time.monotonic() - started < 1
    assert not long.done()  # still waiting for its own deadline
    await log.append("t1", _event())
    assert await long is True


async def test_waits_woken_by_appends_set_one_timer() -> None:
    """A follower waits again after every event: a timer per wait (set, then cancelled) was a
    handle on the loop's heap each time. One per log now, whatever the number of waits."""
    log = MemoryEventLog()
    with counted_timers() as timers:
        for seq in range(50):
            waiter = asyncio.create_task(log.wait("t1", seq, timeout=15))
            await asyncio.sleep(0)
            await log.append("t1", _event())
            assert await waiter is True
    assert timers == [1]


async def test_a_cancelled_waiter_leaves_the_log() -> None:
    log = MemoryEventLog()
    waiter = asyncio.create_task(log.wait("t1", 0, timeout=15))
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert not log._logs["t1"].waiters
