"""The threads and connections of one SQLite file, and its group commit.

Writes. Every write of this process is batched into shared transactions (group commit, see
:meth:`_Database.write`). By default (``loop_writes``) a batch is the writes of one event-loop
iteration, committed on the loop itself at the end of it: in WAL mode with ``synchronous =
NORMAL`` a commit appends to the WAL in the OS's page cache and syncs nothing, so it costs a few
tens of microseconds, less than handing the batch to a thread and back (measured: a third of
SendMessage's CPU on SQLite, most of it futex and GIL hand-offs, issue #19). What could block
the loop is kept off it: that connection never waits for a lock (``busy_timeout = 0``; a file
locked by another process sends the batch to the writer thread, which waits) and never
checkpoints (``wal_autocheckpoint = 0``; the writer thread checkpoints, with its fsync, every
:data:`WAL_CHECKPOINT_BYTES` of WAL). With ``loop_writes=False`` (a slow or network file system)
every batch goes to the one writer thread, as all did before.

Reads run on a few reader threads, a connection each (WAL: readers never block the writer nor
each other). ``sqlite.py`` has the schema and the stores.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ._sqlite_schema import Conn, Step
from .base import StorageError

T = TypeVar("T")

_Outcomes = list[tuple["asyncio.Future[Any]", Any, "BaseException | None"]]
#: A committed batch: its outcomes, and the file's count of appended events (``event_appends``,
#: bumped by a trigger for every writer's insert) when it began and when it committed.
_Committed = tuple[_Outcomes, int, int]
_Batch = list[tuple[Callable[[Conn], Any], "asyncio.Future[Any]"]]

#: The WAL size at which the writer thread checkpoints (SQLite's own default: 1,000 pages).
WAL_CHECKPOINT_BYTES = 4 * 1024 * 1024
_LOCKED = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (named in sqlite3 only from Python 3.11)
_APPENDS = "SELECT count FROM event_appends"


def _appends(conn: Conn) -> int:
    return int(conn.execute(_APPENDS).fetchone()[0])


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


class _Busy(Exception):
    """The loop's connection found the file's write lock held (by another process)."""


def _locked(exc: sqlite3.OperationalError) -> bool:
    """SQLite answered busy or locked (the code is named from Python 3.11; the text before)."""
    return getattr(exc, "sqlite_errorcode", None) in _LOCKED or "locked" in str(exc)


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
        self,
        path: str,
        readers: int,
        busy_timeout: float,
        migrations: Sequence[Sequence[Step]],
        *,
        loop_writes: bool = True,
    ) -> None:
        self.path = path
        self.loop_writes = loop_writes
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
        # Writes on the event loop (``loop_writes``, see :meth:`write`): their connection,
        # the writes of this loop iteration, and whether a checkpoint is on its way.
        self._loop_conn: Conn | None = None
        self._queued: _Batch = []
        self._flush_queued = False
        self._checkpointing = False
        self._wal = f"{path}-wal"
        # Appends by other connections (:meth:`foreign_appends`): the file's count of appended
        # events where this process last accounted for it (the end of its last batch, or a
        # check), the ``data_version`` of that check, and how many times others were found.
        self._appends = 0
        self._version: int | None = None
        self._foreign = 0

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
            mode = self._journal_mode_wal(conn)
            if str(mode).lower() != "wal":
                raise StorageError(f"{self.path}: cannot switch to WAL mode (got {mode})")
            self._migrate(conn)
            self._appends = _appends(conn)
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
        if self.loop_writes:
            loop_conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            # Never wait on the loop: a file locked by another process sends the batch to the
            # writer thread, which waits (busy_timeout). Checkpoints (fsync) run there too.
            loop_conn.execute("PRAGMA busy_timeout = 0")
            loop_conn.execute("PRAGMA synchronous = NORMAL")
            loop_conn.execute("PRAGMA wal_autocheckpoint = 0")
            self._loop_conn = loop_conn

    def _journal_mode_wal(self, conn: Conn) -> str:
        """Switch to WAL, waiting out another process opening the same new file meanwhile:
        SQLite answers that switch busy without calling the busy handler (seen in CI: two
        replicas starting on one file)."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

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
        loop_conn, self._loop_conn = self._loop_conn, None
        if loop_conn is not None:  # on the loop, which is the only user of this connection
            self._flush_on(loop_conn, writer)  # the writes of this iteration, not lost
            loop_conn.close()

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
        """Run ``fn`` atomically; its result comes once it is committed.

        Group commit: the writes of one loop iteration (``_queued``) are committed together on
        the loop at its end (:meth:`_flush`); while the writer thread has writes of ours (the
        file was locked, or ``loop_writes=False``), new ones queue behind them in ``_pending``
        and the thread commits all it finds in one transaction. Either way one ``BEGIN
        IMMEDIATE`` transaction serves a whole batch (:meth:`_commit`). ``fn`` may run twice
        (a replayed batch): it must touch nothing but the connection and its own locals.
        """
        writer, _ = self._executors()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._loop_conn is not None and not self._draining:
            self._queued.append((fn, future))
            if not self._flush_queued:
                self._flush_queued = True
                loop.call_soon(self._flush)
        else:
            self._to_writer([(fn, future)], writer, loop)
        result: T = await future
        return result

    def _to_writer(
        self, batch: _Batch, writer: ThreadPoolExecutor, loop: asyncio.AbstractEventLoop
    ) -> None:
        with self._lock:
            self._pending.extend(batch)
            start = not self._draining
            self._draining = True
        if start:
            writer.submit(self._drain, loop)

    def _flush(self) -> None:
        """On the loop, once per iteration that wrote: this iteration's writes, committed."""
        self._flush_queued = False
        if self._loop_conn is not None and self._writer is not None:
            self._flush_on(self._loop_conn, self._writer)

    def _flush_on(self, conn: Conn, writer: ThreadPoolExecutor) -> None:
        batch, self._queued = self._queued, []
        if not batch:
            return
        loop = asyncio.get_running_loop()
        if self._draining:  # the writer thread has writes of ours: these go after them
            self._to_writer(batch, writer, loop)
            return
        try:
            outcomes = self._commit(conn, batch, on_loop=True)
        except _Busy:  # another process holds the file's write lock: the thread waits for it
            self._to_writer(batch, writer, loop)
            return
        _settle(outcomes)
        if not self._checkpointing and _size(self._wal) >= WAL_CHECKPOINT_BYTES:
            self._checkpointing = True
            writer.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        """The writer thread: copy the WAL into the file (the loop's connection never does).

        TRUNCATE, not PASSIVE: a passive checkpoint running beside the loop's commits never
        catches up with them, and the WAL is rewound only after one that did, so it grew
        without end (RESTART too, now and then, in tests). TRUNCATE holds new writes back
        while it runs (the loop's next batch finds the file busy and comes here, behind it)
        and empties the WAL file.
        """
        conn = self._writer_conn
        try:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):  # busy past busy_timeout: next time
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._checkpointing = False

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """The writer thread: commit batches of pending writes until none is left."""
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._draining = False
                    return
            outcomes = self._commit(self._writer_conn, batch)
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(_settle, outcomes)

    def _commit(self, conn: Conn | None, batch: _Batch, *, on_loop: bool = False) -> _Outcomes:
        """One transaction for the batch; a write that raises is undone alone.

        Optimistic: the batch runs first without savepoints (two statements fewer per write,
        and nearly every write succeeds). If one raises, the whole transaction is rolled back
        and the batch runs again with a savepoint around each write, so that only the failing
        ones are undone; the writes are functions of the connection alone, so running one
        again after the rollback does the same as running it once. ``on_loop``: a write lock that
        another connection holds raises :class:`_Busy` (nothing was run), not a failed batch.
        """
        try:
            assert conn is not None, "the SQLite writer connection is closed"
            committed = self._optimistic(conn, batch, on_loop)
            if committed is None:  # a write raised: replay, a savepoint each
                committed = self._isolated(conn, batch, on_loop)
            outcomes, before, after = committed
            # Events appended since this process's last batch were appended by another
            # connection (the batches of this process never overlap: the loop's or the writer
            # thread's). Counted here, inside the write lock, not by the poll: the count this
            # batch leaves includes them, and the poll compares with that (``foreign_appends``).
            if before != self._appends:
                self._foreign += 1
            self._appends = after
            return outcomes
        except BaseException as exc:  # the transaction itself failed: none of the batch is stored
            if conn is not None and conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, _Busy):
                raise
            return [(future, None, exc) for _, future in batch]

    @staticmethod
    def _begin(conn: Conn, on_loop: bool) -> int:
        """BEGIN IMMEDIATE; the file's count of appended events as the batch starts."""
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if on_loop and _locked(exc):
                raise _Busy() from exc
            raise
        return _appends(conn)

    @staticmethod
    def _end(conn: Conn, outcomes: _Outcomes, before: int) -> _Committed:
        after = _appends(conn)
        conn.execute("COMMIT")
        return outcomes, before, after

    @classmethod
    def _optimistic(cls, conn: Conn, batch: _Batch, on_loop: bool = False) -> _Committed | None:
        """The batch without savepoints; None (all rolled back) if a write of several raised."""
        outcomes: _Outcomes = []
        before = cls._begin(conn, on_loop)
        for fn, future in batch:
            try:
                outcomes.append((future, fn(conn), None))
            except Exception as exc:
                conn.execute("ROLLBACK")
                if len(batch) > 1:
                    return None
                return [(future, None, exc)], before, before  # (nothing of ours appended)
        return cls._end(conn, outcomes, before)

    @classmethod
    def _isolated(cls, conn: Conn, batch: _Batch, on_loop: bool = False) -> _Committed:
        """The batch with a savepoint around each write: one that raises is undone alone."""
        outcomes: _Outcomes = []
        before = cls._begin(conn, on_loop)
        for fn, future in batch:
            conn.execute("SAVEPOINT write")
            try:
                outcomes.append((future, fn(conn), None))
            except Exception as exc:  # this write is undone; the batch goes on
                conn.execute("ROLLBACK TO write")
                outcomes.append((future, None, exc))
            conn.execute("RELEASE write")
        return cls._end(conn, outcomes, before)

    async def read(
        self, fn: Callable[[Conn], T], *, snapshot: bool = False, point: bool = False
    ) -> T:
        """Run ``fn`` on a reader thread's connection (in one transaction if ``snapshot``).

        A ``point`` read (a few rows by primary key: GetTask) runs on the loop's connection
        when writes do (``loop_writes``): in WAL mode a reader takes no lock that a writer
        holds, and its pages are the ones recent writes left in the cache, so it costs less
        than the hand-off to a reader thread. If SQLite still answers busy (the WAL being
        reset by a checkpoint), the read goes to a reader thread.
        """
        loop_conn = self._loop_conn
        if point and loop_conn is not None:
            try:
                return self._read_on(loop_conn, fn, snapshot)
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise

        def run() -> T:
            conn: Conn | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self._connect()
                with self._lock:
                    self._reader_conns.append(conn)
            return self._read_on(conn, fn, snapshot)

        _, reader = self._executors()
        return await asyncio.get_running_loop().run_in_executor(reader, run)

    @staticmethod
    def _read_on(conn: Conn, fn: Callable[[Conn], T], snapshot: bool) -> T:
        if not snapshot:
            return fn(conn)
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            conn.execute("COMMIT")

    async def foreign_appends(self) -> int:
        """Grows whenever another connection (another process too) appends events: the marker
        of ``wait``'s poll (``ChangeNotifier``).

        ``PRAGMA data_version`` alone cannot tell another process from this one's writer
        thread: its commits (batches that found the file busy) and its checkpoints (TRUNCATE
        rewinds the WAL) move it too, and each move woke every follower to read its task
        again (500 streams: 4-8 times per 20 chunks, issue #36). So a move is only the cue to
        read the file's count of appended events (``event_appends``, bumped by a trigger for
        every writer): other connections appended iff it differs from the count this process
        last accounted for (its last batch's, which also compares on its own, or this check's).
        Asked of the connection this process writes with: on the loop when writes run there
        (no lock waited for), else on the writer thread, where no batch runs meanwhile."""
        if self._loop_conn is not None:
            if self._draining:
                # The writer thread is committing batches of ours: its count and ours may be a
                # commit apart (a wake-up for nothing). Checked at a poll after it is done;
                # meanwhile its batches compare on their own.
                return self._foreign
            return self._foreign_on(self._loop_conn)

        def run() -> int:
            assert self._writer_conn is not None
            return self._foreign_on(self._writer_conn)

        writer, _ = self._executors()
        return await asyncio.get_running_loop().run_in_executor(writer, run)

    def _foreign_on(self, conn: Conn) -> int:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self._version = version
            # (Had a batch of the writer thread committed meanwhile, this count could differ
            # from the one it leaves: a wake-up for nothing, never one missed, as a value
            # stored here is one the file held, and whatever others appended before it was
            # counted here or by that batch.)
            count = _appends(conn)
            if count != self._appends:
                self._appends = count
                self._foreign += 1
        return self._foreign
