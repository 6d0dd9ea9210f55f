"""The storage conformance suite: the executable form of ``simple_a2a.storage.base``.

One suite, every backend (the pattern of trio's ``testing/_check_streams.py``). A backend's test
module subclasses :class:`StorageConformance` and provides the ``make_storage`` fixture: a
factory ``make_storage(**options) -> Storage`` returning an *unopened* storage. Every call of
the factory within one test must address the same place (file, database schema), so durable
backends can be re-opened and a second instance can watch the first. Options the suite passes:
``max_events_per_task`` (event retention) and ``poll_interval`` (cross-instance wake-ups);
a factory forwards those its backend understands.

Set ``durable = True`` for backends whose data survives ``close()`` and is shared by instances.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest

from simple_a2a.protocol.models import (
    Artifact,
    AuthenticationInfo,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.storage import (
    ANY_OWNER,
    ConcurrentUpdateError,
    Storage,
    StoredTask,
    TaskChange,
    TaskExistsError,
    TaskQuery,
)

from .conformance_changes import IncrementalUpdateConformance
from .conformance_conversations import ConversationConformance
from .conformance_leases import LeaseConformance

StorageFactory = Callable[..., Storage]

UTC = timezone.utc
T0 = datetime(2025, 3, 4, 5, 6, 7, 123000, tzinfo=UTC)  # ms-aligned, the wire precision


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def make_task(
    task_id: str,
    *,
    state: TaskState = TaskState.WORKING,
    context_id: str | None = "ctx-1",
    ts: datetime | None = T0,
    metadata: dict[str, Any] | None = None,
) -> Task:
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=ts),
        metadata=metadata,
    )


def rich_task(task_id: str = "task-rich") -> Task:
    """Every kind of content, unordered keys, unicode and odd numbers: the JSON must survive."""
    return Task(
        id=task_id,
        context_id="ctx-rich",
        status=TaskStatus(
            state=TaskState.INPUT_REQUIRED,
            message=Message.agent("which size? ✓", message_id="m-2", task_id=task_id),
            timestamp=T0,
        ),
        artifacts=[
            Artifact(
                artifact_id="a-1",
                name="résumé",
                parts=[
                    Part.from_text('héllo wörld 🌍\n"quoted" \\ back'),
                    Part.from_data({"zeta": 1, "alpha": [1, 2.5, None, True], "mid": {"y": "x"}}),
                    Part.from_raw(
                        b"\x00\x01col,val\n1,2\n", media_type="text/csv", filename="t.csv"
                    ),
                    Part.from_url("https://example.com/a.png", media_type="image/png"),
                ],
                metadata={"z": 1, "a": 1.5e300},
            )
        ],
        history=[
            Message.user("I want a shirt", message_id="m-1", context_id="ctx-rich"),
            Message.agent("which size? ✓", message_id="m-2", task_id=task_id),
        ],
        metadata={"zz": {"b": 1, "a": 2}, "aa": [3, "x"], "big": 12345678901234567890, "f": 0.1},
    )


def event_samples(task_id: str) -> list[StreamResponse]:
    task = rich_task(task_id)
    return [
        StreamResponse.of(task),
        StreamResponse.of(
            TaskStatusUpdateEvent(
                task_id=task_id,
                context_id="ctx-rich",
                status=TaskStatus(state=TaskState.WORKING, timestamp=T0),
                metadata={"b": 1, "a": 2},
            )
        ),
        StreamResponse.of(
            TaskArtifactUpdateEvent(
                task_id=task_id,
                context_id="ctx-rich",
                artifact=task.artifacts[0],
                append=True,
                last_chunk=False,
            )
        ),
        StreamResponse.of(Message.agent("done ✓", message_id="m-9", task_id=task_id)),
    ]


def status_event(task_id: str, n: int = 0) -> StreamResponse:
    return StreamResponse.of(
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="ctx-1",
            status=TaskStatus(state=TaskState.WORKING, timestamp=at(n)),
            metadata={"n": n},
        )
    )


def ids(stored: list[StoredTask]) -> list[str]:
    return [s.task.id for s in stored]


class StorageConformance(IncrementalUpdateConformance, LeaseConformance, ConversationConformance):
    """Subclass it, set ``durable``, and provide the ``make_storage`` fixture."""

    durable: ClassVar[bool] = False

    @pytest.fixture
    def make_storage(self) -> StorageFactory:
        raise NotImplementedError("a backend's test class provides make_storage")

    @pytest.fixture
    async def storage(self, make_storage: StorageFactory) -> AsyncIterator[Storage]:
        store = make_storage()
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    async def seed(self, storage: Storage, tasks: list[Task], owner: str | None = None) -> None:
        for task in tasks:
            assert await storage.tasks.create(task, owner=owner) == 1

    # --- TaskStore: create / get / update / delete ---------------------------------------------

    async def test_create_then_get_is_byte_identical(self, storage: Storage) -> None:
        task = rich_task()
        before = task.to_json()
        assert await storage.tasks.create(task, owner="alice") == 1
        stored = await storage.tasks.get(task.id)
        assert stored is not None
        assert stored.version == 1
        assert stored.owner == "alice"
        assert stored.task.to_json() == before
        assert task.to_json() == before  # the store did not touch the caller's object

    async def test_get_missing_is_none(self, storage: Storage) -> None:
        assert await storage.tasks.get("nope") is None

    async def test_create_duplicate_raises_and_keeps_original(self, storage: Storage) -> None:
        await storage.tasks.create(make_task("t1", metadata={"v": "first"}))
        with pytest.raises(TaskExistsError):
            await storage.tasks.create(make_task("t1", metadata={"v": "second"}))
        stored = await storage.tasks.get("t1")
        assert stored is not None and stored.version == 1
        assert stored.task.metadata == {"v": "first"}

    async def test_update_bumps_version_and_replaces(self, storage: Storage) -> None:
        await storage.tasks.create(make_task("t1"), owner="bob")
        done = rich_task("t1")
        assert await storage.tasks.update(done, expected_version=1) == 2
        stored = await storage.tasks.get("t1")
        assert stored is not None
        assert (stored.version, stored.owner) == (2, "bob")  # the owner is kept
        assert stored.task.to_json() == done.to_json()
        assert await storage.tasks.update(make_task("t1"), expected_version=2) == 3

    async def test_update_missing_raises_key_error(self, storage: Storage) -> None:
        with pytest.raises(KeyError):
            await storage.tasks.update(make_task("ghost"), expected_version=1)
        assert await storage.tasks.get("ghost") is None

    @pytest.mark.parametrize("wrong", [0, 2, 7])
    async def test_update_with_wrong_version_is_refused(self, storage: Storage, wrong: int) -> None:
        await storage.tasks.create(make_task("t1", metadata={"v": 1}))
        with pytest.raises(ConcurrentUpdateError):
            await storage.tasks.update(make_task("t1", metadata={"v": 2}), expected_version=wrong)
        stored = await storage.tasks.get("t1")
        assert stored is not None and stored.version == 1 and stored.task.metadata == {"v": 1}

    async def test_record_creates_and_updates_with_its_event(self, storage: Storage) -> None:
        """``Storage.record``: the snapshot and its event together, (version, seq) back."""
        task = make_task("t1")
        assert await storage.record(
            task, StreamResponse(task=task), expected_version=None, owner="bob"
        ) == (1, 1)
        done = make_task("t1", state=TaskState.COMPLETED)
        event = StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id="t1", context_id="ctx-1", status=done.status
            )
        )
        assert await storage.record(done, event, expected_version=1) == (2, 2)
        stored = await storage.tasks.get("t1")
        assert stored is not None and (stored.version, stored.owner) == (2, "bob")
        assert stored.task.to_json() == done.to_json()
        assert [e.event for e in await storage.events.read("t1", 0)] == [
            StreamResponse(task=task),
            event,
        ]

    async def test_record_refused_by_the_version_guard_logs_nothing(self, storage: Storage) -> None:
        task = make_task("t1")
        await storage.record(task, StreamResponse(task=task), expected_version=None)
        with pytest.raises(ConcurrentUpdateError):
            await storage.record(task, StreamResponse(task=task), expected_version=5)
        with pytest.raises(TaskExistsError):
            await storage.record(task, StreamResponse(task=task), expected_version=None)
        with pytest.raises(KeyError):
            await storage.record(make_task("ghost"), StreamResponse(task=task), expected_version=1)
        assert await storage.events.last_seq("t1") == 1
        assert await storage.events.last_seq("ghost") == 0

    async def test_two_writers_one_wins(self, storage: Storage) -> None:
        await storage.tasks.create(make_task("t1", metadata={}))
        first = make_task("t1", state=TaskState.COMPLETED, metadata={"writer": "a"})
        second = make_task("t1", state=TaskState.CANCELED, metadata={"writer": "b"})
        results = await asyncio.gather(
            storage.tasks.update(first, expected_version=1),
            storage.tasks.update(second, expected_version=1),
            return_exceptions=True,
        )
        wins = [r for r in results if r == 2]
        losses = [r for r in results if isinstance(r, ConcurrentUpdateError)]
        assert len(wins) == 1 and len(losses) == 1, results
        winner = first if results[0] == 2 else second
        stored = await storage.tasks.get("t1")
        assert stored is not None and stored.version == 2
        assert stored.task.to_json() == winner.to_json()

    async def test_concurrent_writers_with_retry_lose_nothing(self, storage: Storage) -> None:
        await storage.tasks.create(make_task("t1", metadata={}))
        writers = 8

        async def add_key(n: int) -> None:
            while True:
                current = await storage.tasks.get("t1")
                assert current is not None
                meta = dict(current.task.metadata or {})
                meta[f"w{n}"] = n
                changed = current.task.model_copy(update={"metadata": meta})
                await asyncio.sleep(0)
                try:
                    await storage.tasks.update(changed, expected_version=current.version)
                    return
                except ConcurrentUpdateError:
                    continue

        await asyncio.gather(*(add_key(n) for n in range(writers)))
        stored = await storage.tasks.get("t1")
        assert stored is not None
        assert stored.version == writers + 1
        assert stored.task.metadata == {f"w{n}": n for n in range(writers)}

    async def test_delete(self, storage: Storage) -> None:
        await self.seed(storage, [make_task("t1"), make_task("t2")])
        assert await storage.tasks.delete("t1") is True
        assert await storage.tasks.delete("t1") is False
        assert await storage.tasks.get("t1") is None
        page = await storage.tasks.list(TaskQuery())
        assert ids(page.tasks) == ["t2"] and page.total == 1
        assert await storage.tasks.create(make_task("t1")) == 1  # the id is free again

    # --- TaskStore: list ----------------------------------------------------------------------

    async def test_list_empty(self, storage: Storage) -> None:
        page = await storage.tasks.list(TaskQuery())
        assert (page.tasks, page.total, page.has_more) == ([], 0, False)

    async def test_list_order_newest_first_then_id_desc(self, storage: Storage) -> None:
        tasks = [
            make_task("b", ts=at(0)),
            make_task("a", ts=at(10)),
            make_task("c", ts=at(10)),
            make_task("d", ts=at(-5)),
            make_task("e", ts=at(0)),
        ]
        await self.seed(storage, tasks)
        page = await storage.tasks.list(TaskQuery())
        assert ids(page.tasks) == ["c", "a", "e", "b", "d"]
        assert (page.total, page.has_more) == (5, False)
        assert [s.version for s in page.tasks] == [1] * 5

    async def test_list_returns_byte_identical_tasks(self, storage: Storage) -> None:
        task = rich_task()
        await storage.tasks.create(task)
        page = await storage.tasks.list(TaskQuery())
        assert [s.task.to_json() for s in page.tasks] == [task.to_json()]

    async def test_list_filters(self, storage: Storage) -> None:
        await self.seed(
            storage,
            [
                make_task("w1", context_id="c1", state=TaskState.WORKING, ts=at(1)),
                make_task("w2", context_id="c2", state=TaskState.WORKING, ts=at(2)),
                make_task("d1", context_id="c1", state=TaskState.COMPLETED, ts=at(3)),
                make_task("i1", context_id="c2", state=TaskState.INPUT_REQUIRED, ts=at(4)),
                make_task("n1", context_id=None, state=TaskState.WORKING, ts=at(5)),
            ],
        )

        async def query(**kw: Any) -> list[str]:
            page = await storage.tasks.list(TaskQuery(**kw))
            assert page.total == len(page.tasks) and not page.has_more
            return ids(page.tasks)

        assert await query(context_id="c1") == ["d1", "w1"]
        assert await query(context_id="c2") == ["i1", "w2"]
        assert await query(context_id="zzz") == []
        assert await query(state=TaskState.WORKING) == ["n1", "w2", "w1"]
        assert await query(state=TaskState.CANCELED) == []
        assert await query(context_id="c2", state=TaskState.WORKING) == ["w2"]
        assert await query(status_after=at(3)) == ["n1", "i1"]  # strictly after
        assert await query(status_after=at(2.5)) == ["n1", "i1", "d1"]
        assert await query(status_after=at(0), state=TaskState.WORKING, context_id="c1") == ["w1"]
        assert await query(status_after=at(99)) == []

    async def test_list_owner_filter(self, storage: Storage) -> None:
        await self.seed(storage, [make_task("a1", ts=at(1)), make_task("a2", ts=at(2))], "alice")
        await self.seed(storage, [make_task("b1", ts=at(3))], "bob")
        await self.seed(storage, [make_task("n1", ts=at(4))], None)

        async def query(owner: Any) -> list[str]:
            page = await storage.tasks.list(TaskQuery(owner=owner))
            assert page.total == len(page.tasks)
            return ids(page.tasks)

        assert await query(ANY_OWNER) == ["n1", "b1", "a2", "a1"]
        assert await query("alice") == ["a2", "a1"]
        assert await query("bob") == ["b1"]
        assert await query(None) == ["n1"]  # None means "tasks without an owner", not "any"
        assert await query("mallory") == []
        page = await storage.tasks.list(TaskQuery(owner="alice", limit=1))
        assert ids(page.tasks) == ["a2"] and page.total == 2 and page.has_more

    @pytest.mark.parametrize("limit", [1, 3, 7, 30])
    async def test_page_walk_yields_every_task_once(self, storage: Storage, limit: int) -> None:
        # 23 tasks, many sharing a timestamp: ties are broken by id.
        tasks = [make_task(f"t{n:02d}", ts=at(n // 4)) for n in range(23)]
        await self.seed(storage, tasks)
        expected = sorted((t for t in tasks), key=lambda t: (t.status.timestamp, t.id))[::-1]
        seen: list[str] = []
        after: tuple[datetime, str] | None = None
        pages = 0
        while True:
            page = await storage.tasks.list(TaskQuery(limit=limit, after=after))
            pages += 1
            assert page.total == 23
            assert len(page.tasks) <= limit
            seen.extend(ids(page.tasks))
            if not page.has_more:
                break
            assert len(page.tasks) == limit
            last = page.tasks[-1].task
            assert last.status.timestamp is not None
            after = (last.status.timestamp, last.id)
        assert seen == [t.id for t in expected]
        assert pages == max(1, -(-23 // limit))

    async def test_page_walk_with_filters(self, storage: Storage) -> None:
        tasks = [
            make_task(
                f"t{n:02d}",
                ts=at(n % 5),
                state=TaskState.WORKING if n % 2 else TaskState.COMPLETED,
                context_id=f"c{n % 3}",
            )
            for n in range(40)
        ]
        await self.seed(storage, tasks)
        want = [
            t.id
            for t in sorted(tasks, key=lambda t: (t.status.timestamp, t.id), reverse=True)
            if t.status.state == TaskState.WORKING and t.context_id == "c1"
        ]
        seen: list[str] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await storage.tasks.list(
                TaskQuery(limit=2, state=TaskState.WORKING, context_id="c1", after=after)
            )
            assert page.total == len(want)
            seen.extend(ids(page.tasks))
            if not page.has_more:
                break
            last = page.tasks[-1].task
            assert last.status.timestamp is not None
            after = (last.status.timestamp, last.id)
        assert seen == want

    async def test_cursor_from_returned_task_with_sub_millisecond_timestamps(
        self, storage: Storage
    ) -> None:
        # Timestamps finer than the wire's milliseconds compare at millisecond precision:
        # a cursor taken from any returned task (or its JSON) lands exactly on it.
        base = datetime(2025, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)
        tasks = [make_task(f"u{n}", ts=base + timedelta(microseconds=n * 97)) for n in range(8)]
        await self.seed(storage, tasks)
        for source in ("returned", "wire"):
            seen: list[str] = []
            after: tuple[datetime, str] | None = None
            while True:
                page = await storage.tasks.list(TaskQuery(limit=3, after=after))
                seen.extend(ids(page.tasks))
                if not page.has_more:
                    break
                last = page.tasks[-1].task
                if source == "wire":
                    last = Task.from_json(last.to_json())
                assert last.status.timestamp is not None
                after = (last.status.timestamp, last.id)
            assert sorted(seen) == sorted(t.id for t in tasks) and len(seen) == 8, source

    async def test_list_follows_updates(self, storage: Storage) -> None:
        await self.seed(storage, [make_task("t1", ts=at(1)), make_task("t2", ts=at(2))])
        await storage.tasks.update(
            make_task("t1", state=TaskState.COMPLETED, ts=at(3)), expected_version=1
        )
        page = await storage.tasks.list(TaskQuery())
        assert ids(page.tasks) == ["t1", "t2"]
        assert [s.version for s in page.tasks] == [2, 1]
        working = await storage.tasks.list(TaskQuery(state=TaskState.WORKING))
        assert ids(working.tasks) == ["t2"]

    async def test_active_tasks(self, storage: Storage) -> None:
        states = [
            TaskState.SUBMITTED,
            TaskState.WORKING,
            TaskState.COMPLETED,
            TaskState.INPUT_REQUIRED,
            TaskState.FAILED,
            TaskState.WORKING,
        ]
        await self.seed(
            storage, [make_task(f"t{n}", state=s, ts=at(n)) for n, s in enumerate(states)]
        )
        active = await storage.tasks.active_tasks()
        assert sorted(ids(active)) == ["t0", "t1", "t5"]
        assert all(s.version == 1 for s in active)

    # --- EventLog -----------------------------------------------------------------------------

    async def test_empty_log(self, storage: Storage) -> None:
        assert await storage.events.last_seq("t1") == 0
        assert await storage.events.first_seq("t1") == 0
        assert await storage.events.read("t1", 0) == []

    async def test_append_numbers_from_one_per_task(self, storage: Storage) -> None:
        assert [await storage.events.append("t1", status_event("t1", n)) for n in range(3)] == [
            1,
            2,
            3,
        ]
        assert await storage.events.append("t2", status_event("t2")) == 1
        assert await storage.events.append("t1", status_event("t1", 3)) == 4
        assert await storage.events.last_seq("t1") == 4
        assert await storage.events.first_seq("t1") == 1
        assert await storage.events.last_seq("t2") == 1

    async def test_events_are_byte_identical(self, storage: Storage) -> None:
        samples = event_samples("t1")
        for event in samples:
            await storage.events.append("t1", event)
        logged = await storage.events.read("t1", 0)
        assert [e.seq for e in logged] == [1, 2, 3, 4]
        assert [e.event.to_json() for e in logged] == [e.to_json() for e in samples]

    async def test_read_from_cursor_with_limit(self, storage: Storage) -> None:
        for n in range(10):
            await storage.events.append("t1", status_event("t1", n))
        await storage.events.append("other", status_event("other"))
        read = storage.events.read
        assert [e.seq for e in await read("t1", 0)] == list(range(1, 11))
        assert [e.seq for e in await read("t1", 4)] == list(range(5, 11))
        assert [e.seq for e in await read("t1", 4, 3)] == [5, 6, 7]
        assert [e.seq for e in await read("t1", 8, 5)] == [9, 10]
        assert await read("t1", 10) == []
        assert await read("t1", 99) == []
        assert await read("nobody", 0) == []
        events = await read("t1", 2, 1)
        assert events[0].event.status_update is not None
        assert events[0].event.status_update.metadata == {"n": 2}

    async def test_concurrent_appends_get_distinct_sequence_numbers(self, storage: Storage) -> None:
        seqs = await asyncio.gather(
            *(storage.events.append("t1", status_event("t1", n)) for n in range(40))
        )
        assert sorted(seqs) == list(range(1, 41))
        logged = await storage.events.read("t1", 0)
        assert [e.seq for e in logged] == list(range(1, 41))
        # The event stored under each seq is the one whose append returned that seq.
        by_seq = {e.seq: e.event.status_update for e in logged}
        for n, seq in enumerate(seqs):
            status = by_seq[seq]
            assert status is not None and status.metadata == {"n": n}

    async def test_wait_true_at_once_when_an_event_exists(self, storage: Storage) -> None:
        await storage.events.append("t1", status_event("t1"))
        started = time.monotonic()
        assert await storage.events.wait("t1", 0, timeout=5) is True
        assert time.monotonic() - started < 1

    async def test_wait_times_out(self, storage: Storage) -> None:
        await storage.events.append("t1", status_event("t1"))
        started = time.monotonic()
        assert await storage.events.wait("t1", 1, timeout=0.2) is False
        assert await storage.events.wait("never", 0, timeout=0.05) is False
        assert 0.2 <= time.monotonic() - started < 2

    async def test_wait_wakes_on_append_from_another_task(self, storage: Storage) -> None:
        await storage.events.append("t1", status_event("t1"))

        async def later() -> None:
            await asyncio.sleep(0.05)
            await storage.events.append("other", status_event("other"))  # not ours
            await asyncio.sleep(0.05)
            await storage.events.append("t1", status_event("t1", 1))

        writer = asyncio.create_task(later())
        started = time.monotonic()
        assert await storage.events.wait("t1", 1, timeout=5) is True
        assert time.monotonic() - started < 2
        await writer
        assert [e.seq for e in await storage.events.read("t1", 1)] == [2]

    async def test_many_waiters_all_wake(self, storage: Storage) -> None:
        waiters = [asyncio.create_task(storage.events.wait("t1", 0, timeout=5)) for _ in range(50)]
        other = asyncio.create_task(storage.events.wait("t2", 0, timeout=0.3))
        await asyncio.sleep(0.05)
        await storage.events.append("t1", status_event("t1"))
        assert await asyncio.gather(*waiters) == [True] * 50
        assert await other is False

    async def test_cancelled_wait_leaves_the_log_usable(self, storage: Storage) -> None:
        waiter = asyncio.create_task(storage.events.wait("t1", 0, timeout=5))
        await asyncio.sleep(0.02)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await storage.events.append("t1", status_event("t1"))
        assert await storage.events.wait("t1", 0, timeout=1) is True

    async def test_retention_keeps_the_newest_events(self, make_storage: StorageFactory) -> None:
        store = make_storage(max_events_per_task=3)
        await store.open()
        try:
            for n in range(7):
                assert await store.events.append("t1", status_event("t1", n)) == n + 1
            assert await store.events.last_seq("t1") == 7
            first = await store.events.first_seq("t1")
            assert first == 5
            assert [e.seq for e in await store.events.read("t1", 0)] == [5, 6, 7]
            assert [e.seq for e in await store.events.read("t1", 5)] == [6, 7]
            assert await store.events.append("t1", status_event("t1", 7)) == 8
            assert await store.events.first_seq("t1") == 6
        finally:
            await store.close()

    async def test_delete_events(self, storage: Storage) -> None:
        for n in range(3):
            await storage.events.append("t1", status_event("t1", n))
        await storage.events.append("t2", status_event("t2"))
        await storage.events.delete("t1")
        await storage.events.delete("t1")  # idempotent
        await storage.events.delete("never-existed")
        assert await storage.events.read("t1", 0) == []
        assert await storage.events.last_seq("t1") == 0
        assert await storage.events.first_seq("t1") == 0
        assert await storage.events.last_seq("t2") == 1
        assert await storage.events.append("t1", status_event("t1")) == 1

    # --- PushConfigStore ------------------------------------------------------------------------

    async def test_push_configs_counted_by_the_owner_of_their_tasks(self, storage: Storage) -> None:
        """``count_for_owner``: the configs of a caller's tasks, for the per-caller cap."""
        await storage.tasks.create(make_task("a1"), owner="alice")
        await storage.tasks.create(make_task("a2"), owner="alice")
        await storage.tasks.create(make_task("b1"), owner="bob")
        for task_id, config_id in (("a1", "p1"), ("a1", "p2"), ("a2", "p1"), ("b1", "p1")):
            await storage.push_configs.put(
                TaskPushNotificationConfig(id=config_id, task_id=task_id, url="https://x.example")
            )
        assert await storage.push_configs.count_for_owner("alice") == 3
        assert await storage.push_configs.count_for_owner("bob") == 1
        assert await storage.push_configs.count_for_owner("carol") == 0

    async def test_push_configs_crud(self, storage: Storage) -> None:
        push = storage.push_configs
        first = TaskPushNotificationConfig(
            id="p1",
            task_id="t1",
            url="https://hooks.example.com/a",
            token="secret-✓",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="xyz"),
        )
        second = TaskPushNotificationConfig(id="p2", task_id="t1", url="https://b.example.com")
        elsewhere = TaskPushNotificationConfig(id="p1", task_id="t2", url="https://c.example.com")
        assert await push.get("t1", "p1") is None
        assert await push.list("t1") == []
        for config in (first, second, elsewhere):
            await push.put(config)
        got = await push.get("t1", "p1")
        assert got is not None and got.to_json() == first.to_json()
        assert sorted(c.id or "" for c in await push.list("t1")) == ["p1", "p2"]
        assert [c.url for c in await push.list("t2")] == ["https://c.example.com"]

        replaced = first.model_copy(update={"url": "https://hooks.example.com/new", "token": None})
        await push.put(replaced)
        got = await push.get("t1", "p1")
        assert got is not None and got.to_json() == replaced.to_json()
        assert len(await push.list("t1")) == 2

        assert await push.delete("t1", "p1") is True
        assert await push.delete("t1", "p1") is False
        assert await push.delete("t9", "p1") is False
        assert await push.get("t1", "p1") is None
        assert [c.id for c in await push.list("t1")] == ["p2"]
        assert (await push.get("t2", "p1")) is not None

    # --- lifecycle and durability ---------------------------------------------------------------

    async def test_open_and_close_are_idempotent(self, make_storage: StorageFactory) -> None:
        store = make_storage()
        await asyncio.gather(store.open(), store.open())
        await store.open()
        await store.tasks.create(make_task("t1"))
        await store.close()
        await store.close()
        await store.open()  # a closed storage can be opened again
        try:
            assert await store.tasks.get("t1") is not None
        finally:
            await store.close()

    async def test_data_survives_close_and_reopen(self, make_storage: StorageFactory) -> None:
        if not self.durable:
            pytest.skip("not a durable backend")
        first = make_storage()
        await first.open()
        task = rich_task()
        await first.tasks.create(task, owner="alice")
        await first.tasks.update(task, expected_version=1)
        for event in event_samples(task.id):
            await first.events.append(task.id, event)
        config = TaskPushNotificationConfig(id="p1", task_id=task.id, url="https://h.example.com")
        await first.push_configs.put(config)
        # a config registered over 0.3 keeps its version across restarts (issue 15 item 2)
        old = TaskPushNotificationConfig(id="p2", task_id=task.id, url="https://o.example.com")
        await first.push_configs.put(old.with_protocol_version("0.3"))
        await first.close()

        second = make_storage()
        await second.open()
        try:
            stored = await second.tasks.get(task.id)
            assert stored is not None
            assert (stored.version, stored.owner) == (2, "alice")
            assert stored.task.to_json() == task.to_json()
            with pytest.raises(ConcurrentUpdateError):
                await second.tasks.update(task, expected_version=1)
            assert await second.tasks.update(task, expected_version=2) == 3
            logged = await second.events.read(task.id, 0)
            assert [e.event.to_json() for e in logged] == [
                e.to_json() for e in event_samples(task.id)
            ]
            assert await second.events.append(task.id, status_event(task.id)) == 5
            listed = await second.push_configs.list(task.id)
            assert listed[0] == config and listed[0].protocol_version is None
            assert (listed[1].url, listed[1].protocol_version) == (old.url, "0.3")
            v03 = await second.push_configs.get(task.id, "p2")
            assert v03 is not None and v03.protocol_version == "0.3"
            assert [s.task.id for s in await second.tasks.active_tasks()] == []
        finally:
            await second.close()

    async def test_a_read_never_answers_a_snapshot_another_instance_replaced(
        self, make_storage: StorageFactory
    ) -> None:
        """A reader that read a task before (SQL stores keep what they read in a RecentTasks, to
        answer an unchanged task without rebuilding it) sees every change another instance
        makes, to the core row or only to its child rows, and a deletion: by id and in a list."""

        async def listed(store: Storage) -> list[StoredTask]:
            return (await store.tasks.list(TaskQuery())).tasks

        if not self.durable:
            pytest.skip("not a shared backend")
        reader, writer = make_storage(), make_storage()
        await reader.open()
        await writer.open()
        try:
            await writer.tasks.create(make_task("t1"), owner="alice")
            first = await reader.tasks.get("t1")
            again = await reader.tasks.get("t1")
            assert first is not None and again is not None
            assert again.task.to_json() == first.task.to_json() and again.version == 1
            # only child rows: a history message (the core row keeps its document)
            grown = first.task.model_copy(update={"history": [Message.user("more")]})
            change = TaskChange(kind="history", appended=1)
            assert await writer.tasks.update(grown, expected_version=1, change=change) == 2
            [page] = await listed(reader)  # (a list first: it must not answer the known one)
            assert (page.version, page.task.to_json()) == (2, grown.to_json())
            seen = await reader.tasks.get("t1")
            assert seen is not None and (seen.version, seen.owner) == (2, "alice")
            assert seen.task.to_json() == grown.to_json()
            # the core row and the children
            rich = rich_task("t1")
            assert await writer.tasks.update(rich, expected_version=2) == 3
            seen = await reader.tasks.get("t1")
            assert seen is not None and seen.task.to_json() == rich.to_json()
            richer = rich.model_copy(update={"history": [*rich.history, Message.user("again")]})
            change = TaskChange(kind="history", appended=1)
            assert await writer.tasks.update(richer, expected_version=3, change=change) == 4
            [page] = await listed(reader)
            assert (page.version, page.task.to_json()) == (4, richer.to_json())
            assert await writer.tasks.delete("t1")
            assert await reader.tasks.get("t1") is None and await listed(reader) == []
        finally:
            await reader.close()
            await writer.close()

    async def test_second_instance_sees_writes_and_wakes(
        self, make_storage: StorageFactory
    ) -> None:
        if not self.durable:
            pytest.skip("not a shared backend")
        writer, watcher = make_storage(poll_interval=0.05), make_storage(poll_interval=0.05)
        await writer.open()
        await watcher.open()
        try:
            await writer.tasks.create(make_task("t1"))
            stored = await watcher.tasks.get("t1")
            assert stored is not None
            await watcher.tasks.update(make_task("t1", metadata={"by": "w"}), expected_version=1)
            with pytest.raises(ConcurrentUpdateError):
                await writer.tasks.update(make_task("t1"), expected_version=1)

            waiting = asyncio.create_task(watcher.events.wait("t1", 0, timeout=5))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            await writer.events.append("t1", status_event("t1"))
            assert await waiting is True
            assert time.monotonic() - started < 2

            seqs = await asyncio.gather(
                *(
                    store.events.append("t1", status_event("t1", n))
                    for n in range(20)
                    for store in (writer, watcher)
                )
            )
            assert sorted(seqs) == list(range(2, 42))
            assert [e.seq for e in await watcher.events.read("t1", 0)] == list(range(1, 42))
        finally:
            await writer.close()
            await watcher.close()


async def check_unchanged_reads_share_the_snapshot(storage: Storage) -> None:
    """GetTask polling an unchanged task gets the same object (the SQL stores' RecentTasks: no
    child rows read, no model built, and the server's encoded-JSON cache hits); a change is
    read anew. Not part of the contract: what makes polling cheap on our SQL stores."""
    await storage.tasks.create(make_task("t1"))
    first = await storage.tasks.get("t1")
    again = await storage.tasks.get("t1")
    assert first is not None and again is not None and again.task is first.task
    [listed] = (await storage.tasks.list(TaskQuery())).tasks  # a page of known tasks: the same
    assert listed.task is first.task
    await storage.tasks.update(make_task("t1", metadata={"v": 2}), expected_version=1)
    [listed] = (await storage.tasks.list(TaskQuery())).tasks
    assert listed.task is not first.task and listed.task.metadata == {"v": 2}
    assert (await storage.tasks.list(TaskQuery())).tasks[0].task is listed.task
    changed = await storage.tasks.get("t1")
    assert changed is not None and changed.task is listed.task
