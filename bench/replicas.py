"""SendMessage with 1, 2 and 3 replicas on one PostgreSQL schema (issue #34), in one run:
``python -m bench.replicas`` (``BENCH_QUICK=1``: 2 rounds of 3 s). Never part of the test run.

Three replicas (``tests/cluster/cluster_agent.py``: uvicorn, task leases, the push dispatcher,
the defaults of ``server()``) start on a fresh schema and stay up for the whole run; a step
with ``n`` replicas drives the first ``n`` of them at once, one ``wrk`` each (``bench/load.lua``,
JSON-RPC SendMessage, a new task per request, answered ``completed``), ``BENCH_CONNECTIONS``
(16) connections split between them. The idle replicas keep their heartbeats, as in production.
Steps are interleaved (round r runs 1, 2, 3 replicas in a rotated order) so the drift of a
shared machine hits each alike; reported per ``n``: the median and [range] of req/s over the
rounds, the ratio to one replica paired per round, p99 latency (the worst replica's), and the
CPU per request of the replicas and of PostgreSQL (all ``postgres`` processes,
``/proc/PID/stat``): where the work goes, and whether the machine, not the design, is the
limit (``cores busy``: replicas + PostgreSQL CPU seconds per second of the step).

The baseline is the one-replica step of the same round: what a second and third process buy.
On a machine with fewer cores than replicas + database + load generator, they mostly share the
same cores; the ``cores busy`` column says when that is so.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.__main__ import SEND_RPC, cpu_seconds
from bench.cluster import DSN, QUICK, _drop, _start

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2" if QUICK else "5"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "3" if QUICK else "8"))
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
LOAD_LUA = Path(__file__).resolve().parent / "load.lua"


def _postgres_cpu() -> float:
    """CPU seconds of every ``postgres`` process on this machine (backends, WAL writer, ...)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() != "postgres":
                        continue
            except OSError:
                continue
            total += cpu_seconds(int(entry))
    return total


def _wrk(port: int, connections: int) -> dict[str, Any]:
    env = {**os.environ, "BENCH_METHOD": "POST", "BENCH_PATH": "/", "BENCH_BODY": SEND_RPC}
    cmd = [
        "wrk", "-t1", f"-c{connections}", f"-d{SECONDS}s", "--timeout", "10s",
        "-s", str(LOAD_LUA), f"http://127.0.0.1:{port}",
    ]  # fmt: skip
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("BENCH_JSON "))
    raw: dict[str, Any] = json.loads(line[len("BENCH_JSON ") :])
    return raw


def step(ports: list[int], pids: list[int]) -> dict[str, Any]:
    """Drive ``ports`` at once for SECONDS; totals, and the CPU of replicas and PostgreSQL."""
    share = [CONNECTIONS // len(ports) + (i < CONNECTIONS % len(ports)) for i in range(len(ports))]
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    pg_before = _postgres_cpu()
    started = time.monotonic()
    with ThreadPoolExecutor(len(ports)) as pool:
        runs = list(pool.map(_wrk, ports, share))
    elapsed = time.monotonic() - started
    requests = sum(r["requests"] for r in runs)
    errors = sum(sum(r["errors"].values()) for r in runs)
    replicas_cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    pg_cpu = _postgres_cpu() - pg_before
    return {
        "rps": sum(r["requests"] / (r["duration_us"] / 1e6) for r in runs),
        "p99_ms": max(r["p99_us"] for r in runs) / 1000,
        "errors": errors,
        "replicas_cpu_us": replicas_cpu / max(requests, 1) * 1e6,
        "postgres_cpu_us": pg_cpu / max(requests, 1) * 1e6,
        "cores_busy": (replicas_cpu + pg_cpu) / elapsed,
    }


def _range(values: list[float], fmt: str = "{:.0f}") -> str:
    return (
        f"{fmt.format(statistics.median(values))} "
        f"[{fmt.format(min(values))}-{fmt.format(max(values))}]"
    )


def main() -> None:
    from simple_a2a.server.background import free_port

    schema = f"bench_replicas_{secrets.token_hex(4)}"
    storage = f"{DSN}?schema={schema}"
    ports = [free_port() for _ in range(3)]
    env = {"CLUSTER_RESUMABLE": "0"}
    procs: list[subprocess.Popen[bytes]] = []
    results: dict[int, list[dict[str, Any]]] = {1: [], 2: [], 3: []}
    loads = [os.getloadavg()[0]]
    try:
        procs = [_start(storage, port, env) for port in ports]
        pids = [proc.pid for proc in procs]
        for n in (1, 2, 3):  # warm-up: connections, prepared statements, the pool
            step(ports[:n], pids)
        for r in range(ROUNDS):
            order = [1, 2, 3][r % 3 :] + [1, 2, 3][: r % 3]
            for n in order:
                results[n].append(step(ports[:n], pids))
                loads.append(os.getloadavg()[0])
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        asyncio.run(_drop(schema))
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        f"## SendMessage with 1, 2, 3 replicas (`python -m bench.replicas`), {when}",
        "",
        f"{ROUNDS} interleaved rounds of {SECONDS} s, c={CONNECTIONS} in all (wrk), one "
        "PostgreSQL schema; medians [ranges].",
        "",
        "| replicas | SendMessage/s | vs 1 replica (paired) | p99 ms | replicas CPU us/req "
        "| PostgreSQL CPU us/req | cores busy | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, runs in results.items():
        ratios = [run["rps"] / one["rps"] for run, one in zip(runs, results[1], strict=True)]
        lines.append(
            f"| {n} | {_range([x['rps'] for x in runs])} | {_range(ratios, '{:.2f}')}x "
            f"| {_range([x['p99_ms'] for x in runs], '{:.1f}')} "
            f"| {_range([x['replicas_cpu_us'] for x in runs])} "
            f"| {_range([x['postgres_cpu_us'] for x in runs])} "
            f"| {_range([x['cores_busy'] for x in runs], '{:.2f}')} "
            f"| {sum(x['errors'] for x in runs)} |"
        )
    lines.append("")
    lines.append(
        f"machine: {os.cpu_count()} CPUs, 1-min load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print("\n".join(lines))
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "replicas.json").write_text(json.dumps({"when": when, "results": results}, indent=1))


if __name__ == "__main__":
    if sys.argv[1:]:
        raise SystemExit(__doc__)
    main()
