"""The client's own exceptions, beside the protocol errors the agent answers with.

Three families, so that ``except`` clauses say what they mean::

    Exception
    ├── A2AError (simple_a2a.protocol.errors)   the agent answered with an A2A error:
    │   │                                        TaskNotFoundError, AuthenticationError, ...
    │   │                                        rebuilt from the wire; ``status_code`` holds
    │   │                                        the HTTP status of the response
    │   └── InvalidAgentResponseError            the agent answered, but not with valid A2A
    └── ClientError                              nothing (usable) came back from the agent
        ├── TransportError                       the HTTP exchange failed
        │   ├── ConnectError                     could not connect (safe to retry)
        │   ├── ClientTimeoutError               connect, read, write or pool timeout
        │   │   └── ConnectTimeoutError          (also a ConnectError: safe to retry)
        │   └── StreamInterruptedError           a stream dropped and could not be resumed
        ├── DiscoveryError                       no usable Agent Card at the URL
        │   └── CardVerificationError            the ``card_verifier`` rejected the card
        ├── NegotiationError                     no interface this client can speak
        └── SyncClientInAsyncContextError        blocking client called on an event loop

``ClientError`` wraps the underlying ``httpx`` exception as ``__cause__``.
"""

from __future__ import annotations

from simple_a2a.protocol.errors import A2AError, InvalidAgentResponseError

__all__ = [
    "A2AError",
    "CardVerificationError",
    "ClientError",
    "ClientTimeoutError",
    "ConnectError",
    "ConnectTimeoutError",
    "DiscoveryError",
    "InvalidAgentResponseError",
    "NegotiationError",
    "StreamInterruptedError",
    "SyncClientInAsyncContextError",
    "TransportError",
]


class ClientError(Exception):
    """Base of the client's own errors (not an answer from the agent)."""


class TransportError(ClientError):
    """The HTTP exchange with the agent failed (connection reset, protocol error, ...)."""


class ConnectError(TransportError):
    """The connection could not be established; the request never reached the agent."""


class ClientTimeoutError(TransportError):
    """A connect, read, write or pool timeout elapsed."""


class ConnectTimeoutError(ClientTimeoutError, ConnectError):
    """Connecting timed out; like :class:`ConnectError`, the request never reached the agent."""


class StreamInterruptedError(TransportError):
    """A stream ended before its task reached a final state and could not be resumed."""


class DiscoveryError(ClientError):
    """The Agent Card could not be fetched or parsed."""


class CardVerificationError(DiscoveryError):
    """The ``card_verifier`` rejected the Agent Card (for example a bad JWS signature)."""


class NegotiationError(ClientError):
    """The card offers no interface (binding and protocol version) this client accepts."""


class SyncClientInAsyncContextError(ClientError, RuntimeError):
    """The blocking :class:`~simple_a2a.Client` was called from a thread running an event loop.

    Blocking that thread would stall the loop (and deadlock an agent calling its own server):
    use :class:`~simple_a2a.AsyncClient` with ``await`` there instead.
    """
