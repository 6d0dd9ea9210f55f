"""Run an ASGI app with uvicorn in a background thread: for scripts, notebooks, demos, tests."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class BackgroundServer:
    """``with BackgroundServer(app) as srv: ... srv.url ...`` — stops (gracefully) on exit."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, **uvicorn_options: Any):
        import uvicorn

        self.host = host
        self.port = port or free_port(host)
        uvicorn_options.setdefault("log_level", "warning")
        config = uvicorn.Config(app, host=host, port=self.port, **uvicorn_options)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="a2a-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 15.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
