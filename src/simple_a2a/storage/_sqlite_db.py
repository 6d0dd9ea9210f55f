"""The threads and connections of one SQLite file, and its group commit.

The stdlib driver blocks, so no statement runs on the event loop: one writer thread owns the
only writing connection (every write of this process goes through it, batched into shared
transactions: see :meth:`_Database.write`), a few reader threads own a connection each (WAL:
readers never block the writer nor each other). ``sqlite.py`` has the schema and the stores.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ._sqlite_schema import Conn, Step
from .base import StorageError

T = TypeVar("T")

_Outcomes = list[tuple["asyncio.Future[Any]", Any, "BaseException | None"]]
_Batch = list[tuple[Callable[[Conn], Any], "asyncio.Future[Any]"]]


def _settle(outcomes: _Outcomes) -> None:
    """On the event loop: hand each write of a committed (or failed) batch its outcome."""
    for future, result, exc in outcomes:
        if future.cancelled():
            continue
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)


class _Database:
    """The threads and connections of one SQLite file (see the module docstring)."""

    def __init__(
        self, path: str, readers: int, busy_timeout: float, migrations: Sequence[Sequence[Step]]
    ) -> None:
        self.path = path
        self.migrations = migrations
        self.readers = max(1, readers)
        self.busy_timeout_ms = int(busy_timeout * 1000)
        self._writer: ThreadPoolExecutor | None = None
        self._reader: ThreadPoolExecutor | None = None
        self._writer_conn: Conn | None = None
        self._reader_conns: list[Conn] = []
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opening = asyncio.Lock()
        self._pending: _Batch = []
        self._draining = False  # a _drain is queued or running on the writer thread

    def _connect(self) -> Conn:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    async def open(self) -> None:
        async with self._opening:  # two concurrent open() calls set up once
            await self._open()

    async def _open(self) -> None:
        if self._writer is not None:
            return
        writer = ThreadPoolExecutor(1, thread_name_prefix="a2a-sqlite-writer")
        try:
            await asyncio.get_running_loop().run_in_executor(writer, self._open_writer)
        except BaseException:
            writer.shutdown(wait=False)
            raise
        self._writer = writer
        self._reader = ThreadPoolExecutor(self.readers, thread_name_prefix="a2a-sqlite-reader")
        self._local = threading.local()

    def _open_writer(self) -> None:
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        conn = self._connect()
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StorageError(f"{self.path}: cannot switch to WAL mode (got {mode})")
            self._migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise StorageError(
                f"{self.path}: cannot write to this SQLite file ({exc}); the server stores "
                "every task there, so check the file's and its folder's permissions and the disk"
            ) from exc
        except BaseException:
            conn.close()
            raise
        self._writer_conn = conn

    def _migrate(self, conn: Conn) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > len(self.migrations):
                raise StorageError(
                    f"{self.path}: schema version {version} is newer than this library knows "
                    f"({len(self.migrations)}); upgrade simple-a2a"
                )
            for statements in self.migrations[version:]:
                for statement in statements:
                    if isinstance(statement, str):
                        conn.execute(statement)
                    else:
                        statement(conn)
            # Written even when nothing migrated: a file that cannot be written (read-only, a
            # full disk) is refused here, at open(), not at the first task.
            conn.execute(f"PRAGMA user_version = {len(self.migrations)}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        writer, reader = self._writer, self._reader
        if writer is None:
            return
        self._writer = self._reader = None

        def shutdown() -> None:
            writer.shutdown(wait=True)
            if reader is not None:
                reader.shutdown(wait=True)
            with self._lock:
                conns, self._reader_conns = self._reader_conns, []
            if self._writer_conn is not None:
                conns.append(self._writer_conn)
                self._writer_conn = None
            for conn in conns:
                conn.close()

        await asyncio.to_thread(shutdown)

    def _executors(self) -> tuple[ThreadPoolExecutor, ThreadPoolExecutor]:
        if self._writer is None or self._reader is None:
            raise StorageError(f"SQLite storage {self.path!r} is not open; call open() first")
        return self._writer, self._reader

    async def write(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn`` atomically on the writer thread; its result comes once it is committed.

        Group commit: writes that arrive while the writer is busy wait in ``_pending`` and the
        writer runs all of them in one ``BEGIN IMMEDIATE`` transaction (see :meth:`_commit`).
        One transaction, one thread hop and one wake-up of the event loop then serve a whole
        batch instead of one write. ``fn`` may run twice (a replayed batch): it must touch
        nothing but the connection and its own locals.
        """
        writer, _ = self._executors()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            self._pending.append((fn, future))
            start = not self._draining
            self._draining = True
        if start:
            writer.submit(self._drain, loop)
        result: T = await future
        return result

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """The writer thread: commit batches of pending writes until none is left."""
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._draining = False
                    return
            outcomes = self._commit(batch)
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(_settle, outcomes)

    def _commit(self, batch: _Batch) -> _Outcomes:
        """One transaction for the batch; a write that raises is undone alone.

        Optimistic: the batch runs first without savepoints (two statements fewer per write,
        and nearly every write succeeds). If one raises, the whole transaction is rolled back
        and the batch runs again with a savepoint around each write, so that only the failing
        ones are undone; the writes are functions of the connection alone, so running one
        again after the rollback does the same as running it once.
        """
        conn = self._writer_conn
        try:
            assert conn is not None, "the SQLite writer connection is closed"
            outcomes = self._optimistic(conn, batch)
            if outcomes is None:  # a write raised: replay, a savepoint each
                outcomes = self._isolated(conn, batch)
            return outcomes
        except BaseException as exc:  # the transaction itself failed: none of the batch is stored
            if conn is not None and conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            return [(future, None, exc) for _, future in batch]

    @staticmethod
    def _optimistic(conn: Conn, batch: _Batch) -> _Outcomes | None:
        """The batch without savepoints; None (all rolled back) if a write of several raised."""
        outcomes: _Outcomes = []
        conn.execute("BEGIN IMMEDIATE")
        for fn, future in batch:
            try:
                outcomes.append((future, fn(conn), None))
            except Exception as exc:
                conn.execute("ROLLBACK")
                return [(future, None, exc)] if len(batch) == 1 else None
        conn.execute("COMMIT")
        return outcomes

    @staticmethod
    def _isolated(conn: Conn, batch: _Batch) -> _Outcomes:
        """The batch with a savepoint around each write: one that raises is undone alone."""
        outcomes: _Outcomes = []
        conn.execute("BEGIN IMMEDIATE")
        for fn, future in batch:
            conn.execute("SAVEPOINT write")
            try:
                outcomes.append((future, fn(conn), None))
            except Exception as exc:  # this write is undone; the batch goes on
                conn.execute("ROLLBACK TO write")
                outcomes.append((future, None, exc))
            conn.execute("RELEASE write")
        conn.execute("COMMIT")
        return outcomes

    async def read(self, fn: Callable[[Conn], T], *, snapshot: bool = False) -> T:
        """Run ``fn`` on a reader thread's connection (in one transaction if ``snapshot``)."""

        def run() -> T:
            conn: Conn | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self._connect()
                with self._lock:
                    self._reader_conns.append(conn)
            if not snapshot:
                return fn(conn)
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")

        _, reader = self._executors()
        return await asyncio.get_running_loop().run_in_executor(reader, run)

    async def data_version(self) -> int:
        """Changes whenever another connection (another process too) commits."""

        def run() -> int:
            assert self._writer_conn is not None
            return int(self._writer_conn.execute("PRAGMA data_version").fetchone()[0])

        writer, _ = self._executors()
        return await asyncio.get_running_loop().run_in_executor(writer, run)
