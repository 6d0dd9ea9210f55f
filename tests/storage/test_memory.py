"""The conformance suite against the in-memory reference backend."""

from __future__ import annotations

from typing import Any

import pytest

from simple_a2a.storage import MemoryStorage, Storage

from .conformance import StorageConformance, StorageFactory


class TestMemoryStorage(StorageConformance):
    durable = False

    @pytest.fixture
    def make_storage(self) -> StorageFactory:
        def make(max_events_per_task: int = 10_000, **_: Any) -> Storage:
            return MemoryStorage(max_events_per_task=max_events_per_task)

        return make


class TestMemoryStorageAllCold(StorageConformance):
    """The same contract when every finished task and log goes cold at once (hot set of one),
    packed two at a time: both cold forms (raw in an open batch, packed) are exercised."""

    durable = False

    @pytest.fixture
    def make_storage(self) -> StorageFactory:
        def make(max_events_per_task: int = 10_000, **_: Any) -> Storage:
            storage = MemoryStorage(max_events_per_task=max_events_per_task)
            storage.tasks.hot = storage.events.hot = 1  # type: ignore[attr-defined]
            storage.tasks._packer.batch = storage.events._packer.batch = 2  # type: ignore[attr-defined]
            return storage

        return make


async def test_a_cold_log_is_packed_replays_exactly_and_thaws_on_write() -> None:
    from simple_a2a.protocol.models import (
        Artifact,
        Part,
        TaskArtifactUpdateEvent,
        TaskState,
        TaskStatus,
        TaskStatusUpdateEvent,
    )
    from simple_a2a.protocol.requests import StreamResponse
    from simple_a2a.storage.memory import MemoryEventLog

    log = MemoryEventLog(hot=1, pack_batch=1)
    text = 'line one\nline "two" \u00e9\u6f22 \\n'  # raw newlines and escapes survive packing
    events = [
        StreamResponse(
            artifact_update=TaskArtifactUpdateEvent(
                task_id="t1",
                context_id="c",
                artifact=Artifact(artifact_id="a", parts=[Part.text(text)]),
            )
        ),
        StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id="t1", context_id="c", status=TaskStatus(state=TaskState.COMPLETED)
            )
        ),
    ]
    for event in events:
        await log.append("t1", event)
    await log.append("t2", events[1])  # t2 finishes: t1 leaves the hot set of one
    assert "t1" in log._cold and "t1" not in log._logs
    packed, index = log._cold["t1"]  # a batch of one, packed
    assert index == 0 and len(packed) < sum(len(e.to_json()) for e in events)
    replay = await log.read("t1", 0)
    assert [e.seq for e in replay] == [1, 2]
    assert [e.event for e in replay] == events
    assert await log.first_seq("t1") == 1 and await log.last_seq("t1") == 2
    assert [e.seq for e in await log.read("t1", 1)] == [2]
    assert await log.read("t1", 2) == []
    assert await log.append("t1", events[0]) == 3  # a write after cooling down thaws the log
    assert [e.seq for e in await log.read("t1", 0)] == [1, 2, 3]
    await log.delete("t2")
    assert await log.read("t2", 0) == [] and await log.last_seq("t2") == 0


def test_the_batch_packer_packs_a_full_batch_once_and_reads_each_document_back() -> None:
    from simple_a2a.storage._packing import BatchPacker

    packer = BatchPacker(batch=3)
    docs = [b'{"n":%d,"text":"line\\none"}' % i for i in range(7)]
    handles: dict[str, object] = {}
    for i, doc in enumerate(docs):
        sealed = packer.add(f"k{i}", doc)
        handles[f"k{i}"] = doc  # raw while its batch is open
        assert packer.read(doc) == doc
        for key, raw, handle in sealed:
            assert handles[key] is raw
            handles[key] = handle
    assert [type(h) for h in handles.values()] == [tuple] * 6 + [bytes]  # two batches sealed
    assert handles["k0"][0] is handles["k2"][0] and handles["k3"][0] is not handles["k0"][0]  # type: ignore[index]
    for i in (5, 0, 6, 3, 1, 4, 2):  # across batches, in any order
        assert packer.read(handles[f"k{i}"]) == docs[i]  # type: ignore[arg-type]
    assert len(handles["k0"][0]) < len(b"".join(docs[:3]))  # type: ignore[index]


async def test_cold_tasks_changed_or_deleted_while_their_batch_is_open_keep_what_was_written() -> (
    None
):
    """A task that goes cold, then is updated or deleted before its batch is packed, keeps the
    update (or stays deleted): packing swaps in a handle only where the raw JSON still is."""
    from simple_a2a.protocol.models import Message, Part, Role, Task, TaskState, TaskStatus
    from simple_a2a.storage.memory import MemoryTaskStore

    store = MemoryTaskStore(hot=1, pack_batch=4)

    def task(i: int, state: TaskState = TaskState.COMPLETED) -> Task:  # (running ones stay hot)
        message = Message(message_id=f"m{i}", role=Role.USER, parts=[Part.text(f"hello {i}")])
        return Task(id=f"t{i}", context_id="c", status=TaskStatus(state=state), history=[message])

    for i in range(6):
        await store.create(task(i))
    # cold: t0-t3 (packed together), t4 (raw, in the open batch); t5 is the hot one
    assert store._rows["t0"][6] == 0 and store._rows["t4"][6] == -1  # index -1: raw JSON
    stored = await store.get("t4")  # read back: hot again (t5 goes cold, into the open batch)
    assert stored is not None and stored.task == task(4)
    await store.update(task(4, TaskState.FAILED), expected_version=1)  # changed while open
    assert await store.delete("t5")  # deleted while open
    for i in range(6, 20):  # more cold tasks: the open batch (t4's, t5's) gets packed
        await store.create(task(i))
    assert store._rows["t7"][6] >= 0
    for i in range(20):
        stored = await store.get(f"t{i}")
        if i == 5:
            assert stored is None
            continue
        assert stored is not None
        expected = task(i, TaskState.FAILED if i == 4 else TaskState.COMPLETED)
        assert stored.task == expected, i
        assert stored.version == (2 if i == 4 else 1)


async def test_running_tasks_stay_models_whatever_their_number() -> None:
    """A submitted or working task is never cooled (encoded, then decoded at its next event):
    with more running tasks than ``hot``, every streamed event did both (bench/streams.py,
    issue #36). Once it ends it joins the ``hot`` most recent and cools as before."""
    from simple_a2a.protocol.models import Task, TaskState, TaskStatus
    from simple_a2a.storage.memory import MemoryTaskStore

    store = MemoryTaskStore(hot=2, pack_batch=2)

    def task(i: int, state: TaskState) -> Task:
        return Task(id=f"t{i}", context_id="c", status=TaskStatus(state=state))

    for i in range(10):
        await store.create(task(i, TaskState.WORKING))
    assert all(store._rows[f"t{i}"][5] is None for i in range(10))  # none encoded
    running = store._live["t0"]
    assert (await store.get("t0")).task is running  # the same object: not decoded again
    for i in range(10):
        await store.update(task(i, TaskState.COMPLETED), expected_version=1)
    assert not store._live and len(store._models) == 2  # ended: the LRU's again
    assert sum(store._rows[f"t{i}"][5] is not None for i in range(10)) == 8  # cooled
    for i in range(10):
        got = await store.get(f"t{i}")
        assert got is not None and got.task.status.state is TaskState.COMPLETED


async def test_record_keeps_a_replaced_event_logs_append() -> None:
    """``MemoryStorage.record`` writes without the stores' coroutines only for its own stores:
    an event log put in their place (a subclass that counts, mirrors, ...) or a store method
    wrapped on the instance (tests/server/test_snapshots.py) is still called."""
    from simple_a2a.protocol._base import trusted
    from simple_a2a.protocol.models import Task, TaskState, TaskStatus
    from simple_a2a.protocol.requests import StreamResponse
    from simple_a2a.storage.memory import MemoryEventLog

    appended: list[str] = []

    class Counting(MemoryEventLog):
        async def append(self, task_id: str, event: StreamResponse) -> int:
            appended.append(task_id)
            return await super().append(task_id, event)

    storage = MemoryStorage()
    storage.events = Counting()
    task = Task(id="t1", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    await storage.record(task, trusted(StreamResponse, task=task), expected_version=None)
    working = task.model_copy(update={"metadata": {"n": 1}})
    version, seq = await storage.record(
        working, trusted(StreamResponse, task=working), expected_version=1
    )
    assert (version, seq) == (2, 2)
    assert appended == ["t1", "t1"]
    assert (await storage.events.read("t1", 0))[-1].event.task is working

    # a method wrapped on the instance of our own store class is called too
    storage = MemoryStorage()
    updated: list[int] = []
    update = storage.tasks.update

    async def wrapped(task: Task, *, expected_version: int, change: Any = None) -> int:
        updated.append(expected_version)
        return await update(task, expected_version=expected_version, change=change)

    storage.tasks.update = wrapped  # type: ignore[method-assign]
    await storage.record(task, trusted(StreamResponse, task=task), expected_version=None)
    await storage.record(working, trusted(StreamResponse, task=working), expected_version=1)
    assert updated == [1]
