"""The gRPC transport (spec §10): the client's :class:`Transport` contract over ``grpc.aio``.

Chosen by :class:`~simple_a2a.AsyncClient` for an interface whose ``protocolBinding`` is
``"GRPC"`` when the ``grpc`` extra is installed (``pip install 'simple-a2a[grpc]'``) and the
``bindings`` preference allows it. Requests and results stay 1.0 ProtoJSON dicts above the
transport; they become protobuf messages of ``a2a.proto`` on the wire.

The interface URL is a gRPC target: ``host:port``, ``grpc://host:port`` or ``http://host:port``
(plaintext), ``grpcs://host:port`` or ``https://host:port`` (TLS with the system roots).
Headers become metadata (lowercase keys): ``a2a-version``, ``a2a-extensions``,
``authorization``... Errors are rebuilt from the ``google.rpc.Status`` details (spec §10.6) into
the typed :class:`~simple_a2a.protocol.errors.A2AError` (``status_code`` is the error's HTTP
equivalent); ``DEADLINE_EXCEEDED`` is a timeout. ``UNAVAILABLE`` without a status is a
:class:`ConnectError` (safe to resend anywhere) only when grpc says connecting failed (refused,
name resolution, handshake); a connection lost during the call ("Stream removed (Socket
closed)") may have reached the agent and is a plain :class:`TransportError`.

A gRPC stream carries no event ids, so a resumed stream starts again from the task's snapshot.

An interface with ``protocolVersion`` 0.3 (a 0.3 card's ``preferredTransport`` or
``additionalInterfaces`` ``GRPC``) is spoken to as A2A 0.3's ``a2a.v1.A2AService``: the requests
and results convert with :mod:`simple_a2a.protocol.grpc_v03`, the rpc names are 0.3's
(``TaskSubscription``, ``GetAgentCard``), ListTasks has no 0.3 rpc, and errors are typed by
ErrorInfo when the server sends one, else by the ``"TaskNotFoundError: ..."`` form of their
message (the official SDKs' 0.3 servers), else by status code.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from simple_a2a.protocol import grpc_v03
from simple_a2a.protocol.errors import A2AError, InvalidAgentResponseError
from simple_a2a.protocol.telemetry import TELEMETRY, grpc_metadata

from .answers import with_status
from .errors import ClientTimeoutError, ConnectError, TransportError
from .limits import ClientLimits
from .transport import DEFAULT, SSEEvent, Transport

if TYPE_CHECKING:
    import grpc

__all__ = ["GRPCTransport", "grpc_available"]

INSTALL_HINT = "pip install 'simple-a2a[grpc]'"


def grpc_available() -> bool:
    """Whether the ``grpc`` extra is installed (checked without importing it)."""
    try:
        return all(importlib.util.find_spec(n) is not None for n in ("grpc", "google.protobuf"))
    except (ImportError, ValueError):  # a parent package missing, or a module blocked
        return False


def _grpc() -> Any:
    """``grpc`` and the codec, imported on first use (importing simple_a2a never needs them)."""
    try:
        import grpc
        from simple_a2a.protocol import grpc_codec
    except ImportError as exc:
        raise ImportError(f"the gRPC transport needs the 'grpc' extra: {INSTALL_HINT}") from exc
    return grpc, grpc_codec


#: HTTP headers that mean nothing (or are forbidden) as gRPC metadata.
_NOT_METADATA = frozenset(
    {"accept", "connection", "content-length", "content-type", "host", "te", "transfer-encoding"}
)
_SECURE = ("grpcs", "https")
#: how grpc-core words an UNAVAILABLE before anything was sent: "failed to connect to all
#: addresses ... Connection refused", "errors resolving host:port" / "DNS resolution failed",
#: "Ssl handshake failed", "empty address list"
_NOT_CONNECTED = ("failed to connect", "resolv", "dns", "handshake", "empty address list")


_URL_SCHEMES = ("grpc", "grpcs", "http", "https")


def _target(url: str) -> tuple[str, bool]:
    """The gRPC target of an interface URL and whether it wants TLS.

    Every form peers publish: ``host:port`` and ``[::1]:port`` (the proto's form, plaintext),
    ``grpc://`` and ``http://`` (plaintext), ``grpcs://`` and ``https://`` (TLS). Any other
    ``scheme://`` (``dns:///``, ``unix://``) is a gRPC name already and passes through.
    """
    url = url.strip().rstrip("/")
    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in _URL_SCHEMES:
        return url, False
    parts = urlsplit(url)
    return parts.netloc, scheme.lower() in _SECURE


class GRPCTransport(Transport):
    """gRPC (spec §10) to ``lf.a2a.v1.A2AService`` (0.3: ``a2a.v1.A2AService``); ``http`` only
    lends its default timeout."""

    binding = "GRPC"
    _request_to_v03 = staticmethod(grpc_v03.request_down)
    _result_from_v03 = staticmethod(grpc_v03.result_up)

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        *,
        version: str = "1.0",
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        limits: ClientLimits | None = None,
    ) -> None:
        super().__init__(http, url, version=version, headers=headers, query=query, limits=limits)
        self._grpc, self._codec = _grpc()
        self.target, self.secure = _target(url)
        # gRPC has no query string: query credentials (an API key) travel as metadata too.
        self.metadata = tuple(
            (key.lower(), str(value))
            for key, value in {**self.headers, **self.query}.items()
            if key.lower() not in _NOT_METADATA
        )
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    def _ensure_stub(self) -> Any:
        if self._stub is None:
            if self.is_v03:
                from simple_a2a.protocol._grpc_v03 import a2a_v03_pb2_grpc as stubs
            else:
                from simple_a2a.protocol._grpc import a2a_pb2_grpc as stubs

            # One message (an answer or a stream event) at most as large as an HTTP one.
            largest = max(self.limits.max_response_bytes, self.limits.max_event_bytes)
            options = [("grpc.max_receive_message_length", largest)]

            grpc = self._grpc
            if self.secure:
                credentials = grpc.ssl_channel_credentials()
                self._channel = grpc.aio.secure_channel(self.target, credentials, options)
            else:
                self._channel = grpc.aio.insecure_channel(self.target, options)
            self._stub = stubs.A2AServiceStub(self._channel)
        return self._stub

    async def aclose(self) -> None:
        """Close the channel (the client does this on ``aclose()``)."""
        if self._channel is not None:
            channel, self._channel, self._stub = self._channel, None, None
            await channel.close()

    def _deadline(self, timeout: Any) -> float | None:
        if timeout is DEFAULT:
            timeout = self.http.timeout
        if isinstance(timeout, httpx.Timeout):
            timeout = timeout.read
        return float(timeout) if timeout is not None else None

    def _rpc(self, operation: str) -> Any:
        """The stub's method for an operation (0.3 names some rpcs differently)."""
        name = grpc_v03.rpc_of(operation) if self.is_v03 else operation
        return getattr(self._ensure_stub(), name)

    def _request(self, operation: str, request: dict[str, Any]) -> Any:
        codec = self._codec
        wire = self._to_wire(operation, request)
        return codec.to_message(wire, codec.message_types(operation, self.is_v03)[0])

    async def call(
        self, operation: str, request: dict[str, Any], *, timeout: Any = DEFAULT
    ) -> dict[str, Any]:
        rpc = self._rpc(operation)
        try:
            reply = await rpc(
                self._request(operation, request),
                metadata=grpc_metadata(self.metadata) if TELEMETRY.on else self.metadata,
                timeout=self._deadline(timeout),
            )
        except self._grpc.aio.AioRpcError as exc:
            raise self._map_error(exc) from exc
        return self._from_wire(operation, self._decoded(reply))

    async def stream(
        self,
        operation: str,
        request: dict[str, Any],
        *,
        timeout: Any = DEFAULT,
        last_event_id: str | None = None,
    ) -> AsyncIterator[SSEEvent]:
        """Stream events; ``timeout`` bounds the whole stream only when given as a number."""
        rpc = self._rpc(operation)
        deadline = float(timeout) if isinstance(timeout, (int, float)) else None
        call = rpc(
            self._request(operation, request),
            metadata=grpc_metadata(self.metadata) if TELEMETRY.on else self.metadata,
            timeout=deadline,
        )
        try:
            async for reply in call:
                data = self._from_wire(operation, self._decoded(reply))
                yield SSEEvent("", data, fresh_id=False)
        except self._grpc.aio.AioRpcError as exc:
            raise self._map_error(exc) from exc
        finally:
            call.cancel()

    def _decoded(self, reply: Any) -> dict[str, Any]:
        decoded: dict[str, Any] = self._codec.received_dict(reply, InvalidAgentResponseError)
        return decoded

    def _map_error(self, exc: grpc.aio.AioRpcError) -> Exception:
        """The client error or typed A2A error of a failed call."""
        code = exc.code()
        text = exc.details() or code.name
        trailers = exc.trailing_metadata()
        has_status = any(key == self._codec.STATUS_DETAILS_KEY for key, _ in trailers or ())
        if code.name == "UNAVAILABLE" and not has_status:
            # (an agent's own UNAVAILABLE carries a status, e.g. RateLimitError's: typed below)
            if any(marker in text.lower() for marker in _NOT_CONNECTED):
                return ConnectError(f"could not reach the agent over gRPC: {text}")
            return TransportError(f"the gRPC connection to the agent was lost: {text}")
        if code.name == "DEADLINE_EXCEEDED":
            return ClientTimeoutError(f"timed out talking to the agent over gRPC: {text}")
        if code.name == "CANCELLED":
            return TransportError(f"the gRPC call was cancelled: {text}")
        err: A2AError = self._codec.error_from_trailers(code.name, exc.details() or "", trailers)
        return with_status(err, err.http_status)
