"""The streaming scenarios' client, in its own process: ``python -m bench.sse_client MODE PORT``.

A minimal HTTP/1.1 + SSE client on raw asyncio streams (chunked transfer decoding, ``data:``
lines), so the client costs as little as possible and measures the server, not itself.

- ``stream``: SendStreamingMessage ``stream N``, R times in a row; time to first event and
  events/s per stream. Prints one JSON line.
- ``fill``: N blocking SendMessage requests over K keep-alive connections (the tasks a user
  creates through the protocol; the memory-per-task scenario measures the server's RSS around it).
- ``tokens``: S concurrent SendStreamingMessage ``tokens N MS`` (an LLM agent streaming N small
  chunks MS apart, S at once: ``bench/streams.py``); prints ``OPEN`` once every stream has its
  first event (the server's memory with S open streams is read then), then one JSON line: time
  to first event, delivery latency of every chunk (receipt minus stamp), complete streams.
- ``fanout``: one SendStreamingMessage ``fanout PATH N MS`` starts a task; S subscribers
  (SubscribeToTask) join; then PATH is created and the agent emits N stamped events; each
  subscriber's delivery latency per event (receipt minus stamp). Prints one JSON line.
- ``subscribe``: SendMessage ``fanout TRIGGER N MS`` with ``returnImmediately`` (A2A 1.0
  §3.1.1: the working task at once) creates one task; S SubscribeToTask streams (§3.1.6) open on
  it in batches of 200 (``bench/fanout.py``); prints ``OPEN`` once every subscriber has its first
  event (the task's snapshot), and the parent creates TRIGGER after reading the server's memory
  and CPU; the agent then emits N stamped chunks MS apart. Then one JSON line: time to first
  event, each chunk's latency per subscriber copy, subscribers that got every chunk.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

HOST = "127.0.0.1"
STAMP = re.compile(rb"t=(\d+)")


def rpc(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def send_params(text: str) -> dict[str, Any]:
    mid = f"m-{time.time_ns()}-{os.getpid()}-{id(text)}"
    return {"message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}}


class SSE:
    """One open event stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.status = 0

    @classmethod
    async def open(cls, port: int, body: bytes) -> SSE:
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        head = (
            f"POST / HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\nA2A-Version: 1.0\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        writer.write(head + body)
        self = cls(reader, writer)
        return self

    async def read_head(self) -> None:
        head = await self.reader.readuntil(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])
        lower = head.lower()
        if b"transfer-encoding: chunked" not in lower:
            raise RuntimeError(f"expected a chunked event stream, got {head!r}")

    async def chunks(self) -> AsyncIterator[bytes]:
        reader = self.reader
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]

    async def events(self) -> AsyncIterator[bytes]:
        """The ``data:`` payload of each event."""
        buf = b""
        async for chunk in self.chunks():
            buf = (buf + chunk).replace(b"\r\n", b"\n")  # sse-starlette ends lines with CRLF
            while True:
                cut = buf.find(b"\n\n")
                if cut < 0:
                    break
                block, buf = buf[:cut], buf[cut + 2 :]
                data = [ln[5:].lstrip() for ln in block.split(b"\n") if ln.startswith(b"data:")]
                if data:
                    yield b"\n".join(data)

    def close(self) -> None:
        self.writer.close()


async def one_stream(port: int, n: int) -> dict[str, float]:
    t0 = time.perf_counter()
    sse = await SSE.open(port, rpc("SendStreamingMessage", send_params(f"stream {n}")))
    await sse.read_head()
    first = None
    count = artifacts = 0
    last = b""
    async for data in sse.events():
        if first is None:
            first = time.perf_counter()
        count += 1
        artifacts += b'"artifactUpdate"' in data
        last = data
    end = time.perf_counter()
    sse.close()
    if artifacts != n or b"TASK_STATE_COMPLETED" not in last:
        raise RuntimeError(f"stream incomplete: {artifacts}/{n} chunks, last event {last[:200]!r}")
    assert first is not None
    return {"ttfe_ms": (first - t0) * 1000, "events": count, "events_per_s": count / (end - t0)}


async def stream_mode(port: int, n: int, repeat: int) -> dict[str, Any]:
    await one_stream(port, min(n, 50))  # warm-up
    runs = [await one_stream(port, n) for _ in range(repeat)]
    return {
        "runs": runs,
        "ttfe_ms": statistics.median(r["ttfe_ms"] for r in runs),
        "events_per_s": statistics.median(r["events_per_s"] for r in runs),
    }


async def fanout_mode(port: int, subscribers: int, n: int, interval_ms: int) -> dict[str, Any]:
    trigger = os.path.join(tempfile.mkdtemp(prefix="a2a-fanout-"), "go")
    creator = await SSE.open(
        port, rpc("SendStreamingMessage", send_params(f"fanout {trigger} {n} {interval_ms}"))
    )
    await creator.read_head()
    creator_events = creator.events()
    task_id = None
    async for data in creator_events:
        obj = json.loads(data)["result"]
        task_id = (obj.get("task") or obj.get("statusUpdate") or {}).get("id") or (
            obj.get("statusUpdate") or {}
        ).get("taskId")
        if task_id:
            break
    assert task_id, "no task id in the first event"

    subs: list[SSE] = []
    for start in range(0, subscribers, 100):  # connect in batches
        batch = [
            SSE.open(port, rpc("SubscribeToTask", {"id": task_id}))
            for _ in range(start, min(subscribers, start + 100))
        ]
        subs.extend(await asyncio.gather(*batch))
    await asyncio.gather(*(s.read_head() for s in subs))
    bad = [s.status for s in subs if s.status != 200]
    if bad:
        raise RuntimeError(f"{len(bad)} subscribers refused: {bad[:3]}")
    latencies: list[float] = []
    received = [0] * len(subs)

    async def consume(i: int, sse: SSE) -> None:
        async for data in sse.events():
            now = time.time_ns()
            m = STAMP.search(data)
            if m and b'"artifactUpdate"' in data:
                latencies.append((now - int(m.group(1))) / 1e6)
                received[i] += 1
        sse.close()

    consumers = [asyncio.create_task(consume(i, s)) for i, s in enumerate(subs)]
    await asyncio.sleep(0.5)  # every subscriber is attached (its snapshot has been sent)
    open(trigger, "w").close()

    async def drain_creator() -> None:
        async for _ in creator_events:
            pass
        creator.close()

    await asyncio.wait_for(
        asyncio.gather(drain_creator(), *consumers), timeout=60 + n * interval_ms / 1000
    )
    complete = sum(1 for r in received if r == n)
    latencies.sort()
    return {
        "subscribers": subscribers,
        "events": n,
        "complete_subscribers": complete,
        "deliveries": len(latencies),
        "p50_ms": latencies[len(latencies) // 2] if latencies else None,
        "p99_ms": latencies[int(len(latencies) * 0.99)] if latencies else None,
        "max_ms": latencies[-1] if latencies else None,
    }


def raise_open_files_limit() -> None:
    """As many descriptors as the hard limit allows (10,000 streams need 10,000 sockets)."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                return status, body
            body += data[:-2]
    m = re.search(rb"content-length: *(\d+)", lower)
    return status, await reader.readexactly(int(m.group(1)) if m else 0)


async def _post(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, body: bytes
) -> tuple[int, bytes]:
    """One JSON-RPC request on a keep-alive connection, and its answer."""
    writer.write(
        (
            f"POST / HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            "Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    return await _read_response(reader)


async def fill_mode(port: int, n: int, connections: int) -> dict[str, Any]:
    """Create ``n`` tasks with SendMessage (HTTP/1.1 keep-alive), ``connections`` at a time."""
    left = n
    failures = 0
    t0 = time.perf_counter()

    async def worker(k: int) -> None:
        nonlocal left, failures
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        i = 0
        while left > 0:
            left -= 1
            i += 1
            body = rpc("SendMessage", send_params(f"fill {k}-{i}"))
            status, answer = await _post(reader, writer, port, body)
            if status != 200 or b"TASK_STATE_COMPLETED" not in answer:
                failures += 1
        writer.close()

    await asyncio.gather(*(worker(k) for k in range(connections)))
    return {"tasks": n, "failures": failures, "seconds": time.perf_counter() - t0}


class Tally:
    """S streams opened in batches of 200 (as clients arrive) and read to their end: what each
    records (time to first event, each stamped chunk's latency, complete and failed streams)."""

    def __init__(self, port: int, streams: int, chunks: int) -> None:
        self.port, self.streams, self.chunks = port, streams, chunks
        self.latencies: list[float] = []
        self.ttfe: list[float] = []
        self.complete = self.failed = self.opened = 0
        self.all_open = asyncio.Event()
        self.delivered_at_open = 0  #: chunks read before every stream was open

    def _seen_first(self) -> None:
        self.opened += 1
        if self.opened == self.streams:
            self.all_open.set()

    async def read(self, body: bytes) -> None:
        t0 = time.perf_counter()
        first = True
        try:
            sse = await SSE.open(self.port, body)
            await sse.read_head()
            got = 0
            last = b""
            async for data in sse.events():
                now = time.time_ns()
                if first:
                    first = False
                    self.ttfe.append((time.perf_counter() - t0) * 1000)
                    self._seen_first()
                if b'"artifactUpdate"' in data:
                    m = STAMP.search(data)
                    if m:
                        self.latencies.append((now - int(m.group(1))) / 1e6)
                        got += 1
                last = data
            sse.close()
            self.complete += got == self.chunks and b"TASK_STATE_COMPLETED" in last
            self.failed += b'"error"' in last  # refused (a limit) or failed: counted, not hidden
        except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError):
            self.failed += 1
            if first:
                self._seen_first()

    async def run(self, body: Callable[[], bytes], seconds: float) -> float:
        """Every stream open and read, within ``seconds``; prints ``OPEN`` once every stream has
        its first event. Returns the time it took."""
        t0 = time.perf_counter()
        end = time.monotonic() + seconds
        tasks = []
        for start in range(0, self.streams, 200):
            count = min(self.streams, start + 200) - start
            tasks += [asyncio.create_task(self.read(body())) for _ in range(count)]
            await asyncio.sleep(0.01)
        await asyncio.wait_for(self.all_open.wait(), end - time.monotonic())
        self.delivered_at_open = len(self.latencies)
        print("OPEN", flush=True)
        await asyncio.wait_for(asyncio.gather(*tasks), end - time.monotonic())
        return time.perf_counter() - t0

    def report(self) -> dict[str, Any]:
        latencies, ttfe = sorted(self.latencies), sorted(self.ttfe)

        def pct(values: list[float], q: float) -> float | None:
            return values[min(len(values) - 1, int(len(values) * q))] if values else None

        return {
            "complete": self.complete,
            "failed": self.failed,
            "deliveries": len(latencies),
            "delivered_at_open": self.delivered_at_open,
            "p50_ms": pct(latencies, 0.5),
            "p99_ms": pct(latencies, 0.99),
            "max_ms": latencies[-1] if latencies else None,
            "ttfe_p50_ms": pct(ttfe, 0.5),
            "ttfe_p99_ms": pct(ttfe, 0.99),
        }


def deadline_s(streams: int, chunks: int, interval_ms: int, copy_ms: float = 1) -> float:
    """Long enough for a slow server to deliver every chunk (``copy_ms`` of its CPU each),
    bounded."""
    return 120 + chunks * interval_ms / 1000 + streams * chunks * copy_ms / 1000


async def tokens_mode(port: int, streams: int, n: int, interval_ms: int) -> dict[str, Any]:
    tally = Tally(port, streams, n)
    text = f"tokens {n} {interval_ms}"
    seconds = await tally.run(
        lambda: rpc("SendStreamingMessage", send_params(text)), deadline_s(streams, n, interval_ms)
    )
    return {
        "streams": streams,
        "events_per_stream": n,
        "interval_ms": interval_ms,
        "seconds": seconds,
        **tally.report(),
    }


async def subscribe_mode(
    port: int, subscribers: int, n: int, interval_ms: int, trigger: str
) -> dict[str, Any]:
    params = send_params(f"fanout {trigger} {n} {interval_ms}")
    params["configuration"] = {"returnImmediately": True}
    reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
    status, answer = await asyncio.wait_for(
        _post(reader, writer, port, rpc("SendMessage", params)), 30
    )
    writer.close()
    task = (json.loads(answer).get("result") or {}).get("task") or {}
    state = (task.get("status") or {}).get("state")
    if status != 200 or state not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
        raise RuntimeError(f"SendMessage did not return a running task: {status} {answer[:300]!r}")
    subscribe = rpc("SubscribeToTask", {"id": task["id"]})
    tally = Tally(port, subscribers, n)
    # 3 ms a copy: a store read per subscriber per chunk (SQLite) measured above 1 ms on a
    # loaded machine
    seconds = await tally.run(lambda: subscribe, deadline_s(subscribers, n, interval_ms, 3))
    return {
        "subscribers": subscribers,
        "events": n,
        "interval_ms": interval_ms,
        "seconds": seconds,
        **tally.report(),
    }


def main() -> None:
    mode, port = sys.argv[1], int(sys.argv[2])
    args = [int(a) for a in sys.argv[3:] if a.isdigit()]
    if mode == "stream":
        result = asyncio.run(stream_mode(port, *args))
    elif mode == "fill":
        result = asyncio.run(fill_mode(port, *args))
    elif mode == "fanout":
        result = asyncio.run(fanout_mode(port, *args))
    elif mode == "tokens":
        raise_open_files_limit()
        result = asyncio.run(tokens_mode(port, *args))
    elif mode == "subscribe":  # PORT SUBSCRIBERS CHUNKS MS TRIGGER
        raise_open_files_limit()
        result = asyncio.run(subscribe_mode(port, *args[:3], sys.argv[6]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print("BENCH_JSON " + json.dumps(result))


if __name__ == "__main__":
    main()
