"""The work queue's contract (``storage/_queue.py``) on memory, SQLite and PostgreSQL: order,
claims take the task lease, a held lease or ``not_before`` keeps an entry, the cluster cap,
concurrent claimers never share an entry, depth, and queued tasks are no lease-scan orphans."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from simple_a2a.protocol.models import TaskState
from simple_a2a.storage import Storage
from simple_a2a.storage.memory import MemoryStorage
from simple_a2a.storage.sqlite import SQLiteStorage
from tests.conftest import POSTGRES_DSN

from ..storage.conformance import make_task

Factory = Callable[[], Storage]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def make(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Factory]:
    opened: list[Storage] = []
    shared = MemoryStorage()
    schema = f"a2a_queue_{secrets.token_hex(6)}"
    if request.param == "postgres":
        asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed")
        try:
            conn = await asyncpg.connect(POSTGRES_DSN, timeout=5)
        except Exception as exc:  # skip loudly, never pass
            pytest.skip(f"PostgreSQL not reachable at {POSTGRES_DSN}: {exc!r}")
        from simple_a2a.storage.postgres import PostgresStorage

    def factory() -> Storage:
        if request.param == "memory":
            return shared  # one process: every "instance" is the same store
        if request.param == "sqlite":
            store: Storage = SQLiteStorage(tmp_path / "q.db")
        else:
            store = PostgresStorage(POSTGRES_DSN, schema=schema)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()
    if request.param == "postgres":
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


async def _open(make: Factory) -> Storage:
    store = make()
    await store.open()
    return store


async def test_claim_takes_entries_in_order_with_their_lease(make: Factory) -> None:
    store = await _open(make)
    queue, leases = store.queue, store.leases
    assert queue is not None and leases is not None
    for n in range(3):
        await queue.enqueue(f"t{n}", {"message_id": f"m{n}"})
    stats = await queue.stats()
    assert stats.depth == 3 and stats.oldest is not None
    assert await queue.depth_at_least(3) and not await queue.depth_at_least(4)
    first = await queue.claim("worker-a", 30, 2)
    assert [(e.task_id, e.request, e.attempt) for e in first] == [
        ("t0", {"message_id": "m0"}, 1),
        ("t1", {"message_id": "m1"}, 1),
    ]
    for entry in first:
        lease = await leases.get("task", entry.task_id)
        assert lease is not None and lease.owner == "worker-a"
    rest = await queue.claim("worker-b", 30, 10)
    assert [e.task_id for e in rest] == ["t2"]
    assert await queue.claim("worker-b", 30, 10) == []
    assert (await queue.stats()).depth == 0


async def test_held_lease_and_not_before_keep_an_entry(make: Factory) -> None:
    store = await _open(make)
    queue, leases = store.queue, store.leases
    assert queue is not None and leases is not None
    assert await leases.acquire("task", "busy", "web-1", 30)  # e.g. a follow-up being recorded
    await queue.enqueue("busy", {})
    await queue.enqueue("later", {}, attempt=2, delay=0.4)
    assert await queue.claim("worker", 30, 10) == []
    assert (await queue.stats()).depth == 2
    assert await leases.release("task", "busy", "web-1")
    assert [e.task_id for e in await queue.claim("worker", 30, 10)] == ["busy"]
    await asyncio.sleep(0.5)
    [later] = await queue.claim("worker", 30, 10)
    assert (later.task_id, later.attempt) == ("later", 2)


async def test_cluster_cap_counts_live_task_leases(make: Factory) -> None:
    store = await _open(make)
    queue, leases = store.queue, store.leases
    assert queue is not None and leases is not None
    assert await leases.acquire("task", "running-elsewhere", "worker-z", 30)
    assert await leases.acquire("push", "not-counted", "worker-z", 30)
    for n in range(4):
        await queue.enqueue(f"t{n}", {})
    assert len(await queue.claim("worker-a", 30, 10, cluster_cap=3)) == 2
    assert await queue.claim("worker-b", 30, 10, cluster_cap=3) == []
    assert await leases.release("task", "running-elsewhere", "worker-z")
    assert len(await queue.claim("worker-b", 30, 10, cluster_cap=3)) == 1
    assert (await queue.stats()).depth == 1


async def test_concurrent_claimers_never_share_an_entry(make: Factory) -> None:
    stores = [await _open(make) for _ in range(3)]
    queue = stores[0].queue
    assert queue is not None
    for n in range(60):
        await queue.enqueue(f"t{n}", {"n": n})

    async def drain(store: Storage, owner: str) -> list[str]:
        assert store.queue is not None
        got: list[str] = []
        while batch := await store.queue.claim(owner, 30, 4):
            got += [e.task_id for e in batch]
        return got

    results = await asyncio.gather(*(drain(s, f"w{i}") for i, s in enumerate(stores)))
    claimed = [task_id for got in results for task_id in got]
    assert sorted(claimed) == sorted(f"t{n}" for n in range(60))  # each exactly once


async def test_a_queued_task_is_no_orphan_for_the_lease_scan(make: Factory) -> None:
    store = await _open(make)
    queue, leases = store.queue, store.leases
    assert queue is not None and leases is not None
    for task_id in ("queued", "orphan"):
        await store.tasks.create(make_task(task_id, state=TaskState.SUBMITTED))
    await queue.enqueue("queued", {})
    assert await leases.unleased(0) == ["orphan"]
