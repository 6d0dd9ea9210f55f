"""Cluster mode under load (issue #34): ``python -m bench.cluster_load`` (PostgreSQL at
``$SIMPLE_A2A_TEST_POSTGRES``; a random schema per run, dropped afterwards). Never part of the
test run. ``BENCH_QUICK=1`` shortens every phase. Extends :mod:`bench.cluster` (its helpers are
imported, not copied).

1. **Cross-replica event latency under a sustained rate** (1,000, 2,000, 4,000 events/s): replica
   A (a ``PostgresStorage`` in this process) appends status events at a paced rate, round-robin
   over 50 tasks; replica B (another ``PostgresStorage`` in a child process: its own pool, its
   own LISTEN connection and its own event loop and core, as a real replica) follows every task
   like a stream does (``events.wait`` then ``events.read``). Each event carries its index, so
   B can match it to the moment A started appending it (``time.monotonic`` is one system-wide
   clock, comparable across processes). Reported: achieved rate, append latency on A (commit
   contention), *woken* latency (append started on A -> ``wait`` returned on B, for the first
   event of each wake-up) and *read* latency (append started on A -> the event read on B, for
   every event: what a follower of the stream sees), and the NOTIFY payload size.
2. **Cross-replica cancel**: two replicas (``tests/cluster/cluster_agent.py``, uvicorn, one
   schema); a ``hang`` task started by SendStreamingMessage on A and left running past
   ``claim_after`` (so it is leased, like any long-running task); CancelTask sent to B. Measured
   from sending the cancel (a) until A's stream yields ``TASK_STATE_CANCELED`` and (b) until the
   executor's cancel hook has run on A (the executor told to stop; the agent's marks file
   records the wall-clock moment).
3. **Takeover with lease settings aiming at <= 5 s** (ttl 3 s, scan 1 s): kill -9 of the replica
   running a leased task until the other replica has failed it (GetTask on the survivor).

``BENCH_FANOUT=redis`` adds to phase 1 the event fan-out on Redis Streams (docs/cluster.md,
"Event fan-out"; Redis at ``$SIMPLE_A2A_TEST_REDIS``, default ``redis://127.0.0.1:6379/0``, the
run's stream deleted afterwards): each asked rate is then run with NOTIFY, with the Redis fan-out
and with no signal at all (the control), in that order, ``BENCH_ROUNDS`` times (default 1; the
rounds interleave the three, so a noisy moment hits all of them). ``BENCH_PHASES`` (default
``123``) picks the phases; ``BENCH_SECONDS`` sets phase 1's duration per run (20 s, quick 3 s).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import multiprocessing
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.cluster import AGENT, DSN, QUICK, _drop, _message, _pct, _ready, _start

TASKS = 50
RATES = (1000, 2000, 4000)
REDIS = os.environ.get("SIMPLE_A2A_TEST_REDIS", "redis://127.0.0.1:6379/0")
FANOUT = os.environ.get("BENCH_FANOUT", "")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1"))
PHASES = os.environ.get("BENCH_PHASES", "123")
#: phase 1's signal paths: how B learns of A's appends
MODES = ("notify", "redis", "none") if FANOUT == "redis" else ("notify", "none")
#: lease settings of phase 3 (the defaults are 10 s and 2.5 s: a takeover in about 11-12.5 s)
TAKEOVER_TTL = 3.0
TAKEOVER_SCAN = 1.0
#: bounds the appends in flight on A: a rate the database cannot take shows as a falling
#: achieved rate, not as an unbounded heap of pending coroutines
MAX_IN_FLIGHT = 256


def _event(index: int) -> Any:
    from simple_a2a.protocol.models import TaskState, TaskStatus, TaskStatusUpdateEvent
    from simple_a2a.protocol.requests import StreamResponse

    # The index rides in context_id so B can match the event to its start time on A.
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="load", context_id=str(index), status=TaskStatus(state=TaskState.WORKING)
        )
    )


# -- phase 1: replica B, in a child process --


def _storage(schema: str, mode: str) -> Any:
    from simple_a2a.storage.postgres import PostgresStorage

    return PostgresStorage(DSN, schema=schema, fanout=REDIS if mode == "redis" else None)


async def _follow_all(
    schema: str, mode: str, task_ids: list[str], ready: Any, stop: Any, hard_deadline: float
) -> list[tuple[int, float, float]]:
    b = _storage(schema, mode)
    await b.open()
    seen: list[tuple[int, float, float]] = []  # (index, woken or nan, read)

    async def follow(task_id: str) -> None:
        after = 0
        while time.monotonic() < hard_deadline:
            if not await b.events.wait(task_id, after, 1.0):
                continue
            woken = time.monotonic()
            events = await b.events.read(task_id, after)
            read = time.monotonic()
            for i, logged in enumerate(events):
                update = logged.event.status_update
                assert update is not None  # only status updates are appended here
                index = int(update.context_id)
                seen.append((index, woken if i == 0 else math.nan, read))
            if events:
                after = events[-1].seq

    followers = [asyncio.ensure_future(follow(t)) for t in task_ids]
    try:
        await asyncio.sleep(0.3)  # every follower is registered with the listener
        ready.set()
        # stop is a multiprocessing event: checked by polling, never blocking this loop
        while not stop.is_set() and time.monotonic() < hard_deadline:
            await asyncio.sleep(0.05)
    finally:
        for f in followers:
            f.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
        await b.close()
    return seen


def _replica_b(
    schema: str, mode: str, task_ids: list[str], ready: Any, stop: Any, out: str, limit: float
) -> None:
    deadline = time.monotonic() + limit
    seen = asyncio.run(_follow_all(schema, mode, task_ids, ready, stop, deadline))
    Path(out).write_text(json.dumps(seen))  # nan is valid for json's Python reader


# -- phase 1: replica A, this process --


async def _append_paced(
    a: Any, task_ids: list[str], rate: int, seconds: float
) -> tuple[list[float], list[float], float]:
    """Open loop: every event due is started at once (in at most MAX_IN_FLIGHT concurrent
    appends), so a slow commit delays the events behind it, as on a real replica."""
    total = int(rate * seconds)
    starts = [math.nan] * total
    append_ms: list[float] = []
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    pending: set[asyncio.Task[None]] = set()

    async def append(index: int) -> None:
        try:
            started = time.monotonic()
            starts[index] = started
            await a.events.append(task_ids[index % len(task_ids)], _event(index))
            append_ms.append((time.monotonic() - started) * 1000)
        finally:
            slots.release()

    t0 = time.monotonic()
    issued = 0
    # Bounded twice: by the count of events and by a deadline twice the planned duration.
    while issued < total and time.monotonic() < t0 + 2 * seconds + 5:
        due = min(total, int((time.monotonic() - t0) * rate) + 1)
        while issued < due:
            await slots.acquire()
            task = asyncio.ensure_future(append(issued))
            pending.add(task)
            task.add_done_callback(pending.discard)
            issued += 1
        await asyncio.sleep(0.001)  # ~1 ms ticks: pacing by batches, not one sleep per event
    if pending:
        await asyncio.wait(pending, timeout=30)
    elapsed = time.monotonic() - t0
    return starts, append_ms, len(append_ms) / elapsed


async def _drive(schema: str, rate: int, seconds: float, mode: str) -> dict[str, Any]:
    from simple_a2a.protocol.models import new_id
    from simple_a2a.storage.postgres import PostgresEventLog

    a = _storage(schema, mode)
    await a.open()  # migrates the schema before B opens it
    if mode == "none":
        # The control: the same statement without its pg_notify (B then only learns of events
        # by its 1 s poll), to tell a NOTIFY limit (commits that notify are serialised by
        # PostgreSQL) from the limit of this one appending process.
        events = a.events
        assert isinstance(events, PostgresEventLog)
        sql = events._append_sql
        assert "pg_notify($3, $1)" in sql
        events._append_sql = sql.replace("pg_notify($3, $1)", "$3::text")
    task_ids = [new_id() for _ in range(TASKS)]
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    child = ctx.Process(
        target=_replica_b,
        args=(schema, mode, task_ids, ready, stop, out, seconds * 3 + 40),
        daemon=True,
    )
    child.start()
    try:
        if not await asyncio.to_thread(ready.wait, 30):
            raise RuntimeError("replica B did not start")
        cpu, wall = time.process_time(), time.monotonic()
        starts, append_ms, achieved = await _append_paced(a, task_ids, rate, seconds)
        cpu_a = (time.process_time() - cpu) / (time.monotonic() - wall)
        await asyncio.sleep(2.0)  # late deliveries count; after this they are missing
        stop.set()
        await asyncio.to_thread(child.join, 30)
        seen = json.loads(Path(out).read_text())
    finally:
        if child.is_alive():
            child.kill()
            child.join()
        Path(out).unlink(missing_ok=True)
        await a.close()
    woken = [(w - starts[i]) * 1000 for i, w, _ in seen if not math.isnan(w)]
    read = [(r - starts[i]) * 1000 for i, _, r in seen]
    return {
        "rate": rate,
        "mode": mode,
        "achieved": achieved,
        "appended": len(append_ms),
        "received": len({i for i, _, _ in seen}),
        "append": append_ms,
        "woken": woken,
        "read": read,
        "payload": len(task_ids[0].encode()),
        "cpu": cpu_a,
    }


# -- phases 2 and 3: replicas over HTTP --


def _sse_results(line: str) -> dict[str, Any] | None:
    if not line.startswith("data:"):
        return None
    result: dict[str, Any] | None = json.loads(line[5:]).get("result")
    return result


async def _cancel_once(ports: list[int], marks: Path) -> tuple[float, float]:
    """(stream on A sees canceled, cancel hook ran on A), ms from sending CancelTask to B."""
    body = _message("hang")
    body["method"] = "SendStreamingMessage"
    async with httpx.AsyncClient(timeout=15) as client:
        stream_a = f"http://127.0.0.1:{ports[0]}/"
        async with client.stream("POST", stream_a, json=body) as response:
            lines = response.aiter_lines()
            task_id = ""
            deadline = time.monotonic() + 10
            while not task_id and time.monotonic() < deadline:
                result = _sse_results(await asyncio.wait_for(anext(lines), 10))
                if result:
                    task_id = (result.get("task") or {}).get("id") or (
                        result.get("statusUpdate") or {}
                    ).get("taskId", "")
            # past claim_after (0.5 s) and a claim tick: leased, so the cancel watch covers it
            await asyncio.sleep(1.2)
            cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id}}
            sent_wall, sent = time.time(), time.monotonic()
            answer = await client.post(f"http://127.0.0.1:{ports[1]}/", json=cancel)
            assert answer.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED", answer.text
            seen_ms = math.nan
            while time.monotonic() < sent + 10:
                line = await asyncio.wait_for(anext(lines), sent + 10 - time.monotonic())
                if "TASK_STATE_CANCELED" in line:
                    seen_ms = (time.monotonic() - sent) * 1000
                    break
    mark = marks / f"cancel-{task_id}"
    deadline = time.monotonic() + 10
    while not mark.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    hook_ms = (float(mark.read_text().split()[1]) - sent_wall) * 1000 if mark.exists() else math.nan
    return seen_ms, hook_ms


def cancel_latency(storage: str, repeats: int) -> tuple[list[float], list[float]]:
    from simple_a2a.server.background import free_port

    ports = [free_port() for _ in range(2)]
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as marks:
        env = {"CLUSTER_RESUMABLE": "0", "CLUSTER_MARKS": marks}
        try:
            procs += [_start(storage, port, env) for port in ports]
            runs = [asyncio.run(_cancel_once(ports, Path(marks))) for _ in range(repeats)]
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()
    return [s for s, _ in runs], [h for _, h in runs]


def _serve_replica(storage: str, port: int) -> None:
    """``--replica``: the cluster test agent with this phase's lease settings (its own script
    fixes 2.5 s / 0.5 s, chosen for CI; here the point is a documented <= 5 s setting)."""
    from simple_a2a.protocol import AgentCard
    from simple_a2a.protocol.card import AgentCapabilities
    from simple_a2a.server import server

    sys.argv = [str(AGENT), storage, str(port)]  # the agent module reads its port from argv
    spec = importlib.util.spec_from_file_location("cluster_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    card = AgentCard(
        name="cluster",
        description="cluster bench agent",
        version="1",
        capabilities=AgentCapabilities(streaming=True),
    )
    agent = server(
        card,
        module.ClusterAgent(),
        storage=storage,
        lease_ttl=TAKEOVER_TTL,
        lease_scan_interval=TAKEOVER_SCAN,
        shutdown_grace=1.0,
    )
    agent.run(port=port, log_level="warning")


def _start_replica(storage: str, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "bench.cluster_load", "--replica", storage, str(port)]
    return _ready(subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent), port)


def _rpc(port: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = httpx.post(f"http://127.0.0.1:{port}/", json=body, timeout=10).json()
    return answer


def takeover_times(storage: str, repeats: int) -> list[float]:
    """bench.cluster.takeover kills 0.5 s after the start, before the task is leased (then the
    orphan rule applies); here the task runs 1.5 s first, so a lease is held and must expire."""
    from simple_a2a.server.background import free_port

    ports = [free_port() for _ in range(2)]
    procs = [_start_replica(storage, port) for port in ports]
    times: list[float] = []
    try:
        for _ in range(repeats):
            victim, survivor = procs
            sent = httpx.post(
                f"http://127.0.0.1:{ports[0]}/",
                json=_message("hang", returnImmediately=True),
                timeout=10,
            ).json()
            task_id = sent["result"]["task"]["id"]
            time.sleep(1.5)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            killed = time.monotonic()
            while time.monotonic() < killed + 60:
                task = _rpc(ports[1], "GetTask", {"id": task_id})["result"]
                if task["status"]["state"] == "TASK_STATE_FAILED":
                    times.append(time.monotonic() - killed)
                    break
                time.sleep(0.02)
            ports = [ports[1], free_port()]
            procs = [survivor, _start_replica(storage, ports[1])]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    return times


# -- report --


def _ms(values: list[float]) -> str:
    if not values:
        return "- | -"
    return f"{_pct(values, 0.5):.1f} ms | {_pct(values, 0.99):.1f} ms"


class _Skipped(Exception):
    """A phase left out (``BENCH_PHASES``)."""


async def _drop_stream(key: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS)
    try:
        await client.delete(key)
    finally:
        await client.aclose()


_LABELS = {"notify": "NOTIFY", "redis": "Redis fan-out", "none": "no signal (control, 1 s poll)"}


def _load_phase(schema: str, seconds: float, loads: list[float]) -> list[str]:
    """Phase 1: every run's row; with several signal paths, a summary per rate and path
    (medians over the rounds, with their range) and the ratios paired within each round."""
    if FANOUT:
        plan = [(n, rate, mode) for n in range(ROUNDS) for rate in RATES for mode in MODES]
    else:  # the original run: NOTIFY at each rate, the control at the highest
        plan = [(0, rate, "notify") for rate in RATES] + [(0, RATES[-1], "none")]
    lines = [
        f"| round | target events/s ({TASKS} tasks, {seconds:.0f} s) | signal | achieved/s"
        " | received on B | CPU of A | append on A p50 | p99 | woken on B p50 | p99"
        " | read on B p50 | p99 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    runs: list[dict[str, Any]] = []
    for n, rate, mode in plan:
        r = asyncio.run(_drive(schema, rate, seconds, mode))
        r["round"] = n
        runs.append(r)
        lines.append(
            f"| {n + 1} | {rate} | {_LABELS[mode]} | {r['achieved']:.0f} "
            f"| {r['received']}/{r['appended']} | {r['cpu']:.0%} | {_ms(r['append'])} "
            f"| {_ms(r['woken'])} | {_ms(r['read'])} |"
        )
        loads.append(os.getloadavg()[0])
    lines += ["", f"NOTIFY payload: the task id, {runs[0]['payload']} bytes (one per append)", ""]
    if not FANOUT:
        return lines
    lines += [
        f"Summary ({ROUNDS} round(s); median [min-max] over rounds; ratios paired per round):",
        "",
        "| target events/s | signal | achieved/s | read on B p50 | read on B p99"
        " | achieved vs NOTIFY |",
        "|---|---|---|---|---|---|",
    ]

    def spread(values: list[float], unit: str = "") -> str:
        return f"{_pct(values, 0.5):.0f}{unit} [{min(values):.0f}-{max(values):.0f}]"

    for rate in RATES:
        for mode in MODES:
            mine = [r for r in runs if r["rate"] == rate and r["mode"] == mode]
            base = {r["round"]: r for r in runs if r["rate"] == rate and r["mode"] == "notify"}
            ratios = [r["achieved"] / base[r["round"]]["achieved"] for r in mine]
            p50s = [_pct(r["read"], 0.5) for r in mine if r["read"]]
            p99s = [_pct(r["read"], 0.99) for r in mine if r["read"]]
            ratio = (
                f"{_pct(ratios, 0.5):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"
                if mode != "notify"
                else "1"
            )
            lines.append(
                f"| {rate} | {_LABELS[mode]} | {spread([r['achieved'] for r in mine])} "
                f"| {spread(p50s, ' ms') if p50s else '-'} | {spread(p99s, ' ms') if p99s else '-'}"
                f" | {ratio} |"
            )
    return [*lines, ""]


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", 3.0 if QUICK else 20.0))
    repeats = 10 if QUICK else 50
    takeovers = 2 if QUICK else 5
    schema = f"bench_load_{secrets.token_hex(4)}"
    storage = f"{DSN}?schema={schema}"
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"## Cluster mode under load (`python -m bench.cluster_load`), {started}", ""]
    loads = [os.getloadavg()[0]]
    try:
        if "1" in PHASES:
            lines += _load_phase(schema, seconds, loads)
        if "2" not in PHASES:
            raise _Skipped
        streams, hooks = cancel_latency(storage, repeats)
        loads.append(os.getloadavg()[0])
        lines += [
            f"| cross-replica cancel (CancelTask on B, {repeats}x) | p50 | p99 | max |",
            "|---|---|---|---|",
            f"| stream on A yields canceled | {_ms(streams)} | {max(streams):.1f} ms |",
            f"| cancel hook ran on A | {_ms(hooks)} | {max(hooks):.1f} ms |",
            "",
        ]
        if "3" not in PHASES:
            raise _Skipped
        times = sorted(takeover_times(storage, takeovers))
        loads.append(os.getloadavg()[0])
        lines.append(
            f"takeover after kill -9 (ttl {TAKEOVER_TTL:g} s, scan {TAKEOVER_SCAN:g} s, "
            f"{len(times)}/{takeovers} runs): min {times[0]:.2f} s, "
            f"median {_pct(times, 0.5):.2f} s, max {times[-1]:.2f} s"
        )
    except _Skipped:
        pass
    finally:
        asyncio.run(_drop(schema))
        if "redis" in MODES:
            asyncio.run(_drop_stream(f"a2a_events.{schema}"))
    print("\n".join(lines))
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-min load average {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--replica"]:
        _serve_replica(sys.argv[2], int(sys.argv[3]))
    else:
        main()
