"""Conformance of leases (``Storage.leases``, issue #14): mixed into ``StorageConformance``.

A lease is one owner's until it expires; acquire is atomic (of concurrent callers exactly one
wins, in one process or, for durable backends, across instances of the storage); an expired
lease can be taken over; renew tells the holder which leases it still has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from simple_a2a.storage import Storage
from simple_a2a.storage.base import LeaseStore

StorageFactory = Callable[..., Storage]


def _leases(storage: Storage) -> LeaseStore:
    assert storage.leases is not None, "every shipped backend has leases"
    return storage.leases


class LeaseConformance:
    durable: bool

    async def test_lease_acquire_is_exclusive_until_released(self, storage: Storage) -> None:
        leases = _leases(storage)
        assert await leases.get("task", "t1") is None
        assert await leases.acquire("task", "t1", "replica-a", 30) is True
        assert await leases.acquire("task", "t1", "replica-b", 30) is False
        assert await leases.acquire("task", "t1", "replica-a", 30) is True  # its own: renewed
        lease = await leases.get("task", "t1")
        assert lease is not None and (lease.kind, lease.key, lease.owner) == (
            "task",
            "t1",
            "replica-a",
        )
        now = datetime.now(timezone.utc)
        assert now + timedelta(seconds=20) < lease.expires_at < now + timedelta(seconds=40)
        assert await leases.release("task", "t1", "replica-b") is False  # not b's to release
        assert await leases.release("task", "t1", "replica-a") is True
        assert await leases.release("task", "t1", "replica-a") is False
        assert await leases.get("task", "t1") is None
        assert await leases.acquire("task", "t1", "replica-b", 30) is True

    async def test_lease_kinds_are_separate_namespaces(self, storage: Storage) -> None:
        leases = _leases(storage)
        assert await leases.acquire("task", "t1/p1", "a", 30)
        assert await leases.acquire("push", "t1/p1", "b", 30)
        assert (await leases.get("push", "t1/p1")).owner == "b"  # type: ignore[union-attr]
        assert await leases.expired("task") == [] and await leases.expired("push") == []

    async def test_expired_lease_is_listed_and_taken_over(self, storage: Storage) -> None:
        leases = _leases(storage)
        assert await leases.acquire("task", "dead", "replica-a", 0.05)
        assert await leases.acquire("task", "alive", "replica-a", 30)
        await asyncio.sleep(0.2)
        expired = await leases.expired("task")
        assert [(x.key, x.owner) for x in expired] == [("dead", "replica-a")]
        assert expired[0].expires_at <= datetime.now(timezone.utc) + timedelta(seconds=1)
        assert await leases.acquire("task", "dead", "replica-b", 30) is True  # stolen
        assert (await leases.get("task", "dead")).owner == "replica-b"  # type: ignore[union-attr]
        assert await leases.expired("task") == []
        # The old holder learns it lost the lease, and keeps the one it still has.
        assert await leases.renew("task", ["dead", "alive"], "replica-a", 30) == ["alive"]
        assert await leases.release("task", "dead", "replica-a") is False

    async def test_renew_keeps_an_expired_lease_nobody_took(self, storage: Storage) -> None:
        leases = _leases(storage)
        assert await leases.acquire("push", "t/p", "a", 0.05)
        await asyncio.sleep(0.2)
        assert await leases.renew("push", ["t/p", "never-held"], "a", 30) == ["t/p"]
        assert await leases.acquire("push", "t/p", "b", 30) is False
        assert await leases.expired("push") == []
        assert await leases.renew("push", [], "a", 30) == []

    async def test_expired_is_oldest_first_and_limited(self, storage: Storage) -> None:
        leases = _leases(storage)
        for n in range(5):
            assert await leases.acquire("task", f"t{n}", "a", 0.01 + n * 0.01)
        await asyncio.sleep(0.3)
        assert [x.key for x in await leases.expired("task", limit=3)] == ["t0", "t1", "t2"]

    async def test_concurrent_acquire_has_one_winner(self, storage: Storage) -> None:
        leases = _leases(storage)
        won = await asyncio.gather(*(leases.acquire("task", "t", f"r{n}", 30) for n in range(12)))
        assert won.count(True) == 1
        # And the same race over an expired lease: one stealer wins.
        assert await leases.acquire("task", "old", "dead", 0.01)
        await asyncio.sleep(0.1)
        won = await asyncio.gather(*(leases.acquire("task", "old", f"r{n}", 30) for n in range(12)))
        assert won.count(True) == 1
        winner = (await leases.get("task", "old")).owner  # type: ignore[union-attr]
        assert winner == f"r{won.index(True)}"

    async def test_leases_are_shared_by_instances(self, make_storage: StorageFactory) -> None:
        if not self.durable:
            return  # memory leases coordinate one process only (documented)
        first, second = make_storage(), make_storage()
        await first.open()
        await second.open()
        try:
            a, b = _leases(first), _leases(second)
            racers = [("a", a), ("b", b)] * 3
            won = await asyncio.gather(
                *(store.acquire("task", "t", name, 30) for name, store in racers)
            )
            winners = {name for (name, _), ok in zip(racers, won, strict=True) if ok}
            assert len(winners) == 1  # the winner's repeated calls renew; the other never wins
            holder = (await b.get("task", "t")).owner  # type: ignore[union-attr]
            assert {holder} == winners
            other, other_store = ("b", b) if holder == "a" else ("a", a)
            assert await other_store.acquire("task", "t", other, 30) is False
            assert await a.acquire("task", "x", "a", 0.05)
            await asyncio.sleep(0.2)
            assert [x.key for x in await b.expired("task")] == ["x"]
            assert await b.acquire("task", "x", "b", 30)
            assert await a.renew("task", ["x"], "a", 30) == []
        finally:
            await first.close()
            await second.close()

    async def test_ended_lists_held_tasks_that_reached_a_terminal_state(
        self, storage: Storage
    ) -> None:
        from simple_a2a.protocol.models import TaskState

        from .conformance import make_task

        leases = _leases(storage)
        for task_id, state in (
            ("running", TaskState.WORKING),
            ("canceled", TaskState.CANCELED),
            ("asks", TaskState.INPUT_REQUIRED),
            ("done", TaskState.COMPLETED),
        ):
            await storage.tasks.create(make_task(task_id, state=state))
            assert await leases.acquire("task", task_id, "a", 30)
        await storage.tasks.create(make_task("theirs", state=TaskState.FAILED))
        assert await leases.acquire("task", "theirs", "b", 30)
        assert await leases.acquire("push", "done", "a", 30)
        assert await leases.ended("a") == ["canceled", "done"]
        assert await leases.ended("b") == ["theirs"]
        assert await leases.ended("nobody") == []

    async def test_a_takeover_fences_the_old_holders_writes(self, storage: Storage) -> None:
        """docs/cluster.md, Fencing: ``take_over`` moves a durable task's version on in the
        same transaction, so a write of the old holder (it read the old version) is refused."""
        from simple_a2a.protocol.models import TaskState
        from simple_a2a.storage.base import ConcurrentUpdateError

        from .conformance import make_task

        leases = _leases(storage)
        task = make_task("fenced", state=TaskState.WORKING)
        version = await storage.tasks.create(task)
        assert await leases.acquire("task", "fenced", "a", 0.05)
        assert not await leases.take_over("task", "fenced", "b", 30)  # a's, not expired yet
        await asyncio.sleep(0.2)
        assert await leases.take_over("task", "fenced", "b", 30)
        assert (await leases.get("task", "fenced")).owner == "b"  # type: ignore[union-attr]
        stored = await storage.tasks.get("fenced")
        assert stored is not None and stored.task == task  # nothing else changed
        if not self.durable:
            return  # one process: no other holder to fence
        assert stored.version == version + 1
        try:
            await storage.tasks.update(task, expected_version=version)
        except ConcurrentUpdateError:
            pass
        else:
            raise AssertionError("the old holder's write was stored after the takeover")
        assert await leases.take_over("push", "fenced/p", "b", 30)  # other kinds: no task

    async def test_a_takeover_of_a_task_that_is_not_active_takes_nothing(
        self, storage: Storage
    ) -> None:
        """A recovery scan's list can be older than the end of a task (it ended, and its lease
        was let go, while the query was in flight): ``take_over`` of a task that ended, waits
        for input or is gone answers False, holds no lease afterwards (an expired one is
        dropped) and leaves the task's version alone."""
        from simple_a2a.protocol.models import TaskState

        from .conformance import make_task

        leases = _leases(storage)
        versions = {}
        for task_id, state in (
            ("ended", TaskState.COMPLETED),
            ("asks", TaskState.INPUT_REQUIRED),
            ("ended-unleased", TaskState.CANCELED),
        ):
            versions[task_id] = await storage.tasks.create(make_task(task_id, state=state))
        assert await leases.acquire("task", "ended", "a", 0.05)
        assert await leases.acquire("task", "asks", "a", 0.05)
        assert await leases.acquire("task", "gone", "a", 0.05)
        await asyncio.sleep(0.2)
        for task_id in ("ended", "asks", "ended-unleased", "gone"):
            assert not await leases.take_over("task", task_id, "b", 30), task_id
            assert await leases.get("task", task_id) is None, task_id
        for task_id, version in versions.items():
            stored = await storage.tasks.get(task_id)
            assert stored is not None and stored.version == version, task_id
        # an active task is still taken over (test_a_takeover_fences_the_old_holders_writes)
        await storage.tasks.create(make_task("running", state=TaskState.WORKING))
        assert await leases.take_over("task", "running", "b", 30)

    async def test_unleased_lists_old_active_tasks_without_a_lease(self, storage: Storage) -> None:
        from simple_a2a.protocol.models import TaskState

        from .conformance import make_task

        now = datetime.now(timezone.utc)
        old, older, fresh = now - timedelta(seconds=60), now - timedelta(seconds=90), now
        for task_id, state, ts in (
            ("orphan", TaskState.WORKING, old),
            ("older-orphan", TaskState.SUBMITTED, older),
            ("leased", TaskState.WORKING, old),
            ("young", TaskState.WORKING, fresh),
            ("asks", TaskState.INPUT_REQUIRED, old),
            ("done", TaskState.COMPLETED, old),
        ):
            await storage.tasks.create(make_task(task_id, state=state, ts=ts))
        leases = _leases(storage)
        assert await leases.acquire("task", "leased", "a", 30)
        assert await leases.acquire("push", "orphan", "a", 30)  # another kind: no cover
        assert await leases.unleased(30) == ["older-orphan", "orphan"]
        assert await leases.unleased(30, limit=1) == ["older-orphan"]
        assert await leases.unleased(120) == []
        assert await leases.acquire("task", "orphan", "b", 30)
        assert await leases.unleased(30) == ["older-orphan"]
