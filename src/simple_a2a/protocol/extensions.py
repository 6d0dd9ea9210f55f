"""Extension negotiation (spec §4.6, §3.3.4). No I/O: every binding calls this one function."""

from __future__ import annotations

from collections.abc import Iterable

from .card import AgentCard
from .errors import ExtensionSupportRequiredError


def split_list(value: str | None) -> list[str]:
    """A comma-separated service parameter (``A2A-Extensions: a, b``) as a list."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def activate_extensions(card: AgentCard, requested: Iterable[str], *, carrier: str) -> list[str]:
    """The requested extensions this agent declares (to echo back as activated).

    Raises :class:`ExtensionSupportRequiredError` when the card marks an extension
    ``required: true`` and the client did not request it; ``carrier`` names where the client
    should declare it (the HTTP header, the gRPC metadata key).
    """
    requested = list(requested)
    if not requested and not card.capabilities.extensions:
        return []  # the common case, on every request: nothing asked for, nothing declared
    missing = [uri for uri in card.required_extensions if uri not in requested]
    if missing:
        raise ExtensionSupportRequiredError(
            "this agent requires the extension(s) "
            + ", ".join(missing)
            + f"; declare them in the {carrier}",
            metadata={"extensions": ",".join(missing)},
        )
    declared = {x.uri for x in card.capabilities.extensions if x.uri}
    return [uri for uri in requested if uri in declared]
