"""Run as a program by test_stream_exit.py: leave ``client.stream(...)`` early, then end.

``python stream_exit_client.py URL MODE`` with MODE ``break``, ``raise`` or ``cancel``. Each
mode is done twice: once followed by a pause (the connection must be closed by then), once
right before the program ends (asyncio then closes every live async generator at once: the
case that used to print "aclose(): asynchronous generator is already running"). Prints the
number of HTTP responses still open after each; the test checks stderr stays empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import httpx

import simple_a2a
from simple_a2a.protocol.models import TaskArtifactUpdateEvent


class CountingTransport(httpx.AsyncBaseTransport):
    """A real HTTP transport that counts the responses whose body is not closed yet."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.open = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.open += 1
        body = response.stream
        counter = self

        class Body(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in body:  # type: ignore[union-attr]
                    yield chunk

            async def aclose(self) -> None:
                counter.open -= 1
                await body.aclose()  # type: ignore[union-attr]

        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=Body(),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


async def leave_early(client: simple_a2a.AsyncClient, mode: str) -> None:
    if mode == "break":
        async for event in client.stream("go"):
            if isinstance(event, TaskArtifactUpdateEvent):
                break
    elif mode == "raise":
        try:
            async for event in client.stream("go"):
                if isinstance(event, TaskArtifactUpdateEvent):
                    raise ValueError("the caller's own error")
        except ValueError as exc:
            assert exc.__context__ is None, f"chained onto the caller's error: {exc.__context__!r}"
    else:

        async def consume() -> None:
            async for _ in client.stream("go"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.3)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def main(url: str, mode: str, counting: CountingTransport) -> None:
    async with simple_a2a.AsyncClient(url, transport=counting) as client:
        await leave_early(client, mode)
        await asyncio.sleep(0.3)
        print(f"open after a pause: {counting.open}", flush=True)
        await leave_early(client, mode)  # and the program ends right away


if __name__ == "__main__":
    counting = CountingTransport()
    asyncio.run(main(sys.argv[1], sys.argv[2], counting))
    print(f"open at exit: {counting.open}", flush=True)
