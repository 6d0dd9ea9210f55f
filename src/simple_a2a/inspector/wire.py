"""The raw wire view: every HTTP exchange the inspector's client makes, as it went over the wire.

:class:`RecordingTransport` wraps the httpx transport under our own :class:`AsyncClient`, so
what it records is exactly what the bindings sent and what the agent answered (JSON-RPC or
HTTP+JSON, unary or SSE). Streamed bodies are recorded as they arrive, so an open stream
shows its events live. Everything is bounded: the log keeps the last ``max_exchanges``, each
body keeps its first ``max_body`` characters. Credentials never reach the page: the values of
``Authorization``, ``Cookie`` and any header or query parameter whose name holds ``key`` or
``token`` are replaced by ``[redacted]``. Compressed bodies are shown decompressed.
"""

from __future__ import annotations

import codecs
import itertools
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_MAX_EXCHANGES", "Exchange", "RecordingTransport", "WireLog"]

DEFAULT_MAX_EXCHANGES = 200
DEFAULT_MAX_BODY = 64 * 1024
#: Header names whose values are credentials (lower case); "key" in a name counts too.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


def _is_secret(name: str) -> bool:
    name = name.lower()
    return name in SECRET_HEADERS or "key" in name or "token" in name


def _redacted(headers: httpx.Headers) -> list[list[str]]:
    return [[k, "[redacted]" if _is_secret(k) else v] for k, v in headers.multi_items()]


def _redacted_url(url: httpx.URL) -> str:
    """The URL with credentials in its query (an API key the card puts there) redacted."""
    params = url.params
    if not any(_is_secret(name) for name in params):
        return str(url)
    safe = [(k, "[redacted]" if _is_secret(k) else v) for k, v in params.multi_items()]
    return str(url.copy_with(params=safe))


@dataclass
class Exchange:
    """One request and its response, as text (bodies decoded as UTF-8, bounded)."""

    id: int
    started: float
    method: str
    url: str
    request_headers: list[list[str]]
    request_body: str
    status: int | None = None
    response_headers: list[list[str]] = field(default_factory=list)
    response_body: str = ""
    truncated: bool = False
    done: bool = False
    error: str | None = None
    elapsed_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started": self.started,
            "method": self.method,
            "url": self.url,
            "requestHeaders": self.request_headers,
            "requestBody": self.request_body,
            "status": self.status,
            "responseHeaders": self.response_headers,
            "responseBody": self.response_body,
            "truncated": self.truncated,
            "done": self.done,
            "error": self.error,
            "elapsedMs": self.elapsed_ms,
        }


class WireLog:
    """The last ``max_exchanges`` exchanges, oldest first; ids grow forever."""

    def __init__(
        self, max_exchanges: int = DEFAULT_MAX_EXCHANGES, max_body: int = DEFAULT_MAX_BODY
    ) -> None:
        self.max_body = max_body
        self._exchanges: deque[Exchange] = deque(maxlen=max_exchanges)
        self._ids = itertools.count(1)

    def open(self, request: httpx.Request) -> Exchange:
        body = request.content.decode("utf-8", "replace")
        exchange = Exchange(
            id=next(self._ids),
            started=time.time(),
            method=request.method,
            url=_redacted_url(request.url),
            request_headers=_redacted(request.headers),
            request_body=body[: self.max_body],
            truncated=len(body) > self.max_body,
        )
        self._exchanges.append(exchange)
        return exchange

    def append_body(self, exchange: Exchange, text: str) -> None:
        room = self.max_body - len(exchange.response_body)
        if len(text) > room:
            exchange.truncated = True
            text = text[: max(room, 0)]
        exchange.response_body += text

    def since(self, after: int = 0) -> list[dict[str, Any]]:
        """Exchanges with an id above ``after``, plus any still open (their bodies grow)."""
        return [e.to_dict() for e in self._exchanges if e.id > after or not e.done]

    def clear(self) -> None:
        self._exchanges.clear()


class _RecordedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, log: WireLog, exchange: Exchange) -> None:
        self._inner = inner
        self._log = log
        self._exchange = exchange
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        encoding = dict(exchange.response_headers).get("content-encoding", "").lower()
        # gzip or deflate (zlib or raw) as the agent sent it; wbits 47: zlib or gzip header
        self._inflate = zlib.decompressobj(47) if encoding in ("gzip", "deflate") else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                plain = chunk
                if self._inflate is not None:
                    try:
                        plain = self._inflate.decompress(chunk)
                    except zlib.error:  # not what it said: show the bytes as they came
                        self._inflate = None
                self._log.append_body(self._exchange, self._decoder.decode(plain))
                yield chunk
        except Exception as exc:  # a dropped stream shows as such in the wire view
            self._exchange.error = f"{type(exc).__name__}: {exc}"
            raise

    async def aclose(self) -> None:
        self._exchange.done = True
        self._exchange.elapsed_ms = (time.time() - self._exchange.started) * 1000
        await self._inner.aclose()


class RecordingTransport(httpx.AsyncBaseTransport):
    """An httpx transport that records each exchange in a :class:`WireLog`."""

    def __init__(self, log: WireLog, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.log = log
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        exchange = self.log.open(request)
        try:
            response = await self._inner.handle_async_request(request)
        except Exception as exc:
            exchange.error = f"{type(exc).__name__}: {exc}"
            exchange.done = True
            raise
        exchange.status = response.status_code
        exchange.response_headers = _redacted(response.headers)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_RecordedStream(response.stream, self.log, exchange),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
