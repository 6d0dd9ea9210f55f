"""Server-Sent Events framing (WHATWG HTML §9.2), the server side. No I/O.

Every A2A stream event is one SSE event whose ``id:`` is the task's event sequence number, so a
client that reconnects with ``Last-Event-ID`` resumes exactly after it (PRODUCT.md §3).
"""

from __future__ import annotations

KEEPALIVE = b": keep-alive\n\n"
CONTENT_TYPE = "text/event-stream"


def frame(data: bytes, event_id: int | str | None = None) -> bytes:
    """One event. ``data`` is JSON (no raw newlines, so a single ``data:`` line suffices)."""
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        body = b"".join(b"data: " + line + b"\n" for line in lines)
    elif type(event_id) is int:  # every event of a task's log: one formatting, one copy
        return b"id: %d\ndata: %b\n\n" % (event_id, data)
    else:
        body = b"data: " + data + b"\n"
    if event_id is not None:
        return b"id: " + str(event_id).encode() + b"\n" + body + b"\n"
    return body + b"\n"


#: Event ids are per-task sequence numbers, stored as 64-bit integers by the SQL backends.
MAX_EVENT_ID = 2**63 - 1


def parse_last_event_id(value: str | None) -> int | None:
    """The ``Last-Event-ID`` header as a sequence number; None when absent or not ours.

    A number beyond :data:`MAX_EVENT_ID` is refused (``ValueError``): no event can have it, and
    the SQL backends cannot even compare with it.
    """
    if value is None or not value.strip().isascii() or not value.strip().isdigit():
        return None
    if len(value.strip()) > 19 or int(value.strip()) > MAX_EVENT_ID:
        raise ValueError(f"Last-Event-ID {value.strip()[:40]!r} is beyond any event id")
    return int(value.strip())
