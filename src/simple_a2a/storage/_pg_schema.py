"""The PostgreSQL schema: :func:`migrations`, the ordered steps ``schema_version`` counts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._conversations import postgres_migration as conversations_migration
from ._layout import split_doc
from ._leases import postgres_migration
from ._pg_layout import TaskSQL
from ._queue import postgres_migration as queue_migration

if TYPE_CHECKING:
    import asyncpg  # type: ignore[import-untyped,import-not-found,unused-ignore]

#: A schema step: a statement, or a function given the connection and the quoted schema.
Step = str | Callable[["asyncpg.Connection", str], Awaitable[None]]


def migrations(s: str) -> tuple[tuple[Step, ...], ...]:
    """The ordered schema steps for the quoted schema ``s``. Append, never edit."""
    return (
        (
            f"""CREATE TABLE {s}.tasks (
                id text PRIMARY KEY,
                context_id text,
                state text NOT NULL,
                ts timestamptz NOT NULL,
                owner text,
                version integer NOT NULL,
                doc json NOT NULL)""",
            f"CREATE INDEX tasks_by_time ON {s}.tasks (ts, id)",
            f"CREATE INDEX tasks_by_state ON {s}.tasks (state, ts, id)",
            f"CREATE INDEX tasks_by_context ON {s}.tasks (context_id, ts, id)",
            f"CREATE INDEX tasks_by_owner ON {s}.tasks (owner, ts, id)",
            f"""CREATE TABLE {s}.events (
                task_id text NOT NULL,
                seq bigint NOT NULL,
                doc json NOT NULL,
                PRIMARY KEY (task_id, seq))""",
            f"""CREATE TABLE {s}.event_seqs (
                task_id text PRIMARY KEY,
                last_seq bigint NOT NULL)""",
            f"""CREATE TABLE {s}.push_configs (
                task_id text NOT NULL,
                id text NOT NULL,
                n bigint GENERATED ALWAYS AS IDENTITY,
                doc json NOT NULL,
                PRIMARY KEY (task_id, id))""",
        ),
        (  # 2: the push outbox (one delivery cursor per task and webhook config)
            f"""CREATE TABLE {s}.push_cursors (
                task_id text NOT NULL,
                config_id text NOT NULL,
                delivered_seq bigint,
                state text NOT NULL CHECK (state IN ('active', 'suspended', 'done')),
                failures integer NOT NULL,
                last_error text,
                updated_at timestamptz,
                PRIMARY KEY (task_id, config_id))""",
            f"CREATE INDEX push_cursors_pending ON {s}.push_cursors (task_id, config_id)"
            " WHERE state = 'active'",
        ),
        (  # 3: artifacts and history in rows of their own (see ``_layout``)
            f"""CREATE TABLE {s}.task_artifacts (
                task_id text NOT NULL,
                position integer NOT NULL,
                artifact_id text NOT NULL,
                doc json NOT NULL,
                PRIMARY KEY (task_id, position))""",
            f"""CREATE TABLE {s}.task_history (
                task_id text NOT NULL,
                position integer NOT NULL,
                doc json NOT NULL,
                PRIMARY KEY (task_id, position))""",
            _split_documents,
        ),
        postgres_migration(s),  # 4: leases (which replica runs a task or delivers a push)
        conversations_migration(s),  # 5: adapters' conversation state (``_conversations``)
        queue_migration(s),  # 6: the work queue (tasks waiting for a worker, ``_queue``)
    )


async def _split_documents(conn: asyncpg.Connection, s: str) -> None:
    """Migration 3: move the artifacts and history out of every stored task document."""
    sql = TaskSQL(s)
    rows = await conn.fetch(
        f"SELECT id, doc FROM {s}.tasks"
        " WHERE doc->'artifacts' IS NOT NULL OR doc->'history' IS NOT NULL"
    )
    for task_id, doc in rows:
        core, plan = split_doc(doc)
        await conn.execute(f"UPDATE {s}.tasks SET doc = $2::json WHERE id = $1", task_id, core)
        await conn.execute(sql.rows, task_id, *sql.row_args(plan))
