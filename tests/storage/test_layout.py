"""The SQL backends' task layout (``storage/_layout.py``): a core document plus rows that
reassemble into the very task that was written, byte for byte."""

from __future__ import annotations

from datetime import datetime, timezone

from simple_a2a.protocol.models import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from simple_a2a.storage._common import task_row
from simple_a2a.storage._layout import assemble, core_doc, full_plan


def _task(artifacts: int, history: int) -> Task:
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(
            state=TaskState.WORKING,
            timestamp=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc),
            message=Message(message_id="s", role=Role.AGENT, parts=[Part.text("busy")]),
        ),
        artifacts=[
            Artifact(artifact_id=f"a{i}", parts=[Part.text(f"chunk {i}")]) for i in range(artifacts)
        ],
        history=[
            Message(message_id=f"m{i}", role=Role.USER, parts=[Part.text(f"hi {i}")])
            for i in range(history)
        ],
        metadata={"k": [1, 2]},
    )


def test_core_doc_is_the_task_without_its_lists() -> None:
    for artifacts, history in ((0, 0), (2, 0), (0, 3), (2, 3)):
        task = _task(artifacts, history)
        emptied = task.model_copy(update={"artifacts": [], "history": []})
        assert core_doc(task) == emptied.to_json().decode()
        assert '"artifacts"' not in core_doc(task) and '"history"' not in core_doc(task)


def test_core_and_rows_reassemble_the_task_byte_for_byte() -> None:
    for artifacts, history in ((0, 0), (2, 0), (0, 3), (2, 3)):
        task = _task(artifacts, history)
        plan = full_plan(task)
        stored = assemble(
            core_doc(task),
            3,
            "alice",
            [doc for _, _, doc in plan.artifacts],
            [doc for _, doc in plan.history],
        )
        assert stored.task.to_json() == task.to_json()
        assert (stored.version, stored.owner) == (3, "alice")


def test_task_row_has_the_indexed_columns() -> None:
    row = task_row(_task(1, 1))
    assert (row.id, row.context_id, row.state) == ("t-1", "c-1", "TASK_STATE_WORKING")
    assert row.ts == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)  # ms precision
