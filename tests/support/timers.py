"""Counting the timers a piece of code sets on the running loop (wake-up tests, issue #36)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def counted_timers() -> Iterator[list[int]]:
    """While inside, every ``call_at`` / ``call_later`` of the running loop is counted in the
    one-element list yielded; the loop's own methods are back afterwards."""
    loop = asyncio.get_running_loop()
    count = [0]
    call_at, call_later = loop.call_at, loop.call_later

    def counting_at(*args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        count[0] += 1
        return call_at(*args, **kwargs)

    def counting_later(*args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        count[0] += 1
        return call_later(*args, **kwargs)

    loop.call_at, loop.call_later = counting_at, counting_later  # type: ignore[method-assign]
    try:
        yield count
    finally:
        del loop.call_at, loop.call_later  # (the instance's: the class's methods again)
