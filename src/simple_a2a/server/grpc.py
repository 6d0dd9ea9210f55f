"""The gRPC binding (spec §10): ``lf.a2a.v1.A2AService`` on ``grpc.aio``; translation only.

Each rpc turns its protobuf request into the request model (through ProtoJSON, see
:mod:`simple_a2a.protocol.grpc_codec`), calls the same :class:`RequestHandler` as the HTTP
bindings, and answers the result as protobuf. A2A 0.3's service, ``a2a.v1.A2AService``, is
served beside it on the same server and port by the same class (``v03=True``): its requests and
results convert with :mod:`simple_a2a.protocol.grpc_v03`, and the service name is the version
(``CallContext.version`` is 0.3 whatever the metadata says). Service parameters come from metadata
(``a2a-version``, ``a2a-extensions``; spec §10.2); every metadata entry is also in
``CallContext.headers``. With ``auth=`` on the server, the authenticators read the metadata as
they read HTTP headers (``authorization``, API keys), and refusals are ``UNAUTHENTICATED``.

Errors (spec §10.6) abort the call with the §5.4 status code and a ``google.rpc.Status`` carrying
the ``google.rpc.ErrorInfo`` in ``grpc-status-details-bin``; an unexpected exception is logged and
answered ``INTERNAL`` without its text. On the 0.3 service the same, with the message prefixed by
the error's name (``"TaskNotFoundError: ..."``), which 0.3 clients type errors by. Streams yield
``StreamResponse`` messages (keep-alives are an SSE matter and are skipped).

Needs the ``grpc`` extra: ``pip install 'simple-a2a[grpc]'``.

    server = await serve_grpc(a2a_server, "127.0.0.1", 50051)   # started; shares the handler
    ...
    await server.stop(grace=5)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import errors as e
from ..protocol import grpc_v03
from ..protocol.card import GRPC
from ..protocol.extensions import activate_extensions, split_list
from ..protocol.grpc_codec import (
    EXTENSIONS_KEY,
    INSTALL_HINT,
    STATUS_DETAILS_KEY,
    VERSION_KEY,
    message_types,
    received_dict,
    status_of,
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


async def _abort(context: Context, err: e.A2AError, *, v03: bool = False) -> None:
    status = status_of(err)
    if v03:
        status.message = grpc_v03.error_message(err)
    await context.abort(
        grpc.StatusCode[err.grpc_status],
        status.message,
        trailing_metadata=((STATUS_DETAILS_KEY, status.SerializeToString()),),
    )


class A2AServicer:
    """The ``A2AService`` servicer: one async method per rpc, named as in a2a.proto; with
    ``v03`` the 0.3 service's (``a2a.v1``: ``TaskSubscription``, ``GetAgentCard``, no
    ``ListTasks``)."""

    def __init__(
        self, handler: RequestHandler, *, auth: AuthPolicy | None = None, v03: bool = False
    ) -> None:
        self.handler = handler
        self.auth = auth
        self.v03 = v03
        for op in OPERATIONS:
            if v03 and op.name not in grpc_v03.RPCS:
                continue
            method = self._streaming(op) if op.streaming else self._unary(op)
            setattr(self, grpc_v03.RPCS[op.name] if v03 else op.name, method)

    async def call_context(self, context: Context) -> CallContext:
        """Service parameters from metadata (spec §10.2), checked against the card."""
        headers: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            if isinstance(value, str):  # binary (-bin) entries are not service parameters
                headers[key.lower()] = value
        requested = headers.get(VERSION_KEY)
        # lf.a2a.v1 is 1.0 and a2a.v1 is 0.3: the service a client calls is its version.
        version = V03 if self.v03 else negotiate(requested, is_v03_name=False)
        if version == V03 and not self.v03:
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
        data = received_dict(request)
        if self.v03:
            data = grpc_v03.request_up(op.name, data)
        model = op.request_type.from_dict(data)
        if call.activated_extensions:
            context.set_trailing_metadata(((EXTENSIONS_KEY, ", ".join(call.activated_extensions)),))
        return call, await self.handler.handle(op.name, model, call)

    def _response(self, op: Operation, result: dict[str, Any], response_type: Any) -> Any:
        if self.v03:
            result = grpc_v03.result_down(op.name, result)
        return to_message(result, response_type)

    def _unary(self, op: Operation) -> Callable[[Any, Context], Awaitable[Any]]:
        response_type = message_types(op.name, self.v03)[1]

        async def unary(request: Any, context: Context) -> Any:
            error: e.A2AError
            try:
                _call, result = await self._prepare(op, request, context)
                return self._response(op, result.to_dict(), response_type)
            except e.A2AError as err:
                error = err
            except Exception:
                log.exception("internal error in gRPC %s", op.name)
                error = e.InternalError()
            await _abort(context, error, v03=self.v03)

        unary.__name__ = op.name
        return unary

    def _streaming(self, op: Operation) -> Callable[[Any, Context], AsyncIterator[Any]]:
        response_type = message_types(op.name, self.v03)[1]

        async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
            error: e.A2AError
            try:
                _call, items = await self._prepare(op, request, context)
                async for item in items:
                    if item.event is not None:  # None is an SSE keep-alive
                        yield self._response(op, item.event.to_dict(), response_type)
                return
            except e.A2AError as err:
                error = err
            except Exception:
                log.exception("internal error in gRPC stream %s", op.name)
                error = e.InternalError()
            await _abort(context, error, v03=self.v03)

        stream.__name__ = op.name
        return stream


def add_to_server(
    server: grpc.aio.Server,
    handler: RequestHandler,
    *,
    auth: AuthPolicy | None = None,
    v03: bool = True,
) -> A2AServicer:
    """Register ``lf.a2a.v1.A2AService`` (1.0) for ``handler`` on a ``grpc.aio`` server (not
    started) and, unless ``v03=False``, A2A 0.3's ``a2a.v1.A2AService`` beside it, as the
    official SDKs do; returns the 1.0 servicer."""
    from ..protocol._grpc import a2a_pb2_grpc
    from ..protocol._grpc_v03 import a2a_v03_pb2_grpc

    servicer = A2AServicer(handler, auth=auth)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
    if v03:
        legacy = A2AServicer(handler, auth=auth, v03=True)
        a2a_v03_pb2_grpc.add_A2AServiceServicer_to_server(legacy, server)
    return servicer


async def serve_grpc(
    a2a_server: A2AServer,
    host: str = "127.0.0.1",
    port: int = 50051,
    *,
    credentials: grpc.ServerCredentials | None = None,
    options: list[tuple[str, Any]] | None = None,
    v03: bool = True,
) -> grpc.aio.Server:
    """Start a ``grpc.aio`` server for the agent of ``a2a_server`` and return it (started).

    It shares the agent's request handler and storage with the HTTP app (a task created over
    gRPC is visible over JSON-RPC). ``port=0`` picks a free port (``server.a2a_port``). Unless
    the server was given ``grpc_url=``, the card then lists ``host:port`` as its GRPC interface.
    ``credentials`` serve TLS (spec §10.1); without them the port is plaintext (development).
    A2A 0.3's ``a2a.v1.A2AService`` is served on the same port unless ``v03=False``.
    Stop it with ``await server.stop(grace)``.
    """
    await a2a_server.startup()
    server = grpc.aio.server(options=options)
    add_to_server(server, a2a_server.handler, auth=a2a_server.auth, v03=v03)
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
