"""The gRPC binding (spec §10): ``lf.a2a.v1.A2AService`` on ``grpc.aio``; translation only.

Each rpc turns its protobuf request into the request model (through ProtoJSON, see
:mod:`simple_a2a.protocol.grpc_codec`), calls the same :class:`RequestHandler` as the HTTP
bindings, and answers the result as protobuf. Service parameters come from metadata
(``a2a-version``, ``a2a-extensions``; spec §10.2); every metadata entry is also in
``CallContext.headers``. With ``auth=`` on the server, the authenticators read the metadata as
they read HTTP headers (``authorization``, API keys), and refusals are ``UNAUTHENTICATED``.

Errors (spec §10.6) abort the call with the §5.4 status code and a ``google.rpc.Status`` carrying
the ``google.rpc.ErrorInfo`` in ``grpc-status-details-bin``; an unexpected exception is logged and
answered ``INTERNAL`` without its text. Streams yield ``StreamResponse`` messages (keep-alives
are an SSE matter and are skipped).

Needs the ``grpc`` extra: ``pip install 'simple-a2a[grpc]'``.

    server = await serve_grpc(a2a_server, "127.0.0.1", 50051)   # started; shares the handler
    ...
    await server.stop(grace=5)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import errors as e
from ..protocol.card import GRPC
from ..protocol.extensions import activate_extensions, split_list
from ..protocol.grpc_codec import (
    EXTENSIONS_KEY,
    INSTALL_HINT,
    STATUS_DETAILS_KEY,
    VERSION_KEY,
    message_types,
    status_of,
    to_dict,
    to_message,
)
from ..protocol.logcontext import library_logger
from ..protocol.operations import OPERATIONS, Operation
from ..protocol.versions import V03, negotiate
from .context import CallContext, Caller
from .handler import RequestHandler

try:
    import grpc
except ImportError as exc:  # pragma: no cover - the codec import already says this
    raise ImportError(f"the gRPC binding needs the 'grpc' extra: {INSTALL_HINT}") from exc

if TYPE_CHECKING:
    from ..auth import AuthPolicy
    from .app import A2AServer

__all__ = ["A2AServicer", "add_to_server", "serve_grpc"]

log = library_logger("simple_a2a.server")

#: ``grpc.aio.ServicerContext`` (grpcio ships no type information)
Context = Any


async def _abort(context: Context, err: e.A2AError) -> None:
    status = status_of(err)
    await context.abort(
        grpc.StatusCode[err.grpc_status],
        err.message,
        trailing_metadata=((STATUS_DETAILS_KEY, status.SerializeToString()),),
    )


class A2AServicer:
    """The ``A2AService`` servicer: one async method per rpc, named as in a2a.proto."""

    def __init__(self, handler: RequestHandler, *, auth: AuthPolicy | None = None) -> None:
        self.handler = handler
        self.auth = auth
        for op in OPERATIONS:
            method = self._streaming(op) if op.streaming else self._unary(op)
            setattr(self, op.name, method)

    async def call_context(self, context: Context) -> CallContext:
        """Service parameters from metadata (spec §10.2), checked against the card."""
        headers: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            if isinstance(value, str):  # binary (-bin) entries are not service parameters
                headers[key.lower()] = value
        requested = headers.get(VERSION_KEY)
        # This service is lf.a2a.v1 (1.0); 0.3's gRPC service is another one (a2a.v1).
        version = negotiate(requested, is_v03_name=False)
        if version == V03:
            raise e.VersionNotSupportedError(
                "A2A 0.3 over gRPC is the a2a.v1.A2AService; this server serves "
                "lf.a2a.v1.A2AService (A2A 1.0)",
                metadata={"supportedVersions": "1.0"},
            )
        extensions = split_list(headers.get(EXTENSIONS_KEY))
        activated = activate_extensions(
            self.handler.card, extensions, carrier="a2a-extensions metadata"
        )
        return CallContext(
            caller=await self._authenticate(headers),
            extensions=extensions,
            version=version,
            headers=headers,
            activated_extensions=activated,
            binding=GRPC,
        )

    async def _authenticate(self, headers: dict[str, str]) -> Caller | None:
        if self.auth is None:
            return None
        from starlette.requests import HTTPConnection

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "query_string": b"",
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        }
        return await self.auth.authenticate(HTTPConnection(scope))

    async def _prepare(self, op: Operation, request: Any, context: Context) -> tuple[Any, Any]:
        call = await self.call_context(context)
        model = op.request_type.from_dict(to_dict(request))
        if call.activated_extensions:
            context.set_trailing_metadata(((EXTENSIONS_KEY, ", ".join(call.activated_extensions)),))
        return call, await self.handler.handle(op.name, model, call)

    def _unary(self, op: Operation) -> Callable[[Any, Context], Awaitable[Any]]:
        response_type = message_types(op.name)[1]

        async def unary(request: Any, context: Context) -> Any:
            error: e.A2AError
            try:
                _call, result = await self._prepare(op, request, context)
                return to_message(result.to_dict(), response_type)
            except e.A2AError as err:
                error = err
            except Exception:
                log.exception("internal error in gRPC %s", op.name)
                error = e.InternalError()
            await _abort(context, error)

        unary.__name__ = op.name
        return unary

    def _streaming(self, op: Operation) -> Callable[[Any, Context], AsyncIterator[Any]]:
        response_type = message_types(op.name)[1]

        async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
            error: e.A2AError
            try:
                _call, items = await self._prepare(op, request, context)
                async for item in items:
                    if item.event is not None:  # None is an SSE keep-alive
                        yield to_message(item.event.to_dict(), response_type)
                return
            except e.A2AError as err:
                error = err
            except Exception:
                log.exception("internal error in gRPC stream %s", op.name)
                error = e.InternalError()
            await _abort(context, error)

        stream.__name__ = op.name
        return stream


def add_to_server(
    server: grpc.aio.Server, handler: RequestHandler, *, auth: AuthPolicy | None = None
) -> A2AServicer:
    """Register ``A2AService`` for ``handler`` on a ``grpc.aio`` server (not started)."""
    from ..protocol._grpc import a2a_pb2_grpc

    servicer = A2AServicer(handler, auth=auth)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
    return servicer


async def serve_grpc(
    a2a_server: A2AServer,
    host: str = "127.0.0.1",
    port: int = 50051,
    *,
    credentials: grpc.ServerCredentials | None = None,
    options: list[tuple[str, Any]] | None = None,
) -> grpc.aio.Server:
    """Start a ``grpc.aio`` server for the agent of ``a2a_server`` and return it (started).

    It shares the agent's request handler and storage with the HTTP app (a task created over
    gRPC is visible over JSON-RPC). ``port=0`` picks a free port (``server.a2a_port``). Unless
    the server was given ``grpc_url=``, the card then lists ``host:port`` as its GRPC interface.
    ``credentials`` serve TLS (spec §10.1); without them the port is plaintext (development).
    Stop it with ``await server.stop(grace)``.
    """
    await a2a_server.startup()
    server = grpc.aio.server(options=options)
    add_to_server(server, a2a_server.handler, auth=a2a_server.auth)
    address = f"{host}:{port}"
    if credentials is not None:
        bound = server.add_secure_port(address, credentials)
    else:
        bound = server.add_insecure_port(address)
    server.a2a_port = bound
    if a2a_server.grpc_url is None and host not in ("0.0.0.0", "::", "[::]", ""):
        # The card lists ``host:port`` (the form a2a.proto documents for GRPC URLs; pass
        # ``grpc_url=`` for another, e.g. ``grpcs://host:port``); an IPv6 literal is bracketed.
        literal = f"[{host}]" if ":" in host and not host.startswith("[") else host
        a2a_server.grpc_url = f"{literal}:{bound}"
    await server.start()
    return server
