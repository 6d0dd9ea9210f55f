"""Conformance of incremental updates (``TaskStore.update(change=...)``, issue #7).

Mixed into :class:`~.conformance.StorageConformance`, so every backend runs it. Whatever a
backend does with the hint, what it hands back must be exactly the task it was given, and the
version guard must hold for every kind of change.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simple_a2a.protocol.models import (
    Artifact,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.reducer import apply_event
from simple_a2a.protocol.requests import StreamResponse
from simple_a2a.protocol.states import InvalidTransitionError
from simple_a2a.server.tasks import TaskManager
from simple_a2a.storage import ConcurrentUpdateError, RecordStep, Storage, TaskChange, TaskQuery
from simple_a2a.storage.base import FULL_CHANGE


def _start(task_id: str) -> Task:
    return Task(
        id=task_id,
        context_id="ctx-inc",
        status=TaskStatus(state=TaskState.SUBMITTED),
        history=[Message.user("write me a poem ✓", message_id="u-1", task_id="t")],
        metadata={"z": 1, "a": [1.5, None]},
    )


def status(state: TaskState, text: str | None = None, n: int = 0) -> StreamResponse:
    message = None if text is None else Message.agent(text, message_id=f"s-{n}", task_id="t")
    return StreamResponse.of(
        TaskStatusUpdateEvent(
            task_id="t", context_id="ctx-inc", status=TaskStatus(state=state, message=message)
        )
    )


def chunk(artifact_id: str, *parts: Part, append: bool = True) -> StreamResponse:
    return StreamResponse.of(
        TaskArtifactUpdateEvent(
            task_id="t",
            context_id="ctx-inc",
            artifact=Artifact(artifact_id=artifact_id, parts=list(parts)),
            append=append,
        )
    )


def mixed_events() -> Iterator[StreamResponse]:
    """Every kind of event, in an order an agent could send them."""
    yield status(TaskState.WORKING, "on it", 1)
    yield chunk("a-1", Part.from_text("Roses "), append=False)
    for word in ("are ", "réd, ", "violets ", "are 🌍"):
        yield chunk("a-1", Part.from_text(word))
    yield chunk("a-2", Part.from_data({"zeta": 1, "alpha": [2.5, True]}), append=False)
    yield chunk("a-1", Part.from_text(" (signed)", metadata={"k": "v"}))
    yield StreamResponse.of(Message.user("shorter please", message_id="u-2", task_id="t"))
    yield status(TaskState.WORKING)  # no message: no history row
    yield chunk("a-1", Part.from_text("Roses."), append=False)  # replaced in place
    yield chunk("a-3", Part.from_raw(b"\x00\x01", media_type="application/octet-stream"))
    yield status(TaskState.INPUT_REQUIRED, "ok?", 2)
    yield status(TaskState.WORKING, "ok?", 2)  # the same message again: not re-added
    yield chunk("a-2", Part.from_text("tail"))
    yield status(TaskState.COMPLETED, "done", 3)


class IncrementalUpdateConformance:
    """Incremental updates: each kind, mixed sequences, the version guard."""

    async def _drive(
        self, storage: Storage, task_id: str, *, hinted: bool
    ) -> list[tuple[Task, TaskChange]]:
        task = _start(task_id)
        await storage.tasks.create(task, owner="ann")
        seen: list[tuple[Task, TaskChange]] = []
        version = 1
        for event in mixed_events():
            after = apply_event(task, event)
            change = TaskChange.for_event(event, task, after)
            version = await storage.tasks.update(
                after, expected_version=version, change=change if hinted else None
            )
            task = after
            stored = await storage.tasks.get(task_id)
            assert stored is not None
            assert (stored.version, stored.owner) == (version, "ann")
            assert stored.task.to_json() == task.to_json(), change
            seen.append((task, change))
        return seen

    async def test_every_change_kind_round_trips(self, storage: Storage) -> None:
        seen = await self._drive(storage, "inc", hinted=True)
        kinds = {change.kind for _, change in seen}
        assert kinds == {"status", "artifact", "history"}
        assert {c.appended for _, c in seen if c.kind == "status"} == {0, 1}
        final = seen[-1][0]
        assert [a.artifact_id for a in final.artifacts] == ["a-1", "a-2", "a-3"]
        assert final.artifacts[0].parts[0].text == "Roses."
        assert [m.message_id for m in final.history] == ["u-1", "s-1", "u-2", "s-2", "s-3"]

    async def test_incremental_matches_a_full_rewrite_twin(self, storage: Storage) -> None:
        await self._drive(storage, "inc", hinted=True)
        await self._drive(storage, "twin", hinted=False)
        inc, twin = await storage.tasks.get("inc"), await storage.tasks.get("twin")
        assert inc is not None and twin is not None and inc.version == twin.version
        assert inc.task.model_copy(update={"id": "twin"}).to_json() == twin.task.to_json()
        page = await storage.tasks.list(TaskQuery(context_id="ctx-inc"))
        listed = {s.task.id: s.task.to_json() for s in page.tasks}
        assert listed == {"inc": inc.task.to_json(), "twin": twin.task.to_json()}

    async def test_full_rewrite_after_incremental_drops_surplus_rows(
        self, storage: Storage
    ) -> None:
        seen = await self._drive(storage, "inc", hinted=True)
        final, version = seen[-1][0], len(seen) + 1
        smaller = final.model_copy(
            update={"artifacts": final.artifacts[1:2], "history": final.history[:1]}
        )
        for change in (FULL_CHANGE, None):
            version = await storage.tasks.update(smaller, expected_version=version, change=change)
            stored = await storage.tasks.get("inc")
            assert stored is not None and stored.task.to_json() == smaller.to_json()
        # a Task event replaces the snapshot: for_event says "full"
        event = StreamResponse.of(final)
        assert TaskChange.for_event(event, smaller, final) == FULL_CHANGE
        await storage.tasks.update(final, expected_version=version, change=FULL_CHANGE)
        stored = await storage.tasks.get("inc")
        assert stored is not None and stored.task.to_json() == final.to_json()

    @pytest.mark.parametrize("index", [0, 1, 6, 7])  # status+message, artifact, message, status
    async def test_version_guard_holds_for_incremental_updates(
        self, storage: Storage, index: int
    ) -> None:
        task = _start("g")
        events = list(mixed_events())
        for event in events[:index]:
            task = apply_event(task, event)
        await storage.tasks.create(task)  # version 1, with what the earlier events made
        before = await storage.tasks.get("g")
        assert before is not None
        after = apply_event(task, events[index])
        change = TaskChange.for_event(events[index], task, after)
        assert change.kind != "full"
        for wrong in (0, 2):
            with pytest.raises(ConcurrentUpdateError):
                await storage.tasks.update(after, expected_version=wrong, change=change)
        stored = await storage.tasks.get("g")
        assert stored is not None and stored.version == 1
        assert stored.task.to_json() == before.task.to_json()  # nothing was written
        with pytest.raises(KeyError):
            await storage.tasks.update(
                after.model_copy(update={"id": "ghost"}), expected_version=1, change=change
            )
        assert await storage.tasks.update(after, expected_version=1, change=change) == 2
        stored = await storage.tasks.get("g")
        assert stored is not None and stored.task.to_json() == after.to_json()

    async def test_an_inconsistent_hint_falls_back_to_a_full_write(self, storage: Storage) -> None:
        task = _start("h")
        await storage.tasks.create(task)
        after = apply_event(task, chunk("a-1", Part.from_text("x"), append=False))
        for version, change in enumerate(
            (TaskChange("artifact", artifact_id="nope"), TaskChange("history", appended=99)), 1
        ):
            await storage.tasks.update(after, expected_version=version, change=change)
            stored = await storage.tasks.get("h")
            assert stored is not None and stored.task.to_json() == after.to_json()

    async def test_deleted_task_leaves_no_rows_behind(self, storage: Storage) -> None:
        await self._drive(storage, "inc", hinted=True)
        assert await storage.tasks.delete("inc") is True
        fresh = _start("inc").model_copy(update={"history": []})
        await storage.tasks.create(fresh)
        stored = await storage.tasks.get("inc")
        assert stored is not None and stored.task.to_json() == fresh.to_json()

    async def test_task_manager_records_incrementally(self, storage: Storage) -> None:
        manager = TaskManager(storage)
        task = _start("m")
        await manager.create(task, owner=None)
        for event in mixed_events():
            task = apply_event(task, event)
            recorded, _ = await manager.record("m", event)
            assert recorded.to_json() == task.to_json()
        stored = await storage.tasks.get("m")
        assert stored is not None and stored.task.to_json() == task.to_json()
        assert [s.task.to_json() for s in await storage.tasks.active_tasks()] == []

    async def test_record_steps_writes_every_step_in_order(self, storage: Storage) -> None:
        """``Storage.record_steps``: consecutive events with their snapshots and change hints;
        versions count one per step, seqs follow the log."""
        task = _start("rs")
        await storage.record(task, StreamResponse(task=task), expected_version=None, owner="ann")
        steps = []
        for event in mixed_events():
            after = apply_event(task, event)
            steps.append(RecordStep(after, event, TaskChange.for_event(event, task, after)))
            task = after
        seqs = await storage.record_steps(steps, expected_version=1)
        assert seqs == list(range(2, 2 + len(steps)))
        stored = await storage.tasks.get("rs")
        assert stored is not None
        assert (stored.version, stored.owner) == (1 + len(steps), "ann")
        assert stored.task.to_json() == task.to_json()
        logged = await storage.events.read("rs", 1)
        assert [e.event for e in logged] == [step.event for step in steps]

    async def test_record_steps_refused_by_the_version_guard_writes_nothing(
        self, storage: Storage
    ) -> None:
        if not storage.atomic_steps:
            pytest.skip("a backend without atomic steps writes them one by one")
        task = _start("rg")
        await storage.record(task, StreamResponse(task=task), expected_version=None)
        events = [status(TaskState.WORKING, "on it", 1), chunk("a", Part.from_text("x"))]
        steps, before = [], task
        for event in events:
            after = apply_event(before, event)
            steps.append(RecordStep(after, event, TaskChange.for_event(event, before, after)))
            before = after
        with pytest.raises(ConcurrentUpdateError):
            await storage.record_steps(steps, expected_version=4)
        await storage.record(steps[0].task, steps[0].event, expected_version=1)  # another writer
        with pytest.raises(ConcurrentUpdateError):  # the batch was computed from version 1
            await storage.record_steps(steps, expected_version=1)
        assert await storage.events.last_seq("rg") == 2
        stored = await storage.tasks.get("rg")
        assert stored is not None and stored.version == 2
        assert stored.task.to_json() == steps[0].task.to_json()

    async def test_task_manager_records_several_events_at_once(self, storage: Storage) -> None:
        """``TaskManager.record_all``: the events applied in turn, one write where the backend
        can; an illegal event among them (the state machine) writes none of them."""
        manager = TaskManager(storage)
        seen: list[int] = []

        async def hook(task_id: str, seq: int, event: StreamResponse, task: Task) -> None:
            seen.append(seq)

        manager.hooks.append(hook)
        task = _start("ra")
        await manager.create(task, owner=None)
        events = list(mixed_events())
        for event in events:
            task = apply_event(task, event)
        recorded, seq = await manager.record_all("ra", events)
        assert recorded.to_json() == task.to_json() and seq == 1 + len(events)
        assert seen == list(range(1, 2 + len(events)))  # each event notified with its seq
        with pytest.raises(InvalidTransitionError):  # completed: no more artifacts
            await manager.record_all(
                "ra", [status(TaskState.WORKING), chunk("b", Part.from_text("y"))]
            )
        assert await storage.events.last_seq("ra") == 1 + len(events)
        stored = await storage.tasks.get("ra")
        assert stored is not None and stored.task.to_json() == task.to_json()
