"""The ASGI middleware that authenticates every request (spec §7.4).

It renders nothing: the caller (or the refusal) goes into the ASGI scope (see
:mod:`simple_a2a.auth.caller`) and each binding raises the refusal in its own error form. The
middleware only adds the ``WWW-Authenticate`` challenges to a 401 answer, whoever renders it.
Paths in ``public_paths`` (the Agent Card) are not authenticated at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..protocol.asgi import route_path
from ..protocol.errors import A2AError, InternalError
from ..protocol.logcontext import library_logger
from .base import AuthLike, as_policy
from .caller import CALLER_KEY, FAILURE_KEY

log = library_logger("simple_a2a.auth")


class AuthMiddleware:
    """Wrap an ASGI app: ``AuthMiddleware(app, BearerAuth(tokens={...}))``."""

    def __init__(self, app: ASGIApp, auth: AuthLike, *, public_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.policy = as_policy(auth)
        self.public_paths = frozenset(public_paths)

    def _is_public(self, scope: Scope) -> bool:
        return route_path(scope) in self.public_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._is_public(scope):
            await self.app(scope, receive, send)
            return
        scope = dict(scope)
        scope.pop(CALLER_KEY, None)  # only we say who is calling
        scope.pop(FAILURE_KEY, None)
        try:
            scope[CALLER_KEY] = await self.policy.authenticate(HTTPConnection(scope))
        except A2AError as err:
            scope[FAILURE_KEY] = err
            challenges = getattr(err, "challenges", None) or self.policy.challenges()
            send = _challenging(send, challenges)
        except Exception:
            log.exception("an authenticator failed")
            scope[FAILURE_KEY] = InternalError()
        await self.app(scope, receive, send)


def _challenging(send: Send, challenges: list[str]) -> Send:
    """``send`` that adds the challenges to a 401 response (RFC 9110 §11.6.1)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 401:
            headers = list(message.get("headers", []))
            headers += [(b"www-authenticate", c.encode("latin-1")) for c in challenges]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped
