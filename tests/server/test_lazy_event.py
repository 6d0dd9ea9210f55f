"""The context's events (``TaskHandle.changed``, ``ctx.cancelled``) behave as ``asyncio.Event``
without one: each waiter waits on a future of its own (issue #36), so every waiter wakes at a
``set``, a waiter cancelled takes only itself out, and nothing is left behind."""

from __future__ import annotations

import asyncio

import pytest

from simple_a2a.server.context import CancelSignal, _LazyEvent


async def test_set_wakes_every_waiter_and_one_cancelled_leaves_the_others_waiting() -> None:
    event = _LazyEvent()
    woken: list[int] = []

    async def waiter(n: int) -> None:
        await event.wait()
        woken.append(n)

    tasks = [asyncio.create_task(waiter(n)) for n in range(3)]
    await asyncio.sleep(0)
    tasks[1].cancel()
    with pytest.raises(asyncio.CancelledError):
        await tasks[1]
    assert event._waiters is not None and len(event._waiters) == 2  # the cancelled one left
    assert not event.is_set() and woken == []
    event.set()
    await asyncio.gather(tasks[0], tasks[2])
    assert sorted(woken) == [0, 2]
    assert event._waiters is None  # dropped when set: nothing kept for the next waiter


async def test_wait_returns_at_once_while_set_and_waits_again_after_clear() -> None:
    event = CancelSignal()
    event.set()
    await asyncio.wait_for(event.wait(), 1)
    assert event and event.is_set() and event._waiters is None
    event.clear()
    assert not event
    waiting = asyncio.create_task(event.wait())
    await asyncio.sleep(0)
    assert not waiting.done()
    event.set()
    event.clear()  # set then cleared before the waiter ran: it still wakes, as an Event's
    await asyncio.wait_for(waiting, 1)
