"""Which PostgreSQL sessions are this storage's own: a NOTIFY names the backend that sent it.

The LISTEN connection hears every append of the schema, this process's own included. An own
append needs no wake-up from it (``PostgresEventLog.appended`` woke this process's waiters
already), and must not count as *another* writer's: that would move the task's epoch
(``ChangeNotifier.notify_foreign``) and send every caught-up follower to the database after each
chunk, the per-chunk read that issue #36 takes away. So the pool's ``init`` records each
connection's backend pid, and a notification from one of them is dropped.

A pid is forgotten when its connection closes (asyncpg's termination listener). Were a pid ever
taken for another replica's session before that, its notifications would be missed as a lost
NOTIFY is: a waiter's re-check every ``poll_interval`` reads the database.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


class OwnSessions:
    def __init__(self) -> None:
        self.pids: set[int] = set()
        #: called with the task id of another session's notification
        self.on_foreign: Callable[[str], None] | None = None

    def pool_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` for ``asyncpg.create_pool`` whose ``init`` (the caller's too) records the
        pid of each new connection."""
        user_init: Callable[[Any], Awaitable[None]] | None = options.get("init")
        pids = self.pids

        async def init(conn: Any) -> None:
            pid = conn.get_server_pid()
            pids.add(pid)
            conn.add_termination_listener(lambda _conn: pids.discard(pid))
            if user_init is not None:
                await user_init(conn)

        return {**options, "init": init}

    def notified(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        """The LISTEN callback: the payload is the appended task's id."""
        if pid not in self.pids and self.on_foreign is not None:
            self.on_foreign(payload)
