"""Task ownership by lease: several processes (replicas) on one storage behave as one agent.

The replica that runs a task's executor holds the task's lease (``storage.leases``, kind
``task``) and renews it by a heartbeat. When a replica dies (kill -9, OOM, a lost host) its
leases stop being renewed; a live replica's scan finds them expired, takes each over (of
several scanners exactly one wins: :meth:`~simple_a2a.storage.base.LeaseStore.acquire` is
atomic) and recovers the task: a ``resumable`` executor gets it back, otherwise it is failed
with the restart message. So no replica is special and none needs configuring: any number can
start at once, ``uvicorn --workers N`` and restarting containers are safe.

Bounds (defaults): a lease lasts ``ttl`` = 10 s and is renewed every ``ttl / 3``; the scan runs
every ``scan_interval`` = 2.5 s, so a dead replica's task is recovered within about
``ttl + scan_interval`` (12.5 s) of its last heartbeat. A replica that finds at its heartbeat
that it lost a lease (it stalled longer than ``ttl`` and another took the task over) stops its
executor without writing anything more to the task.

A task is leased only once it has run for ``claim_after`` (0.5 s): most tasks end sooner and
never touch the lease table. The scan also takes over ``submitted``/``working`` tasks with no
lease whose status is older than ``ttl`` — their replica died before leasing them (or they
predate leases).

A task this replica runs may be ended elsewhere — a CancelTask served by another replica:
``ctx.cancelled`` fires and the executor's cancel hook runs, as for a local cancel. The replica
that served the cancel announces it (``LeaseStore.announce_ended``: a PostgreSQL NOTIFY), so the
runner hears of it within milliseconds; every ``watch_interval`` (0.5 s) a poll of the tasks it
holds catches what an announcement missed (no listener yet, a lost connection, SQLite).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..protocol.logcontext import library_logger
from ..protocol.models import Task
from ..protocol.reducer import is_final_event
from ..protocol.requests import StreamResponse
from ..storage.base import LeaseKind, LeaseStore, Listening, StoredTask
from .context import TaskLostError
from .telemetry import lease_taken_over

if TYPE_CHECKING:
    from .handler import RequestHandler

log = library_logger("simple_a2a.server")

DEFAULT_LEASE_TTL = 10.0
DEFAULT_SCAN_INTERVAL = 2.5
DEFAULT_WATCH_INTERVAL = 0.5


#: The ttl of a lease handed over (seconds): stores need a positive ttl; this one has passed
#: before any other replica reads it.
EXPIRES_AT_ONCE = 1e-6


def replica_id() -> str:
    """A name for this process, unique among replicas: host, pid and a random suffix (a
    restarted process is a new replica; its predecessor's leases expire)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class LeaseKeeper:
    """This replica's leases of one kind (``task``; ``push``: see :mod:`.push.delivery`):
    acquire, release, heartbeat and the recovery scan.

    ``recover(task_id)`` is called with the lease held (taken over from a dead replica or an
    orphan); it resumes the task (keeping the lease) or ends it (and releases it).
    ``lost(task_id)`` is called when a heartbeat finds a lease taken over by another replica.
    ``ended(task_ids)`` returns which of the given tasks reached a terminal state (for the
    cross-replica cancel watch); ``on_ended(task_id)`` is called for each.
    """

    def __init__(
        self,
        store: LeaseStore,
        *,
        kind: LeaseKind = "task",
        owner: str | None = None,
        ttl: float = DEFAULT_LEASE_TTL,
        scan_interval: float = DEFAULT_SCAN_INTERVAL,
        watch_interval: float = DEFAULT_WATCH_INTERVAL,
    ) -> None:
        if not ttl > 0 or not scan_interval > 0:
            raise ValueError("lease ttl and scan interval must be positive")
        self.store = store
        self.kind: LeaseKind = kind
        self.owner = owner or replica_id()
        self.ttl = ttl
        self.scan_interval = scan_interval
        self.watch_interval = watch_interval
        self.held: set[str] = set()
        #: held leases whose acquire has not returned: no stored row to renew yet, so the
        #: heartbeat leaves them alone (it would take the missing row for a lost lease)
        self._acquiring: set[str] = set()
        #: tasks started here and not leased yet (task id -> loop time): a task that ends
        #: within ``claim_after`` seconds never touches the lease table (most of them)
        self.young: dict[str, float] = {}
        self.claim_after = min(0.5, ttl / 4)
        #: returns False when the recovery did not succeed (it is then not counted)
        self.recover: Callable[[str], Awaitable[bool | None]] | None = None
        self.lost: Callable[[str], None] | None = None
        self.ended: Callable[[list[str]], Awaitable[list[str]]] | None = None
        self.on_ended: Callable[[str], Awaitable[None]] | None = None
        #: called with each task another process announced ended (``listen_ended``)
        self.ended_elsewhere: Callable[[str], None] | None = None
        self._listening: Listening | None = None
        self._loops: list[asyncio.Task[None]] = []

    def holds(self, task_id: str) -> bool:
        """This replica runs it (leased, or too young to be leased yet)."""
        return task_id in self.held or task_id in self.young

    def register(self, task_id: str) -> None:
        """A task this replica just created: leased only if it still runs after
        ``claim_after`` (:meth:`claim_young`). Until then no other replica touches it: the
        recovery scan only takes unleased tasks whose status is older than ``ttl``."""
        self.young[task_id] = asyncio.get_running_loop().time()

    async def acquire(self, task_id: str) -> bool:
        """Take the lease for this replica; False if another replica, or another user in this
        one, holds it (never two executors on one task, two workers on one push config)."""
        if self.holds(task_id):
            return False
        self.held.add(task_id)  # before the await: a concurrent local caller sees it taken
        try:
            if await self._stored_acquire(task_id):
                return True
        except BaseException:
            self.held.discard(task_id)
            raise
        self.held.discard(task_id)
        return False

    async def _stored_acquire(self, task_id: str) -> bool:
        self._acquiring.add(task_id)
        try:
            return await self.store.acquire(self.kind, task_id, self.owner, self.ttl)
        finally:
            self._acquiring.discard(task_id)

    def take_over(self, task_id: str) -> None:
        """Record a lease the store already gave this replica (the scan's acquire)."""
        self.held.add(task_id)

    async def release(self, task_id: str) -> None:
        if self.young.pop(task_id, None) is not None:
            return  # never leased: nothing stored
        if task_id not in self.held:
            return
        self.held.discard(task_id)
        try:
            await self.store.release(self.kind, task_id, self.owner)
        except Exception:  # it expires on its own; the next owner takes it over then
            log.warning("could not release the %s lease %s", self.kind, task_id, exc_info=True)

    async def expire_now(self, task_id: str) -> None:
        """Hand a task over (a stop in cluster mode, :mod:`.stopping`): its lease expires now,
        so the next recovery scan of any replica takes it over, and this replica lets go."""
        young = self.young.pop(task_id, None) is not None
        held = task_id in self.held
        self.held.discard(task_id)
        try:
            if young:  # never leased: an expired lease makes it visible to the scan at once
                await self.store.acquire(self.kind, task_id, self.owner, EXPIRES_AT_ONCE)
            elif held:
                await self.store.renew(self.kind, [task_id], self.owner, EXPIRES_AT_ONCE)
        except Exception:  # it expires on its own after ttl; the next owner takes it then
            log.warning("could not hand the %s lease %s over", self.kind, task_id, exc_info=True)

    # -- the background loops --
    def start(self, *, scan: bool) -> None:
        """Start the heartbeat (and, if ``scan``, the recovery scan and the cancel watch)."""
        if self._loops:
            return
        loop = asyncio.get_running_loop()
        self._loops.append(loop.create_task(self._every(self.ttl / 3, self.heartbeat)))
        self._loops.append(loop.create_task(self._every(self.claim_after, self.claim_young)))
        if scan:
            self._loops.append(loop.create_task(self._every(self.scan_interval, self.scan)))
        if self.ended is not None and self.watch_interval > 0:
            self._loops.append(loop.create_task(self._every(self.watch_interval, self.watch)))
        if self.ended_elsewhere is not None:
            self._loops.append(loop.create_task(self._keep_listening()))

    async def stop(self) -> None:
        loops, self._loops = self._loops, []
        for task in loops:
            task.cancel()
        for task in loops:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        listening, self._listening = self._listening, None
        if listening is not None:
            with contextlib.suppress(Exception):
                await listening.close()

    async def _every(self, interval: float, step: Callable[[], Awaitable[object]]) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away: try again next time
                log.warning("lease %s failed", getattr(step, "__name__", "step"), exc_info=True)

    async def heartbeat(self) -> None:
        """Renew every lease held; report the ones another replica took over."""
        held = [task_id for task_id in self.held if task_id not in self._acquiring]
        if not held:
            return
        renewed = set(await self.store.renew(self.kind, held, self.owner, self.ttl))
        for task_id in held:
            if task_id not in renewed and task_id in self.held:
                self.held.discard(task_id)
                log.error("lost the %s lease %s to another replica; stopping", self.kind, task_id)
                if self.lost is not None:
                    self.lost(task_id)

    async def claim_young(self) -> None:
        """Lease the tasks that have run here for ``claim_after`` seconds."""
        now = asyncio.get_running_loop().time()
        for task_id, since in list(self.young.items()):
            if now - since < self.claim_after or self.young.get(task_id) != since:
                continue
            del self.young[task_id]
            self.held.add(task_id)  # a release from now on lets the stored lease go
            if not await self._stored_acquire(task_id):
                # Taken for an orphan by another replica: this replica stalled for longer than
                # the lease ttl. That replica owns the task now; stop ours.
                self.held.discard(task_id)
                log.error("task %s was taken over before it was leased; stopping", task_id)
                if self.lost is not None:
                    self.lost(task_id)

    async def scan(self) -> int:
        """Take over tasks whose lease expired (their replica died), and active tasks with no
        lease whose status is older than ``ttl`` (their replica died before leasing them, or
        they predate leases); returns how many."""
        taken = 0
        if self.kind == "task":
            for task_id in await self.store.unleased(self.ttl):
                if not self.holds(task_id) and await self.store.take_over(
                    self.kind, task_id, self.owner, self.ttl
                ):
                    log.warning("task %s has no live replica; taking over", task_id)
                    taken += await self._recover(task_id)
        for lease in await self.store.expired(self.kind):
            if lease.key in self.held:
                continue  # ours, merely late: the heartbeat renews it
            if not await self.store.take_over(self.kind, lease.key, self.owner, self.ttl):
                continue  # another replica was faster
            log.warning(
                "%s %s: replica %s stopped renewing it; taking over",
                self.kind,
                lease.key,
                lease.owner,
            )
            taken += await self._recover(lease.key)
        return taken

    async def _recover(self, task_id: str) -> bool:
        """Recover a key just taken over; True if that worked (counted by the callers)."""
        lease_taken_over(self.kind)  # a metric (docs/observability.md)
        self.held.add(task_id)
        try:
            if self.recover is not None:
                return await self.recover(task_id) is not False
        except Exception:
            log.exception("could not recover task %s", task_id)
            await self.release(task_id)
            return False
        return True

    async def watch(self) -> None:
        """Tasks this replica runs that ended elsewhere (a cancel served by another replica)."""
        if not self.held or self.ended is None:
            return
        for task_id in await self.ended(sorted(self.held)):
            if self.on_ended is not None:
                await self.on_ended(task_id)

    async def _keep_listening(self) -> None:
        """Hold the store's announcements of ended tasks open (``listen_ended``): re-open a
        lost one within a second; retry every 5 s a store that is away or has none."""
        assert self.ended_elsewhere is not None
        loop = asyncio.get_running_loop()
        retry_at = 0.0
        while True:
            if (self._listening is None or not self._listening.alive) and loop.time() >= retry_at:
                retry_at = loop.time() + 5.0
                try:
                    self._listening = await self.store.listen_ended(self.ended_elsewhere)
                except Exception:  # a store's own failure: the watch's poll still works
                    log.warning("cannot listen for ended tasks", exc_info=True)
            await asyncio.sleep(1.0)


async def claim_follow_up(
    leases: LeaseKeeper,
    task: Task,
    reread: Callable[[], Awaitable[StoredTask]],
    busy: Callable[[str], Exception],
    patience: float = 5.0,
) -> Task:
    """Take the lease of a task a follow-up message is for; return the task as of holding it.

    Another holder means another request runs the task — here or on another replica. If the
    task waits for input, that holder's turn is just ending (its lease goes once its executor
    returns): wait up to ``patience`` seconds. Otherwise, or when a concurrent follow-up won
    (the task left the interrupted state), raise ``busy(task_id)``: of two follow-ups exactly
    one runs. The task is re-read once held, as it may have changed meanwhile.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while not await leases.acquire(task.id):
        if not task.is_interrupted or loop.time() > deadline:
            raise busy(task.id)
        await asyncio.sleep(0.02)
        task = (await reread()).task
    try:
        task = (await reread()).task
    except BaseException:
        await leases.release(task.id)
        raise
    if task.is_terminal:  # ended meanwhile: the caller's checks refuse it
        await leases.release(task.id)
        raise busy(task.id)
    return task


def bind_leases(handler: RequestHandler, leases: LeaseKeeper) -> None:
    """Wire a handler's task leases (``RequestHandler(leases=...)`` calls it): the handler then
    claims each task it runs, stops the executors of tasks another replica took over, and
    recovers the tasks of dead replicas (docs/guides/deployment.md)."""
    store = leases.store
    executions = handler._executions

    def lost(task_id: str) -> None:
        execution = executions.get(task_id)
        if execution is None:
            return
        ctx = execution.ctx
        # Another replica runs the task now: this executor must write nothing more. The fenced
        # handle refuses every verb locally (no write) and the runner's clean-up is a no-op.
        ctx.fence()
        ctx.cancelled.set()
        execution.runner.cancel()

    async def ended(task_ids: list[str]) -> list[str]:
        return await store.ended(leases.owner)

    async def on_ended(task_id: str) -> None:
        execution = executions.get(task_id)
        if execution is None:  # a detached task ended elsewhere: nothing runs it here
            await leases.release(task_id)
            return
        if execution.ctx.cancelled.is_set() or execution.ctx.task.is_terminal:
            return  # signalled already, or it ended the task itself: its runner is returning
        stored = await handler.tasks.get(task_id)
        if stored is not None and stored.task.is_terminal:
            execution.ctx.observe(stored.task)
            await handler._signal_cancel(execution)

    def ended_elsewhere(task_id: str) -> None:
        if task_id in executions:  # run here (leased or young): signal it as the watch would
            handler._spawn(on_ended(task_id))

    async def after_final(task_id: str, seq: int, event: StreamResponse, task: Task) -> None:
        if task_id in executions or not is_final_event(event):
            return
        if leases.holds(task_id):
            # A detached task keeps its lease after its runner returned, until it ends.
            await leases.release(task_id)
        elif task.is_terminal:
            # Ended here while another replica may run it (a cancel): tell that one now.
            await store.announce_ended(task_id)

    async def still_ours(task_id: str) -> None:
        # The fence (docs/cluster.md, Fencing): a takeover moves the task's version on
        # (LeaseStore.take_over), so a write of the old holder fails the version guard; it
        # must not be retried on the new version unless this replica still holds the lease.
        if task_id not in executions or task_id in leases.young:
            return  # not run here (a cancel, a follow-up), or not leased yet
        lease = await store.get(leases.kind, task_id)
        if lease is None or lease.owner != leases.owner:
            leases.held.discard(task_id)
            log.error("task %s was taken over by another replica; its write is refused", task_id)
            lost(task_id)
            raise TaskLostError(task_id)

    leases.recover = handler.recover_task
    handler.tasks.before_retry = still_ours
    leases.lost = lost
    leases.ended = ended
    leases.on_ended = on_ended
    leases.ended_elsewhere = ended_elsewhere
    handler.tasks.hooks.append(after_final)
