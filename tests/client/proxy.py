"""A tiny TCP proxy on loopback that cuts event streams after a byte budget."""

from __future__ import annotations

import contextlib
import socket
import threading


class CuttingProxy:
    """Forwards to ``upstream_port``; after a response declares ``text/event-stream``, forwards
    ``cut_after`` more bytes and then kills the connection, for the first ``cuts`` streams."""

    def __init__(
        self, upstream_port: int, *, cut_after: int, cuts: int = 1, then_cut_after: int = 0
    ) -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.then_cut_after = then_cut_after or cut_after
        self.cuts_left = cuts
        self.cuts_done = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, downstream: bool) -> None:
        budget: int | None = None
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if downstream and budget is None and b"text/event-stream" in data:
                    with self._lock:
                        if self.cuts_left > 0:
                            self.cuts_left -= 1
                            cut = self.then_cut_after if self.cuts_done else self.cut_after
                            budget = cut + data.find(b"\r\n\r\n") + 4
                if budget is not None:
                    if len(data) >= budget:
                        dst.sendall(data[:budget])
                        with self._lock:
                            self.cuts_done += 1
                        break
                    budget -= len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
