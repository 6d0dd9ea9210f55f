"""The authenticator interface and the policy that combines authenticators (spec §7, §4.5).

An :class:`Authenticator` checks one security scheme: it declares the scheme for the Agent
Card (:meth:`~Authenticator.security_scheme`) and inspects a request
(:meth:`~Authenticator.authenticate`):


- its credentials are absent → ``None`` (another scheme may still accept the request);
- present and valid → the :class:`Caller`;
- present but wrong, expired, malformed → raise :class:`AuthenticationError` (a message safe to
  show: never which tokens or keys exist).

An :class:`AuthPolicy` combines authenticators the way the card says (spec §4.4.1: a request is
accepted when *any one* ``securityRequirements`` entry is satisfied, an entry being satisfied when
*all* its schemes are) and carries the optional hooks: ``authorize(caller, operation)`` (403) and
``owner_of(caller)`` (whose tasks the caller sees).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar, Union, runtime_checkable

from starlette.requests import HTTPConnection

from ..protocol.card import AgentCard, SecurityRequirement, SecurityScheme, StringList
from ..protocol.errors import AuthenticationError, PermissionDeniedError
from .caller import Caller

T = TypeVar("T")
MaybeAwaitable = Union[T, Awaitable[T]]  # noqa: UP007 - a runtime alias (Python 3.10)
#: A credential check: the credential in, the caller out (an identity string or a
#: :class:`Caller`), ``None`` (or ``False``) for a credential it does not accept. Sync or async.
Verifier = Callable[[str], MaybeAwaitable[Union[Caller, str, bool, None]]]  # noqa: UP007
#: ``authorize(caller, operation)``: ``operation`` is the 1.0 name (``"SendMessage"``, ...).
#: Return ``False`` (or raise :class:`PermissionDeniedError`) to refuse with 403.
Authorize = Callable[[Caller, str], MaybeAwaitable[Union[bool, None]]]  # noqa: UP007
OwnerOf = Callable[[Caller], str]
Requirement = Union[Sequence[str], Mapping[str, Sequence[str]]]  # noqa: UP007


@runtime_checkable
class Authenticator(Protocol):
    """One security scheme, enforced. Implement these three members for a custom scheme."""

    #: The scheme's name: its key in the card's ``securitySchemes`` and requirements.
    scheme_name: str

    def security_scheme(self) -> SecurityScheme:
        """The scheme as the Agent Card declares it (spec §4.5)."""
        ...

    async def authenticate(self, request: HTTPConnection) -> Caller | None:
        """The caller, ``None`` without credentials for this scheme, or raise
        :class:`AuthenticationError` for bad ones."""
        ...


async def maybe_await(value: MaybeAwaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


def digest(secret: str) -> bytes:
    """What a static credential table is keyed by: looking a secret up by its hash leaks nothing
    about other secrets through timing."""
    return hashlib.sha256(secret.encode()).digest()


class StaticCredentials:
    """A credential → caller table (keyed by hash) or a :data:`Verifier`, behind one call."""

    def __init__(
        self,
        scheme_name: str,
        table: Mapping[str, str | Caller] | None,
        verify: Verifier | None,
        what: str,
    ) -> None:
        if (table is None) == (verify is None):
            raise ValueError(f"give either a table of {what}s or a verify callable, not both")
        self.scheme_name = scheme_name
        self.what = what
        self._verify = verify
        self._table = {digest(k): v for k, v in (table or {}).items()}

    async def check(self, credential: str) -> Caller:
        if self._verify is not None:
            found: Caller | str | bool | None = await maybe_await(self._verify(credential))
        else:
            found = self._table.get(digest(credential))
        if found is None or found is False or found is True or found == "":
            raise AuthenticationError(f"the {self.what} is not valid")
        if isinstance(found, Caller):
            return found if found.scheme else dataclasses.replace(found, scheme=self.scheme_name)
        return Caller(identity=str(found), scheme=self.scheme_name)


def challenge(authenticator: Authenticator, realm: str, error: bool) -> str:
    """The ``WWW-Authenticate`` challenge of a scheme (RFC 9110 §11.6.1, RFC 6750 §3)."""
    custom = getattr(authenticator, "challenge", None)
    if callable(custom):
        return str(custom(realm, error))
    scheme = authenticator.security_scheme()
    params = [f'realm="{realm}"']
    if scheme.api_key_security_scheme is not None:
        key = scheme.api_key_security_scheme
        name = "ApiKey"
        params += [f'in="{key.location}"', f'name="{key.name}"']
    elif scheme.http_auth_security_scheme is not None:
        name = scheme.http_auth_security_scheme.scheme.capitalize()
    else:  # OAuth2 / OpenID Connect tokens travel as bearer tokens
        name = "Bearer"
    if error and name == "Bearer":
        params.append('error="invalid_token"')
    params.append(f'scheme="{authenticator.scheme_name}"')
    return f"{name} " + ", ".join(params)


class AuthPolicy:
    """Authenticators, the requirements that combine them, and the authorization hooks.

    ``requirements`` defaults to "any one scheme": ``[[a], [b], ...]``. An entry is a list of
    scheme names (all needed) or a mapping of scheme name → scopes (spec §4.4.1).
    """

    def __init__(
        self,
        authenticators: Authenticator | Iterable[Authenticator],
        *,
        requirements: Sequence[Requirement] | None = None,
        authorize: Authorize | None = None,
        owner_of: OwnerOf | None = None,
        realm: str = "a2a",
    ) -> None:
        items = (
            [authenticators] if isinstance(authenticators, Authenticator) else list(authenticators)
        )
        if not items:
            raise ValueError("an AuthPolicy needs at least one authenticator")
        self.authenticators: dict[str, Authenticator] = {}
        for item in items:
            if item.scheme_name in self.authenticators:
                raise ValueError(f"two authenticators are named {item.scheme_name!r}")
            self.authenticators[item.scheme_name] = item
        raw = requirements if requirements is not None else [[n] for n in self.authenticators]
        self.requirements: list[dict[str, list[str]]] = []
        for entry in raw:
            req = (
                {k: list(v) for k, v in entry.items()}
                if isinstance(entry, Mapping)
                else {k: [] for k in entry}
            )
            unknown = [k for k in req if k not in self.authenticators]
            if unknown or not req:
                raise ValueError(f"requirement {entry!r} names no enforced scheme: {unknown}")
            self.requirements.append(req)
        self.authorize_hook = authorize
        self.owner_of = owner_of
        self.realm = realm

    # -- the card (spec §4.4.1 securitySchemes / securityRequirements) --
    def security_schemes(self) -> dict[str, SecurityScheme]:
        return {name: a.security_scheme() for name, a in self.authenticators.items()}

    def security_requirements(self) -> list[SecurityRequirement]:
        return [
            SecurityRequirement(schemes={k: StringList(values=v) for k, v in req.items()})
            for req in self.requirements
        ]

    def decorate_card(self, card: AgentCard) -> AgentCard:
        """The card declaring exactly the enforced schemes and requirements."""
        return card.model_copy(
            update={
                "security_schemes": self.security_schemes(),
                "security_requirements": self.security_requirements(),
            }
        )

    # -- per request --
    async def authenticate(self, request: HTTPConnection) -> Caller:
        """The caller that satisfies a requirement; else raise :class:`AuthenticationError`."""
        found: dict[str, Caller] = {}
        refused: dict[str, AuthenticationError] = {}
        for name, authenticator in self.authenticators.items():
            try:
                caller = await authenticator.authenticate(request)
            except AuthenticationError as err:
                refused[name] = err
                continue
            if caller is not None:
                found[name] = caller
        for req in self.requirements:
            if all(name in found for name in req):
                name = next(iter(req))
                caller = found[name]
                if self.owner_of is not None:
                    caller = dataclasses.replace(caller, owner=self.owner_of(caller))
                elif len(self.authenticators) > 1 and caller.owner is None:
                    # several schemes: a JWT ``sub`` "alice" and an API key held by "alice" are
                    # different callers unless owner_of says otherwise (#16 item 10)
                    caller = dataclasses.replace(caller, owner=f"{name}:{caller.identity}")
                return caller
        schemes = " or ".join(" and ".join(req) for req in self.requirements)
        if refused:
            first = next(iter(refused.values()))
            refusal = AuthenticationError(
                first.message, metadata={"schemes": ",".join(self.authenticators)}
            )
        else:
            refusal = AuthenticationError(
                f"authentication required: send credentials for {schemes} (see the "
                "securitySchemes of the Agent Card)",
                metadata={"schemes": ",".join(self.authenticators)},
            )
        refusal.challenges = self.challenges(set(refused))  # type: ignore[attr-defined]
        raise refusal

    def challenges(self, refused: Collection[str] = ()) -> list[str]:
        """One ``WWW-Authenticate`` challenge per enforced scheme (``error="invalid_token"`` on
        the ``refused`` ones)."""
        return [
            challenge(a, self.realm, name in refused) for name, a in self.authenticators.items()
        ]

    async def authorize(self, caller: Caller, operation: str) -> None:
        """Run the ``authorize`` hook; raise :class:`PermissionDeniedError` (403) on refusal."""
        if self.authorize_hook is None:
            return
        allowed = await maybe_await(self.authorize_hook(caller, operation))
        if allowed is False:
            raise PermissionDeniedError(f"{caller.identity} may not call {operation}")


AuthLike = Union[AuthPolicy, Authenticator, Sequence[Authenticator]]  # noqa: UP007


def as_policy(auth: AuthLike) -> AuthPolicy:
    """An :class:`AuthPolicy` from what ``server(auth=...)`` accepts."""
    return auth if isinstance(auth, AuthPolicy) else AuthPolicy(auth)


def bearer_token(request: HTTPConnection) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header (``None`` without one); a bearer
    header with no token is malformed."""
    header = request.headers.get("authorization")
    if not header:
        return None
    kind, _, token = header.strip().partition(" ")
    if kind.lower() != "bearer":
        return None
    token = token.strip()
    if not token:
        raise AuthenticationError("the Authorization header carries no bearer token")
    return token
