"""Automatic push delivery: every task event to every webhook of the task, in order, retried.

Design (the outbox is derived from the event log):

- the :class:`~simple_a2a.storage.base.EventLog` already holds every event of a task, in order;
- a :class:`~simple_a2a.storage.base.PushCursor` per (task, config) records the last seq the
  webhook acknowledged; the pending notifications are the events after it;
- one worker (an asyncio task) per config follows the log from its cursor, POSTs each event as
  a ``StreamResponse`` and advances the cursor only on a 2xx, so order holds per config and
  delivery is at least once; after a restart :meth:`PushDispatcher.start` resumes every active
  cursor;
- with several replicas on one storage, a worker delivers only while it holds the config's
  ``push`` lease (:meth:`PushDispatcher.use_leases`): one replica at a time delivers a config,
  and when it dies the lease scan of another takes over from the stored cursor (duplicates only
  around a crash: the notification in flight when it died).

A new config receives the task's whole history from the log, starting with event 1 (the Task as
created), then every later event — what a SubscribeToTask stream replays; when the start of the
log was trimmed away, a fresh ``task`` snapshot stands in for the missing events.
Failures are retried with exponential backoff
and jitter (connection errors, timeouts, 408/425/429, 5xx; ``Retry-After`` honoured); other
answers skip that event. After ``max_attempts`` consecutive failures the config is suspended
(logged, visible in :meth:`PushDispatcher.health`) until :meth:`PushDispatcher.resume` or until
the config is created again. Delivery never blocks the agent: the event hook only wakes workers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import functools
import json
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import httpx

from ...protocol import errors as e
from ...protocol import logcontext
from ...protocol.logcontext import library_logger
from ...protocol.models import Task, TaskPushNotificationConfig
from ...protocol.push import CONTENT_TYPE, SIGNATURE_HEADER, TOKEN_HEADERS
from ...protocol.requests import StreamResponse
from ...protocol.telemetry import TELEMETRY
from ...storage.base import PushCursor, PushCursorStore, Storage
from ..telemetry import push_suspended, traced_push
from .ssrf import Unresolvable, UrlGuard, UrlRefused, guarded_client

if TYPE_CHECKING:
    from ..leases import LeaseKeeper
    from ..tasks import TaskManager
    from .signing import SigningKeys

log = library_logger("simple_a2a.push")

RETRYABLE_STATUS = frozenset({408, 425, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for one webhook: ``initial_delay * multiplier**n``, capped, with jitter.

    ``jitter`` is the fraction of the delay that is randomised (0.5: between half and all of
    it). ``Retry-After`` (seconds or HTTP date) wins when longer, up to ``max_retry_after``.
    """

    max_attempts: int = 8
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 60.0
    jitter: float = 0.5
    max_retry_after: float = 300.0

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        base = min(self.max_delay, self.initial_delay * self.multiplier ** max(0, failures - 1))
        delay = base * (1 - self.jitter * random.random())
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after))
        return delay


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now (RFC 9110: delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


@dataclass(frozen=True)
class PushHealth:
    """What :meth:`PushDispatcher.health` reports for one config."""

    task_id: str
    config_id: str
    state: str  #: active, suspended or done
    delivered_seq: int | None
    failures: int
    last_error: str | None
    running: bool  #: a worker is delivering right now


class _Failure(Exception):
    def __init__(
        self,
        reason: str,
        *,
        retry: bool,
        retry_after: float | None = None,
        permanent: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.retry_after = retry_after
        self.permanent = permanent  #: retrying or skipping cannot help: suspend now


class _Worker:
    __slots__ = ("kicked", "runner")

    def __init__(self) -> None:
        self.kicked = False
        self.runner: asyncio.Task[None] | None = None


class PushDispatcher:
    """Registered as a :class:`~simple_a2a.server.tasks.TaskManager` hook; owns the workers."""

    def __init__(
        self,
        storage: Storage,
        tasks: TaskManager,
        *,
        guard: UrlGuard | None = None,
        signing: SigningKeys | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 10.0,
        idle_timeout: float = 30.0,
        issuer: str | None = None,
        client: httpx.AsyncClient | None = None,
        concurrency: int = 32,
        pool_timeout: float = 5.0,
    ) -> None:
        self.storage = storage
        #: POSTs in flight at once, below the client's pool size, waiters served in order: a
        #: task with many configs cannot swamp the pool's bookkeeping (#16 item 2)
        self.in_flight = asyncio.Semaphore(concurrency)
        self.pool_timeout = pool_timeout
        self.tasks = tasks
        self.guard = guard or UrlGuard()
        self.signing = signing
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.issuer = issuer
        self._client = client
        self._owns_client = client is None
        self.cursors: PushCursorStore = storage.push_cursors or _memory_cursors()
        if storage.push_cursors is None:
            log.info("storage has no push outbox: pending notifications will not survive restart")
        self._workers: dict[tuple[str, str], _Worker] = {}
        #: push leases, when several processes share the storage (:meth:`use_leases`)
        self.leases: LeaseKeeper | None = None
        self._closed = False
        #: the loop the workers run on (set by :meth:`start`), for calls from other threads
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(self.timeout, pool=self.pool_timeout)
            self._client = guarded_client(self.guard, timeout=timeout)
        return self._client

    # -- lifecycle --
    async def start(self) -> None:
        """Resume every active cursor (deliveries pending before a restart)."""
        self._closed = False
        self.loop = asyncio.get_running_loop()
        if self.leases is not None:
            self.leases.start(scan=True)
        for cursor in await self.cursors.pending():
            self._ensure_worker(cursor.task_id, cursor.config_id)

    async def close(self) -> None:
        """Stop the workers (cursors keep the progress) and close the HTTP client."""
        self._closed = True
        if self.leases is not None:
            await self.leases.stop()
        runners = [w.runner for w in self._workers.values() if w.runner is not None]
        for runner in runners:
            runner.cancel()
        if runners:
            await asyncio.wait(runners, timeout=5)
        self._workers.clear()
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    # -- hooks --
    async def __call__(self, task_id: str, seq: int, event: StreamResponse, task: Task) -> None:
        """The TaskManager event hook: wake (or start) the worker of each config of the task."""
        for config in await self.storage.push_configs.list(task_id):
            assert config.id is not None
            key = (task_id, config.id)
            if key in self._workers:
                self._workers[key].kicked = True
                continue
            cursor = await self.cursors.get(task_id, config.id)
            if cursor is None:
                await self.cursors.put(PushCursor(task_id, config.id, 0, updated_at=_now()))
            elif cursor.state != "active":
                continue
            self._ensure_worker(task_id, config.id)

    async def validate_config(self, config: TaskPushNotificationConfig) -> None:
        """Creation-time check of the URL (raises ``InvalidParamsError`` naming ``url``)."""
        try:
            await self.guard.check_url(config.url)
        except UrlRefused as exc:
            raise e.InvalidParamsError(f"url refused: {exc.reason}", field="url") from None

    async def config_created(self, config: TaskPushNotificationConfig) -> None:
        """A (re)created config starts afresh from the start of the task's log."""
        assert config.task_id and config.id
        await self._stop_worker(config.task_id, config.id)
        await self.cursors.put(PushCursor(config.task_id, config.id, 0, updated_at=_now()))
        self._ensure_worker(config.task_id, config.id)

    async def config_deleted(self, task_id: str, config_id: str) -> None:
        """Nothing more is sent to a deleted config, not even a retry in progress."""
        await self._stop_worker(task_id, config_id)
        await self.cursors.delete(task_id, config_id)

    # -- visibility and control --
    def backlog(self) -> int:
        """Configs with a delivery worker: undelivered events, or idle before it stops."""
        return len(self._workers)

    async def flush(self, task_id: str, timeout: float) -> bool:
        """Wait, at most ``timeout`` seconds, until the workers of the task's configs stopped
        (after a terminal event: every event acknowledged, or the config suspended). True when
        none is left running. Event hooks run as events are recorded, so a task that just ended
        already has its workers."""
        runners = [
            worker.runner
            for (task, _config), worker in self._workers.items()
            if task == task_id and worker.runner is not None
        ]
        if not runners:
            return True
        _done, pending = await asyncio.wait(runners, timeout=timeout)
        return not pending

    async def health(self, task_id: str, config_id: str) -> PushHealth | None:
        cursor = await self.cursors.get(task_id, config_id)
        if cursor is None:
            return None
        return PushHealth(
            task_id,
            config_id,
            cursor.state,
            cursor.delivered_seq,
            cursor.failures,
            cursor.last_error,
            (task_id, config_id) in self._workers,
        )

    async def resume(self, task_id: str, config_id: str) -> bool:
        """Reactivate a suspended config from where it stopped; False if unknown."""
        cursor = await self.cursors.get(task_id, config_id)
        if cursor is None:
            return False
        if cursor.state == "suspended":
            cursor = dataclasses.replace(cursor, state="active", failures=0, updated_at=_now())
            await self.cursors.put(cursor)
        self._ensure_worker(task_id, config_id)
        return True

    # -- workers --
    def _ensure_worker(self, task_id: str, config_id: str) -> None:
        key = (task_id, config_id)
        if self._closed:
            return
        if key in self._workers:
            self._workers[key].kicked = True
            return
        worker = self._workers[key] = _Worker()
        worker.runner = asyncio.create_task(
            self._run(key, worker), name=f"a2a-push-{task_id}-{config_id}"
        )

    async def _stop_worker(self, task_id: str, config_id: str) -> None:
        worker = self._workers.pop((task_id, config_id), None)
        if worker is not None and worker.runner is not None:
            worker.runner.cancel()
            await asyncio.wait([worker.runner], timeout=5)

    async def _run(self, key: tuple[str, str], worker: _Worker) -> None:
        logcontext.bind(task_id=key[0], push_config_id=key[1])  # this worker's own context
        leases = self.leases
        try:
            if leases is None:
                await self._follow(key, worker)
                return
            lease = "/".join(key)
            # Several replicas: the config is delivered by the holder of its push lease only.
            while lease in leases.held or await leases.acquire(lease):
                try:
                    await self._follow(key, worker)
                finally:
                    await leases.release(lease)
                # An event recorded elsewhere while this worker was letting go found the lease
                # still held: look once more, or it would wait for the next event.
                if not await self._more_pending(key):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("push worker for task %s config %s crashed", *key)
        finally:
            if self._workers.get(key) is worker:
                del self._workers[key]

    async def _more_pending(self, key: tuple[str, str]) -> bool:
        cursor = await self.cursors.get(*key)
        if cursor is None or cursor.state != "active":
            return False
        return await self.storage.events.last_seq(key[0]) > (cursor.delivered_seq or 0)

    # -- several replicas --
    def use_leases(self, keeper: LeaseKeeper) -> None:
        """Deliver each config from one replica only: the holder of its ``push`` lease. The
        keeper's scan takes over the configs of a replica that died, from the stored cursor."""
        self.leases = keeper
        keeper.recover = self._taken_over
        keeper.lost = self._lost

    async def _taken_over(self, lease: str) -> None:
        task_id, _, config_id = lease.partition("/")
        self._ensure_worker(task_id, config_id)
        if (task_id, config_id) not in self._workers:  # closed: let the lease go
            assert self.leases is not None
            await self.leases.release(lease)

    def _lost(self, lease: str) -> None:
        task_id, _, config_id = lease.partition("/")
        worker = self._workers.get((task_id, config_id))
        if worker is not None and worker.runner is not None:
            worker.runner.cancel()

    async def _follow(self, key: tuple[str, str], worker: _Worker) -> None:
        task_id, config_id = key
        events = self.storage.events
        while True:
            worker.kicked = False
            config = await self.storage.push_configs.get(task_id, config_id)
            cursor = await self.cursors.get(task_id, config_id)
            if config is None:
                await self.cursors.delete(task_id, config_id)
                return
            if cursor is None or cursor.state != "active":
                return
            batch = await self._pending(cursor)
            for seq, event in batch:
                cursor = await self._deliver(config, cursor, seq, event)
                if cursor.state != "active":
                    return
            if batch:
                continue
            after = cursor.delivered_seq or 0
            if worker.kicked:
                continue
            if not await events.wait(task_id, after, self.idle_timeout) and not worker.kicked:
                return  # idle: the next event's hook starts a new worker

    async def _pending(self, cursor: PushCursor) -> list[tuple[int, StreamResponse]]:
        """The next notifications: the logged events after the cursor, or a task snapshot when
        the cursor is unset or fell out of the retained window."""
        events = self.storage.events
        after = cursor.delivered_seq
        if after is not None:
            first = await events.first_seq(cursor.task_id)
            if not (first and after + 1 < first):
                return [(i.seq, i.event) for i in await events.read(cursor.task_id, after, 100)]
        snap = await self.tasks.snapshot(cursor.task_id)
        if snap is None:
            return []
        task, seq = snap
        return [(seq, StreamResponse(task=task))]

    async def _deliver(
        self,
        config: TaskPushNotificationConfig,
        cursor: PushCursor,
        seq: int,
        event: StreamResponse,
    ) -> PushCursor:
        """POST one notification until acknowledged, skipped or the config is suspended."""
        body = await self._body(config, cursor.task_id, event)
        while True:
            try:
                if TELEMETRY.on:  # a CLIENT span per attempt (docs/observability.md)
                    post = functools.partial(self._post, config, body)
                    attempt = cursor.failures + 1
                    await traced_push(post, cursor.task_id, cursor.config_id, seq, attempt)
                else:
                    await self._post(config, body)
            except _Failure as failure:
                cursor = dataclasses.replace(
                    cursor, failures=cursor.failures + 1, last_error=failure.reason
                )
                if failure.permanent or cursor.failures >= self.retry.max_attempts:
                    return await self._suspend(cursor)
                if not failure.retry:
                    log.warning(
                        "push notification %d of task %s to config %s refused, skipped: %s",
                        seq, cursor.task_id, cursor.config_id, failure.reason,
                    )  # fmt: skip
                    cursor = dataclasses.replace(cursor, delivered_seq=seq, updated_at=_now())
                    await self.cursors.put(cursor)
                    return cursor
                await self.cursors.put(dataclasses.replace(cursor, updated_at=_now()))
                await asyncio.sleep(self.retry.delay(cursor.failures, failure.retry_after))
                continue
            done = (event.task is not None and event.task.is_terminal) or _terminal_update(event)
            cursor = dataclasses.replace(
                cursor,
                delivered_seq=seq,
                failures=0,
                last_error=None,
                state="done" if done else "active",
                updated_at=_now(),
            )
            await self.cursors.put(cursor)
            return cursor

    async def _suspend(self, cursor: PushCursor) -> PushCursor:
        cursor = dataclasses.replace(cursor, state="suspended", updated_at=_now())
        await self.cursors.put(cursor)
        push_suspended()
        log.warning(
            "push config %s of task %s suspended after %d consecutive failures: %s",
            cursor.config_id, cursor.task_id, cursor.failures, cursor.last_error,
        )  # fmt: skip
        return cursor

    async def _body(
        self, config: TaskPushNotificationConfig, task_id: str, event: StreamResponse
    ) -> bytes:
        """The notification: the 1.0 StreamResponse, or for a config registered over 0.3 the
        0.3 Task object as it stands after the event (0.3 §9.5; what the 0.3 SDKs send)."""
        if not is_v03(config):
            return bytes(event.to_json())
        task = event.task
        if task is None:
            snap = await self.tasks.snapshot(task_id)
            task = snap[0] if snap is not None else None
        if task is None:  # the task is gone (retention): its last event alone
            return bytes(event.to_json())
        from ...protocol import v03

        return json.dumps(v03.result_to_v03("GetTask", task.to_dict())).encode()

    def headers(self, config: TaskPushNotificationConfig, body: bytes) -> dict[str, str]:
        """The headers of one notification (a fresh JWT each time: new ``jti`` and ``iat``)."""
        headers = {"Content-Type": "application/json" if is_v03(config) else CONTENT_TYPE}
        if config.token:
            for name in TOKEN_HEADERS:
                headers[name] = config.token
        auth = config.authentication
        if auth is not None and auth.credentials:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        if self.signing is not None:
            assert config.task_id is not None
            headers[SIGNATURE_HEADER] = self.signing.sign(
                body, task_id=config.task_id, audience=config.url, issuer=self.issuer
            )
        return headers

    async def _post(self, config: TaskPushNotificationConfig, body: bytes) -> None:
        try:
            async with self.in_flight:
                response = await self.client.post(
                    config.url, content=body, headers=self.headers(config, body)
                )
        except Unresolvable as exc:  # DNS may answer later (split horizon, a host not up yet)
            raise _Failure(exc.reason, retry=True) from None
        except UrlRefused as exc:
            raise _Failure(exc.reason, retry=False, permanent=True) from None
        except httpx.TimeoutException as exc:
            raise _Failure(f"timeout ({type(exc).__name__})", retry=True) from None
        except httpx.HTTPError as exc:
            raise _Failure(f"{type(exc).__name__}: {exc}", retry=True) from None
        status = response.status_code
        if 200 <= status < 300:
            return
        reason = f"HTTP {status}"
        if status in RETRYABLE_STATUS or status >= 500:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise _Failure(reason, retry=True, retry_after=retry_after)
        raise _Failure(reason, retry=False, permanent=status == 410)


def is_v03(config: TaskPushNotificationConfig) -> bool:
    return (config.protocol_version or "").startswith("0.")


def _terminal_update(event: StreamResponse) -> bool:
    update = event.status_update
    return update is not None and update.status.state.is_terminal


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _memory_cursors() -> PushCursorStore:
    from ...storage.memory import MemoryPushCursorStore

    return MemoryPushCursorStore()


__all__ = ["PushDispatcher", "PushHealth", "RetryPolicy", "parse_retry_after"]
