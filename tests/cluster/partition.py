"""A TCP proxy between a replica and PostgreSQL that can partition them: :meth:`freeze` stops
forwarding in both directions (connections stay open, bytes wait in the sockets, as in a
network partition where nothing is refused, just never answered), :meth:`heal` resumes."""

from __future__ import annotations

import contextlib
import socket
import threading


class PartitionProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._open = threading.Event()
        self._open.set()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self._open.clear()

    def heal(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._closed = True
        self._open.set()
        for sock in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> PartitionProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(self.upstream)
            except OSError:
                return
            self._sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while not self._closed:
                self._open.wait()  # frozen: read nothing, so nothing reaches the other side
                data = src.recv(65536)
                if not data:
                    break
                self._open.wait()  # a chunk read just before the freeze waits too
                dst.sendall(data)
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
