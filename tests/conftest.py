"""Shared fixtures: real servers on loopback (uvicorn in a background thread)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
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
