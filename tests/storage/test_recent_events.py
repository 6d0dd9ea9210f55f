"""``RecentEvents`` (storage/_recent.py): the events a process appended, served to its own
followers only when they are exactly what the database holds (issue #36)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from simple_a2a.protocol.models import TaskState, TaskStatus, TaskStatusUpdateEvent
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.storage._recent import RecentEvents
from simple_a2a.storage.sqlite import SQLiteStorage


def event(n: int) -> StreamResponse:
    status = TaskStatus(state=TaskState.WORKING)
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=status, metadata={"n": n}
        )
    )


def test_only_a_contiguous_run_is_served() -> None:
    recent = RecentEvents(per_task=4, tasks=2)
    recent.add("t", [1, 2, 3], [event(1), event(2), event(3)])
    assert [e.seq for e in recent.read("t", 1, None) or []] == [2, 3]
    assert [e.seq for e in recent.read("t", 0, 1) or []] == [1]
    assert recent.read("t", 3, None) is None  # nothing newer known: ask the database
    assert recent.newer_than("t", 2) and not recent.newer_than("t", 3)
    recent.add("t", [5], [event(5)])  # seq 4 was appended elsewhere: a new run
    assert recent.read("t", 3, None) is None and [
        e.seq for e in recent.read("t", 4, None) or []
    ] == [5]
    recent.add("t", [6, 7, 8, 9], [event(n) for n in (6, 7, 8, 9)])
    assert recent.read("t", 4, None) is None  # fell out of the window of 4
    recent.add("u", [1], [event(1)])
    recent.add("v", [1], [event(1)])  # 2 tasks at most: t (least recent) is forgotten
    assert recent.read("t", 8, None) is None and recent.read("v", 0, None) is not None
    recent.forget("v")
    assert recent.read("v", 0, None) is None


async def test_a_second_process_s_appends_are_read_from_the_file(tmp_path: Path) -> None:
    """Two storages on one file (as two processes): each follower sees every event, in order,
    whoever appended it."""
    a, b = SQLiteStorage(tmp_path / "t.db"), SQLiteStorage(tmp_path / "t.db")
    await a.open()
    await b.open()
    try:
        assert await a.events.append("t", event(1)) == 1
        assert await b.events.append("t", event(2)) == 2
        assert await a.events.append("t", event(3)) == 3
        for store in (a, b):
            seen = await store.events.read("t", 0)
            assert [(e.seq, e.event.status_update.metadata) for e in seen] == [
                (n, {"n": n}) for n in (1, 2, 3)
            ]
        assert [e.seq for e in await a.events.read("t", 1)] == [2, 3]  # 2 is not a's own
        assert await asyncio.wait_for(a.events.wait("t", 2, 1.0), 2)
        await a.events.delete("t")
        assert await a.events.read("t", 0) == []
    finally:
        await a.close()
        await b.close()
