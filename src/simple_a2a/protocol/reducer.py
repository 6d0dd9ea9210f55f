"""Fold task events into the task (pure functions; the state machine is enforced here).

The server records each event in two places: the per-task event log (for streaming and replay)
and the task snapshot (for GetTask). This module computes the new snapshot from the old one and
the event, without mutating either, so a writer that lost a version race can simply re-apply.
"""

from __future__ import annotations

from ._base import replaced
from .models import (
    FINAL_STATES,
    Artifact,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from .requests import StreamResponse
from .states import check_artifact, check_transition


def apply_status(task: Task, status: TaskStatus, *, check: bool = True) -> Task:
    """The task after a status change; the status message (an agent turn) joins the history.

    ``check=False`` skips the state machine (a client folding what a server sent)."""
    if check:
        check_transition(task.status.state, status.state)
    history = task.history
    if status.message is not None and not any(
        m.message_id == status.message.message_id for m in history[-1:]
    ):
        history = [*history, status.message]
    return replaced(task, status=status, history=history)


def apply_artifact(task: Task, event: TaskArtifactUpdateEvent, *, check: bool = True) -> Task:
    """Add, replace or extend (``append``) the artifact with the event's artifact id."""
    if check:
        check_artifact(task.status.state)
    incoming = event.artifact
    artifact_id = incoming.artifact_id
    artifacts = list(task.artifacts)
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == artifact_id:
            artifacts[index] = _extend(existing, incoming) if event.append else incoming
            break
    else:
        artifacts.append(incoming)
    return replaced(task, artifacts=artifacts)


def _plain_text(part: Part) -> bool:
    return part.text is not None and part.metadata is None and part.filename is None


def _extend(existing: Artifact, chunk: Artifact) -> Artifact:
    """Append a chunk's content. Adjacent plain text parts of one media type are joined, so a
    text streamed word by word is one text part in the task, not one part per word."""
    parts = list(existing.parts)
    for part in chunk.parts:
        last = parts[-1] if parts else None
        if (
            last is not None
            and _plain_text(last)
            and _plain_text(part)
            and last.media_type == part.media_type
        ):
            parts[-1] = replaced(last, text=f"{last.text}{part.text}")
        else:
            parts.append(part)
    # The common chunk (a token of text, issue #36) has none of metadata, name, description:
    # one copy with the parts alone, without an update dict built and unpacked.
    metadata, name, description = chunk.metadata, chunk.name, chunk.description
    if not metadata and name is None and description is None:
        return replaced(existing, parts=parts)
    update: dict[str, object] = {"parts": parts}
    if metadata:
        update["metadata"] = {**(existing.metadata or {}), **metadata}
    if name is not None:
        update["name"] = name
    if description is not None:
        update["description"] = description
    # ``replaced`` is model_copy for values that are already valid, without pydantic's generic
    # ``__copy__``: this runs for every streamed chunk (bench/streams.py, issue #36).
    return replaced(existing, **update)


def apply_message(task: Task, message: Message) -> Task:
    """A client's follow-up message joins the history."""
    return replaced(task, history=[*task.history, message])


def apply_event(task: Task, event: StreamResponse, *, check: bool = True) -> Task:
    """The task after one stream event (a Task event replaces the snapshot)."""
    # The oneof's fields read from the model's dict (every field is there: validated or
    # ``trusted``), not ``isinstance`` against the payload's class: a pydantic model class is an
    # ABC, and a miss goes through ABCMeta's instance check (an artifact update, every streamed
    # chunk, missed the status update's class first).
    d = event.__dict__
    update = d["artifact_update"]
    if update is not None:
        return apply_artifact(task, update, check=check)
    status_update = d["status_update"]
    if status_update is not None:
        return apply_status(task, status_update.status, check=check)
    message = d["message"]
    if message is not None:
        return apply_message(task, message)
    return event.payload  # type: ignore[return-value]  # (a Task; or raises: empty)


def is_final_event(event: StreamResponse, until: frozenset[TaskState] = FINAL_STATES) -> bool:
    """Does a task's stream end after this event of its log? At a state in ``until``: terminal
    or interrupted for SendStreamingMessage (spec §3.1.2, §11.7), terminal only for a
    SubscribeToTask subscription (§3.1.6). A message in a task's log is a history entry (a
    client's follow-up), never the end; a direct reply is not logged at all."""
    d = event.__dict__  # (every field is there: validated or ``trusted``)
    update = d["status_update"]
    if update is not None:
        return update.status.state in until
    task = d["task"]
    return task is not None and task.status.state in until
