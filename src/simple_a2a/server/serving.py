"""Serving an ASGI app with uvicorn (``A2AServer.run``/``.serve``, ``MultiServer.run``).

uvicorn's own ``run`` would do, but for one thing: when the server stops (Ctrl-C, SIGTERM) it
waits for every open response before the app's shutdown runs, and an SSE stream never ends by
itself. So streams kept a stopping server alive until ``timeout_graceful_shutdown``, then were
cancelled with a logged traceback. Here stopping first ends the open streams cleanly
(:func:`~simple_a2a.server.http.close_streams`), then uvicorn shuts down as usual: the app's
shutdown lets running tasks finish within ``shutdown_grace``. A second Ctrl-C or SIGTERM stops
at once (:func:`.stopping.stop_now`): uvicorn stops waiting for connections and the app's
shutdown for tasks.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from . import stopping
from .http import close_streams

if TYPE_CHECKING:
    import uvicorn

__all__ = ["run_uvicorn", "serve_uvicorn"]

UVICORN_STARTUP_FAILURE = 3  # uvicorn.run's exit status when the server did not start


def _config(app: Any, host: str, port: int, options: dict[str, Any]) -> Any:
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, **options)


def _server(config: uvicorn.Config) -> uvicorn.Server:
    import uvicorn

    class StreamClosingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.should_exit:  # a second signal: SIGTERM too, not only uvicorn's SIGINT
                self.force_exit = True
                stopping.stop_now()
            super().handle_exit(sig, frame)

        async def serve(self, sockets: Any = None) -> None:
            stopping.reset()
            await super().serve(sockets)

        async def shutdown(self, sockets: Any = None) -> None:
            for server in self.servers:
                server.close()  # no new streams while the open ones end
            close_streams()
            await super().shutdown(sockets)

    return StreamClosingServer(config)


def run_uvicorn(app: Any, host: str, port: int, **options: Any) -> None:
    """Serve until interrupted (blocks); like ``uvicorn.run``, exit 3 if it could not start."""
    if options.get("reload") or options.get("workers", 1) > 1:
        import uvicorn  # uvicorn's own handling (it needs an import string for these)

        uvicorn.run(app, host=host, port=port, **options)
        return
    server = _server(_config(app, host, port, options))
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(UVICORN_STARTUP_FAILURE)


async def serve_uvicorn(app: Any, host: str, port: int, **options: Any) -> None:
    """Serve inside a running event loop until the server is told to exit."""
    await _server(_config(app, host, port, options)).serve()
