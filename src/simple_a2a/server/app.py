"""Serving an agent: :func:`server` builds an :class:`A2AServer`; ``.app`` is the ASGI app to
mount or wrap, ``.run()`` serves it with uvicorn.

Routes of one agent (relative to where it is mounted; docs/server.md):

- ``POST /`` — JSON-RPC (spec §9) (``jsonrpc_path``);
- the HTTP+JSON routes (spec §11) under ``rest_prefix`` (``""``: ``/message:send``, ``/tasks/...``,
  their ``/{tenant}/...`` variants and 0.3's ``/v1/...``), see :mod:`simple_a2a.server.rest`;
- ``GET /.well-known/agent-card.json`` — the Agent Card (spec §8.2), also at
  ``/.well-known/agent.json`` (0.3-era clients) and ``/agentCard`` (the Ruby seed), with ETag and
  Cache-Control (spec §8.6).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..auth import AuthLike, AuthMiddleware, as_policy
from ..protocol.card import (
    GRPC,
    HTTP_JSON,
    JSONRPC,
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentInterface,
)
from ..protocol.logcontext import library_logger
from ..protocol.push import JWKS_PATH
from ..protocol.telemetry import TELEMETRY
from ..storage import Storage, open_storage
from .card_signing import jwks_endpoint, resolve_signing
from .context import Caller
from .executor import AgentExecutor
from .handler import ExtendedCardProvider, RequestHandler
from .http import CURRENT_REQUEST, DEFAULT_MAX_BODY, JSON
from .jsonrpc import JSONRPCBinding
from .leases import DEFAULT_LEASE_TTL, DEFAULT_SCAN_INTERVAL, LeaseKeeper
from .limits import DEFAULT_LIMITS, Limits, uvicorn_options
from .push import PushService, PushSettings
from .push.signing import SigningKeys
from .rest import RESTBinding
from .retention import RetentionSweeper
from .routing import Route, Router
from .serving import run_uvicorn, serve_uvicorn
from .tasks import TaskManager
from .telemetry import instrument_server
from .workqueue import QueueSettings, Role, WorkDispatch

log = library_logger("simple_a2a.server")

#: Scope key set by :func:`~simple_a2a.server.multi.multi_server`: the mount answers its prefix
#: without a trailing slash, so interface URLs need none.
EXACT_MOUNT = "simple_a2a.exact_mount"
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard")


def _with_defaults(card: AgentCard) -> AgentCard:
    """Declare what this server always does (streaming) unless the author said otherwise."""
    caps = card.capabilities
    if caps.streaming is None:
        caps = caps.model_copy(update={"streaming": True})
    return card.model_copy(update={"capabilities": caps or AgentCapabilities()})


_heap_frozen = False

#: CPython's own collection thresholds (700 up to 3.11, 2,000 from 3.12); a process that set
#: others keeps them
_INTERPRETER_THRESHOLDS = ((700, 10, 10), (2000, 10, 10))
#: the young generation's threshold we set instead (the older two stay as they are)
YOUNG_THRESHOLD = 20_000


def freeze_startup_heap() -> None:
    """Move what is alive after startup (modules, models, the app) out of the collector's sight,
    and let the young generation grow to :data:`YOUNG_THRESHOLD` objects before it is collected.

    The cyclic garbage collector's full passes otherwise rescan that heap again and again while
    requests run, and each pass stalls the event loop: in the benchmark (SendMessage, c=32) it
    put p99 at ~5x p50; frozen, ~3x (bench/README.md). A streaming server holds, between two
    collections at CPython's default of 700, hundreds of writes and waits in flight (their
    coroutines, futures, locks, closures): they survive young collections, are promoted, and
    the promotions trigger full ones. Measured with 500 streams (bench/README.md, third round of
    issue #36): the collector took 76 us more per streamed chunk on SQLite than on memory. The
    threshold moves only if it is still CPython's default (a deployment that tuned its own keeps
    it: ``gc.set_threshold`` before the server starts). Once per process, at the first server's
    startup.
    """
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.collect()  # what is garbage now is collected, not frozen
        gc.freeze()
        threshold = gc.get_threshold()
        if threshold in _INTERPRETER_THRESHOLDS:
            gc.set_threshold(YOUNG_THRESHOLD, *threshold[1:])


class A2AServer:
    """One agent: its card, executor and storage, as an ASGI app.

    ``storage`` is a [Storage][simple_a2a.storage.Storage] or a URL (``"sqlite:///tasks.db"``,
    ``"postgresql://..."``); without it tasks are kept in memory and lost with the process.
    ``inspector=True`` also serves the inspector's page at ``/inspector/`` (docs/inspector.md):
    a development tool, off by default.
    """

    def __init__(
        self,
        agent_card: AgentCard,
        executor: AgentExecutor | Callable[..., Any],
        *,
        storage: str | Storage | None = None,
        extended_card: AgentCard | ExtendedCardProvider | None = None,
        auth: AuthLike | None = None,
        max_body_size: int = DEFAULT_MAX_BODY,
        recover_interrupted_tasks: bool = True,
        executor_timeout: float | None = None,
        max_history_length: int | None = 1000,
        shutdown_grace: float = 10.0,
        keepalive: float = 15.0,
        card_max_age: int = 300,
        jsonrpc_path: str = "/",
        rest_prefix: str = "",
        push: PushSettings | None = None,
        card_signing: SigningKeys | bool = False,
        metrics_path: str | None = None,
        retention: timedelta | float | None = None,
        retention_interval: float = 60.0,
        grpc_url: str | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        lease_scan_interval: float = DEFAULT_SCAN_INTERVAL,
        inspector: bool = False,
        limits: Limits | None = None,
        public_url: str | None = None,
        role: Role = "all",
        queue: QueueSettings | None = None,
    ) -> None:
        #: authentication and authorization (docs/auth.md): the card declares what is enforced
        self.auth = as_policy(auth) if auth is not None else None
        if self.auth is not None:
            agent_card = self.auth.decorate_card(agent_card)
        self.storage = open_storage(storage)
        card = _with_defaults(agent_card)
        limits = limits or DEFAULT_LIMITS
        push_on = bool(card.capabilities.push_notifications)
        #: signs the served card (spec §8.4, docs/auth.md); shares its keys with push
        self.card_signer, push = resolve_signing(card_signing, push, push_on)
        #: the agent's public base URL (behind a proxy): the card's URLs, never the Host header
        self.public_url = public_url.rstrip("/") if public_url else None
        # The seams of the handler are given to it, never patched on afterwards: one TaskManager
        # shared by the handler and push delivery, the authorization hook, the push service.
        tasks = TaskManager(self.storage, keepalive=keepalive, max_history=max_history_length)
        #: task leases: several processes on one storage (docs/guides/deployment.md)
        self.leases = (
            LeaseKeeper(self.storage.leases, ttl=lease_ttl, scan_interval=lease_scan_interval)
            if self.storage.leases is not None
            else None
        )
        #: the role (web, worker, all) and the work queue between them (docs/cluster.md)
        self.role: Role = role
        self.work = _work_dispatch(self.storage, self.leases, role, queue)
        #: push delivery (docs/push.md), when the card declares capabilities.pushNotifications
        self.push = PushService(self.storage, tasks, push, limits=limits) if push_on else None
        self.handler = RequestHandler(
            card,
            executor,
            self.storage,
            extended_card=self._extended_provider(extended_card),
            max_history_length=max_history_length,
            executor_timeout=executor_timeout,
            limits=limits,
            tasks=tasks,
            authorize=self.auth.authorize if self.auth is not None else None,
            push=self.push,
            leases=self.leases,
            work=self.work,
        )
        if TELEMETRY.on:  # storage spans, task and push metrics (docs/observability.md)
            instrument_server(self)
        self.recover_interrupted_tasks = recover_interrupted_tasks
        if self.push is not None and self.leases is not None:
            self.push.dispatcher.use_leases(
                LeaseKeeper(
                    self.leases.store,
                    kind="push",
                    owner=self.leases.owner,
                    ttl=lease_ttl,
                    scan_interval=lease_scan_interval,
                )
            )
        #: forget terminal tasks after this long (None: keep everything, the default)
        self.retention = (
            RetentionSweeper(self.storage, _as_ttl(retention), interval=retention_interval)
            if retention is not None
            else None
        )
        self.max_body_size = max_body_size
        self.shutdown_grace = shutdown_grace
        self.card_max_age = card_max_age
        #: the Prometheus text route (docs/observability.md); None: not served
        self.metrics_path = metrics_path
        self.jsonrpc_path = "/" + jsonrpc_path.strip("/")
        self.rest_prefix = ("/" + rest_prefix.strip("/")) if rest_prefix.strip("/") else ""
        #: where the gRPC binding is served (docs/grpc.md): listed in the card's interfaces
        self.grpc_url = grpc_url
        self._opened = False
        self._open_lock = asyncio.Lock()
        self.jsonrpc = JSONRPCBinding(self.handler, max_body=self.max_body_size)
        self.rest = RESTBinding(self.handler, max_body=self.max_body_size, prefix=self.rest_prefix)
        #: the ASGI app: see :meth:`build_stack`
        self.app: ASGIApp = self.build_stack(inspector=inspector)

    @property
    def _rpc_paths(self) -> tuple[str, ...]:
        """Where JSON-RPC is answered: ``jsonrpc_path`` with and without a trailing slash, no
        redirect (clients do not follow one; the ITK's runner posts to ``/jsonrpc/``, Go peers
        trim it to ``/jsonrpc``)."""
        path = self.jsonrpc_path
        return (path,) if path == "/" else (path, path + "/")

    @property
    def card(self) -> AgentCard:
        return self.handler.card

    def build_stack(self, *, inspector: bool = False) -> ASGIApp:
        """The ASGI app, composed here and only here (Starlette's ``build_middleware_stack`` is
        the model). A request crosses, outermost first:

        1. ``_OpenOnFirstRequest`` — opens storage when mounted (a mounted app gets no lifespan);
        2. the inspector's page — only with ``inspector=True`` (docs/inspector.md);
        3. ``AuthMiddleware`` — only with ``auth=``: records the caller or the refusal in the
           scope; the bindings answer a refusal in their own error format (docs/auth.md);
        4. the :class:`~simple_a2a.server.routing.Router`: the fixed paths of :meth:`routes`
           (JSON-RPC, the card, the JWKS, metrics), then the HTTP+JSON binding for every other
           path; lifespan events open and close the storage (:meth:`lifespan`).

        Every layer reads the path below the mount point with one rule,
        :func:`~simple_a2a.protocol.asgi.route_path`.
        """
        # A worker answers no A2A operation: its fixed routes only, 404 for everything else.
        default: ASGIApp = self.rest if self.role != "worker" else _not_found
        app: ASGIApp = Router(self.routes(), default, self.lifespan)
        if self.auth is not None:
            app = AuthMiddleware(app, self.auth, public_paths=(*CARD_PATHS, JWKS_PATH))
        if inspector:  # a development tool: its page calls this agent over HTTP, as a client
            from ..inspector.mount import with_inspector

            app = with_inspector(app)
        return _OpenOnFirstRequest(app, self.startup)

    def routes(self) -> list[Route]:
        """The fixed paths this agent serves besides the HTTP+JSON routes."""
        # JSON-RPC is POSTed (spec §9.1); other methods get 405 from the router.
        routes = [Route(path, frozenset({"POST"}), self.jsonrpc.asgi) for path in self._rpc_paths]
        if self.role == "worker":
            routes = [Route.endpoint(HEALTH_PATH, self._health_endpoint)]
        routes += [Route.endpoint(path, self._card_endpoint) for path in CARD_PATHS]
        # the keys that verify signed push notifications and the signed card (one set)
        keys = self.push.keys if self.push is not None else None
        keys = keys or (self.card_signer.keys if self.card_signer is not None else None)
        if keys is not None:
            routes.append(Route.endpoint(JWKS_PATH, jwks_endpoint(keys)))
        if self.metrics_path is not None:
            from .metrics import metrics_endpoint

            routes.append(Route.endpoint(self.metrics_path, metrics_endpoint))
        return routes

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncIterator[None]:
        """Open storage, and on exit drain tasks and close it; for a parent app that mounts this
        one: ``FastAPI(lifespan=agent.lifespan)`` (mounted apps get no lifespan events)."""
        await self.startup()
        try:
            yield
        finally:
            await self.shutdown()

    async def startup(self) -> None:
        """Open the storage (idempotent; also done on the first request when mounted)."""
        async with self._open_lock:
            if not self._opened:
                await self.storage.open()
                self._opened = True
                # (a web replica runs no executor: it recovers nothing, the workers do)
                recovers = self.recover_interrupted_tasks and self.role != "web"
                if self.leases is not None:
                    self.leases.start(scan=recovers)
                if recovers:
                    await self.handler.recover()
                if self.work is not None:
                    await self.work.start()
                if self.retention is not None:
                    self.retention.start()
                if self.push is not None:
                    await self.push.start()
                freeze_startup_heap()

    async def shutdown(self) -> None:
        """Let running tasks finish within the grace period, cancel the rest, close storage."""
        if self.work is not None:
            await self.work.stop()  # claim nothing more
        await self.handler.shutdown(self.shutdown_grace)
        if self.leases is not None:
            await self.leases.stop()
        if self.retention is not None:
            await self.retention.stop()
        if self.push is not None:
            await self.push.close()
        if self._opened:
            await self.storage.close()
            self._opened = False

    # -- discovery (spec §8) --
    def _extended_provider(
        self, extended: AgentCard | ExtendedCardProvider | None
    ) -> ExtendedCardProvider | None:
        """The extended card gets the same derived interface URLs as the public one."""
        if extended is None:
            return None

        async def provide(caller: Caller | None) -> AgentCard:
            card = extended if isinstance(extended, AgentCard) else extended(caller)
            if not isinstance(card, AgentCard):
                card = await card
            request = CURRENT_REQUEST.get(None)
            if request is None:
                return card
            base, mounted = self._base_of(request)
            if not card.supported_interfaces:
                derived = self.public_card(base, trailing_slash=mounted)
                interfaces = derived.supported_interfaces
                card = card.model_copy(update={"supported_interfaces": interfaces})
            if self.card_signer is None:
                return card
            signed = self.card_signer.sign(card.to_dict(), base)["signatures"]
            return card.model_copy(update={"signatures": [AgentCardSignature(**signed[0])]})

        return provide

    def _base_of(self, request: Request) -> tuple[str, bool]:
        """The agent's base URL, and whether a foreign mount needs the trailing slash.

        ``public_url`` when set: the Host header is the caller's to choose, and a shared cache
        that does not key on it would serve a poisoned card to everyone (#16 item 9)."""
        if self.public_url is not None:
            return self.public_url, False
        root = request.scope.get("root_path", "")  # where this app is mounted (not the outer
        mounted = bool(root) and not request.scope.get(EXACT_MOUNT)  # app's base_url)
        return f"{request.url.scheme}://{request.url.netloc}{root}", mounted

    def public_card(self, base_url: str, *, trailing_slash: bool = False) -> AgentCard:
        """The card with its interface URLs derived from where it is served, unless set:
        JSON-RPC at the base URL (plus ``jsonrpc_path``), HTTP+JSON at base + ``rest_prefix``.

        ``trailing_slash`` keeps the ``/`` after a mount prefix in the JSON-RPC URL (a parent
        Starlette app redirects ``POST /agent`` to ``/agent/``, which clients do not follow).
        """
        card = self.card
        if card.supported_interfaces:
            return card
        base = base_url.rstrip("/")
        rpc_path = self.jsonrpc_path if self.jsonrpc_path != "/" else ""
        rpc_url = base + (rpc_path or ("/" if trailing_slash else ""))
        return card.model_copy(
            update={
                "supported_interfaces": [
                    AgentInterface(url=rpc_url, protocol_binding=JSONRPC, protocol_version="1.0"),
                    AgentInterface(
                        url=base + self.rest_prefix,
                        protocol_binding=HTTP_JSON,
                        protocol_version="1.0",
                    ),
                    *(
                        [
                            AgentInterface(
                                url=self.grpc_url, protocol_binding=GRPC, protocol_version="1.0"
                            )
                        ]
                        if self.grpc_url
                        else []
                    ),
                ]
            }
        )

    def card_document(
        self, base_url: str, *, trailing_slash: bool = False, pure: bool = False
    ) -> dict[str, Any]:
        """The card as served: 1.0 fields plus the 0.3 ones, one document for both; with
        ``pure`` the 1.0 card alone, which strict ProtoJSON parsers accept (docs/server.md)."""
        public = self.public_card(base_url, trailing_slash=trailing_slash)
        if self.push is not None:
            public = self.push.decorate_card(public, base_url)
        card = public.to_dict()
        if self.card_signer is not None:
            card = self.card_signer.sign(card, base_url)
        if pure:
            return card
        try:
            from ..protocol import v03
        except ImportError:  # pragma: no cover - the 0.3 layer is part of the package
            return card
        return v03.card_to_v03(card)

    async def _health_endpoint(self, request: Request) -> Response:
        """A worker's liveness: its role and how many executions it runs (docs/cluster.md)."""
        body = {"role": self.role, "running": len(self.handler._executions)}
        return Response(json.dumps(body), media_type="application/json")

    async def _card_endpoint(self, request: Request) -> Response:
        base, mounted = self._base_of(request)
        # A reader that says it speaks 1.x gets the pure 1.0 card: the combined card's 0.3
        # members (top-level ``url``, ``type``/``scheme`` beside a security scheme's oneof
        # member) make strict ProtoJSON parsers (protobuf's json_format.Parse, Go's protojson,
        # Java's JsonFormat) reject it. Without the header: the combined card (0.3 readers).
        pure = request.headers.get("a2a-version", "").strip().startswith("1.")
        document = self.card_document(base, trailing_slash=mounted, pure=pure)
        body = json.dumps(document, separators=(",", ":"))
        etag = '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'
        headers = {
            "ETag": etag,
            "Cache-Control": f"public, max-age={self.card_max_age}",
            "Vary": "A2A-Version",
        }
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=JSON, headers=headers)

    # -- running --
    async def grpc_server(self, port: int = 50051, host: str = "127.0.0.1", **options: Any) -> Any:
        """Serve the gRPC binding too (the ``grpc`` extra): a started ``grpc.aio`` server that
        shares this agent's handler; see :func:`simple_a2a.server.grpc.serve_grpc`."""
        from .grpc import serve_grpc

        return await serve_grpc(self, host, port, **options)

    def run(self, host: str = "127.0.0.1", port: int = 9292, **uvicorn_options: Any) -> None:
        """Serve with uvicorn until interrupted (blocks); see :meth:`uvicorn_options`. Stopping
        ends open streams at once, then lets running tasks finish within ``shutdown_grace``
        (``serving.py``)."""
        run_uvicorn(self.app, host, port, **self.uvicorn_options(**uvicorn_options))

    async def serve(
        self, host: str = "127.0.0.1", port: int = 9292, **uvicorn_options: Any
    ) -> None:
        """Serve with uvicorn inside a running event loop; see :meth:`uvicorn_options` (stopping
        as :meth:`run` does)."""
        await serve_uvicorn(self.app, host, port, **self.uvicorn_options(**uvicorn_options))

    def uvicorn_options(self, **overrides: Any) -> dict[str, Any]:
        """uvicorn's settings for :meth:`run` / :meth:`serve` (:func:`.limits.uvicorn_options`)."""
        return uvicorn_options(self.shutdown_grace, overrides)


class _OpenOnFirstRequest:
    """Mounted apps get no lifespan events from Starlette; open storage on first use instead."""

    def __init__(self, app: ASGIApp, startup: Callable[[], Any]) -> None:
        self._app = app
        self._startup = startup
        self._ready = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._ready and scope["type"] == "http":
            await self._startup()
            self._ready = True
        await self._app(scope, receive, send)


HEALTH_PATH = "/healthz"


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await Response(status_code=404)(scope, receive, send)


def _work_dispatch(
    storage: Storage, leases: LeaseKeeper | None, role: Role, settings: QueueSettings | None
) -> WorkDispatch | None:
    if storage.queue is None or leases is None:
        if role != "all" or settings is not None:
            raise ValueError(f"role {role!r} and queue= need a storage with a work queue")
        return None
    return WorkDispatch(storage.queue, leases, role=role, settings=settings)


def _as_ttl(value: timedelta | float) -> timedelta:
    return value if isinstance(value, timedelta) else timedelta(seconds=value)


def server(
    agent_card: AgentCard,
    executor: AgentExecutor | Callable[..., Any],
    **options: Any,
) -> A2AServer:
    """An A2A server for one agent. ``.run(port=...)`` serves it; ``.app`` is its ASGI app.

    Tasks are kept in memory unless ``storage=`` says where (``"sqlite:///tasks.db"``, a
    PostgreSQL URL or a [Storage][simple_a2a.storage.Storage]); the options are
    [A2AServer][simple_a2a.server.A2AServer]'s.
    """
    return A2AServer(agent_card, executor, **options)
