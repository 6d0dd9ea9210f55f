"""The PostgreSQL storage with its event fan-out on Redis Streams (issue #34), against the real
PostgreSQL and the real Redis (``$SIMPLE_A2A_TEST_REDIS``, default ``redis://127.0.0.1:6379/0``;
skipped with the connection error when either cannot be reached).

The wake-up conformance class (``conformance_wakeups.py``) as for NOTIFY, plus what only a
separate engine has: appends that do not NOTIFY, Redis stopping and coming back mid-run (a
private ``redis-server`` on a free port, so the machine's Redis is never touched), and one real
cluster: a stream on replica B following a task executed by replica A.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.server.background import free_port
from simple_a2a.storage import Storage, open_storage
from simple_a2a.storage.fanout import RedisFanout, fanout_from
from simple_a2a.storage.postgres import PostgresStorage

from .conformance import status_event
from .conformance_wakeups import (
    NO_POLL,
    SIGNAL_BOUND,
    StorageFactory,
    WakeupConformance,
    opened,
    woken,
)
from .conftest import REDIS

pytest.importorskip("asyncpg", reason="asyncpg is not installed (simple-a2a[postgres])")
aioredis = pytest.importorskip("redis.asyncio", reason="redis is not installed (simple-a2a[redis])")

DSN = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
#: nothing listens there (port 1 needs root to bind): connection refused at once
UNREACHABLE = "redis://127.0.0.1:1/0"


class TestRedisFanoutWakeups(WakeupConformance):
    signal_can_be_unreachable = True

    @pytest.fixture
    def make_storage(self, postgres_schema: str, redis_stream: str) -> StorageFactory:
        def make(*, unreachable_signal: bool = False, **options: Any) -> Storage:
            fanout = RedisFanout(UNREACHABLE if unreachable_signal else REDIS, stream=redis_stream)
            return PostgresStorage(
                DSN, schema=postgres_schema, max_size=4, fanout=fanout, **options
            )

        return make


async def test_appends_publish_to_the_stream_and_do_not_notify(
    postgres_schema: str, redis_stream: str
) -> None:
    """With a fan-out the statements carry no pg_notify (the point: NOTIFY's commit lock), and
    each committed append leaves ``(task id, seq)`` in the schema's stream."""
    import asyncpg

    store = PostgresStorage(
        DSN, schema=postgres_schema, fanout=RedisFanout(REDIS, stream=redis_stream)
    )
    listener = await asyncpg.connect(DSN)
    notified: list[str] = []
    await listener.add_listener(f"a2a_events.{postgres_schema}", lambda *a: notified.append(a[3]))
    client = aioredis.Redis.from_url(REDIS)
    try:
        async with opened(store):
            assert "pg_notify" not in store.events._append_sql  # type: ignore[attr-defined]
            for n in range(3):
                await store.events.append("t1", status_event("t1", n))
            await store.events.append("t2", status_event("t2"))
            deadline = time.monotonic() + SIGNAL_BOUND
            entries: list[Any] = []
            while len(entries) < 2 and time.monotonic() < deadline:
                entries = await client.xrange(redis_stream)
                await asyncio.sleep(0.05)
        published = [(fields[b"t"], int(fields[b"s"])) for _, fields in entries]
        # appends to one task while a batch was on its way coalesce to its newest seq
        assert published[-1] == (b"t2", 1) and (b"t1", 3) in published
        assert all(task == b"t1" for task, _ in published[:-1]), published
        assert notified == []
    finally:
        await client.aclose()
        await listener.close()


def test_fanout_urls() -> None:
    assert isinstance(fanout_from("redis://127.0.0.1:6379/0"), RedisFanout)
    assert fanout_from(None) is None
    with pytest.raises(ValueError, match="fan-out"):
        fanout_from("nats://127.0.0.1:4222")
    store = open_storage(f"{DSN}?schema=s1&fanout=redis://:secret@127.0.0.1:6379/2")
    assert isinstance(store, PostgresStorage) and isinstance(store.fanout, RedisFanout)
    assert store.fanout.url == "redis://:secret@127.0.0.1:6379/2"
    assert "secret" not in repr(store.fanout)
    assert "fanout" not in store._db.dsn and store.schema == "s1"


# -- Redis stopping and coming back: a private redis-server --


@pytest.fixture
def private_redis() -> Iterator[tuple[str, Any]]:
    """``(url, restart)``: a redis-server of this test's own; ``restart(up)`` stops or starts it
    on the same port."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def switch(up: bool) -> None:
        for proc in procs:
            proc.kill()
            proc.wait(10)
        procs.clear()
        if up:
            command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
            command += ["--appendonly", "no"]
            procs.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                done = subprocess.run(
                    ["redis-cli", "-p", str(port), "ping"], capture_output=True, check=False
                )
                if done.stdout.strip() == b"PONG":
                    return
                time.sleep(0.05)
            raise RuntimeError("private redis-server did not start")

    switch(True)
    try:
        yield f"redis://127.0.0.1:{port}/0", switch
    finally:
        switch(False)


async def test_redis_stopping_mid_run_falls_back_to_polling_then_recovers(
    postgres_schema: str, private_redis: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    url, switch = private_redis

    def make(poll: float) -> PostgresStorage:
        return PostgresStorage(DSN, schema=postgres_schema, poll_interval=poll, fanout=url)

    writer, watcher = make(NO_POLL), make(0.3)
    caplog.set_level(logging.INFO, logger="simple_a2a.storage.fanout")
    async with opened(writer, watcher):
        await asyncio.sleep(0.3)
        waiting = asyncio.create_task(woken(watcher, "t1", 0))
        await asyncio.sleep(0.1)
        await writer.events.append("t1", status_event("t1"))
        assert await waiting is True

        await asyncio.to_thread(switch, False)
        for n in range(2, 12):  # never fails, never waits for Redis
            assert await writer.events.append("t1", status_event("t1", n)) == n
        assert await woken(watcher, "t1", 1) is True  # by the 0.3 s poll
        down = [r for r in caplog.records if "unreachable" in r.getMessage()]
        assert 1 <= len(down) <= 2  # once per instance and outage, not per append or retry

        await asyncio.to_thread(switch, True)
        # Back within the bounded back-off (<= 5 s): a watcher whose poll never comes in time
        # is woken again, by the signal.
        signalled = make(NO_POLL)
        async with opened(signalled):
            deadline = time.monotonic() + 3 * SIGNAL_BOUND
            back = False
            while not back and time.monotonic() < deadline:
                after = await signalled.events.last_seq("t1")
                waiting = asyncio.create_task(woken(signalled, "t1", after, bound=1.0))
                await asyncio.sleep(0.1)
                await writer.events.append("t1", status_event("t1", after))
                back = await waiting
            assert back, "the writer's publishing did not resume after Redis came back"
    assert any("reachable again" in r.getMessage() for r in caplog.records)


# -- real replicas --


def test_a_stream_on_replica_b_follows_a_task_run_by_replica_a(
    postgres_schema: str, tmp_path: Path
) -> None:
    """Two ``cluster_agent.py`` processes on one schema with the fan-out on (the storage URL's
    ``fanout=``): a task sent to A runs there; SubscribeToTask on B sees every event of it, in
    order, and the schema's stream carries them."""
    import redis

    from tests.cluster.support import StreamLog, follow, result, running_cluster, send

    client = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis not reachable at {REDIS}: {exc!r}")
    storage = f"{DSN}?schema={postgres_schema}&fanout={REDIS}"
    key = f"a2a_events.{postgres_schema}"
    try:
        with running_cluster(
            postgres_schema, 2, resumable=False, marks=tmp_path, storage=storage
        ) as (
            cluster,
            _proxy,
        ):
            a, b = cluster.replicas
            sent = send("steps 8 0.1", returnImmediately=True)
            task = result(a.url, "SendMessage", sent)["task"]
            log = StreamLog()
            follow(b.url, task["id"], log, timeout=60)
            assert cluster.owner_index(task["id"]) in (0, None)  # A ran it (lease gone at the end)
        seqs = [seq for seq, _ in log.events]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        snapshot = log.events[0][1].get("task", {})
        already = [x["artifactId"] for x in snapshot.get("artifacts", [])]
        streamed = [
            e["artifactUpdate"]["artifact"]["artifactId"]
            for _, e in log.events
            if "artifactUpdate" in e
        ]
        assert already + streamed == [f"step-{i}" for i in range(8)]
        assert all(
            e["artifactUpdate"]["artifact"]["metadata"]["replica"] == a.port
            for _, e in log.events
            if "artifactUpdate" in e
        )
        published = {fields[b"t"].decode() for _, fields in client.xrange(key)}
        assert task["id"] in published
    finally:
        client.delete(key)
        client.close()


def test_serve_fanout_option_reaches_the_storage() -> None:
    """``simple-a2a serve --store postgresql://… --fanout redis://…``: the served storage
    carries the fan-out; without a PostgreSQL store, or with an unknown engine, a usage error."""
    import click

    from simple_a2a.cli.serve import CardOptions, build_server
    from tests.cli_agent import echo

    store = f"{DSN}?schema=cli_fanout"
    app = build_server(echo, CardOptions(storage=store, fanout="redis://:pw@127.0.0.1:6379/3"))
    assert isinstance(app.storage, PostgresStorage) and app.storage.schema == "cli_fanout"
    assert isinstance(app.storage.fanout, RedisFanout)
    assert app.storage.fanout.url == "redis://:pw@127.0.0.1:6379/3"
    with pytest.raises(click.BadParameter, match="PostgreSQL"):
        build_server(echo, CardOptions(storage="sqlite:///x.db", fanout=REDIS))
    with pytest.raises(click.BadParameter, match="unknown event fan-out"):
        build_server(echo, CardOptions(storage=store, fanout="nats://127.0.0.1:4222"))
