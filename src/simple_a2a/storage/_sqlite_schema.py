"""The SQLite schema: :data:`MIGRATIONS`, the ordered steps ``PRAGMA user_version`` counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ._conversations import SQLITE_MIGRATION as CONVERSATIONS_MIGRATION
from ._leases import SQLITE_MIGRATION
from ._queue import SQLITE_MIGRATION as QUEUE_MIGRATION
from ._sqlite_layout import split_documents

Conn = sqlite3.Connection

#: A schema step: a statement, or a function run in the migration's transaction.
Step = str | Callable[[Conn], None]

#: Ordered schema steps; ``PRAGMA user_version`` counts those applied. Append, never edit.
MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    (
        """CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            context_id TEXT,
            state TEXT NOT NULL,
            ts INTEGER NOT NULL,
            owner TEXT,
            version INTEGER NOT NULL,
            doc TEXT NOT NULL)""",
        "CREATE INDEX tasks_by_time ON tasks (ts, id)",
        "CREATE INDEX tasks_by_state ON tasks (state, ts, id)",
        "CREATE INDEX tasks_by_context ON tasks (context_id, ts, id)",
        "CREATE INDEX tasks_by_owner ON tasks (owner, ts, id)",
        """CREATE TABLE events (
            task_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            doc TEXT NOT NULL,
            PRIMARY KEY (task_id, seq))""",
        """CREATE TABLE push_configs (
            task_id TEXT NOT NULL,
            id TEXT NOT NULL,
            doc TEXT NOT NULL,
            PRIMARY KEY (task_id, id))""",
    ),
    (  # 2: the push outbox (one delivery cursor per task and webhook config)
        """CREATE TABLE push_cursors (
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            delivered_seq INTEGER,
            state TEXT NOT NULL CHECK (state IN ('active', 'suspended', 'done')),
            failures INTEGER NOT NULL,
            last_error TEXT,
            updated_at INTEGER,
            PRIMARY KEY (task_id, config_id))""",
        "CREATE INDEX push_cursors_pending ON push_cursors (task_id, config_id)"
        " WHERE state = 'active'",
    ),
    (  # 3: artifacts and history in rows of their own (see ``_layout``)
        """CREATE TABLE task_artifacts (
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            artifact_id TEXT NOT NULL,
            doc TEXT NOT NULL,
            PRIMARY KEY (task_id, position)) WITHOUT ROWID""",
        """CREATE TABLE task_history (
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            doc TEXT NOT NULL,
            PRIMARY KEY (task_id, position)) WITHOUT ROWID""",
        split_documents,
    ),
    SQLITE_MIGRATION,  # 4: leases (which process runs a task or delivers a push config)
    CONVERSATIONS_MIGRATION,  # 5: adapters' conversation state (``_conversations``)
    QUEUE_MIGRATION,  # 6: the work queue (tasks waiting for a worker, ``_queue``)
    (  # 7: events appended by anyone, counted (``_sqlite_db``: foreign appends told apart)
        """CREATE TABLE event_appends (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            count INTEGER NOT NULL)""",
        "INSERT INTO event_appends (id, count) VALUES (1, 0)",
        """CREATE TRIGGER events_appended AFTER INSERT ON events
            BEGIN UPDATE event_appends SET count = count + 1 WHERE id = 1; END""",
    ),
)
