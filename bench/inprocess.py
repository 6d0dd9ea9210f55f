"""What our code costs per request, without sockets: the bench echo agent's ASGI app called
directly, in process (the tool behind round 4's in-process numbers in bench/README.md).

    python -m bench.inprocess [WARMUP [CALLS]]       (defaults 1500 and 5000)

Prints ``cpu_us_per_call`` (``time.process_time`` over the measured calls, after the warm-up).
Settings (environment):

- ``OP``: ``SendMessage`` (default), ``GetTask`` (of one task created first), ``ListTasks``
  (pages of 50 of 100 tasks created first) or ``SendStreamingMessage`` (``stream 20``: a task of
  ``CHUNKS`` artifact chunks, default 20, then completed; divide by the chunks for a cost per
  chunk), over JSON-RPC;
- ``CONC``: concurrent callers (default 1); 32 reproduces what ``wrk -c32`` adds in process;
- ``STORAGE``: a storage URL (``sqlite:///tmp/x.db``); default the memory store;
- ``NOGC=1``: no garbage collection during the measured calls (what is code, what is GC);
- ``NOPACK=1``: the memory store keeps every task and log as models (what packing costs);
- ``NOTIMERS=1``: the lease keeper's loops (heartbeat, scan, cancel watch) do not start;
- ``LATENCY=1``: also print each call's wall-clock latency (p50, p99, p99.9, max, and how many
  calls took over 5x the median): where a tail comes from without sockets or a load generator
  (round 7 found SQLite's checkpoints this way, bench/README.md).

Instruction counts, repeatable to within ~0.5 % for the same code: hash seed fixed, and no
timers (under valgrind, 50x slower, they fire 50x more often per request, and more still when
the machine is busy)::

    export PYTHONHASHSEED=0 NOTIMERS=1
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python -m bench.inprocess 1500 0
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python -m bench.inprocess 1500 1000

and divide the difference of the two totals by 1000. Run it from the checkout to measure (its
``src`` first on ``PYTHONPATH`` to measure another worktree's code).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.agents import no_lease_timers, ours_app

HEADERS = [
    (b"host", b"127.0.0.1"),
    (b"content-type", b"application/json"),
    (b"a2a-version", b"1.0"),
]


def send_body(i: int) -> bytes:
    message = {"messageId": f"m{i}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    return json.dumps(
        {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}
    ).encode()


def stream_body(i: int) -> bytes:
    chunks = os.environ.get("CHUNKS", "20")
    message = {"messageId": f"m{i}", "role": "ROLE_USER", "parts": [{"text": f"stream {chunks}"}]}
    request = {"jsonrpc": "2.0", "id": i, "method": "SendStreamingMessage"}
    return json.dumps({**request, "params": {"message": message}}).encode()


def get_body(task_id: str) -> Callable[[int], bytes]:
    def body(i: int) -> bytes:
        request = {"jsonrpc": "2.0", "id": i, "method": "GetTask", "params": {"id": task_id}}
        return json.dumps(request).encode()

    return body


def list_body(i: int) -> bytes:
    request = {"jsonrpc": "2.0", "id": i, "method": "ListTasks", "params": {"pageSize": 50}}
    return json.dumps(request).encode()


async def main(warmup: int, calls: int) -> float:
    if os.environ.get("NOPACK"):
        from simple_a2a.storage import memory

        memory.MemoryTaskStore.__init__.__defaults__ = (10**9, 32)  # (hot, pack_batch)
        memory.MemoryEventLog.__init__.__defaults__ = (10_000, 10**9, 32)
    if os.environ.get("NOTIMERS"):
        no_lease_timers()
    app, populate = ours_app(os.environ.get("STORAGE") or None, 0)
    await populate()
    answers: list[bytes] = []

    async def call(body: bytes) -> None:
        messages: list[dict[str, Any]] = [{"type": "http.request", "body": body}]

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop()
            if streaming:  # an open stream's client stays until the stream ends
                await asyncio.get_running_loop().create_future()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                answers.append(message.get("body", b""))

        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/", "raw_path": b"/", "root_path": "", "query_string": b"",
            "headers": HEADERS, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        }  # fmt: skip
        await app(scope, receive, send)

    op = os.environ.get("OP", "SendMessage")
    streaming = op == "SendStreamingMessage"
    body = stream_body if streaming else send_body
    if op == "GetTask":
        await call(send_body(0))
        body = get_body(json.loads(answers[-1])["result"]["task"]["id"])
    elif op == "ListTasks":
        for i in range(100):
            await call(send_body(-1 - i))
        body = list_body
    for i in range(warmup):
        await call(body(i))
    if os.environ.get("NOGC"):
        gc.collect()
        gc.disable()
    concurrency = int(os.environ.get("CONC", "1"))

    latencies: list[float] = []
    clock = time.perf_counter

    async def caller(k: int) -> None:
        for i in range(warmup + k, warmup + calls, concurrency):
            started = clock()
            await call(body(i))
            latencies.append(clock() - started)

    started = time.process_time()
    await asyncio.gather(*(caller(k) for k in range(concurrency)))
    spent = time.process_time() - started
    gc.enable()
    last = answers[-2] if streaming else answers[-1]  # (a stream ends with an empty body)
    if calls and b'"TASK_STATE_COMPLETED"' not in last:
        raise SystemExit(f"unexpected answer: {answers[-1][:300]!r}")
    if os.environ.get("LATENCY") and latencies:
        print(latency_summary(latencies))
    return spent / calls * 1e6 if calls else 0.0


def latency_summary(latencies: list[float]) -> str:
    ms = sorted(x * 1000 for x in latencies)
    n = len(ms)
    p50 = ms[n // 2]
    slow = sum(1 for x in ms if x > 5 * p50)
    return (
        f"latency_ms p50={p50:.3f} p99={ms[min(n - 1, n * 99 // 100)]:.3f} "
        f"p99.9={ms[min(n - 1, n * 999 // 1000)]:.3f} max={ms[-1]:.3f} over_5x_p50={slow}/{n}"
    )


if __name__ == "__main__":
    warmup = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    print(f"cpu_us_per_call={asyncio.run(main(warmup, calls)):.1f}")
