"""The A2A client: ``Client`` (blocking) and ``AsyncClient``, one implementation.

``simple_a2a.client(url).send("hello")`` is a round trip. See ``docs/client.md``.

``simple_a2a.client`` is this package, and calling it is :func:`client`: the package is
callable, so ``import simple_a2a.client`` gives the package and never a function in its place.
"""

import sys
import types
from typing import Any

from ._async import AsyncClient, Content
from ._sync import Client, ClientOptions, client
from .card_signing import CardSignatureVerifier
from .discovery import CardVerifier, fetch_card, select_interface
from .errors import (
    CardVerificationError,
    ClientError,
    ClientTimeoutError,
    ConnectError,
    ConnectTimeoutError,
    DiscoveryError,
    NegotiationError,
    StreamInterruptedError,
    SyncClientInAsyncContextError,
    TransportError,
)
from .grpc import GRPCTransport, grpc_available
from .limits import ClientLimits
from .streams import ReconnectPolicy, RetryPolicy, TaskAccumulator, afold, fold
from .transport import TRANSPORTS, JSONRPCTransport, RESTTransport, SSEEvent, Transport

if grpc_available():  # the 'grpc' extra makes GRPC interfaces usable (docs/grpc.md)
    TRANSPORTS[GRPCTransport.binding] = GRPCTransport

__all__ = [
    "AsyncClient",
    "CardSignatureVerifier",
    "CardVerificationError",
    "CardVerifier",
    "Client",
    "ClientError",
    "ClientLimits",
    "ClientOptions",
    "ClientTimeoutError",
    "ConnectError",
    "ConnectTimeoutError",
    "Content",
    "DiscoveryError",
    "GRPCTransport",
    "JSONRPCTransport",
    "NegotiationError",
    "RESTTransport",
    "ReconnectPolicy",
    "RetryPolicy",
    "SSEEvent",
    "StreamInterruptedError",
    "SyncClientInAsyncContextError",
    "TaskAccumulator",
    "Transport",
    "TransportError",
    "afold",
    "client",
    "fetch_card",
    "fold",
    "select_interface",
]


class _CallablePackage(types.ModuleType):
    """This package's module type: calling it opens a client, as :func:`client` does."""

    def __call__(self, *args: Any, **options: Any) -> Client:
        return client(*args, **options)


sys.modules[__name__].__class__ = _CallablePackage
