"""What the client accepts from an agent it should not trust: every default in one place.

An agent (or whatever answers at its URL) can send an answer, an event or a card of any size,
dribble bytes forever, nest JSON until the parser's recursion limit, or redirect the client —
and its credentials — to another origin. :class:`ClientLimits` bounds each of these; the readers
below enforce the sizes *while reading*, so an oversized answer is refused after ``max + 1``
bytes, never buffered whole. See ``docs/security.md`` (client) for the threat model.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = ["ClientLimits", "SeenWindow", "origin_of"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class ClientLimits:
    """The client's bounds on what an agent may send (pass ``limits=`` to the client).

    - ``max_response_bytes``: one unary answer (body) — beyond it ``InvalidAgentResponseError``;
    - ``max_event_bytes``: one server-sent event (its lines together) of a stream;
    - ``max_card_bytes``: the Agent Card — beyond it ``DiscoveryError``;
    - ``call_deadline``: seconds for a whole unary call, retries included (``None``: no total
      deadline; ``timeout=`` still bounds each connect/read/write);
    - ``stream_deadline``: seconds for a whole stream, reconnections included (``None``: none);
    - ``seen_event_ids``: how many recent SSE event ids a stream remembers to drop duplicates
      after a reconnection (a window, so a long stream's memory stays bounded);
    - ``max_card_redirects``: redirects followed when fetching the card (A2A calls never follow
      one; a card redirect to another origin drops the credentials).
    """

    max_response_bytes: int = 32 * MiB
    max_event_bytes: int = 8 * MiB
    max_card_bytes: int = 1 * MiB
    call_deadline: float | None = None
    stream_deadline: float | None = None
    seen_event_ids: int = 1024
    max_card_redirects: int = 5


def origin_of(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


class TooLargeError(Exception):
    """A body or event went over its limit (mapped by the caller to its own error)."""


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """The body of a streamed ``response``, refusing it past ``limit`` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLargeError(f"{declared} bytes announced")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise TooLargeError(f"more than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def loads(content: bytes | str, fail: Callable[[str], Exception]) -> Any:
    """``json.loads`` whose every failure, deep nesting included, becomes ``fail(reason)``."""
    try:
        return json.loads(content)
    except RecursionError:
        raise fail("the JSON is nested too deeply") from None
    except ValueError:
        raise fail("not JSON") from None


@dataclass
class RawEvent:
    """One decoded server-sent event: its ``data`` (lines joined) and the ``id`` in force."""

    data: str
    id: str
    fresh_id: bool


async def sse_events(response: httpx.Response, limit: int) -> AsyncIterator[RawEvent]:
    """Decode ``text/event-stream`` (WHATWG rules) refusing any event over ``limit`` bytes.

    Unlike a line iterator, a line that never ends is refused once it passes the limit.
    """
    pending = bytearray()
    scanned = 0  # bytes of ``pending`` known to hold no line end
    data: list[bytes] = []
    size = 0
    last_id = ""
    id_seen_in_event = False

    async for chunk in response.aiter_bytes():
        pending += chunk
        while True:
            cut = _line_end(pending, scanned)
            if cut is None:
                scanned = max(0, len(pending) - 1)
                if len(pending) + size > limit:
                    raise TooLargeError(f"an event is larger than {limit} bytes")
                break
            line = bytes(pending[: cut[0]])
            del pending[: cut[1]]
            scanned = 0
            if not line:
                if data:
                    text = b"\n".join(data).decode("utf-8", "replace")
                    yield RawEvent(text, last_id, id_seen_in_event)
                data, size, id_seen_in_event = [], 0, False
                continue
            size += len(line)
            if size > limit:
                raise TooLargeError(f"an event is larger than {limit} bytes")
            name, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if name == b"data":
                data.append(value)
            elif name == b"id" and b"\0" not in value:
                new_id = value.decode("utf-8", "replace")
                id_seen_in_event = bool(new_id) and new_id != last_id
                last_id = new_id


def _line_end(buffer: bytearray, start: int) -> tuple[int, int] | None:
    """(end of the first line, start of the next) for ``\\n``, ``\\r\\n`` or ``\\r``."""
    n, r = buffer.find(b"\n", start), buffer.find(b"\r", start)
    if r == -1 and n == -1:
        return None
    if r == -1 or (n != -1 and n < r):
        return n, n + 1
    if r == len(buffer) - 1:
        return None  # a lone CR at the end: wait to see whether LF follows
    return r, r + (2 if buffer[r + 1] == 0x0A else 1)


class SeenWindow:
    """The last ``size`` event ids, to drop the duplicates a resumed stream may replay."""

    def __init__(self, size: int) -> None:
        self._order: deque[str] = deque()
        self._ids: set[str] = set()
        self._size = max(1, size)

    def __contains__(self, event_id: str) -> bool:
        return event_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, event_id: str) -> None:
        if event_id in self._ids:
            return
        self._order.append(event_id)
        self._ids.add(event_id)
        if len(self._order) > self._size:
            self._ids.discard(self._order.popleft())
