"""Who is calling: :class:`Caller`, and where the ASGI auth middleware leaves it for the bindings.

The middleware (:class:`~simple_a2a.auth.AuthMiddleware`) authenticates each request and puts
either the :class:`Caller` (``scope["a2a.caller"]``) or the refusal (``scope["a2a.auth_error"]``,
an ``A2AError``) in the ASGI scope. It answers nothing itself: each binding raises the stored
refusal and renders it in its own error form (JSON-RPC error object or ``google.rpc.Status``),
so the middleware stays binding-agnostic and the Agent Card routes stay public.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import A2AError

#: ASGI scope key holding the authenticated :class:`Caller`.
CALLER_KEY = "a2a.caller"
#: ASGI scope key holding the ``A2AError`` that refused the request (401, or 500 when a
#: verifier failed).
FAILURE_KEY = "a2a.auth_error"


@dataclass(frozen=True)
class Caller:
    """The authenticated caller of a request (``None`` on an unauthenticated server).

    ``identity`` names the caller (a token's subject, an API key's holder); ``scheme`` is the
    security scheme (its name in the card) that authenticated it; ``claims`` carries what the
    authenticator learnt (a JWT's claims). ``owner`` is the key the caller's tasks are stored
    under; ``None`` means ``identity`` (set with ``AuthPolicy(owner_of=...)``, e.g. to share the
    tasks of everyone in a tenant).
    """

    identity: str
    scheme: str | None = None
    claims: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None

    @property
    def task_owner(self) -> str:
        """The owner recorded on (and required of) every task this caller touches."""
        return self.identity if self.owner is None else self.owner


def scope_caller(scope: MutableMapping[str, Any]) -> Caller | None:
    """The authenticated caller the middleware stored in an ASGI scope, if any."""
    caller = scope.get(CALLER_KEY)
    return caller if isinstance(caller, Caller) else None


def scope_failure(scope: MutableMapping[str, Any]) -> A2AError | None:
    """The refusal the middleware stored in an ASGI scope (the binding raises it), if any."""
    failure = scope.get(FAILURE_KEY)
    return failure if isinstance(failure, A2AError) else None
