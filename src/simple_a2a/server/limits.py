"""Every server-side limit on what one caller can make the server hold, in one place.

Pass ``limits=Limits(...)`` to :func:`simple_a2a.server.server`; ``docs/security.md`` lists each
limit, its default and the error answered beyond it (#16). The body size (``max_body_size``) and
the history kept per task (``max_history_length``) stay options of the server itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic_core

from ..protocol import errors as e
from ..protocol.models import TaskPushNotificationConfig
from ..protocol.requests import (
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    SendMessageRequest,
)
from ..storage.base import PushConfigStore


@dataclass(frozen=True)
class Limits:
    """Bounds on one request and on what a caller can store or keep running. Beyond a limit the
    answer is a spec error naming it (``Limits.max_batch_entries``, ...): a 4xx for what the
    request itself asks, and for ``max_running_tasks_per_caller`` the spec's "rate limit
    exceeded" system error (503, retry later: the same request succeeds once work ends)."""

    #: entries in one JSON-RPC batch (above: -32600 for the whole batch)
    max_batch_entries: int = 100
    #: bytes of one JSON-RPC batch answer (the entries left answer -32600 naming it, not run)
    max_batch_answer_bytes: int = 10 * 1024 * 1024
    #: parts in one message (SendMessage; above: -32602 naming the field)
    max_parts_per_message: int = 1_000
    #: bytes of a request's metadata, the message's or a part's (JSON-encoded)
    max_metadata_bytes: int = 64 * 1024
    #: push notification configs one task may have (above: -32602)
    max_push_configs_per_task: int = 10
    #: push notification configs one authenticated caller may have over all its tasks (above:
    #: -32602); anonymous callers share no identity, so only the per-task cap applies to them
    max_push_configs_per_caller: int = 1_000
    #: webhook POSTs in flight at once over all configs (below the pool of 100 connections);
    #: the others wait their turn in arrival order (asyncio.Semaphore is FIFO)
    max_concurrent_deliveries: int = 32
    #: seconds a delivery may wait for a pooled connection before it counts as a failed attempt
    delivery_pool_timeout: float = 5.0
    #: bodies larger than this are validated in a worker thread, not on the event loop
    offload_validation_bytes: int = 256 * 1024
    #: executions (an agent working on a message) one caller may have running at once; a
    #: message beyond it is refused before anything is stored, as RateLimitError (HTTP 503 with
    #: Retry-After, gRPC UNAVAILABLE, JSON-RPC -32603). Anonymous callers count as one caller;
    #: each server process (replica) counts its own executions.
    max_running_tasks_per_caller: int = 1_000
    #: seconds a refused caller is told to wait (Retry-After, google.rpc.RetryInfo)
    retry_after: float = 1.0

    def refuse(self, name: str, value: int, *, field: str | None = None) -> e.A2AError:
        """The error for ``value`` beyond the limit called ``name``."""
        limit = getattr(self, name)
        text = f"{value} exceeds Limits.{name} = {limit}"
        if field is None:
            return e.InvalidRequestError(text)
        return e.InvalidParamsError(text, field=field)


DEFAULT_LIMITS = Limits()
#: connections and requests uvicorn serves at once in ``run()``/``serve()`` (beyond: 503)
DEFAULT_CONCURRENCY = 1_000


def uvicorn_options(shutdown_grace: float, overrides: dict[str, Any]) -> dict[str, Any]:
    """uvicorn's settings for ``run()`` / ``serve()``, ``overrides`` winning: a bounded number
    of concurrent connections (beyond it: 503), idle keep-alive connections closed after 5 s,
    headers of at most 64 KiB. uvicorn has no header-read or body timeout: put a reverse proxy
    with both in front of any public deployment (docs/security.md, #16 item 11)."""
    options: dict[str, Any] = {
        "timeout_graceful_shutdown": int(shutdown_grace) + 1,
        "log_level": "info",
        "limit_concurrency": DEFAULT_CONCURRENCY,
        "timeout_keep_alive": 5,
        "h11_max_incomplete_event_size": 64 * 1024,
        "backlog": 1024,
    }
    return {**options, **overrides}


class RunningTasks:
    """Executions running per caller (task owner; anonymous callers are one group), bounded by
    ``Limits.max_running_tasks_per_caller``: ``returnImmediately`` starts agent work that
    outlives its request, so without this a caller could keep any number running (spec §13
    "Rate Limiting and Abuse Prevention", SHOULD). Counted from admission, before the task is
    stored, to the end of the execution. (A plain dict, not a Counter: a Counter's missing key
    is a Python call, and this runs twice per message.)"""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._running: dict[str | None, int] = {}

    def __len__(self) -> int:
        return sum(self._running.values())

    def admit(self, owner: str | None) -> None:
        """Count one more for ``owner``, or raise RateLimitError when it is at the limit."""
        running = self._running.get(owner, 0)
        limit = self.limits.max_running_tasks_per_caller
        if running >= limit:
            who = "this caller already has" if owner is not None else "anonymous callers have"
            raise e.RateLimitError(
                f"{who} {limit} tasks running (Limits.max_running_tasks_per_caller); "
                "retry when some have finished",
                retry_after=self.limits.retry_after,
            )
        self._running[owner] = running + 1

    def reserve(self, owner: str | None) -> _Reservation:
        """:meth:`admit`, for a ``with`` block that gives the place back if it raises (else the
        execution it launched holds it, until :meth:`leave`)."""
        self.admit(owner)
        return _Reservation(self, owner)

    def add(self, owner: str | None) -> None:
        """Count one more without the check (recovered work: no caller to refuse)."""
        self._running[owner] = self._running.get(owner, 0) + 1

    def leave(self, owner: str | None) -> None:
        left = self._running[owner] - 1
        if left:
            self._running[owner] = left
        else:
            del self._running[owner]


class _Reservation:
    __slots__ = ("owner", "running")

    def __init__(self, running: RunningTasks, owner: str | None) -> None:
        self.running = running
        self.owner = owner

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self.running.leave(self.owner)


def _json_size(value: object) -> int:
    return len(pydantic_core.to_json(value))


def check_raw_message(limits: Limits, params: object, prefix: str = "") -> None:
    """The parts count of a message still in its JSON form, before a model is built from
    600,000 parts only to refuse it (the bindings call this; :func:`check_message` after)."""
    message = params.get("message") if isinstance(params, dict) else None
    parts = message.get("parts") if isinstance(message, dict) else None
    if isinstance(parts, list) and len(parts) > limits.max_parts_per_message:
        field = f"{prefix}message.parts"
        raise limits.refuse("max_parts_per_message", len(parts), field=field)


def check_message(limits: Limits, request: SendMessageRequest) -> None:
    """Spec §3.1.1 sets no bound; ours (#16 item 3): parts per message and metadata bytes."""
    message = request.message
    if len(message.parts) > limits.max_parts_per_message:
        raise limits.refuse("max_parts_per_message", len(message.parts), field="message.parts")
    carriers = [("metadata", request.metadata), ("message.metadata", message.metadata)]
    carriers += [(f"message.parts[{i}].metadata", p.metadata) for i, p in enumerate(message.parts)]
    for field, metadata in carriers:
        if metadata:
            size = _json_size(metadata)
            if size > limits.max_metadata_bytes:
                raise limits.refuse("max_metadata_bytes", size, field=field)


def check_config_count(
    limits: Limits, existing: list[TaskPushNotificationConfig], config: TaskPushNotificationConfig
) -> None:
    """A new config beyond ``max_push_configs_per_task`` is refused; replacing one is not new."""
    if len(existing) >= limits.max_push_configs_per_task and all(
        c.id != config.id for c in existing
    ):
        raise limits.refuse("max_push_configs_per_task", len(existing) + 1, field="taskId")


async def check_caller_config_count(
    limits: Limits, store: PushConfigStore, owner: str | None, replacing: bool
) -> None:
    """A new config beyond ``max_push_configs_per_caller`` (the caller's tasks together)."""
    if owner is None or replacing:
        return
    count = await store.count_for_owner(owner)
    if count is not None and count >= limits.max_push_configs_per_caller:
        raise limits.refuse("max_push_configs_per_caller", count + 1, field="taskId")


def _config_id(config: TaskPushNotificationConfig) -> str:
    return config.id or ""


def config_page(
    limits: Limits,
    configs: list[TaskPushNotificationConfig],
    request: ListTaskPushNotificationConfigsRequest,
) -> ListTaskPushNotificationConfigsResponse:
    """One page of a task's configs by id (spec §3.1.9); a page token is the last id seen."""
    size = request.page_size or limits.max_push_configs_per_task
    if size < 0:
        raise e.InvalidParamsError("pageSize must be >= 0", field="pageSize")
    rest = sorted(configs, key=_config_id)
    if request.page_token:
        rest = [c for c in rest if _config_id(c) > request.page_token]
    page = rest[:size]
    more = len(rest) > size
    return ListTaskPushNotificationConfigsResponse(
        configs=page, next_page_token=_config_id(page[-1]) if more else None
    )


#: Identifiers a request may carry, as attribute paths of the request models (split once here,
#: not per request).
_IDENTIFIERS = tuple(
    (path, tuple(path.split(".")))
    for path in (
        "id",
        "task_id",
        "context_id",
        "message.task_id",
        "message.context_id",
        "configuration.task_push_notification_config.id",
    )
)
_NO_FIELDS: dict[str, object] = {}
# Per request class, the paths whose first step is one of its fields (most requests have one).
_PATHS_OF: dict[type, tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _paths_of(cls: type) -> tuple[tuple[str, tuple[str, ...]], ...]:
    fields = getattr(cls, "model_fields", None)
    paths = _PATHS_OF[cls] = tuple(
        (path, names) for path, names in _IDENTIFIERS if fields is None or names[0] in fields
    )
    return paths


def check_identifiers(request: object) -> None:
    """Refuse a NUL character in an identifier, for every backend alike.

    Identifiers are stored as SQL text, which cannot hold NUL (PostgreSQL refuses it, found by
    the fuzz suite as a 500). The spec does not forbid it; no real id contains one, so it is
    invalid params here rather than a storage failure later.
    """
    paths = _PATHS_OF.get(type(request))
    for path, names in _paths_of(type(request)) if paths is None else paths:
        value: object = request
        for name in names:
            # a model's fields live in its __dict__: a missing one costs no AttributeError
            value = getattr(value, "__dict__", _NO_FIELDS).get(name)
        if isinstance(value, str) and "\x00" in value:
            field = "".join(w if i == 0 else w.title() for i, w in enumerate(path.split("_")))
            raise e.InvalidParamsError(f"{field} must not contain a NUL character", field=field)
