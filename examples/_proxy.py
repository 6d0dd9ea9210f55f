"""A round-robin TCP proxy (demo 12 and the cluster tests): each new connection goes to the
next replica that accepts it, as a load balancer without sticky sessions would. A killed
replica's connections drop; new ones go to the others."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RoundRobinProxy:
    """A TCP proxy: each new connection goes to the next replica that accepts it."""

    def __init__(self, ports: list[int], port: int = 0) -> None:
        self.ports = ports
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._next = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cluster-proxy", daemon=True)
        self._server: asyncio.AbstractServer | None = None

    def __enter__(self) -> RoundRobinProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", self.port)
        )
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        for _ in range(len(self.ports)):
            port = self.ports[self._next % len(self.ports)]
            self._next += 1
            try:
                upstream = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                continue  # that replica is down: the next one
        if upstream is None:
            writer.close()
            return
        up_reader, up_writer = upstream

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                with contextlib.suppress(Exception):
                    dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
