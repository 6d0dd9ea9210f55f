"""The memory stores' per-task tables stay out of the garbage collector's sight (issue #19).

A tracked dict with a row per stored task made every collection walk it: over HTTP at 100,000
tasks, ~13 ms full passes and p99 2.75x p50, growing with the store (bench/README.md round 8).
These tests pin the property that fixed it, not a timing: the big dicts are untracked.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from simple_a2a.protocol.models import (
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.storage._untracked import FRESH_LIMIT, UntrackedTable
from simple_a2a.storage.memory import MemoryEventLog, MemoryTaskStore


@pytest.fixture
def collector_on() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.enable()
    yield
    if not enabled:
        gc.disable()


def test_the_table_is_a_mapping() -> None:
    table: UntrackedTable[tuple[int, str]] = UntrackedTable()
    for i in range(3 * FRESH_LIMIT):
        table[f"k{i}"] = (i, "x")
    gc.collect()
    for i in range(0, 3 * FRESH_LIMIT, 7):  # rewrite some, settled or fresh
        table[f"k{i}"] = (-i, "y")
    assert len(table) == 3 * FRESH_LIMIT
    assert table["k7"] == (-7, "y") and table.get("k8") == (8, "x")
    assert "k9" in table and "nope" not in table and table.get("nope") is None
    with pytest.raises(KeyError):
        table["nope"]
    assert sorted(v[0] for v in table.values()) == sorted(
        -i if i % 7 == 0 else i for i in range(3 * FRESH_LIMIT)
    )
    assert table.pop("k7") == (-7, "y") and table.pop("k8") == (8, "x")
    assert table.pop("k7") is None and table.pop("k7", (0, "d")) == (0, "d")
    assert len(table) == 3 * FRESH_LIMIT - 2 and "k7" not in table


def _task(i: int, state: TaskState) -> Task:
    message = Message(message_id=f"m{i}", role=Role.USER, parts=[Part.text(f"hello {i}")])
    return Task(id=f"t{i}", context_id=f"c{i}", status=TaskStatus(state=state), history=[message])


@pytest.mark.usefixtures("collector_on")
async def test_a_store_of_thousands_of_tasks_keeps_its_rows_untracked() -> None:
    store = MemoryTaskStore(hot=16, pack_batch=8)
    for i in range(4 * FRESH_LIMIT):
        await store.create(_task(i, TaskState.SUBMITTED))
        await store.update(_task(i, TaskState.COMPLETED), expected_version=1)
        if i % 50 == 0:
            gc.collect(0)  # what the collector does by itself every few hundred allocations
    gc.collect(0)
    assert len(store._rows) == 4 * FRESH_LIMIT
    assert not gc.is_tracked(store._rows._settled)
    assert len(store._rows._settled) >= 2 * FRESH_LIMIT
    assert len(store._rows._fresh) <= 2 * FRESH_LIMIT
    for i in range(0, 4 * FRESH_LIMIT, 97):  # cold rows (packed, or raw in an open batch)
        stored = await store.get(f"t{i}")
        assert stored is not None and stored.task == _task(i, TaskState.COMPLETED)


@pytest.mark.usefixtures("collector_on")
async def test_an_event_log_of_thousands_of_finished_tasks_keeps_its_cold_table_untracked() -> None:
    log = MemoryEventLog(hot=16, pack_batch=8)
    for i in range(4 * FRESH_LIMIT):
        final = TaskStatusUpdateEvent(
            task_id=f"t{i}", context_id="c", status=TaskStatus(state=TaskState.COMPLETED)
        )
        await log.append(f"t{i}", StreamResponse(task=_task(i, TaskState.SUBMITTED)))
        await log.append(f"t{i}", StreamResponse(status_update=final))
        if i % 50 == 0:
            gc.collect(0)
    gc.collect(0)
    assert not gc.is_tracked(log._cold._settled)
    assert len(log._cold) == 4 * FRESH_LIMIT - 16  # all but the hot ones
    events = await log.read("t5", 0)
    assert [e.seq for e in events] == [1, 2] and events[1].event.status_update is not None


def test_with_the_collector_off_values_settle_anyway() -> None:
    """Nothing untracks a tuple while the collector is off: the table must not grow its fresh
    dict without end (nor look at it on every write)."""
    table: UntrackedTable[tuple[int, str]] = UntrackedTable()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(5 * FRESH_LIMIT):
            table[f"k{i}"] = (i, "x")
        assert len(table._fresh) <= FRESH_LIMIT and len(table) == 5 * FRESH_LIMIT
    finally:
        if enabled:
            gc.enable()


def test_with_automatic_collection_off_by_threshold_values_settle_anyway() -> None:
    """``gc.set_threshold(0)`` also stops automatic collection (the collector stays enabled)."""
    table: UntrackedTable[tuple[int, str]] = UntrackedTable()
    thresholds = gc.get_threshold()
    gc.set_threshold(0)
    try:
        for i in range(5 * FRESH_LIMIT):
            table[f"k{i}"] = (i, "x")
        assert len(table._fresh) <= FRESH_LIMIT and len(table) == 5 * FRESH_LIMIT
    finally:
        gc.set_threshold(*thresholds)
