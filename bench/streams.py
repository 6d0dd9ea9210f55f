"""Many long-lived streams (issue #36): ``python -m bench.streams`` (``BENCH_QUICK=1``: a smoke).

What an LLM agent does: a stream open for seconds, a small chunk every 100 ms; what a router
agent does: thousands of those at once. Each server runs in its own process (``bench.serve``:
ours on memory, SQLite and PostgreSQL storage; the official SDK 1.3.0; ``sse-floor``, a bare
Starlette SSE endpoint sending the same frames with no A2A), all with the same uvicorn settings
(``BENCH_LOOP``/``BENCH_HTTP``, default asyncio + h11). For each, in interleaved rounds, a
client process (``bench.sse_client tokens``, raw asyncio) opens ``BENCH_STREAMS`` streams
(SendStreamingMessage ``tokens N MS``) in batches of 200, and reads every chunk. Measured:

- **RSS per open stream**: the server's RSS once every stream has its first event, minus its RSS
  before, over the streams (the streams are idle between chunks then);
- **CPU per event**: the server's utime + stime over the whole run (``/proc/PID/stat``), over the
  chunks delivered (connection set-up included, as a user pays it); and **streaming CPU per
  event**: the server's CPU from the moment every stream is open over the chunks delivered
  from then on (no set-up: what one more streamed event costs, the figure a per-event
  optimisation moves);
- **latency**: each chunk's receipt in the client minus the ``time.time_ns()`` stamp the agent
  put in it when it emitted it (one machine, one clock), p50 and p99; **time to first event**.

Ratios are paired per round (ours / SDK, ours / floor of the same round); the report gives
medians and [min-max] ranges. Knobs: ``BENCH_STREAMS`` (full 10,000; quick 200),
``BENCH_EVENTS`` (chunks per stream, full 50, quick 10), ``BENCH_INTERVAL_MS`` (100),
``BENCH_RUNS`` (full 3, quick 1), ``BENCH_SERVERS`` (comma-separated kinds, default
``ours,ours-sqlite,ours-postgres,sdk,sse-floor``), ``BENCH_BASELINE`` (another checkout: its
server of kind ``BENCH_BASE_KIND``, default ``ours``, joins the rounds as ``base``, and every CPU
figure is paired against it too: before and after a change). Writes ``bench/results/streams.json``.
Loopback only; every loop is bounded (the client's deadline: 120 s, plus the streams' length,
plus 1 ms per chunk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import ROOT, Server, log
from bench.stacks import spread

QUICK = bool(os.environ.get("BENCH_QUICK"))
STREAMS = int(os.environ.get("BENCH_STREAMS", "200" if QUICK else "10000"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "10" if QUICK else "50"))
INTERVAL_MS = int(os.environ.get("BENCH_INTERVAL_MS", "100"))
RUNS = int(os.environ.get("BENCH_RUNS", "1" if QUICK else "3"))
KINDS = os.environ.get("BENCH_SERVERS", "ours,ours-sqlite,ours-postgres,sdk,sse-floor").split(",")
#: before and after a change in the same rounds: another checkout's server (``git worktree add
#: /tmp/base main``) of kind BENCH_BASE_KIND (default ``ours``), named ``base`` in the results
_BASELINE = os.environ.get("BENCH_BASELINE")
BASELINE = Path(_BASELINE).resolve() if _BASELINE else None
BASE_KIND = os.environ.get("BENCH_BASE_KIND", "ours")


def bench_servers(kinds: list[str], serve_kind: dict[str, str] | None = None) -> list[Server]:
    """A server per kind (``serve_kind`` maps a name to what ``bench.serve`` builds), then
    BENCH_BASELINE's as ``base``."""
    serve_kind = serve_kind or {}
    servers = [Server(kind, serve_kind.get(kind, kind)) for kind in kinds]
    if BASELINE is not None:
        servers.append(Server("base", serve_kind.get(BASE_KIND, BASE_KIND), root=BASELINE))
    return servers


def client_run(server: Server, args: list[str], on_open: Callable[[], None]) -> dict[str, Any]:
    """One ``bench.sse_client`` process against ``server`` (MODE then its arguments after the
    port); ``on_open`` runs when it prints ``OPEN``. Its JSON result."""
    client = subprocess.Popen(
        [sys.executable, "-m", "bench.sse_client", args[0], str(server.port), *args[1:]],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None
    result: dict[str, Any] = {}
    for line in client.stdout:
        if line.startswith("OPEN"):
            on_open()
        elif line.startswith("BENCH_JSON "):
            result = json.loads(line[len("BENCH_JSON ") :])
    client.wait(600)  # the client's own deadline ends it first
    if client.returncode != 0 or not result:
        raise RuntimeError(f"the client failed against {server.name} ({client.returncode})")
    return result


def one_run(server: Server) -> dict[str, Any]:
    """One client run of STREAMS streams against ``server``; the server's RSS and CPU beside."""
    rss_before, cpu_before = server.rss_kb, server.cpu_s
    rss_open, cpu_open = 0, cpu_before

    def opened() -> None:
        nonlocal rss_open, cpu_open
        rss_open, cpu_open = server.rss_kb, server.cpu_s

    args = ["tokens", str(STREAMS), str(EVENTS), str(INTERVAL_MS)]
    result = client_run(server, args, opened)
    cpu = server.cpu_s - cpu_before
    deliveries = max(1, result["deliveries"])
    # Once every stream is open, the server does nothing but stream: its CPU from then on over
    # the chunks delivered from then on is the cost of a streamed event without the set-up
    # (the connection, the request, the task) that cpu_us_per_event spreads over the chunks.
    steady = max(1, result["deliveries"] - result["delivered_at_open"])
    result.update(
        rss_per_stream_kib=(rss_open - rss_before) / STREAMS,
        cpu_us_per_event=cpu / deliveries * 1e6,
        steady_cpu_us_per_event=(server.cpu_s - cpu_open) / steady * 1e6,
        server_cpu_s=cpu,
        load_average=os.getloadavg()[0],
    )
    return result


def interleaved_rounds(
    servers: list[Server],
    warm_up: Callable[[Server], object],
    one_run: Callable[[Server], dict[str, Any]],
    runs: int,
    describe: Callable[[dict[str, Any]], str],
    *,
    fresh: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """``runs`` rounds, each running every server once, so the machine's load falls on all
    alike; each server warmed up first (``warm_up``: a small client run against it). ``fresh``:
    a new server process every round (the RSS a round adds is then not memory an earlier round
    left to the allocator; otherwise only round 1's RSS growth means anything)."""
    rounds: dict[str, list[dict[str, Any]]] = {s.name: [] for s in servers}

    def start(server: Server) -> None:
        server.start()
        # a warm-up run: imports and first connections are not what a long-lived server pays
        warm_up(server)

    try:
        if not fresh:
            for server in servers:
                start(server)
        for n in range(runs):
            for server in servers:
                if fresh:
                    start(server)
                run = one_run(server)
                if fresh:
                    server.stop()
                rounds[server.name].append(run)
                log(f"round {n + 1} {server.name}: {describe(run)}, load {run['load_average']:.1f}")
    finally:
        for server in servers:
            server.stop()
    return rounds


def main() -> None:
    # Our default bound of running executions per caller (1,000) would refuse the streams
    # beyond it: raised for this benchmark (bench/agents.py), as a router agent would.
    os.environ.setdefault("BENCH_RUNNING_LIMIT", str(STREAMS + 100))
    rounds = interleaved_rounds(
        bench_servers(KINDS),
        lambda server: client_run(server, ["tokens", "20", "3", "10"], lambda: None),
        one_run,
        RUNS,
        lambda run: (
            f"p50 {run['p50_ms']:.1f} ms, p99 {run['p99_ms']:.1f} ms, "
            f"{run['cpu_us_per_event']:.1f} us CPU/event, "
            f"{run['rss_per_stream_kib']:.1f} KiB/stream, {run['complete']}/{STREAMS} complete"
        ),
    )
    report = summarize(rounds)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "streams.json").write_text(json.dumps({"rounds": rounds, "summary": report}, indent=1))
    print(render(report))


FIGURES = (
    "cpu_us_per_event",
    "steady_cpu_us_per_event",
    "rss_per_stream_kib",
    "p50_ms",
    "p99_ms",
    "ttfe_p50_ms",
)


def summarize(
    rounds: dict[str, list[dict[str, Any]]],
    figures: tuple[str, ...] = FIGURES,
    cpu: str = "cpu_us_per_event",
    steady: str | None = "steady_cpu_us_per_event",
) -> dict[str, Any]:
    """Medians and ranges of each figure per server; ratios of ``cpu`` (``cpu_vs_*``) and of
    ``steady`` (``steady_vs_*``) against the SDK, the floor and the baseline, paired per round."""
    summary: dict[str, Any] = {}
    for name, runs in rounds.items():
        summary[name] = {f: spread([r[f] for r in runs if r[f] is not None]) for f in figures}
        summary[name]["complete"] = min(r["complete"] for r in runs)
        summary[name]["failed"] = max(r["failed"] for r in runs)
    for base in ("sdk", "sse-floor", "base"):
        if base not in rounds:
            continue
        for name, runs in rounds.items():
            if name == base:
                continue
            pairs = list(zip(runs, rounds[base], strict=True))
            for figure, prefix in ((cpu, "cpu"), (steady, "steady")):
                if figure is not None:
                    ratios = [r[figure] / b[figure] for r, b in pairs]
                    summary[name][f"{prefix}_vs_{base}"] = spread(ratios)
    return summary


def fmt(cell: dict[str, float] | None, digits: int = 1) -> str:
    """``median [min-max]``."""
    if not cell:
        return "-"
    return f"{cell['median']:.{digits}f} [{cell['min']:.{digits}f}-{cell['max']:.{digits}f}]"


def render(
    summary: dict[str, Any],
    title: str = f"{STREAMS} streams x {EVENTS} chunks, {INTERVAL_MS} ms apart, {RUNS} round(s)",
    columns: tuple[tuple[str, str], ...] = (
        ("CPU us/event", "cpu_us_per_event"),
        ("CPU vs SDK", "cpu_vs_sdk"),
        ("CPU vs floor", "cpu_vs_sse-floor"),
        *((("CPU vs base", "cpu_vs_base"),) if BASELINE is not None else ()),
        ("streaming CPU us/event", "steady_cpu_us_per_event"),
        ("streaming vs SDK", "steady_vs_sdk"),
        ("streaming vs floor", "steady_vs_sse-floor"),
        *((("streaming vs base", "steady_vs_base"),) if BASELINE is not None else ()),
        ("KiB per open stream", "rss_per_stream_kib"),
        ("p50 ms", "p50_ms"),
        ("p99 ms", "p99_ms"),
        ("first event p50 ms", "ttfe_p50_ms"),
    ),
    total: int = STREAMS,
) -> str:
    """A markdown table: one row per server, ``columns`` (title, figure), then complete/total."""
    lines = [
        title,
        "",
        "| server | " + " | ".join(t for t, _ in columns) + " | complete |",
        "|---|" + "---|" * (len(columns) + 1),
    ]
    for name, s in summary.items():
        cells = [fmt(s.get(key), 2 if key.startswith("cpu_vs") else 1) for _, key in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {s['complete']}/{total} |")
    return "\n".join(lines)


if __name__ == "__main__":
    start = time.monotonic()
    main()
    log(f"bench.streams: {time.monotonic() - start:.0f} s")
