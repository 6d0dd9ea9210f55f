"""Which interface a client speaks, and where it goes when that one cannot be reached.

The order is :func:`~simple_a2a.client.discovery.interface_candidates`' (1.x first, the caller's
bindings, the card's order). The version sent in ``A2A-Version`` is the one this client speaks
on that interface (``1.0`` or ``0.3``), never the card's own spelling: a card that says ``1.1``
gets ``1.0``, which the agent must accept from a 1.x client (spec §3.6.2).

Fallback (spec §5.2, "clients SHOULD"): when a call gets :class:`ConnectError` (refused, no
route, DNS, connect timeout: nothing reached the agent, so even SendMessage is safe to send
again) after its retries, the next interface of the list takes over, for that call and every
later one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from ..protocol.card import AgentCard, AgentInterface
from ..protocol.errors import UnsupportedOperationError
from ..protocol.logcontext import library_logger
from ..protocol.versions import V03, V1
from .discovery import interface_version, normalize_binding
from .errors import ConnectError
from .transport import SSEEvent, Transport

log = library_logger("simple_a2a.client")


def spoken_version(interface: AgentInterface) -> str:
    """The version this client speaks on ``interface``: 0.3 for 0.x, 1.0 for any 1.x."""
    return V03 if interface_version(interface).startswith("0.") else V1


def warn_if_v03(card: AgentCard, chosen: AgentInterface, bindings: object) -> None:
    """Say that 0.3 is spoken, and why: the card offers nothing newer, or nothing newer over
    the bindings the caller allowed."""
    if spoken_version(chosen) != V03:
        return
    newer = _v1_bindings(card)
    if not newer:
        reason = f"{card.name} offers only A2A {chosen.protocol_version}"
    else:
        reason = (
            f"{card.name} offers A2A 1.0 only over {', '.join(newer)}, "
            f"not over the bindings asked for ({bindings})"
        )
    log.warning("%s: speaking %s over %s", reason, chosen.protocol_version, chosen.protocol_binding)


def _v1_bindings(card: AgentCard) -> list[str]:
    return sorted(
        {
            normalize_binding(i.protocol_binding)
            for i in card.supported_interfaces
            if spoken_version(i) == V1
        }
    )


def v03_list_refused(card: AgentCard) -> UnsupportedOperationError:
    """ListTasks over 0.3, refused before sending: 0.3 has it on no binding (§7.4's table says
    "N/A" for JSON-RPC; its a2a.proto has no rpc, so neither gRPC nor HTTP+JSON has it, and no
    0.3 peer serves the ``GET /v1/tasks`` its prose names: the SDK 0.3.26 answers an error, the
    JS SDK's 0.3 layer an empty 1.0 list, docs/interop.md J2). Says where to list instead."""
    newer = _v1_bindings(card)
    where = (
        f"list over the agent's A2A 1.0 interface (AsyncClient(..., bindings={newer!r}))"
        if newer
        else "the agent offers no A2A 1.0 interface to list over"
    )
    return UnsupportedOperationError(
        f"ListTasks is not part of A2A 0.3 over any binding (spoken to {card.name}): {where}"
    )


def next_interface(
    candidates: list[AgentInterface], failed: AgentInterface
) -> AgentInterface | None:
    """The interface after ``failed`` in ``candidates``, or ``None`` at the end."""
    index = next((n for n, i in enumerate(candidates) if i is failed), len(candidates))
    return candidates[index + 1] if index + 1 < len(candidates) else None


async def first_connecting(
    transport: Transport,
    open_stream: Callable[[Transport], AsyncIterator[SSEEvent]],
    fall_back: Callable[[Transport, ConnectError], Awaitable[Transport]],
) -> AsyncIterator[SSEEvent]:
    """The stream of the first interface that connects: a :class:`ConnectError` before the
    first event moves on to the transport ``fall_back`` gives (or raises)."""
    while True:
        events = open_stream(transport)
        try:
            first = await events.__anext__()
        except StopAsyncIteration:
            return
        except ConnectError as exc:
            transport = await fall_back(transport, exc)
            continue
        try:
            yield first
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        return


def api_key_place(card: AgentCard, header: str | None) -> tuple[str, str]:
    """Where the API key goes: ``header`` (the client's ``api_key_header``) if given, else
    where the card's APIKeySecurityScheme says (header, query or cookie), else ``X-API-Key``."""
    if header is not None:
        return "header", header
    for scheme in card.security_schemes.values():
        key = scheme.api_key_security_scheme
        if key is not None and key.location.lower() in ("header", "query", "cookie"):
            return key.location.lower(), key.name
    return "header", "X-API-Key"
