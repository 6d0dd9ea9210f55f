"""The SQLite statements of the task layout (``_layout``): artifacts and history rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from ._layout import WritePlan, assemble, group_docs, split_doc
from .base import StoredTask

Conn = sqlite3.Connection

_ART_UPSERT = (
    "INSERT INTO task_artifacts (task_id, position, artifact_id, doc) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (task_id, position) DO UPDATE"
    " SET artifact_id = excluded.artifact_id, doc = excluded.doc"
)
_HIST_UPSERT = (
    "INSERT INTO task_history (task_id, position, doc) VALUES (?, ?, ?)"
    " ON CONFLICT (task_id, position) DO UPDATE SET doc = excluded.doc"
)


def write_rows(conn: Conn, task_id: str, plan: WritePlan) -> None:
    """Upsert the plan's artifact and history rows (and drop the surplus of a full rewrite)."""
    if plan.full:
        sql = "DELETE FROM task_artifacts WHERE task_id = ? AND position >= ?"
        conn.execute(sql, (task_id, plan.artifact_count))
        sql = "DELETE FROM task_history WHERE task_id = ? AND position >= ?"
        conn.execute(sql, (task_id, plan.history_count))
    # One row (an artifact chunk, a message) through execute: executemany costs more per call.
    artifacts, history = plan.artifacts, plan.history
    if len(artifacts) == 1:
        conn.execute(_ART_UPSERT, (task_id, *artifacts[0]))
    elif artifacts:
        conn.executemany(_ART_UPSERT, [(task_id, *row) for row in artifacts])
    if len(history) == 1:
        conn.execute(_HIST_UPSERT, (task_id, *history[0]))
    elif history:
        conn.executemany(_HIST_UPSERT, [(task_id, *row) for row in history])


def split_documents(conn: Conn) -> None:
    """Migration 3: move the artifacts and history out of every stored task document."""
    rows = conn.execute(
        "SELECT id, doc FROM tasks WHERE json_extract(doc, '$.artifacts') IS NOT NULL"
        " OR json_extract(doc, '$.history') IS NOT NULL"
    ).fetchall()
    for task_id, doc in rows:
        core, plan = split_doc(doc)
        conn.execute("UPDATE tasks SET doc = ? WHERE id = ?", (core, task_id))
        write_rows(conn, task_id, plan)


def _children(conn: Conn, table: str, ids: list[str]) -> dict[str, list[str]]:
    """The documents of ``table`` rows of these tasks, grouped by task, in position order."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT task_id, doc FROM {table} WHERE task_id IN ({marks})"
        found.update(group_docs(conn.execute(f"{sql} ORDER BY task_id, position", chunk)))
    return found


def assemble_rows(
    conn: Conn, rows: list[Any], known: Mapping[str, StoredTask] | None = None
) -> list[StoredTask]:
    """Stored tasks from ``(id, core, version, owner)`` rows (one snapshot: same transaction).
    A row at the version of a snapshot in ``known`` (read before, by id) is that snapshot: its
    child rows are not read and no model is built (``(id, version)`` names one content)."""
    same: dict[str, StoredTask] = {}
    if known:
        for tid, _doc, version, _owner in rows:
            stored = known.get(tid)
            if stored is not None and stored.version == version:
                same[tid] = stored
    ids = [row[0] for row in rows if row[0] not in same]
    artifacts = _children(conn, "task_artifacts", ids)
    history = _children(conn, "task_history", ids)
    return [
        same[tid]
        if tid in same
        else assemble(doc, version, owner, artifacts.get(tid), history.get(tid))
        for tid, doc, version, owner in rows
    ]
