"""The newest events this process appended, per task, as objects: a stream's follower reads them
from here instead of from the database (issue #36).

A streaming request follows its task's event log (``TaskManager.follow``): after each append it
wakes, asks whether there is more (``last_seq``) and reads it (``read``). On SQLite each of
those was a hop to a reader thread plus decoding the event's JSON back into a model; on
PostgreSQL a round trip each. Measured in process, 200 tasks x 20 chunks with one follower each:
memory 68 us of CPU per chunk, SQLite 296, PostgreSQL 531. The events a follower wants are
nearly always the ones this very process has just written, so the SQL event logs keep the last
:data:`PER_TASK` of them per task here and answer from here when they can.

Correct with other writers (replicas, other processes on one SQLite file): a task's run here is
only ever a *contiguous* range of seqs, each with the event committed at that seq (added after
the commit, never before). ``read(after)`` is answered here only when ``after + 1`` is in the
run — what it returns is then exactly what the database holds for those seqs; anything else
(an older cursor, events appended elsewhere) goes to the database. An append whose seq does not
follow the run (another process appended in between) starts a new run; one that settles after a
later one of this process (seq below the run's end) is left to the database.

A caught-up follower (``after`` is the run's end) is answered "nothing newer" without the
database only while the run is *confirmed*: the epoch of the task (``ChangeNotifier.epoch``,
the foreign wake-ups so far) captured before the database last said the log ends there — this
process's commit of that seq (``add(..., epoch)``, captured before the write) or a read of the
last seq (``reader``) — is still the epoch now. ``ChangeNotifier``'s docstring argues why
that misses no other writer's append; a read that finds more than the run unconfirms it.
Measured (bench/notes-h-follow.md): a caught-up follower no longer reads the store per chunk.

Bounded: :data:`PER_TASK` events per task, :data:`TASKS` tasks (least recently appended
forgotten first); about 1-2 KiB per small event, so at most ~100 MiB at 4,096 busy tasks.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence

from ..protocol.requests import StreamResponse
from .base import LoggedEvent

#: events kept per task (a follower more than this behind reads the database)
PER_TASK = 16
#: tasks kept (the least recently appended forgotten first)
TASKS = 4096


class _Run(deque[LoggedEvent]):
    """A task's contiguous events, and the epoch captured before the database last confirmed
    that the log ends with them (None: not confirmed)."""

    __slots__ = ("confirmed",)

    def __init__(self, maxlen: int) -> None:
        super().__init__((), maxlen)
        self.confirmed: int | None = None


def _never(task_id: str) -> int | None:
    return None


class RecentEvents:
    def __init__(
        self,
        per_task: int = PER_TASK,
        tasks: int = TASKS,
        *,
        trimmed_to: int | None = None,
        epoch: Callable[[str], int | None] = _never,
    ) -> None:
        # never more than the log keeps (``max_events_per_task``): what is trimmed is not served
        self._per_task = per_task if trimmed_to is None else max(1, min(per_task, trimmed_to))
        self._tasks = tasks
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        #: the task's foreign wake-ups so far (``ChangeNotifier.epoch``)
        self.epoch = epoch

    def add(
        self,
        task_id: str,
        seqs: Sequence[int],
        events: Sequence[StreamResponse],
        epoch: int | None = None,
    ) -> None:
        """Events just committed at ``seqs`` (consecutive, ascending); ``epoch``: the task's,
        captured before the write (None: the run is not confirmed)."""
        run = self._runs.get(task_id)
        if run is not None and run and seqs[-1] <= run[-1].seq:
            return  # a write of this process that settled after a later one: the run is newer
        if run is None or not run or run[-1].seq + 1 != seqs[0]:
            run = self._runs[task_id] = _Run(self._per_task)
        else:
            self._runs.move_to_end(task_id)
        run.extend(LoggedEvent(seq, event) for seq, event in zip(seqs, events, strict=True))
        run.confirmed = epoch
        if len(self._runs) > self._tasks:
            self._runs.popitem(last=False)

    def caught_up(self, task_id: str, after: int) -> bool:
        """True when the log provably ends at ``after`` but for wake-ups still to come (the run
        ends there and is confirmed at the current epoch: module docstring)."""
        run = self._runs.get(task_id)
        if run is None or not run or run[-1].seq != after or run.confirmed is None:
            return False
        return run.confirmed == self.epoch(task_id)

    def read(self, task_id: str, after: int, limit: int | None) -> list[LoggedEvent] | None:
        """The events after ``after`` as the database holds them, or None: ask the database."""
        run = self._runs.get(task_id)
        if run is None or not run or not run[0].seq <= after + 1 <= run[-1].seq:
            return [] if self.caught_up(task_id, after) else None
        start = after + 1 - run[0].seq
        stop = len(run) if limit is None else min(len(run), start + limit)
        return [run[i] for i in range(start, stop)]

    def newer_than(self, task_id: str, after: int) -> bool:
        """True when this process committed an event of the task after ``after``."""
        run = self._runs.get(task_id)
        return run is not None and bool(run) and run[-1].seq > after

    def reader(
        self, last_seq: Callable[[str], Awaitable[int]]
    ) -> Callable[[str, int, bool], Awaitable[int]]:
        """``last_seq`` for the waiters (``ChangeNotifier.wait``), made once per event log
        (not a closure per wait): a waiter at ``after`` is answered without the database when
        this process appended later than ``after``, or, if ``trusted``, when it is
        :meth:`caught_up`."""

        async def known_or_read(task_id: str, after: int, trusted: bool) -> int:
            if self.newer_than(task_id, after):
                # the seq this process committed last: the database holds at least that much
                # (a lower bound that any waiter of the task may compare with its own ``after``)
                return self._runs[task_id][-1].seq
            if trusted and self.caught_up(task_id, after):
                return after
            epoch = self.epoch(task_id)  # before the read: what it confirms holds from here
            seq = await last_seq(task_id)
            self._confirm(task_id, seq, epoch)
            return seq

        return known_or_read

    def _confirm(self, task_id: str, seq: int, epoch: int | None) -> None:
        """The database said the log ends at ``seq`` (read after ``epoch`` was captured)."""
        run = self._runs.get(task_id)
        if run is None or not run:
            return
        if seq > run[-1].seq:
            run.confirmed = None  # another writer appended: its wake-up may be on its way
        elif seq == run[-1].seq and epoch is not None:
            run.confirmed = epoch if run.confirmed is None else max(run.confirmed, epoch)

    def forget(self, task_id: str) -> None:
        self._runs.pop(task_id, None)
