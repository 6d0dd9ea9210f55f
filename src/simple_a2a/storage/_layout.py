"""How the SQL backends lay one task over rows, so that an event rewrites only what it changed.

A task is stored as

- a **core** row in ``tasks``: the indexed columns plus the task's JSON *without* its artifacts
  and history (``Task.to_json()`` of the task with both lists empty: small, whatever the size
  of the task);
- one row per artifact in ``task_artifacts`` ``(task_id, position, artifact_id, doc)``;
- one row per history message in ``task_history`` ``(task_id, position, doc)``.

A :class:`~.base.TaskChange` hint turns an update into a :class:`WritePlan`: a status change
rewrites the small core row (and inserts the status message, if it joined the history), an
artifact chunk rewrites that artifact's row and bumps the core row's version, a message inserts
one history row. Reading reassembles the task: the core, then both lists parsed from their rows'
JSON; every document is exact ``to_json()`` text, so the task round-trips byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from ..protocol.models import Artifact, Message, Task
from .base import StoredTask, TaskChange, TaskPage

_ARTIFACTS: TypeAdapter[list[Artifact]] = TypeAdapter(list[Artifact])
_HISTORY: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


_CORE_EXCLUDE = {"artifacts", "history"}


def core_doc(task: Task) -> str:
    """The task's JSON without its artifacts and history (the same text as the task with both
    lists empty: empty lists are omitted from JSON), without copying the task first."""
    serializer = task.__pydantic_serializer__
    doc = serializer.to_json(task, by_alias=True, exclude_none=True, exclude=_CORE_EXCLUDE)
    return doc.decode()


@dataclass(frozen=True)
class WritePlan:
    """The rows one update writes.

    ``core``: rewrite the core row's document and indexed columns (else only its version).
    ``artifacts`` ``(position, artifact_id, doc)`` and ``history`` ``(position, doc)`` rows are
    upserted. ``full``: the lists were rewritten whole, so rows at positions
    ``>= artifact_count`` / ``>= history_count`` are deleted.
    """

    core: bool
    full: bool
    artifacts: list[tuple[int, str, str]] = field(default_factory=list)
    history: list[tuple[int, str]] = field(default_factory=list)
    artifact_count: int = 0
    history_count: int = 0


def full_plan(task: Task) -> WritePlan:
    return WritePlan(
        core=True,
        full=True,
        artifacts=[(i, a.artifact_id, a.to_json().decode()) for i, a in enumerate(task.artifacts)],
        history=[(i, m.to_json().decode()) for i, m in enumerate(task.history)],
        artifact_count=len(task.artifacts),
        history_count=len(task.history),
    )


def _appended(task: Task, count: int) -> list[tuple[int, str]]:
    start = len(task.history) - count
    return [(start + i, m.to_json().decode()) for i, m in enumerate(task.history[start:])]


def write_plan(task: Task, change: TaskChange | None) -> WritePlan:
    """The rows to write for ``task`` given what changed (everything when unsure)."""
    if change is None or change.kind == "full":
        return full_plan(task)
    if not 0 <= change.appended <= len(task.history):
        return full_plan(task)
    if change.kind == "status":
        return WritePlan(core=True, full=False, history=_appended(task, change.appended))
    if change.kind == "history":
        return WritePlan(core=False, full=False, history=_appended(task, change.appended))
    if change.kind == "artifact":
        for position, artifact in enumerate(task.artifacts):
            if artifact.artifact_id == change.artifact_id:
                doc = artifact.to_json().decode()
                return WritePlan(
                    core=False, full=False, artifacts=[(position, artifact.artifact_id, doc)]
                )
    return full_plan(task)


def assemble(
    core: str | bytes,
    version: int,
    owner: str | None,
    artifacts: Sequence[str] | None = None,
    history: Sequence[str] | None = None,
) -> StoredTask:
    """A stored task from its core document and its rows' documents (in position order)."""
    task = Task.from_json(core)
    update: dict[str, Any] = {}
    if artifacts:
        update["artifacts"] = _ARTIFACTS.validate_json("[" + ",".join(artifacts) + "]")
    if history:
        update["history"] = _HISTORY.validate_json("[" + ",".join(history) + "]")
    if update:
        task = task.model_copy(update=update)
    return StoredTask(task, int(version), owner)


def group_docs(rows: Iterable[Sequence[Any]]) -> dict[str, list[str]]:
    """``{task_id: [doc, ...]}`` from ``(task_id, doc)`` rows ordered by task and position."""
    grouped: dict[str, list[str]] = {}
    for task_id, doc in rows:
        grouped.setdefault(task_id, []).append(doc)
    return grouped


def assembled_page(
    rows: Sequence[Sequence[Any]],
    artifacts: dict[str, list[str]],
    history: dict[str, list[str]],
    total: int,
    limit: int,
) -> TaskPage:
    """A ListTasks page from ``(id, core, version, owner)`` rows fetched with ``limit + 1``."""
    limit = max(limit, 0)
    tasks = [
        assemble(doc, version, owner, artifacts.get(task_id), history.get(task_id))
        for task_id, doc, version, owner in rows[:limit]
    ]
    return TaskPage(tasks, int(total), len(rows) > limit)


def split_doc(doc: str | bytes) -> tuple[str, WritePlan]:
    """A legacy whole-task document as (core document, rows): the layout migration's step."""
    task = Task.from_json(doc)
    return core_doc(task), full_plan(task)
