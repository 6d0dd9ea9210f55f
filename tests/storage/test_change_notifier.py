"""The SQL stores' waits (``ChangeNotifier``): a future per waiter, no Task of its own, one
timer per task (issue #36), each waiter timed out at its own deadline, and a waiter that leaves
without a wake-up leaves nothing behind."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from simple_a2a.storage._common import ChangeNotifier

from ..support.timers import counted_timers


class _Log:
    """A log's last seq, as the store would answer it."""

    def __init__(self, seq: int = 0) -> None:
        self.seq = seq

    async def __call__(self, task_id: str, after: int, trusted: bool) -> int:
        return self.seq


def _log_at(seq: int) -> Callable[[str, int, bool], Awaitable[int]]:
    return _Log(seq)


async def test_a_waiting_follower_costs_no_task_of_its_own() -> None:
    """A Task for ``Event.wait()`` under ``asyncio.wait`` per wait was a Task, a second future
    and sets per follower per event: the waiter's own Task is the only one now."""
    notifier = ChangeNotifier(15.0)
    log = _Log()
    before = len(asyncio.all_tasks())
    waiters = [asyncio.create_task(notifier.wait(f"t{i}", 0, 15, log)) for i in range(3)]
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before + 3
    log.seq = 1
    for i in range(3):
        notifier.notify(f"t{i}")
    assert await asyncio.gather(*waiters) == [True, True, True]
    await notifier.close()


async def test_a_wake_up_during_the_check_is_not_lost() -> None:
    """Registered before the check: an append while ``last_seq`` is being read wakes it."""
    notifier = ChangeNotifier(15.0)
    reads = 0

    async def last_seq(task_id: str, after: int, trusted: bool) -> int:
        nonlocal reads
        reads += 1
        if reads == 1:
            notifier.notify("t1")  # the append lands while the first check is in flight
            await asyncio.sleep(0)
            return 0
        return 1

    assert await asyncio.wait_for(notifier.wait("t1", 0, 15, last_seq), 5) is True


async def test_a_cancelled_or_timed_out_waiter_leaves_no_slot() -> None:
    notifier = ChangeNotifier(15.0)
    waiter = asyncio.create_task(notifier.wait("t1", 0, 15, _log_at(0)))
    await asyncio.sleep(0)
    assert notifier._slots["t1"]
    waiter.cancel()
    (outcome,) = await asyncio.gather(waiter, return_exceptions=True)
    assert isinstance(outcome, asyncio.CancelledError)
    assert "t1" not in notifier._slots
    assert await notifier.wait("t1", 0, 0.05, _log_at(0)) is False
    assert "t1" not in notifier._slots


async def test_one_task_with_many_waiters_wakes_them_all() -> None:
    notifier = ChangeNotifier(15.0)
    seq = 0

    async def last_seq(task_id: str, after: int, trusted: bool) -> int:
        return seq

    waiters = [asyncio.create_task(notifier.wait("t1", 0, 15, last_seq)) for _ in range(200)]
    await asyncio.sleep(0)
    assert len(notifier._slots["t1"]) == 200
    seq = 1
    notifier.notify("t1")
    assert all(await asyncio.gather(*waiters))
    assert "t1" not in notifier._slots


async def test_waits_woken_by_appends_set_one_timer() -> None:
    """A follower waits again after every event: a timer per wait (set, then cancelled) was a
    handle on the loop's heap each time. One per task now, whatever the number of waits."""
    notifier = ChangeNotifier(15.0)
    log = _Log()
    with counted_timers() as timers:
        for seq in range(50):
            waiter = asyncio.create_task(notifier.wait("t1", seq, 15, log))
            await asyncio.sleep(0)
            log.seq = seq + 1
            notifier.notify("t1")
            assert await waiter is True
    assert timers == [1]
    await notifier.close()


async def test_a_wait_after_a_wake_up_times_out_at_its_own_deadline() -> None:
    """The task's timer, set by the first waiter, fires before a later waiter is due: that
    waiter must wait on to its own deadline, and one with a shorter timeout is not late."""
    notifier = ChangeNotifier(15.0)
    first = asyncio.create_task(notifier.wait("t1", 0, 0.3, _log_at(0)))
    await asyncio.sleep(0.1)
    notifier.notify("t1")
    await first
    started = time.monotonic()
    assert await notifier.wait("t1", 0, 0.5, _log_at(0)) is False
    assert 0.45 <= time.monotonic() - started < 2
    log = _Log()
    long = asyncio.create_task(notifier.wait("t1", 0, 5, log))
    await asyncio.sleep(0)
    started = time.monotonic()
    assert await notifier.wait("t1", 0, 0.1, _log_at(0)) is False
    assert time.monotonic() - started < 1
    assert not long.done()  # still waiting for its own deadline
    log.seq = 1
    notifier.notify("t1")
    assert await long is True
    await notifier.close()


class _CountedLog(_Log):
    """``last_seq`` that counts its calls: each is a read when the store cannot answer it."""

    def __init__(self, seq: int = 0) -> None:
        super().__init__(seq)
        self.calls = 0

    async def __call__(self, task_id: str, after: int, trusted: bool) -> int:
        self.calls += 1
        return self.seq


async def test_a_notified_seq_wakes_the_follower_without_asking_the_log() -> None:
    """This process's commit of seq 1 wakes the follower at 0 with that seq: the wait answers
    at once, with no second registration and no ``last_seq`` (no read-back, issue #36)."""
    notifier = ChangeNotifier(15.0)
    log = _CountedLog()
    waiter = asyncio.create_task(notifier.wait("t1", 0, 15, log))
    await asyncio.sleep(0)
    assert log.calls == 1  # the check before it waits
    notifier.notify("t1", 1)
    assert await waiter is True
    assert log.calls == 1
    assert "t1" not in notifier._slots
    await notifier.close()


async def test_a_notified_seq_not_past_the_follower_asks_the_log() -> None:
    """A commit that settles after a later one (seq 1 for a follower at 2) is no answer: the
    follower checks again, and waits on while the log holds nothing newer."""
    notifier = ChangeNotifier(15.0)
    log = _CountedLog(2)
    waiter = asyncio.create_task(notifier.wait("t1", 2, 15, log))
    await asyncio.sleep(0)
    notifier.notify("t1", 1)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert log.calls == 2
    assert not waiter.done()
    log.seq = 3
    notifier.notify("t1")  # (no seq: a wake-up that must be checked)
    assert await waiter is True
    assert log.calls == 3
    await notifier.close()
