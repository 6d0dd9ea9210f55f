"""Serve one benchmark app: ``python -m bench.serve KIND PORT`` (its own process).

KIND is ``ours``, ``ours-sqlite``, ``ours-postgres``, ``sdk``, ``ceiling``, ``floor``,
``sse-floor`` or ``sse-fanout-floor`` (``bench/fanout.py``'s floor). Environment:

- ``BENCH_TASKS``: tasks to store through the storage API before serving (default 0);
- ``BENCH_INFO``: a file to write ``{"rss_before_kb", "rss_after_kb", "tasks"}`` to;
- ``BENCH_LOOP`` (``asyncio``/``uvloop``) and ``BENCH_HTTP`` (``h11``/``httptools``): the same
  uvicorn settings for every KIND (1 worker, access log off);
- ``NOTIMERS=1``: our lease keeper's loops do not start (``bench/instructions.py`` sets it);
- ``TICK_S``: uvicorn's main loop ticks every ``TICK_S`` seconds instead of every 0.1 s, for every
  KIND (``bench/instructions.py`` sets 2: see :func:`slow_ticks`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import tempfile
from typing import Any


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def build(kind: str, tasks: int) -> tuple[Any, Any]:
    from bench import agents

    if os.environ.get("NOTIMERS"):
        agents.no_lease_timers()
    if kind == "ours":
        return agents.ours_app(None, tasks)
    if kind == "ours-sqlite":
        path = os.path.join(tempfile.mkdtemp(prefix="a2a-bench-"), "bench.db")
        return agents.ours_app(f"sqlite:///{path}", tasks)
    if kind == "sdk":
        return agents.sdk_app(tasks)
    if kind == "ours-postgres":  # a schema of its own in the machine's PostgreSQL
        dsn = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1/test")
        schema = f"bench_{os.getpid()}"
        return agents.ours_app(f"{dsn}?schema={schema}", tasks)
    if kind == "sse-floor":
        return agents.sse_floor_app()
    if kind == "sse-fanout-floor":
        return agents.sse_fanout_floor_app()
    if kind == "ceiling":
        return agents.ceiling_app()
    if kind == "floor":
        return agents.floor_app(tasks)
    raise SystemExit(f"unknown server kind {kind!r}")


def slow_ticks(period: float) -> None:
    """uvicorn's ``Server.main_loop`` wakes every 0.1 s (``on_tick``: the date header once a
    second, the exit check every tick), whatever the server serves. A stream of one chunk per
    100 ms then has a tick beside every chunk, which a count of the chunk's work must not hold
    (issue #36). Here it ticks every ``period`` seconds, the date header refreshed on each tick
    (its counter steps by 10) and an exit seen within ``period``."""
    import uvicorn.server

    async def main_loop(self: uvicorn.server.Server) -> None:
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 10) % 864000
            await asyncio.sleep(period)
            should_exit = await self.on_tick(counter)

    uvicorn.server.Server.main_loop = main_loop  # type: ignore[method-assign]


async def main(kind: str, port: int) -> None:
    import uvicorn

    from bench.sse_client import raise_open_files_limit

    raise_open_files_limit()  # bench/streams.py holds 10,000 streams open
    if float(os.environ.get("TICK_S", "0")) > 0:
        slow_ticks(float(os.environ["TICK_S"]))
    tasks = int(os.environ.get("BENCH_TASKS", "0"))
    app, populate = build(kind, tasks)
    gc.collect()
    before = rss_kb()
    await populate()
    gc.collect()
    after = rss_kb()
    info = os.environ.get("BENCH_INFO")
    if info:
        with open(info, "w") as f:
            json.dump({"rss_before_kb": before, "rss_after_kb": after, "tasks": tasks}, f)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        workers=1,
        access_log=False,
        log_level="warning",
        http=os.environ.get("BENCH_HTTP", "h11"),
        lifespan="auto",
        timeout_graceful_shutdown=1,
    )
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    kind, port = sys.argv[1], int(sys.argv[2])
    if os.environ.get("BENCH_LOOP", "asyncio") == "uvloop":
        import uvloop

        uvloop.run(main(kind, port))
    else:
        asyncio.run(main(kind, port))
