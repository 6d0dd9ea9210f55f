"""Cluster mode (issue #14), measured: ``python -m bench.cluster`` (PostgreSQL at
``$SIMPLE_A2A_TEST_POSTGRES``; a random schema per run, dropped afterwards). Never part of the
test run. ``BENCH_QUICK=1`` shortens every phase.

1. **Lease cost**: SendMessage through the request handler (in process, 16 concurrent clients)
   on SQLite and PostgreSQL with task leases (the default) and without (``storage.leases =
   None``): what a lease acquire and release per task costs.
2. **Cross-replica event latency**: an event appended through one ``PostgresStorage`` (replica
   A) until a waiter on another instance (replica B, its own pool and LISTEN connection) wakes,
   against a waiter on the same instance (in process); p50 / p99.
3. **SendMessage throughput with 1, 2 and 3 replicas** (uvicorn processes on one schema, the
   client spreading requests over them, 16 concurrent connections).
4. **Takeover time**: kill -9 of the replica running a task until another replica has failed
   it (lease 1 s, scan 0.3 s here; the defaults are 10 s and 2.5 s, so add about 11 s).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

DSN = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
QUICK = os.environ.get("BENCH_QUICK") == "1"
AGENT = Path(__file__).resolve().parent.parent / "tests" / "cluster" / "cluster_agent.py"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def lease_cost(storage_url: str, leases: bool, seconds: float) -> float:
    from simple_a2a.protocol import AgentCard
    from simple_a2a.protocol.requests import SendMessageRequest
    from simple_a2a.server import CallContext, server

    async def echo(ctx: Any) -> str:
        return "ok"

    agent = server(AgentCard(name="b", description="b", version="1"), echo, storage=storage_url)
    if not leases:
        agent.storage.leases = None
        agent.handler.leases = None
        agent.leases = None
    await agent.startup()
    done = 0
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            request = SendMessageRequest.from_dict(
                {
                    "message": {
                        "messageId": uuid.uuid4().hex,
                        "role": "ROLE_USER",
                        "parts": [{"text": "hi"}],
                    }
                }
            )
            await agent.handler.send_message(request, CallContext())
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(16)))
    rate = done / (time.perf_counter() - started)
    await agent.shutdown()
    return rate


async def event_latency(schema: str, samples: int) -> tuple[list[float], list[float]]:
    from simple_a2a.protocol.models import TaskState, TaskStatus, TaskStatusUpdateEvent
    from simple_a2a.protocol.requests import StreamResponse
    from simple_a2a.storage.postgres import PostgresStorage

    a = PostgresStorage(DSN, schema=schema)
    b = PostgresStorage(DSN, schema=schema)
    await a.open()
    await b.open()
    event = StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="lat", context_id="c", status=TaskStatus(state=TaskState.WORKING)
        )
    )
    results: dict[str, list[float]] = {"in process": [], "cross replica": []}
    try:
        for name, waiter in (("in process", a), ("cross replica", b)):
            task_id = f"lat-{name}"
            for n in range(samples):
                woken = asyncio.ensure_future(waiter.events.wait(task_id, n, 5))
                await asyncio.sleep(0.005)  # the waiter is registered
                started = time.perf_counter()
                await a.events.append(task_id, event)
                assert await woken
                results[name].append((time.perf_counter() - started) * 1000)
    finally:
        await a.close()
        await b.close()
    return results["in process"], results["cross replica"]


def _start(storage: str, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, str(AGENT), storage, str(port)], env={**os.environ, **env}
    )
    return _ready(proc, port)


def _ready(proc: subprocess.Popen[bytes], port: int) -> subprocess.Popen[bytes]:
    """``proc`` once it serves its agent card on ``port`` (30 s at most; killed otherwise)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError("replica did not start")


def _message(text: str, **config: Any) -> dict[str, Any]:
    msg = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"message": msg, **({"configuration": config} if config else {})}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": body}


async def throughput(ports: list[int], seconds: float) -> float:
    done = 0
    deadline = time.perf_counter() + seconds
    clients = [httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}") for p in ports]

    async def worker(n: int) -> None:
        nonlocal done
        client = clients[n % len(clients)]
        while time.perf_counter() < deadline:
            answer = (await client.post("/", json=_message("quick"))).json()
            assert "result" in answer, answer
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(16)))
    rate = done / (time.perf_counter() - started)
    for client in clients:
        await client.aclose()
    return rate


def takeover(storage: str, ports: list[int], procs: list[subprocess.Popen[bytes]]) -> float:
    answer = httpx.post(
        f"http://127.0.0.1:{ports[0]}/", json=_message("hang", returnImmediately=True), timeout=10
    ).json()
    task_id = answer["result"]["task"]["id"]
    time.sleep(0.5)
    procs[0].send_signal(signal.SIGKILL)
    procs[0].wait()
    killed = time.monotonic()
    while True:
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        task = httpx.post(f"http://127.0.0.1:{ports[1]}/", json=body, timeout=10).json()["result"]
        if task["status"]["state"] == "TASK_STATE_FAILED":
            return time.monotonic() - killed
        time.sleep(0.02)


async def _drop(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(DSN)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def main() -> None:
    from simple_a2a.server.background import free_port

    seconds = 2.0 if QUICK else 5.0
    schema = f"bench_cluster_{secrets.token_hex(4)}"
    lines = ["## Cluster mode (`python -m bench.cluster`)", ""]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            lines += [
                "| SendMessage in process, c=16 | leases | no leases | ratio |",
                "|---|---|---|---|",
            ]
            for name, url in (
                ("SQLite", f"sqlite:///{tmp}/bench.db"),
                ("PostgreSQL", f"{DSN}?schema={schema}_l"),
            ):
                # Interleaved (on, off, off, on), best of two each: a shared machine's noise
                # and the first run's warm-up hit both alike.
                runs = [(on, asyncio.run(lease_cost(url, on, seconds))) for on in (1, 0, 0, 1)]
                rates = [max(r for on, r in runs if on == want) for want in (1, 0)]
                lines.append(
                    f"| {name} | {rates[0]:.0f}/s | {rates[1]:.0f}/s | {rates[0] / rates[1]:.2f} |"
                )
            asyncio.run(_drop(f"{schema}_l"))
        local, remote = asyncio.run(event_latency(schema, 100 if QUICK else 500))
        lines += [
            "",
            "| event latency (append -> waiter woken) | p50 | p99 |",
            "|---|---|---|",
            f"| in process | {_pct(local, 0.5):.2f} ms | {_pct(local, 0.99):.2f} ms |",
            f"| cross replica (PostgreSQL NOTIFY) | {_pct(remote, 0.5):.2f} ms "
            f"| {_pct(remote, 0.99):.2f} ms |",
            "",
        ]
        storage = f"{DSN}?schema={schema}"
        ports = [free_port() for _ in range(3)]
        env = {"CLUSTER_RESUMABLE": "0"}
        procs: list[subprocess.Popen[bytes]] = []
        try:
            lines += ["| replicas | SendMessage/s (c=16, over HTTP) |", "|---|---|"]
            for n in (1, 2, 3):
                procs.append(_start(storage, ports[n - 1], env))
                rate = asyncio.run(throughput(ports[:n], seconds))
                lines.append(f"| {n} | {rate:.0f} |")
            times = [takeover(storage, ports, procs)]
            lines += ["", f"takeover after kill -9 (lease 1 s, scan 0.3 s): {times[0]:.2f} s"]
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
    finally:
        asyncio.run(_drop(schema))
    print("\n".join(lines))
    print(f"\nmachine: {os.cpu_count()} CPUs, load {os.getloadavg()}; c=16 on 2 cores")


if __name__ == "__main__":
    main()
