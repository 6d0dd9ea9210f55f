"""The PostgreSQL statements of the task layout (``_layout``): one statement per operation.

Every write is a single statement (one round trip, atomic on its own): a ``core`` CTE writes
the ``tasks`` row under the version guard, and the artifact and history rows are written by
CTEs that read ``core``, so they write nothing when the guard fails. The ``*_logged`` variants
also append the event of the change to the task's log and notify (unless an event
fan-out signals instead), gated on ``core`` the same
way: a task change and its event in one round trip, without BEGIN and COMMIT (issue #19). Reads
fetch the core row with both lists aggregated in position order
(``array_agg(doc::text ORDER BY position)``).
"""

from __future__ import annotations

from typing import Any

from ._layout import WritePlan


def event_ctes(s: str, doc: int, gate: str = "") -> str:
    """CTEs ``counter`` and ``ins`` appending an event (``$1`` the task id, ``$doc`` its JSON)
    to the log of schema ``s``; ``ins`` returns its seq. ``gate`` (``" FROM core"``) appends
    only if that CTE returned a row: not even the counter moves otherwise."""
    return (
        f"counter AS (INSERT INTO {s}.event_seqs AS c (task_id, last_seq) SELECT $1, 1{gate}"
        " ON CONFLICT (task_id) DO UPDATE SET last_seq = c.last_seq + 1 RETURNING last_seq),"
        f" ins AS (INSERT INTO {s}.events (task_id, seq, doc)"
        f" SELECT $1, last_seq, ${doc}::json FROM counter RETURNING seq)"
    )


def notifying(channel: int | None) -> str:
    """The join that ``pg_notify``-s the task id (``$1``) on channel ``$channel`` once per row
    of the statement's answer (one: the appended event's); nothing for ``None`` (an event
    fan-out signals instead: ``fanout.py``)."""
    if channel is None:
        return ""
    return f" CROSS JOIN LATERAL (SELECT pg_notify(${channel}, $1)) AS n"


class TaskSQL:
    """The statements for the schema ``s`` (already quoted); the ``*_logged`` ones notify
    unless ``notify`` is false (then they take one parameter less)."""

    def __init__(self, s: str, notify: bool = True) -> None:
        art = f"{s}.task_artifacts"
        hist = f"{s}.task_history"

        def aggregate(table: str) -> str:
            return (
                f"(SELECT array_agg(c.doc::text ORDER BY c.position) FROM {table} c"
                " WHERE c.task_id = tasks.id)"
            )

        #: ``id, core doc, version, owner, artifact docs, history docs``.
        self.columns = f"id, doc, version, owner, {aggregate(art)}, {aggregate(hist)}"
        self.get = f"SELECT {self.columns} FROM {s}.tasks WHERE id = $1"
        # The same, for a task whose version $2 the store knows (its RecentTasks): at that
        # version only the version comes back, the documents are neither aggregated nor sent.
        unless = "CASE WHEN version = $2 THEN NULL ELSE {} END".format
        self.get_unless = (
            f"SELECT id, {unless('doc')}, version, owner, {unless(aggregate(art))},"
            f" {unless(aggregate(hist))} FROM {s}.tasks WHERE id = $1"
        )

        def children(k: int) -> str:
            """CTEs writing the rows of :meth:`row_args` bound from ``$k``; ``$1`` is the id."""
            return (
                f"art AS (INSERT INTO {art} (task_id, position, artifact_id, doc)"
                f" SELECT $1, u.p, u.i, u.d::json FROM core,"
                f" unnest(${k}::int[], ${k + 1}::text[], ${k + 2}::text[]) AS u(p, i, d)"
                " ON CONFLICT (task_id, position) DO UPDATE"
                " SET artifact_id = excluded.artifact_id, doc = excluded.doc),"
                f" hist AS (INSERT INTO {hist} (task_id, position, doc)"
                f" SELECT $1, u.p, u.d::json FROM core,"
                f" unnest(${k + 3}::int[], ${k + 4}::text[]) AS u(p, d)"
                " ON CONFLICT (task_id, position) DO UPDATE SET doc = excluded.doc),"
                f" art_cut AS (DELETE FROM {art} WHERE task_id = $1"
                f" AND position >= ${k + 5}::int AND EXISTS (SELECT FROM core)),"
                f" hist_cut AS (DELETE FROM {hist} WHERE task_id = $1"
                f" AND position >= ${k + 6}::int AND EXISTS (SELECT FROM core))"
            )

        def logged(statement: str, k: int) -> str:
            """``statement`` that also appends the event ``$k`` and notifies channel ``$k+1``;
            answers ``(version, seq)``, or no row when the guard refused the write."""
            notify_join = notifying(k + 1 if notify else None)
            return (
                f"{statement}, {event_ctes(s, k, ' FROM core')}"
                f" SELECT core.version, ins.seq FROM core, ins{notify_join}"
            )

        guard = "WHERE id = $1 AND version = $2 RETURNING version)"
        only = " SELECT version FROM core"
        #: ``$1`` id, ``$2`` expected version, rows from ``$3``: bump the version only.
        bump = f"WITH core AS (UPDATE {s}.tasks SET version = version + 1 {guard}, {children(3)}"
        self.bump, self.bump_logged = bump + only, logged(bump, 10)
        #: As :attr:`bump`, and ``$10..$13`` context id, state, ts, core doc.
        update = (
            f"WITH core AS (UPDATE {s}.tasks SET context_id = $10, state = $11, ts = $12,"
            f" doc = $13::json, version = version + 1 {guard}, {children(3)}"
        )
        self.update, self.update_logged = update + only, logged(update, 14)
        #: ``$1..$6`` id, context id, state, ts, owner, core doc; rows from ``$7``.
        create = (
            f"WITH core AS (INSERT INTO {s}.tasks (id, context_id, state, ts, owner, version, doc)"
            " VALUES ($1, $2, $3, $4, $5, 1, $6::json) ON CONFLICT (id) DO NOTHING"
            f" RETURNING version), {children(7)}"
        )
        self.create, self.create_logged = create + only, logged(create, 14)
        #: ``$1`` id, rows from ``$2`` (no version guard: the layout migration).
        self.rows = f"WITH core AS (SELECT 1 AS version), {children(2)}" + only
        self.delete = (
            f"WITH t AS (DELETE FROM {s}.tasks WHERE id = $1 RETURNING 1),"
            f" a AS (DELETE FROM {art} WHERE task_id = $1),"
            f" h AS (DELETE FROM {hist} WHERE task_id = $1)"
            " SELECT count(*) FROM t"
        )

    @staticmethod
    def row_args(plan: WritePlan) -> tuple[Any, ...]:
        """The seven values the ``children`` CTEs bind."""
        return (
            [p for p, _, _ in plan.artifacts],
            [i for _, i, _ in plan.artifacts],
            [d for _, _, d in plan.artifacts],
            [p for p, _ in plan.history],
            [d for _, d in plan.history],
            plan.artifact_count if plan.full else None,
            plan.history_count if plan.full else None,
        )
