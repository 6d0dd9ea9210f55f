"""Event fan-out: a signal path between replicas other than PostgreSQL's NOTIFY (issue #34).

``PostgresStorage(dsn, fanout="redis://127.0.0.1:6379/0")``. Without a fan-out every append
statement also ``pg_notify``-s its task id, and NOTIFY serialises the commits of the whole
database (a global lock at commit): it is what limits a cluster's event rate. With one, the
append statements do not notify; after the commit the appending process *publishes*
``(task_id, seq)`` to the fan-out, and every other replica's fan-out reader wakes that replica's
waiters of the task (``ChangeNotifier.notify_foreign``), exactly as a NOTIFY would; a replica
skips its own messages (its appender woke its waiters already, and an own append must not look
like another writer's: ``_common.ChangeNotifier``, issue #36).

PostgreSQL stays the record: a message only says "look again", readers always read the events
from PostgreSQL. So a message lost, late or never sent (the engine down, a full buffer) only
leaves a waiter to its poll fallback (``poll_interval``), never loses an event; and an append
never waits for the engine nor fails because of it.

:class:`EventFanout` is the seam (one method to publish, a start and a close); :class:`RedisFanout`
is the one implementation, on Redis Streams with redis-py's asyncio client (``pip install
'simple-a2a[redis]'``, imported only when a fan-out starts).
"""

from __future__ import annotations

import abc
import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..protocol.logcontext import library_logger

__all__ = ["EventFanout", "RedisFanout", "fanout_from"]

log = library_logger("simple_a2a.storage.fanout")

#: what a reader calls: another replica appended to a task (wake its waiters), or messages may
#: have been missed (wake every waiter, each re-checks its own task)
OnTask = Callable[[str], None]
OnGap = Callable[[], None]


class EventFanout(abc.ABC):
    """Carries "task T has event seq N" from the appending replica to every replica."""

    @abc.abstractmethod
    async def start(self, topic: str, on_task: OnTask, on_gap: OnGap) -> None:
        """Begin delivering the messages published on ``topic`` (one per storage schema) to
        ``on_task``; call ``on_gap`` whenever messages may have been missed (at every
        (re)connection). Must not fail when the engine is unreachable: keep retrying."""

    @abc.abstractmethod
    def publish(self, task_id: str, seq: int) -> None:
        """After the commit of an append: tell the other replicas. Never blocks, never
        raises; a message that cannot be sent is dropped (the waiters poll)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop reading and publishing; idempotent."""

    def delivering(self) -> object:
        """A token that stays the same object while messages are read without a gap, None
        while they may not be (``ChangeNotifier``'s ``signal``: followers trust this process's
        appends only then). This default never vouches: followers read the database."""
        return None


class RedisFanout(EventFanout):
    """The fan-out on one Redis stream per storage schema (key ``stream`` or
    ``a2a_events.<schema>``).

    - publishing: :meth:`publish` only records ``task_id -> seq`` (the newest seq per task:
      appends to one task while a batch is on its way coalesce); one background task sends
      what has accumulated as one pipeline of ``XADD stream MAXLEN ~ maxlen * t <id> s <seq>``;
    - reading: one background task per replica loops on ``XREAD BLOCK`` from the last entry
      it saw (from the server's current time at each (re)connection).

    Redis unreachable, at start or later: one warning per outage, messages dropped (waiters
    fall back to polling), reconnection attempts with a back-off doubling from 0.1 s up to
    ``max_backoff`` (5 s); one info line when it is back.
    """

    def __init__(
        self,
        url: str,
        *,
        stream: str | None = None,
        maxlen: int = 10_000,
        max_backoff: float = 5.0,
        block_ms: int = 5_000,
    ) -> None:
        self.url = url
        self.stream = stream
        #: approximate (``~``) cap of the stream's length: it needs to hold only what readers
        #: have not read yet; 10,000 entries (~1 MB) is seconds at thousands of events/s
        self.maxlen = maxlen
        self.max_backoff = max_backoff
        self.block_ms = block_ms
        self._pending: dict[str, int] = {}
        self._wake: asyncio.Event | None = None  # made in start(): on the storage's loop
        self._publish_after = 0.0  # monotonic time before which publishing is not attempted
        self._tasks: list[asyncio.Task[None]] = []
        self._clients: list[Any] = []
        self._down = False
        #: tells this replica's own messages from the others' (``"o"`` of each entry)
        self._origin = uuid.uuid4().hex[:16].encode()
        self._reader_token: object = None  # see delivering(): replaced at each (re)connection

    # -- health: one warning per outage, shared by the reader and the publisher --

    def _went_down(self, what: str, exc: BaseException) -> None:
        if not self._down:
            self._down = True
            log.warning(
                "Redis fan-out %s unreachable (%s: %r); waiters poll until it is back",
                self.url_for_log,
                what,
                exc,
            )

    def _came_up(self) -> None:
        if self._down:
            self._down = False
            log.info("Redis fan-out %s reachable again", self.url_for_log)

    @property
    def url_for_log(self) -> str:
        """The URL without a password."""
        head, at, tail = self.url.rpartition("@")
        return f"{head.split('://')[0]}://***@{tail}" if at else self.url

    # -- the engine --

    async def start(self, topic: str, on_task: OnTask, on_gap: OnGap) -> None:
        if self._tasks:
            return
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError as exc:  # pragma: no cover - depends on the environment
            from .base import StorageError

            raise StorageError(
                "the Redis event fan-out needs redis-py: pip install 'simple-a2a[redis]'"
            ) from exc
        if self.stream is None:
            self.stream = topic
        # No retries inside redis-py: a failure goes straight to this class's back-off.
        common: dict[str, Any] = {"socket_connect_timeout": 2.0, "retry": Retry(NoBackoff(), 0)}
        writer = aioredis.Redis.from_url(self.url, socket_timeout=2.0, **common)
        # XREAD BLOCK holds its connection: a client of its own, whose timeout outlasts a block.
        reader = aioredis.Redis.from_url(
            self.url, socket_timeout=self.block_ms / 1000 + 5, **common
        )
        self._clients = [writer, reader]
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._publishing(writer)),
            loop.create_task(self._reading(reader, on_task, on_gap)),
        ]

    def publish(self, task_id: str, seq: int) -> None:
        if self._wake is None or time.monotonic() < self._publish_after:
            return  # not started, or Redis down: nothing to wait for, the waiters poll
        pending = self._pending
        if len(pending) >= 4 * self.maxlen and task_id not in pending:
            return  # Redis too slow to keep up: bounded, the rest poll
        pending.pop(task_id, None)  # re-inserted last: the dict stays in append order
        pending[task_id] = seq
        self._wake.set()

    async def _publishing(self, client: Any) -> None:
        from redis.exceptions import RedisError

        wake = self._wake
        assert wake is not None
        backoff = 0.1
        while True:
            await wake.wait()
            wake.clear()
            batch, self._pending = self._pending, {}
            try:
                async with client.pipeline(transaction=False) as pipe:
                    for task_id, seq in batch.items():
                        pipe.xadd(
                            self.stream,
                            {"t": task_id, "s": seq, "o": self._origin},
                            maxlen=self.maxlen,
                            approximate=True,
                        )
                    await pipe.execute()
            except (RedisError, OSError) as exc:
                self._went_down("publishing", exc)
                self._publish_after = time.monotonic() + backoff
                backoff = min(backoff * 2, self.max_backoff)
                continue
            backoff = 0.1
            self._publish_after = 0.0

    async def _reading(self, client: Any, on_task: OnTask, on_gap: OnGap) -> None:
        from redis.exceptions import RedisError

        backoff = 0.1
        last: str | bytes | None = None
        while True:
            try:
                if last is None:
                    # From the server's clock, not "$": ids are (ms, n), so entries added after
                    # this are all later, and the next XREAD (from the entry last seen, never
                    # "$" again) misses none of them between two calls.
                    seconds, micros = await client.time()
                    last = f"{int(seconds) * 1000 + int(micros) // 1000 - 1}-0"
                    self._came_up()
                    self._reader_token = object()
                    on_gap()  # anything published before (or while down) was not seen
                reply = await client.xread({self.stream: last}, count=1000, block=self.block_ms)
            except (RedisError, OSError) as exc:
                self._reader_token = None
                self._went_down("reading", exc)
                last = None
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff)
                continue
            backoff = 0.1
            self._publish_after = 0.0  # back: the publisher may try again at once
            for _stream, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id
                    task_id = fields.get(b"t")
                    if task_id is not None and fields.get(b"o") != self._origin:
                        on_task(task_id.decode())

    def delivering(self) -> object:
        return self._reader_token

    async def close(self) -> None:
        self._reader_token = None
        tasks, self._tasks = self._tasks, []
        # Cancelled again until they end: redis-py can swallow a cancellation that lands as a
        # blocking XREAD's reply arrives, and the reader then blocks in the next XREAD with
        # nothing left to cancel it (seen in tests: close() hung for good).
        pending = set(tasks)
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.5)
        await asyncio.gather(*tasks, return_exceptions=True)
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()
        self._pending.clear()
        self._wake = None

    def __repr__(self) -> str:
        return f"RedisFanout({self.url_for_log!r}, stream={self.stream!r})"


def fanout_from(spec: str | EventFanout | None) -> EventFanout | None:
    """A fan-out from an object or a URL: ``redis://``, ``rediss://`` or ``unix://`` (redis-py's
    URL forms, e.g. ``redis://:password@host:6379/0``) make a :class:`RedisFanout`."""
    if spec is None or isinstance(spec, EventFanout):
        return spec
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisFanout(spec)
    raise ValueError(f"unknown event fan-out {spec!r}: use 'redis://host:6379/0'")
