"""Growth benchmark (issue #7): does a request cost the same with 1,000 or 1,000,000 stored tasks?

    .venv/bin/python -m bench.growth            # 1,000 vs 1,000,000 stored tasks
    BENCH_QUICK=1 .venv/bin/python -m bench.growth   # 1,000 vs 100,000

For SQLite and PostgreSQL, a store is bulk-loaded (rows written straight into the tables in the
layout the backend reads: ``executemany`` for SQLite, ``COPY`` for PostgreSQL; every stored
task has one artifact and one history message), then each operation is called in a loop
through the :class:`~simple_a2a.server.handler.RequestHandler` (no HTTP; one caller, so each
latency is one operation's):

- ``SendMessage``: an echo executor answers at once (a new task: create, 3 events, done);
- ``GetTask``: a random stored task;
- ``ListTasks ctx+state p2``: state and context filter (80 matches at every size), page 2 of
  20 through the cursor of page 1;
- ``ListTasks state p2``: state filter only, page 2 of 20: its matches grow with the store
  (80 %), and so does ``totalSize``'s ``count(*)`` — the one part of a page whose cost is not
  ``O(log n + limit)``; measured separately as ``count(*) state``.

Writes ``bench/results/growth.md`` (ops/s, p50, p99 and the large/small ratio of each).
``BENCH_PG`` is the PostgreSQL DSN (default ``postgresql://postgres@127.0.0.1:5432/test``);
``BENCH_SECONDS`` the time per operation and round (default 2, quick 1), ``BENCH_ROUNDS``
the rounds (default 3, small and large store interleaved; the median round is reported).
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from simple_a2a.protocol import AgentCard
from simple_a2a.protocol import requests as rq
from simple_a2a.protocol.models import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server.context import CallContext
from simple_a2a.storage import Storage, TaskQuery

QUICK = os.environ.get("BENCH_QUICK") == "1"
_SIZES = os.environ.get("BENCH_SIZES")  # "small,large" (a smoke run of this script)
SIZES = (
    (int(_SIZES.split(",")[0]), int(_SIZES.split(",")[1]))
    if _SIZES
    else (1_000, 100_000 if QUICK else 1_000_000)
)
SECONDS = float(os.environ.get("BENCH_SECONDS", "1" if QUICK else "2"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PG_DSN = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
BASE = datetime(2025, 1, 1, tzinfo=timezone.utc)
RESULTS = Path(__file__).parent / "results" / "growth.md"
CARD = {
    "name": "growth",
    "description": "echo",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "echo", "name": "echo", "description": "echo", "tags": ["echo"]}],
}
STATES = {0: TaskState.INPUT_REQUIRED, 1: TaskState.FAILED}  # else completed: 80 % of each context


# --- the stored tasks: 100 per context, as rows of the storage layout ----------------------------


def state_of(i: int) -> TaskState:
    return STATES.get(i % 10, TaskState.COMPLETED)


def model_task(i: int) -> Task:
    task_id, context_id = f"task-{i}", f"ctx-{i // 100}"
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state_of(i), timestamp=BASE + timedelta(milliseconds=i)),
        history=[
            Message(
                message_id=f"msg-{i}",
                role=Role.USER,
                parts=[Part.from_text(f"hello {i}")],
                task_id=task_id,
                context_id=context_id,
            )
        ],
        artifacts=[Artifact(artifact_id=f"art-{i}", parts=[Part.from_text(f"echo hello {i}")])],
    )


def stamp(i: int) -> datetime:
    return BASE + timedelta(milliseconds=i)


def _ts_text(i: int) -> str:
    return stamp(i).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def rows(i: int) -> tuple[str, str, str, str, str]:
    """(context id, state, core doc, artifact doc, history doc) of task ``i``, by template."""
    ctx, state = f"ctx-{i // 100}", state_of(i).value
    core = (
        f'{{"id":"task-{i}","contextId":"{ctx}","status":{{"state":"{state}",'
        f'"timestamp":"{_ts_text(i)}"}}}}'
    )
    art = f'{{"artifactId":"art-{i}","parts":[{{"text":"echo hello {i}"}}]}}'
    hist = (
        f'{{"messageId":"msg-{i}","contextId":"{ctx}","taskId":"task-{i}","role":"ROLE_USER",'
        f'"parts":[{{"text":"hello {i}"}}]}}'
    )
    return ctx, state, core, art, hist


def check_templates() -> None:
    """The templates must be exactly what the backends store (else GetTask would differ)."""
    from simple_a2a.storage._layout import core_doc

    for i in (0, 1, 7, 999, 1000, 123_456, 999_999):
        task = model_task(i)
        _, _, core, art, hist = rows(i)
        expected = (core_doc(task), task.artifacts[0].to_json().decode())
        assert (core, art) == expected, (core, art, expected)
        assert hist == task.history[0].to_json().decode(), hist


_BASE_US = int(BASE.timestamp()) * 1_000_000


async def load_sqlite(path: Path, n: int) -> None:
    def tasks() -> Iterator[tuple[Any, ...]]:
        for i in range(n):
            ctx, state, core, _, _ = rows(i)
            yield (f"task-{i}", ctx, state, _BASE_US + i * 1000, core)

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO tasks (id, context_id, state, ts, owner, version, doc)"
        " VALUES (?, ?, ?, ?, NULL, 1, ?)",
        tasks(),
    )
    conn.executemany(
        "INSERT INTO task_artifacts VALUES (?, 0, ?, ?)",
        ((f"task-{i}", f"art-{i}", rows(i)[3]) for i in range(n)),
    )
    conn.executemany(
        "INSERT INTO task_history VALUES (?, 0, ?)", ((f"task-{i}", rows(i)[4]) for i in range(n))
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


async def load_postgres(schema: str, n: int) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(PG_DSN)
    try:

        def tasks() -> Iterator[tuple[Any, ...]]:
            for i in range(n):
                ctx, state, core, _, _ = rows(i)
                yield (f"task-{i}", ctx, state, stamp(i), None, 1, core)

        await conn.copy_records_to_table(
            "tasks",
            schema_name=schema,
            columns=["id", "context_id", "state", "ts", "owner", "version", "doc"],
            records=tasks(),
        )
        await conn.copy_records_to_table(
            "task_artifacts",
            schema_name=schema,
            columns=["task_id", "position", "artifact_id", "doc"],
            records=((f"task-{i}", 0, f"art-{i}", rows(i)[3]) for i in range(n)),
        )
        await conn.copy_records_to_table(
            "task_history",
            schema_name=schema,
            columns=["task_id", "position", "doc"],
            records=((f"task-{i}", 0, rows(i)[4]) for i in range(n)),
        )
        for table in ("tasks", "task_artifacts", "task_history"):
            await conn.execute(f'VACUUM ANALYZE "{schema}".{table}')
    finally:
        await conn.close()


# --- measuring ------------------------------------------------------------------------------------


class Echo(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.complete(f"echo {ctx.text}")


@dataclass
class Stat:
    ops: float
    p50: float  # ms
    p99: float  # ms


async def measure(op: Op) -> Stat:
    for i in range(20):  # warm-up
        await op(i)
    latencies: list[float] = []
    started = time.perf_counter()
    i = 0
    while time.perf_counter() - started < SECONDS:
        t0 = time.perf_counter()
        await op(i)
        latencies.append(time.perf_counter() - t0)
        i += 1
    elapsed = time.perf_counter() - started
    qs = statistics.quantiles(latencies, n=100)
    return Stat(len(latencies) / elapsed, qs[49] * 1000, qs[98] * 1000)


Op = Callable[[int], Awaitable[Any]]


async def prepare(storage: Storage, n: int) -> tuple[Any, dict[str, Op]]:
    """The started server and the operations to measure on a loaded store of ``n`` tasks."""
    srv = server(AgentCard.from_dict(CARD), Echo(), storage=storage)
    await srv.startup()
    handler, call = srv.handler, CallContext()
    rng = random.Random(7)
    ctx = f"ctx-{n // 200}"  # the queried context is in the middle of the store
    filtered = rq.ListTasksRequest(context_id=ctx, status=TaskState.COMPLETED, page_size=20)
    by_state = rq.ListTasksRequest(status=TaskState.COMPLETED, page_size=20)
    pages: dict[str, rq.ListTasksRequest] = {}
    for name, first in (("filtered", filtered), ("state", by_state)):
        page1 = await handler.list_tasks(first, call)
        assert len(page1.tasks) == 20 and page1.next_page_token, name
        pages[name] = first.model_copy(update={"page_token": page1.next_page_token})
    expect = {"filtered": 80, "state": n * 8 // 10}

    async def send(i: int) -> None:
        msg = Message.user(f"hi {i}", message_id=f"growth-{n}-{i}-{rng.random()}")
        answer = await handler.send_message(rq.SendMessageRequest(message=msg), call)
        assert answer.task is not None and answer.task.status.state == TaskState.COMPLETED

    async def get(i: int) -> None:
        k = rng.randrange(n)
        task = await handler.get_task(rq.GetTaskRequest(id=f"task-{k}"), call)
        assert len(task.artifacts) == 1 and len(task.history) == 1

    def lister(name: str) -> Callable[[int], Awaitable[None]]:
        async def page2(i: int) -> None:
            page = await handler.list_tasks(pages[name], call)
            assert len(page.tasks) == 20 and page.total_size >= expect[name], page.total_size

        return page2

    async def count(i: int) -> None:
        await storage.tasks.list(TaskQuery(limit=0, state=TaskState.COMPLETED))

    return srv, {
        "SendMessage": send,
        "GetTask": get,
        "ListTasks ctx+state p2": lister("filtered"),
        "ListTasks state p2": lister("state"),
        "count(*) state (list, limit 0)": count,
    }


async def compare(stores: dict[int, Storage]) -> dict[int, dict[str, Stat]]:
    """Measure every operation on both stores, interleaved (small, large, small, ...) over
    ``ROUNDS`` rounds so the noise of a shared machine hits both alike; the median round."""
    prepared = {n: await prepare(store, n) for n, store in stores.items()}
    out: dict[int, dict[str, Stat]] = {n: {} for n in stores}
    try:
        for op in prepared[SIZES[0]][1]:
            rounds: dict[int, list[Stat]] = {n: [] for n in stores}
            for _ in range(ROUNDS):
                for n, (_, ops) in prepared.items():
                    rounds[n].append(await measure(ops[op]))
            for n, stats in rounds.items():
                stats.sort(key=lambda st: st.ops)
                out[n][op] = stats[len(stats) // 2]
    finally:
        for srv, _ in prepared.values():
            await srv.shutdown()
    return out


async def sqlite_run(tmp: Path) -> dict[int, dict[str, Stat]]:
    from simple_a2a.storage.sqlite import SQLiteStorage

    stores: dict[int, Storage] = {}
    for n in SIZES:
        path = tmp / f"growth-{n}.db"
        store = SQLiteStorage(path)
        await store.open()
        await store.close()
        started = time.perf_counter()
        await load_sqlite(path, n)
        print(f"  sqlite: loaded {n:,} tasks in {time.perf_counter() - started:.1f} s", flush=True)
        stores[n] = SQLiteStorage(path)
    return await compare(stores)


async def postgres_run() -> dict[int, dict[str, Stat]]:
    import asyncpg

    from simple_a2a.storage.postgres import PostgresStorage

    stores: dict[int, Storage] = {}
    schemas = [f"bench_growth_{n}" for n in SIZES]
    conn = await asyncpg.connect(PG_DSN)
    try:
        for n, schema in zip(SIZES, schemas, strict=True):
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            store = PostgresStorage(PG_DSN, schema=schema)
            await store.open()
            await store.close()
            started = time.perf_counter()
            await load_postgres(schema, n)
            elapsed = time.perf_counter() - started
            print(f"  postgres: loaded {n:,} tasks in {elapsed:.1f} s", flush=True)
            stores[n] = PostgresStorage(PG_DSN, schema=schema)
        return await compare(stores)
    finally:
        for schema in schemas:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


def table(results: dict[str, dict[int, dict[str, Stat]]]) -> str:
    small, large = SIZES
    lines = [
        f"Stored tasks: {small:,} vs {large:,}"
        f"{' (BENCH_QUICK)' if QUICK else ''}; one caller through the RequestHandler (no HTTP);"
        f" each cell is the median of {ROUNDS} rounds of {SECONDS:g} s, small and large"
        " interleaved.",
        "",
        f"| backend | operation | ops/s @{small:,} | p50 / p99 ms @{small:,} "
        f"| ops/s @{large:,} | p50 / p99 ms @{large:,} | large/small (ops/s) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for backend, by_size in results.items():
        for op in by_size[small]:
            a, b = by_size[small][op], by_size[large][op]
            lines.append(
                f"| {backend} | {op} | {a.ops:,.0f} | {a.p50:.2f} / {a.p99:.2f} "
                f"| {b.ops:,.0f} | {b.p50:.2f} / {b.p99:.2f} | {b.ops / a.ops:.2f} |"
            )
    return "\n".join(lines) + "\n"


async def main() -> None:
    check_templates()
    results: dict[str, dict[int, dict[str, Stat]]] = {}
    with tempfile.TemporaryDirectory(prefix="a2a-growth-") as tmp:
        print("SQLite", flush=True)
        results["SQLite"] = await sqlite_run(Path(tmp))
    print("PostgreSQL", flush=True)
    results["PostgreSQL"] = await postgres_run()
    text = table(results)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    asyncio.run(main())
