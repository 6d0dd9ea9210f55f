"""Shared fixtures: real servers on loopback (uvicorn in a background thread)."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import uvicorn

#: records the interop matrix of docs/interop.md from the run (tests/interop/matrix.py)
pytest_plugins = ["tests.interop.matrix"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, *, port: int | None = None, **options: Any) -> Iterator[str]:
    """Run an ASGI app with uvicorn on 127.0.0.1 in a thread; yield its base URL."""
    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


@pytest.fixture
def serve() -> Iterator[Any]:
    """``with serve(app) as url:`` — several servers per test are fine."""
    with contextlib.ExitStack() as stack:

        def start(app: Any, **options: Any) -> str:
            return stack.enter_context(serve_in_thread(app, **options))

        yield start


#: The test PostgreSQL server (trust auth); every test gets its own schema there.
POSTGRES_DSN = os.environ.get(
    "SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


@pytest.fixture
async def postgres_schema() -> AsyncIterator[str]:
    """A fresh random schema name on the test PostgreSQL, dropped afterwards (skips loudly when
    the server or asyncpg is missing, never passes)."""
    asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed")
    try:
        conn = await asyncpg.connect(POSTGRES_DSN, timeout=5)
    except Exception as exc:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_DSN}: {exc!r}")
    name = f"a2a_test_{secrets.token_hex(6)}"
    try:
        yield name
    finally:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        await conn.close()
