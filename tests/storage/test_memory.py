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
    """The same contract when every finished task and log is packed at once (hot set of one)."""

    durable = False

    @pytest.fixture
    def make_storage(self) -> StorageFactory:
        def make(max_events_per_task: int = 10_000, **_: Any) -> Storage:
            storage = MemoryStorage(max_events_per_task=max_events_per_task)
            storage.tasks.hot = storage.events.hot = 1  # type: ignore[attr-defined]
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

    log = MemoryEventLog(hot=1)
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
    assert len(log._cold["t1"]) < sum(len(e.to_json()) for e in events)
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
