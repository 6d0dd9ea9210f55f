"""Cross-instance wake-ups: the conformance class of a shared storage's signal path.

``EventLog.wait`` on one instance must return soon after an append on another instance of the
same storage, woken by the backend's signal (PostgreSQL NOTIFY, or an event fan-out such as
Redis Streams) rather than by its poll fallback. One class, run by a subclass per signal path
(the pattern of trio's ``testing/_check_streams.py``, like ``conformance.py``): the subclass
provides the ``make_storage`` fixture, a factory ``make_storage(**options) -> Storage`` of
*unopened* instances sharing one place and one signal path. Options the class passes:
``poll_interval`` and, if ``signal_can_be_unreachable``, ``unreachable_signal=True`` (an
instance whose signal engine cannot be reached: it must still work, on the poll alone).

The polls are set to :data:`NO_POLL` (30 s) wherever a wake-up is checked, and :func:`woken`
gives a wait :data:`SIGNAL_BOUND` (8 s): only the signal can wake a waiter in time (a wait
re-checks its task at its own timeout, so the bound is the caller's, not the wait's). Speed is
never asserted: the bound is generous and only tells a signal from a poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import ClassVar

import pytest

from simple_a2a.storage import Storage

from .conformance import make_task, status_event

StorageFactory = Callable[..., Storage]

#: a poll interval no test waits out: a waiter woken within a test's bound was signalled
NO_POLL = 30.0
#: how long a waiter may take to be signalled (a loaded machine included), well under NO_POLL
SIGNAL_BOUND = 8.0


async def woken(store: Storage, task_id: str, after: int, bound: float = SIGNAL_BOUND) -> bool:
    """Whether ``store.events.wait`` returned True within ``bound`` seconds (its own timeout is
    longer and its poll longer still, so only a wake-up ends it in time)."""
    try:
        return await asyncio.wait_for(store.events.wait(task_id, after, NO_POLL - 5), bound)
    except asyncio.TimeoutError:
        return False


@contextlib.asynccontextmanager
async def opened(*stores: Storage) -> AsyncIterator[None]:
    try:
        for store in stores:
            await store.open()
        yield
    finally:
        for store in stores:
            await store.close()


async def registered() -> None:
    """Lets waiters started just before register (and a fan-out reader connect)."""
    await asyncio.sleep(0.3)


class WakeupConformance:
    #: whether the factory can make an instance whose signal engine is unreachable
    signal_can_be_unreachable: ClassVar[bool] = False

    async def test_append_on_one_instance_wakes_a_waiter_on_another(
        self, make_storage: StorageFactory
    ) -> None:
        writer, watcher = make_storage(poll_interval=NO_POLL), make_storage(poll_interval=NO_POLL)
        async with opened(writer, watcher):
            waiting = asyncio.create_task(woken(watcher, "t1", 0))
            await registered()
            assert await writer.events.append("t1", status_event("t1")) == 1
            assert await waiting is True
            [logged] = await watcher.events.read("t1", 0)
            assert logged.seq == 1

    async def test_record_and_record_steps_wake_another_instance(
        self, make_storage: StorageFactory
    ) -> None:
        """The task-and-event statements (``record``, ``record_steps``) signal too."""
        writer, watcher = make_storage(poll_interval=NO_POLL), make_storage(poll_interval=NO_POLL)
        async with opened(writer, watcher):
            waiting = asyncio.create_task(woken(watcher, "t1", 0))
            await registered()
            version, seq = await writer.record(
                make_task("t1"), status_event("t1"), expected_version=None
            )
            assert await waiting is True and seq == 1
            waiting = asyncio.create_task(woken(watcher, "t1", 1))
            await registered()
            version, seq = await writer.record(
                make_task("t1", metadata={"n": 2}), status_event("t1", 2), expected_version=version
            )
            assert await waiting is True and seq == 2
            if writer.atomic_steps:
                from simple_a2a.storage import RecordStep

                waiting = asyncio.create_task(woken(watcher, "t1", 2))
                await registered()
                steps = [
                    RecordStep(make_task("t1", metadata={"n": n}), status_event("t1", n))
                    for n in (3, 4)
                ]
                assert await writer.record_steps(steps, expected_version=version) == [3, 4]
                assert await waiting is True

    async def test_many_appenders_and_waiters_lose_no_wake_up(
        self, make_storage: StorageFactory
    ) -> None:
        """Followers on one instance, each waiting from the last event it read (as a stream
        does), see every event appended concurrently by two other instances: a lost wake-up
        leaves a follower waiting past its timeout (the poll is never in time)."""
        writers = [make_storage(poll_interval=NO_POLL) for _ in range(2)]
        watcher = make_storage(poll_interval=NO_POLL)
        tasks = [f"t{n}" for n in range(5)]
        per_writer = 20

        async def follow(task_id: str) -> list[int]:
            seqs: list[int] = []
            while len(seqs) < per_writer * len(writers):
                after = seqs[-1] if seqs else 0
                assert await woken(watcher, task_id, after), f"{task_id}: lost after seq {after}"
                seqs += [e.seq for e in await watcher.events.read(task_id, after)]
            return seqs

        async def append_all(writer: Storage) -> None:
            for n in range(per_writer):
                await asyncio.gather(*(writer.events.append(t, status_event(t, n)) for t in tasks))
                await asyncio.sleep(0.005)  # interleaved with the followers' reads

        async with opened(*writers, watcher):
            followers = [asyncio.create_task(follow(t)) for t in tasks for _ in range(3)]
            await registered()
            await asyncio.gather(*(append_all(w) for w in writers))
            every = list(range(1, per_writer * len(writers) + 1))
            for seen in await asyncio.gather(*followers):
                assert seen == every

    async def test_only_the_appended_tasks_waiters_are_woken(
        self, make_storage: StorageFactory
    ) -> None:
        """A waiter of another task is not woken (it does not even re-check its task)."""
        writer, watcher = make_storage(poll_interval=NO_POLL), make_storage(poll_interval=NO_POLL)
        async with opened(writer, watcher):
            checks: Counter[str] = Counter()
            last_seq = watcher.events.last_seq

            async def counted(task_id: str) -> int:
                checks[task_id] += 1
                return await last_seq(task_id)

            watcher.events.last_seq = counted  # type: ignore[method-assign]
            other = asyncio.create_task(woken(watcher, "t2", 0))
            await registered()
            before = checks["t2"]
            for after in range(5):
                waiting = asyncio.create_task(woken(watcher, "t1", after))
                await asyncio.sleep(0.05)
                await writer.events.append("t1", status_event("t1", after))
                assert await waiting is True
            await asyncio.sleep(0.2)  # a stray wake-up of t2 would re-check by now
            assert not other.done() and checks["t2"] == before
            await writer.events.append("t2", status_event("t2"))
            assert await other is True

    async def test_without_its_signal_engine_a_waiter_is_woken_by_the_poll(
        self, make_storage: StorageFactory
    ) -> None:
        if not self.signal_can_be_unreachable:
            pytest.skip("this signal path has no separate engine to lose")
        writer = make_storage(poll_interval=0.2, unreachable_signal=True)
        watcher = make_storage(poll_interval=0.2, unreachable_signal=True)
        async with opened(writer, watcher):
            waiting = asyncio.create_task(woken(watcher, "t1", 0))
            await registered()
            # appends never fail, nor wait, for an unreachable engine
            assert await writer.events.append("t1", status_event("t1")) == 1
            assert await waiting is True
            version, seq = await writer.record(
                make_task("t2"), status_event("t2"), expected_version=None
            )
            assert (version, seq) == (1, 1)
            assert await woken(watcher, "t2", 0) is True
            assert [e.seq for e in await watcher.events.read("t1", 0)] == [1]
