"""Unary calls retried where that is safe, and moved to the next interface when the chosen one
cannot be reached (spec §5.2).

The one rule for both: a :class:`ConnectError` (refused, no route, DNS, TLS handshake, connect
timeout) means nothing reached the agent, so any operation, SendMessage included, may be sent
again, here or at another interface; a read timeout or a dropped connection may have reached it,
so only idempotent reads are retried, and never elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from simple_a2a.protocol.errors import RateLimitError
from simple_a2a.protocol.logcontext import library_logger

from .errors import ClientTimeoutError, ConnectError, TransportError
from .streams import RetryPolicy
from .transport import Transport

log = library_logger("simple_a2a.client")

#: Reads that are safe to repeat after a timeout or a dropped connection.
IDEMPOTENT = frozenset(
    {
        "GetTask",
        "ListTasks",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    }
)

#: Given the transport that could not connect and why, the next interface's transport (or the
#: error raised again when there is none).
FallBack = Callable[[Transport, ConnectError], Awaitable[Transport]]


async def call_anywhere(
    transport: Transport,
    operation: str,
    data: dict[str, Any],
    timeout: Any,
    policy: RetryPolicy,
    fall_back: FallBack,
) -> dict[str, Any]:
    """:func:`call_retried` on ``transport``, then on the next interfaces while none connects."""
    while True:
        try:
            return await call_retried(transport, operation, data, timeout, policy)
        except ConnectError as exc:
            transport = await fall_back(transport, exc)


async def call_retried(
    transport: Transport, operation: str, data: dict[str, Any], timeout: Any, policy: RetryPolicy
) -> dict[str, Any]:
    """One call through ``transport``, retried as ``policy`` and the module's rule allow."""
    attempt = 0
    while True:
        attempt += 1
        delay = policy.delay(attempt)
        try:
            return await transport.call(operation, data, timeout=timeout)
        except ConnectError:
            if attempt >= policy.max_attempts:
                raise
        except RateLimitError as exc:  # refused before anything was done: safe to resend
            if attempt >= policy.max_attempts:
                raise
            delay = min(policy.max_backoff, max(delay, exc.retry_after or 0.0))
        except (ClientTimeoutError, TransportError):
            if operation not in IDEMPOTENT or attempt >= policy.max_attempts:
                raise
        log.info("%s failed (attempt %d); retrying in %.2fs", operation, attempt, delay)
        await asyncio.sleep(delay)
