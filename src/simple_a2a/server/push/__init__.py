"""Push notifications of one agent (spec §3.5.3, §4.3, §13.2): see ``docs/push.md``.

:class:`PushService` ties the pieces to a :class:`~simple_a2a.server.handler.RequestHandler`:
the :class:`~.delivery.PushDispatcher` (registered as a task event hook), the SSRF
:class:`~.ssrf.UrlGuard` (checked when a config is created and again on every connection), the
signing :class:`~.signing.SigningKeys` and the JWKS route announced in the card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ...protocol.card import AgentCard, AgentExtension
from ...protocol.models import TaskPushNotificationConfig
from ...protocol.push import JWKS_PATH, SIGNATURE_HEADER, SIGNING_EXTENSION_URI
from ..limits import DEFAULT_LIMITS, Limits
from .delivery import PushDispatcher, PushHealth, RetryPolicy
from .signing import SigningKey, SigningKeys
from .ssrf import GuardedTransport, Resolver, UrlGuard, UrlRefused

if TYPE_CHECKING:
    from ...storage.base import Storage
    from ..tasks import TaskManager


@dataclass
class PushSettings:
    """How an agent delivers push notifications (``server(..., push=PushSettings(...))``).

    - ``allow_hosts``: host names, IPs or CIDR networks exempt from the SSRF guard (development:
      ``["localhost", "127.0.0.1"]``); ``allow_private_networks=True`` turns the address check
      off; ``require_https=True`` refuses ``http://`` webhooks.
    - ``signing``: ``"auto"`` signs with a fresh RS256 key when PyJWT is installed (the key
      changes on restart; receivers refetch the JWKS on an unknown ``kid``), a
      :class:`SigningKeys` for your own keys, ``None`` for unsigned notifications.
    - ``retry``, ``timeout`` (per POST), ``idle_timeout`` (a worker waits that long for the
      next event before it stops; the next event starts it again).
    - ``await_delivery``: a blocking SendMessage whose task ended waits up to this many seconds
      for the task's webhooks to acknowledge every event before it answers (0, the default:
      never waits). For callers that read their webhook right after the answer (the A2A
      integration test kit does).
    """

    allow_hosts: list[str] = field(default_factory=list)
    allow_private_networks: bool = False
    require_https: bool = False
    signing: SigningKeys | Literal["auto"] | None = "auto"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = 10.0
    idle_timeout: float = 30.0
    issuer: str | None = None
    resolver: Resolver | None = None
    await_delivery: float = 0.0


def _auto_keys() -> SigningKeys | None:
    try:
        import jwt  # noqa: F401
    except ImportError:
        return None
    return SigningKeys.generate()


class PushService:
    """The push side of one agent; the handler calls it when configs are created or deleted."""

    def __init__(
        self,
        storage: Storage,
        tasks: TaskManager,
        settings: PushSettings | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.settings = settings = settings or PushSettings()
        self.guard = UrlGuard(
            allow_hosts=settings.allow_hosts,
            allow_private_networks=settings.allow_private_networks,
            require_https=settings.require_https,
            resolver=settings.resolver,
        )
        keys = settings.signing
        self.keys: SigningKeys | None = _auto_keys() if keys == "auto" else keys
        self.dispatcher = PushDispatcher(
            storage,
            tasks,
            guard=self.guard,
            signing=self.keys,
            retry=settings.retry,
            timeout=settings.timeout,
            idle_timeout=settings.idle_timeout,
            issuer=settings.issuer,
            concurrency=limits.max_concurrent_deliveries,
            pool_timeout=limits.delivery_pool_timeout,
        )
        tasks.hooks.append(self.dispatcher)  # every recorded event reaches the dispatcher

    # -- the handler's calls --
    async def validate_config(self, config: TaskPushNotificationConfig) -> None:
        await self.dispatcher.validate_config(config)

    async def config_created(self, config: TaskPushNotificationConfig) -> None:
        await self.dispatcher.config_created(config)

    async def config_deleted(self, task_id: str, config_id: str) -> None:
        await self.dispatcher.config_deleted(task_id, config_id)

    async def settle(self, task_id: str) -> None:
        """Before a blocking send answers: wait for delivery if ``await_delivery`` says so."""
        if self.settings.await_delivery > 0:
            await self.dispatcher.flush(task_id, self.settings.await_delivery)

    # -- the server's calls --
    async def start(self) -> None:
        await self.dispatcher.start()

    async def close(self) -> None:
        await self.dispatcher.close()

    def decorate_card(self, card: AgentCard, base_url: str) -> AgentCard:
        """Announce signed notifications: a card extension whose params give the JWKS URL."""
        if self.keys is None:
            return card
        extension = AgentExtension(
            uri=SIGNING_EXTENSION_URI,
            description="Push notifications carry a JWT in the "
            f"{SIGNATURE_HEADER} header, verifiable with the keys at jwksUri.",
            required=False,
            params={
                "jwksUri": base_url.rstrip("/") + JWKS_PATH,
                "header": SIGNATURE_HEADER,
                "algorithms": self.keys.algorithms,
            },
        )
        caps = card.capabilities
        others = [x for x in caps.extensions if x.uri != SIGNING_EXTENSION_URI]
        caps = caps.model_copy(update={"extensions": [*others, extension]})
        return card.model_copy(update={"capabilities": caps})


__all__ = [
    "GuardedTransport",
    "PushDispatcher",
    "PushHealth",
    "PushService",
    "PushSettings",
    "RetryPolicy",
    "SigningKey",
    "SigningKeys",
    "UrlGuard",
    "UrlRefused",
    "enable_push",
]
