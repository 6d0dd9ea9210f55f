"""The lease keeper's heartbeat against an acquire still on its way to the store.

A fresh clone's full run (stop 26) failed tests/cluster's cancel test: the replica running the
task logged "lost the task lease ... to another replica; stopping" although no replica had
taken it. The task was in ``held`` (added before the store's acquire, so a local caller sees it
taken) while the acquire's round trip was in flight; a heartbeat then renewed it, found no
stored row, and took that for a takeover. These tests hold the acquire open and run the
heartbeat meanwhile, with a real lease store (the memory one).
"""

from __future__ import annotations

import asyncio

from simple_a2a.server.leases import LeaseKeeper
from simple_a2a.storage._leases import MemoryLeaseStore
from simple_a2a.storage.base import LeaseKind


class SlowAcquire(MemoryLeaseStore):
    """The memory lease store whose acquire waits for ``go`` before it writes (a round trip)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()
        self.waiting = asyncio.Event()

    async def acquire(self, kind: LeaseKind, key: str, owner: str, ttl: float) -> bool:
        self.waiting.set()
        await self.go.wait()
        return await super().acquire(kind, key, owner, ttl)


def _keeper(store: SlowAcquire) -> tuple[LeaseKeeper, list[str]]:
    keeper = LeaseKeeper(store, owner="me", ttl=3.0)
    lost: list[str] = []
    keeper.lost = lost.append
    return keeper, lost


async def test_a_heartbeat_during_acquire_does_not_report_the_lease_lost() -> None:
    store = SlowAcquire()
    keeper, lost = _keeper(store)
    acquiring = asyncio.create_task(keeper.acquire("t1"))
    await store.waiting.wait()
    assert keeper.holds("t1")  # taken for local callers already
    await keeper.heartbeat()  # no stored row yet: not a lost lease
    assert lost == [] and keeper.holds("t1")
    store.go.set()
    assert await acquiring
    await keeper.heartbeat()  # now renewed
    assert lost == [] and await store.get("task", "t1") is not None


async def test_a_heartbeat_during_the_claim_of_a_young_task_does_not_report_it_lost() -> None:
    store = SlowAcquire()
    keeper, lost = _keeper(store)
    keeper.register("t1")
    keeper.young["t1"] -= keeper.claim_after  # old enough to be leased
    claiming = asyncio.create_task(keeper.claim_young())
    await store.waiting.wait()
    await keeper.heartbeat()
    assert lost == [] and keeper.holds("t1")
    store.go.set()
    await claiming
    assert lost == [] and keeper.holds("t1")


async def test_a_lease_taken_by_another_replica_is_still_reported_lost() -> None:
    store = SlowAcquire()
    store.go.set()
    keeper, lost = _keeper(store)
    assert await keeper.acquire("t1")
    await store.release("task", "t1", "me")
    assert await store.acquire("task", "t1", "other", 3.0)
    await keeper.heartbeat()
    assert lost == ["t1"] and not keeper.holds("t1")
