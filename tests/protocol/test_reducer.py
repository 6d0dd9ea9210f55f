"""The reducer's fold of each kind of event, pinned as data (its fast paths must not change it)."""

from __future__ import annotations

from typing import Any

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
from simple_a2a.protocol.states import TaskTerminalError


def working(**fields: Any) -> Task:
    status = TaskStatus(state=TaskState.WORKING)
    return Task(id="t", context_id="c", status=status, **fields)


def update(artifact: Artifact, append: bool | None = None) -> StreamResponse:
    event = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact, append=append)
    return StreamResponse.of(event)


def test_chunks_of_plain_text_join_and_the_rest_appends_or_merges() -> None:
    first = Artifact(artifact_id="a", name="n", metadata={"k": 1}, parts=[Part.text("a ")])
    task = apply_event(working(), update(first))
    chunks = [
        Artifact(artifact_id="a", parts=[Part.text("b ")]),
        Artifact(artifact_id="a", parts=[Part.text("c", media_type="text/x")]),
        Artifact(artifact_id="a", parts=[Part.text("d"), Part.data({"x": 1})]),
        Artifact(artifact_id="a", description="d", metadata={"j": 2}, parts=[Part.text("e")]),
        Artifact(artifact_id="a", name="m", parts=[Part.text("f", metadata={"p": 1})]),
    ]
    for chunk in chunks:
        task = apply_event(task, update(chunk, append=True))
    assert task.to_dict()["artifacts"] == [
        {
            "artifactId": "a",
            "name": "m",
            "description": "d",
            "metadata": {"k": 1, "j": 2},
            "parts": [
                {"text": "a b "},
                {"text": "c", "mediaType": "text/x"},
                {"text": "d"},
                {"data": {"x": 1}},
                {"text": "e"},
                {"text": "f", "metadata": {"p": 1}},
            ],
        }
    ]


def test_an_artifact_without_append_replaces_its_id_or_is_added() -> None:
    task = working(artifacts=[Artifact(artifact_id="a", parts=[Part.text("old")])])
    task = apply_event(task, update(Artifact(artifact_id="b", parts=[Part.text("b")])))
    task = apply_event(task, update(Artifact(artifact_id="a", parts=[Part.text("new")])))
    assert [(a.artifact_id, a.parts[0].text) for a in task.artifacts] == [("a", "new"), ("b", "b")]


def test_the_folded_task_is_a_new_object_and_the_old_one_is_unchanged() -> None:
    before = working(artifacts=[Artifact(artifact_id="a", parts=[Part.text("x")])])
    copy = before.model_copy(deep=True)
    after = apply_event(before, update(Artifact(artifact_id="a", parts=[Part.text("y")]), True))
    assert after.artifacts[0].parts[0].text == "xy"
    assert before == copy
    assert after.model_fields_set == before.model_fields_set | {"artifacts"}


def test_status_message_task_events_and_the_state_machine() -> None:
    task = working()
    reply = Message.agent("hi", task_id="t", context_id="c")
    done = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED, message=reply)
    )
    finished = apply_event(task, StreamResponse.of(done))
    assert finished.status.state is TaskState.COMPLETED
    assert [m.message_id for m in finished.history] == [reply.message_id]
    asked = Message.user("more", task_id="t", context_id="c")
    assert apply_event(task, StreamResponse.of(asked)).history == [asked]
    other = working(metadata={"x": 1})
    assert apply_event(task, StreamResponse.of(other)) is other
    with pytest.raises(TaskTerminalError):
        apply_event(finished, update(Artifact(artifact_id="a", parts=[Part.text("late")])))
