"""Caught-up followers of the durable stores (issue #36): no store read per chunk while this
process is the only writer, and every other writer's append still seen.

A follower that has read up to the last event this process appended waits without reading the
database (``ChangeNotifier``'s epochs, ``RecentEvents.caught_up``). The tests below check both
halves on real stores: the reads counted at the SQL level (every read of the SQLite store goes
through ``_Database.read``; PostgreSQL's statements through asyncpg's query logger), and a
follower caught up on its own appends that sees an append by another process on the same SQLite
file, by another PostgreSQL "replica" (NOTIFY, the Redis fan-out) and, with the signal lost, by
the poll fallback. Trusting this process's appends unconditionally fails each of the latter.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.protocol.models import TaskState, TaskStatus, TaskStatusUpdateEvent
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.server.tasks import TaskManager
from simple_a2a.storage import Storage
from simple_a2a.storage.sqlite import SQLiteStorage

from .conformance import make_task, status_event
from .conformance_wakeups import NO_POLL, SIGNAL_BOUND, opened, registered
from .conftest import REDIS

DSN = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
#: chunks per test: a read per chunk would be this many reads per follower
CHUNKS = 20


def working(task_id: str, n: int) -> StreamResponse:
    return status_event(task_id, n)


def completed(task_id: str) -> StreamResponse:
    status = TaskStatus(state=TaskState.COMPLETED)
    return StreamResponse.of(
        TaskStatusUpdateEvent(task_id=task_id, context_id="ctx-1", status=status)
    )


async def caught_up_follower(
    manager: TaskManager, task_id: str, after: int
) -> tuple[asyncio.Task[list[int]], asyncio.Queue[int]]:
    """``TaskManager.follow`` from ``after`` in a task of its own: the seqs it yields go to the
    queue (and the list it returns once the task is final)."""
    seen: asyncio.Queue[int] = asyncio.Queue()

    async def run() -> list[int]:
        seqs = []
        async for item in manager.follow(task_id, after):
            if item.seq is not None:
                seqs.append(item.seq)
                seen.put_nowait(item.seq)
        return seqs

    return asyncio.create_task(run()), seen


async def next_seq(seen: asyncio.Queue[int], bound: float = SIGNAL_BOUND) -> int | None:
    try:
        return await asyncio.wait_for(seen.get(), bound)
    except asyncio.TimeoutError:
        return None


async def own_chunks(manager: TaskManager, task_id: str, follower_queues: list[Any]) -> None:
    """CHUNKS events recorded by this process, each waited for by every follower."""
    for n in range(CHUNKS):
        _, seq = await manager.record(task_id, working(task_id, n))
        for seen in follower_queues:
            assert await next_seq(seen) == seq


# -- the single-writer case: no store read per chunk ------------------------------------------


def count_sqlite_reads(store: SQLiteStorage) -> list[str]:
    """Every read the store makes (point reads on the loop and reader-thread reads alike)."""
    reads: list[str] = []
    db: Any = store._db
    read = db.read

    async def counted(fn: Callable[..., Any], **options: Any) -> Any:
        reads.append(getattr(fn, "__qualname__", repr(fn)))
        return await read(fn, **options)

    db.read = counted
    return reads


async def test_sqlite_caught_up_followers_read_nothing_per_chunk(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "t.db")
    async with opened(store):
        manager = TaskManager(store)
        await manager.create(make_task("t1"), owner=None)
        followers = [await caught_up_follower(manager, "t1", 1) for _ in range(3)]
        await registered()  # attached, the change poller's first round done
        reads = count_sqlite_reads(store)
        await own_chunks(manager, "t1", [seen for _, seen in followers])
        # Before issue #36's change: at least one read (last_seq) per follower per chunk.
        assert reads == [], reads
        await manager.record("t1", completed("t1"))
        for follower, _ in followers:
            assert await asyncio.wait_for(follower, SIGNAL_BOUND) == list(range(2, CHUNKS + 3))


def postgres(schema: str, **options: Any) -> Storage:
    pytest.importorskip("asyncpg", reason="asyncpg is not installed (simple-a2a[postgres])")
    from simple_a2a.storage.postgres import PostgresStorage

    options.setdefault("poll_interval", NO_POLL)
    return PostgresStorage(DSN, schema=schema, max_size=4, **options)


async def test_postgres_caught_up_followers_read_nothing_per_chunk(postgres_schema: str) -> None:
    """Own NOTIFYs (told by the notifying backend's pid) do not send followers to the
    database; the statements are counted by asyncpg's query logger on every pool connection."""
    statements: list[str] = []

    async def init(conn: Any) -> None:
        conn.add_query_logger(lambda logged: statements.append(logged.query))

    store = postgres(postgres_schema, init=init)
    async with opened(store):
        manager = TaskManager(store)
        await manager.create(make_task("t1"), owner=None)
        followers = [await caught_up_follower(manager, "t1", 1) for _ in range(3)]
        await registered()
        await own_chunks(manager, "t1", [seen for _, seen in followers])  # (warms the pool)
        del statements[:]
        await own_chunks(manager, "t1", [seen for _, seen in followers])
        reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
        # one write statement per chunk (the task row and its event); no SELECT of the log
        assert reads == [], reads
        await manager.record("t1", completed("t1"))
        for follower, _ in followers:
            await asyncio.wait_for(follower, SIGNAL_BOUND)


# -- other writers: a caught-up follower sees their appends -----------------------------------


async def check_sees_another_writers_append(
    watcher: Storage, append_elsewhere: Callable[[int], Any], bound: float = SIGNAL_BOUND
) -> None:
    """``watcher``'s follower is caught up on the watcher's own appends; then another writer
    appends (``append_elsewhere(seq)``), then the watcher appends again: the follower sees all,
    in order, the other writer's within ``bound``."""
    manager = TaskManager(watcher)
    await manager.create(make_task("t1"), owner=None)
    follower, seen = await caught_up_follower(manager, "t1", 1)
    await own_chunks(manager, "t1", [seen])  # caught up on this process's seqs 2..21
    await registered()
    await append_elsewhere(CHUNKS + 2)
    assert await next_seq(seen, bound) == CHUNKS + 2, "the other writer's append was missed"
    manager._latest.pop("t1", None)  # the other writer changed the log, not the task
    await manager.record("t1", completed("t1"))
    assert await next_seq(seen) == CHUNKS + 3
    assert await asyncio.wait_for(follower, SIGNAL_BOUND) == list(range(2, CHUNKS + 4))


APPEND_IN_ANOTHER_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    from simple_a2a.protocol.models import TaskState, TaskStatus, TaskStatusUpdateEvent
    from simple_a2a.protocol.requests import StreamResponse
    from simple_a2a.storage.sqlite import SQLiteStorage

    async def main():
        store = SQLiteStorage(sys.argv[1])
        await store.open()
        status = TaskStatus(state=TaskState.WORKING)
        event = StreamResponse(status_update=TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=status, metadata={"from": "elsewhere"}))
        print(await store.events.append("t1", event))
        await store.close()

    asyncio.run(main())
    """
)


async def test_sqlite_follower_sees_another_process_s_append(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    watcher = SQLiteStorage(path, poll_interval=0.2)

    async def in_another_process(seq: int) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", APPEND_IN_ANOTHER_PROCESS, str(path),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate()
        assert proc.returncode == 0 and int(out) == seq, err.decode()

    async with opened(watcher):
        await check_sees_another_writers_append(watcher, in_another_process)


async def test_sqlite_follower_sees_a_second_storage_on_the_file(tmp_path: Path) -> None:
    """The same with the other writer a second SQLiteStorage in this process (a connection of
    its own: PRAGMA data_version sees its commits as another process's)."""
    watcher = SQLiteStorage(tmp_path / "t.db", poll_interval=0.2)
    writer = SQLiteStorage(tmp_path / "t.db")

    async def append(seq: int) -> None:
        assert await writer.events.append("t1", working("t1", seq)) == seq

    async with opened(watcher, writer):
        await check_sees_another_writers_append(watcher, append)


async def test_postgres_follower_sees_another_replica_s_append(postgres_schema: str) -> None:
    """Another replica's append is known by its NOTIFY alone (polls of 30 s)."""
    watcher, replica = postgres(postgres_schema), postgres(postgres_schema)

    async def append(seq: int) -> None:
        assert await replica.events.append("t1", working("t1", seq)) == seq

    async with opened(watcher, replica):
        await check_sees_another_writers_append(watcher, append)


async def test_postgres_follower_sees_an_unsignalled_append_by_the_poll(
    postgres_schema: str,
) -> None:
    """A lost wake-up: the other replica's append sends no NOTIFY (it is configured for a
    fan-out that nobody reads). The follower's re-check every ``poll_interval`` reads the
    database, so the append is seen within about that."""
    pytest.importorskip("redis.asyncio", reason="redis is not installed (simple-a2a[redis])")
    from simple_a2a.storage.fanout import RedisFanout

    watcher = postgres(postgres_schema, poll_interval=0.5)
    silent = postgres(postgres_schema, fanout=RedisFanout("redis://127.0.0.1:1/0"))

    async def append(seq: int) -> None:
        assert await silent.events.append("t1", working("t1", seq)) == seq

    async with opened(watcher, silent):
        await check_sees_another_writers_append(watcher, append, bound=3.0)


async def test_fanout_follower_sees_another_replica_s_append(
    postgres_schema: str, redis_stream: str
) -> None:
    """With the Redis fan-out: the other replica's message (not this one's own) wakes it."""
    from simple_a2a.storage.fanout import RedisFanout

    def replica() -> Storage:
        return postgres(postgres_schema, fanout=RedisFanout(REDIS, stream=redis_stream))

    watcher, other = replica(), replica()

    async def append(seq: int) -> None:
        assert await other.events.append("t1", working("t1", seq)) == seq

    async with opened(watcher, other):
        await registered()  # the fan-out readers connected
        await check_sees_another_writers_append(watcher, append)


async def test_postgres_waiters_of_one_task_share_their_poll_re_checks(
    postgres_schema: str,
) -> None:
    """Many waiters of one task, their signal lost: each interval's re-check is one read of the
    database for all of them, not one per waiter (10,000 subscribers of one task were 10,000
    reads a second: issue #36), and every waiter still sees the unsignalled append."""
    pytest.importorskip("redis.asyncio", reason="redis is not installed (simple-a2a[redis])")
    from simple_a2a.storage.fanout import RedisFanout

    statements: list[str] = []

    async def init(conn: Any) -> None:
        conn.add_query_logger(lambda logged: statements.append(logged.query))

    interval, waiters, stagger = 0.1, 100, 0.01
    watcher = postgres(postgres_schema, poll_interval=interval, init=init)
    silent = postgres(postgres_schema, fanout=RedisFanout("redis://127.0.0.1:1/0"))
    async with opened(watcher, silent):
        await TaskManager(watcher).create(make_task("t1"), owner=None)
        del statements[:]
        started = asyncio.get_running_loop().time()
        waits = []
        for _ in range(waiters):  # staggered, as subscribers arrive: their timers are too
            waits.append(asyncio.create_task(watcher.events.wait("t1", 1, 30.0)))
            await asyncio.sleep(stagger)
        await asyncio.sleep(5 * interval)
        elapsed = asyncio.get_running_loop().time() - started
        rechecks = [s for s in statements if "event_seqs" in s]
        # about one per interval (15 here; one per waiter and interval was 967)
        assert len(rechecks) <= 3 * elapsed / interval + 5, len(rechecks)
        assert not any(wait.done() for wait in waits)
        assert await silent.events.append("t1", working("t1", 2)) == 2
        results = await asyncio.wait_for(asyncio.gather(*waits), 4 * interval + SIGNAL_BOUND)
        assert results == [True] * waiters
