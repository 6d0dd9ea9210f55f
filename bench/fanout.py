"""Fan-out to many subscribers (issue #36): ``python -m bench.fanout`` (``BENCH_QUICK=1``: a smoke).

One task, N watchers: a dashboard, a UI per user, other agents, all following one agent's
output. For each server (``bench.serve``: ours on memory, SQLite and PostgreSQL storage; the
official SDK 1.3.0; ``sse-floor``, here a bare Starlette broadcaster sending the same frames
to N connections with no A2A, ``bench.agents.sse_fanout_floor_app``), in interleaved rounds, a
client process (``bench.sse_client subscribe``, raw asyncio) creates one task through the
protocol (SendMessage ``fanout TRIGGER N MS`` with ``returnImmediately``, A2A 1.0 §3.1.1) and
opens ``BENCH_SUBSCRIBERS`` SubscribeToTask streams on it (§3.1.6) in batches of 200. Once every
subscriber has its first event (the task), this process reads the server's RSS and CPU and
creates TRIGGER (a file: the go signal only, so that every subscriber is attached before the
first chunk); the agent then emits ``BENCH_EVENTS`` chunks ``t=<time.time_ns()>``,
``BENCH_INTERVAL_MS`` apart, then completes. Measured per server:

- **CPU per delivered chunk**: the server's utime + stime (``/proc/PID/stat``) from the trigger
  to the last subscriber's end, over the chunk copies delivered (subscribers x chunks); and the
  set-up's (SendMessage and every subscription) **CPU per subscriber**;
- **RSS per subscriber**: the server's RSS once every subscriber is attached, minus before, over
  the subscribers (a fresh server process each round, warmed up by a 20-subscriber run);
- **latency**: each copy's receipt in the client minus the agent's stamp, p50 and p99; **time
  to first event** of a subscriber (connect to the task snapshot); subscribers with every chunk.

Knobs: ``BENCH_SUBSCRIBERS`` (full 10,000; quick 300), ``BENCH_EVENTS`` (full 20, quick 10),
``BENCH_INTERVAL_MS`` (100), ``BENCH_RUNS`` (full 3, quick 1), ``BENCH_SERVERS`` (comma-separated,
default ``ours,ours-sqlite,ours-postgres,sdk,sse-floor``), ``BENCH_BASELINE`` and
``BENCH_BASE_KIND`` (another checkout's server as ``base``, as in ``bench.streams``). Ratios
paired per round (the rounds helpers are ``bench.streams``'s). Writes
``bench/results/fanout.json`` (or ``BENCH_OUT``).
Loopback only; the client's deadline bounds every loop (120 s, plus the chunks' length, plus 3
ms per copy).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.__main__ import ROOT, Server, log
from bench.streams import BASELINE, bench_servers, client_run, interleaved_rounds, render, summarize

QUICK = bool(os.environ.get("BENCH_QUICK"))
SUBSCRIBERS = int(os.environ.get("BENCH_SUBSCRIBERS", "300" if QUICK else "10000"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "10" if QUICK else "20"))
INTERVAL_MS = int(os.environ.get("BENCH_INTERVAL_MS", "100"))
RUNS = int(os.environ.get("BENCH_RUNS", "1" if QUICK else "3"))
KINDS = os.environ.get("BENCH_SERVERS", "ours,ours-sqlite,ours-postgres,sdk,sse-floor").split(",")
#: the floor of a broadcast is its own app (``sse-floor`` in the tables, for the ratios)
SERVE_KIND = {"sse-floor": "sse-fanout-floor"}

FIGURES = (
    "cpu_us_per_chunk",
    "setup_cpu_us_per_subscriber",
    "rss_per_subscriber_kib",
    "p50_ms",
    "p99_ms",
    "ttfe_p50_ms",
)
COLUMNS = (
    ("CPU us/chunk copy", "cpu_us_per_chunk"),
    ("CPU vs SDK", "cpu_vs_sdk"),
    ("CPU vs floor", "cpu_vs_sse-floor"),
    *((("CPU vs base", "cpu_vs_base"),) if BASELINE is not None else ()),
    ("set-up CPU us/subscriber", "setup_cpu_us_per_subscriber"),
    ("KiB per subscriber", "rss_per_subscriber_kib"),
    ("p50 ms", "p50_ms"),
    ("p99 ms", "p99_ms"),
    ("first event p50 ms", "ttfe_p50_ms"),
)


def one_run(server: Server, subscribers: int = SUBSCRIBERS, events: int = EVENTS) -> dict[str, Any]:
    """One task, ``subscribers`` SubscribeToTask streams on it, ``events`` chunks; the server's
    RSS and CPU beside."""
    trigger = Path(tempfile.mkdtemp(prefix="a2a-fanout-")) / "go"
    rss_before, cpu_before = server.rss_kb, server.cpu_s
    rss_open = cpu_open = 0.0

    def attached() -> None:
        nonlocal rss_open, cpu_open
        rss_open, cpu_open = server.rss_kb, server.cpu_s
        trigger.touch()

    args = ["subscribe", str(subscribers), str(events), str(INTERVAL_MS), str(trigger)]
    try:
        result = client_run(server, args, attached)
    finally:
        trigger.touch()  # a failed run's agent does not wait out its own bound
    cpu_end = server.cpu_s
    result.update(
        cpu_us_per_chunk=(cpu_end - cpu_open) / max(1, result["deliveries"]) * 1e6,
        setup_cpu_us_per_subscriber=(cpu_open - cpu_before) / subscribers * 1e6,
        rss_per_subscriber_kib=(rss_open - rss_before) / subscribers,
        server_cpu_s=cpu_end - cpu_before,
        load_average=os.getloadavg()[0],
    )
    return result


def describe(run: dict[str, Any]) -> str:
    return (
        f"p50 {run['p50_ms']:.1f} ms, p99 {run['p99_ms']:.1f} ms, "
        f"{run['cpu_us_per_chunk']:.1f} us CPU/chunk, "
        f"{run['setup_cpu_us_per_subscriber']:.0f} us set-up/subscriber, "
        f"{run['rss_per_subscriber_kib']:.1f} KiB/subscriber, "
        f"{run['complete']}/{run['subscribers']} complete"
    )


def main() -> str:
    servers = bench_servers(KINDS, SERVE_KIND)
    rounds = interleaved_rounds(servers, warm, one_run, RUNS, describe, fresh=True)
    report = summarize(rounds, FIGURES, "cpu_us_per_chunk", steady=None)
    out = Path(os.environ.get("BENCH_OUT") or ROOT / "bench" / "results" / "fanout.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rounds": rounds, "summary": report}, indent=1))
    title = (
        f"1 task, {SUBSCRIBERS} subscribers x {EVENTS} chunks, {INTERVAL_MS} ms apart, "
        f"{RUNS} round(s)"
    )
    table = render(report, title, COLUMNS, SUBSCRIBERS)
    print(table)
    return table


def warm(server: Server) -> None:
    """A small run first: imports and first connections are not what a long-lived server pays."""
    one_run(server, 20, 3)


if __name__ == "__main__":
    start = time.monotonic()
    main()
    log(f"bench.fanout: {time.monotonic() - start:.0f} s")
