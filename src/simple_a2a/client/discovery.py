"""Discovery (spec §8.2) and negotiation (spec §3.6, §8.3.2): which card, which interface.

Pure functions, except :func:`fetch_card` which does one or two GETs.

The negotiation rule: among the card's interfaces whose binding this client speaks, pick the
first offering protocol 1.x (in the card's order, or in the caller's ``bindings`` order when
given). Only when *no* such interface exists is a 0.3 interface chosen, and only when
``allow_v03`` is true; a 1.0 agent is never spoken to in 0.3 (spec §3.6.3). An interface with
``protocolVersion: ""`` counts as one without (1.0). When the chosen interface cannot be reached
(nothing was sent), the client falls back to the next one of the same list (§5.2).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from simple_a2a.protocol import v03
from simple_a2a.protocol.card import AgentCard, AgentInterface
from simple_a2a.protocol.errors import A2AError

from .answers import map_httpx_error
from .errors import CardVerificationError, DiscoveryError, NegotiationError
from .limits import ClientLimits, TooLargeError, loads, origin_of, read_capped
from .transport import DEFAULT, TRANSPORTS

__all__ = [
    "WELL_KNOWN_PATHS",
    "CardVerifier",
    "card_urls",
    "fetch_card",
    "interface_candidates",
    "parse_card",
    "select_interface",
]

#: Tried in order under the agent's URL: 1.0's name, then the 0.3-era name.
WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")

#: Called with the parsed card and the raw JSON object; return ``False`` or raise to reject.
#: May be a coroutine function. The seam for JWS card signatures (spec §8.4).
CardVerifier = Callable[[AgentCard, dict[str, Any]], "bool | Awaitable[bool | None] | None"]

_ALIASES = {"REST": "HTTP+JSON", "HTTP_JSON": "HTTP+JSON", "JSON-RPC": "JSONRPC"}


def normalize_binding(name: str) -> str:
    upper = name.strip().upper()
    return _ALIASES.get(upper, upper)


def card_urls(url: str) -> list[str]:
    """Where to look for the card of the agent at ``url``.

    A URL ending in ``.json`` is the card itself; otherwise the well-known paths under it, then
    under the origin's root when the agent lives at a sub-path.
    """
    if urlsplit(url).path.endswith(".json"):
        return [url]
    base = url.rstrip("/")
    urls = [base + p for p in WELL_KNOWN_PATHS]
    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}"
    if base != root:
        urls += [root + p for p in WELL_KNOWN_PATHS]
    return urls


def is_v03_card(data: Mapping[str, Any]) -> bool:
    """A 0.3 card has a top-level ``url`` (and ``preferredTransport``) but no interfaces list."""
    return "supportedInterfaces" not in data and ("url" in data or "protocolVersion" in data)


def parse_card(data: Any, source: str = "the agent") -> AgentCard:
    """Validate a card object, converting a 0.3 card to the 1.0 model."""
    if not isinstance(data, dict):
        raise DiscoveryError(f"the Agent Card from {source} is not a JSON object")
    try:
        if is_v03_card(data):
            data = v03.card_from_v03(data)
        return AgentCard.from_dict(data)
    except A2AError as exc:
        raise DiscoveryError(f"the Agent Card from {source} is invalid: {exc.message}") from exc
    except RecursionError:
        raise DiscoveryError(f"the Agent Card from {source} is nested too deeply") from None


async def verify_card(
    card: AgentCard, raw: dict[str, Any], verifier: CardVerifier | None, source: str
) -> None:
    if verifier is None:
        return
    try:
        verdict = verifier(card, raw)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except CardVerificationError:
        raise
    except Exception as exc:
        raise CardVerificationError(f"the Agent Card from {source} was rejected: {exc}") from exc
    if verdict is False:
        raise CardVerificationError(f"the Agent Card from {source} was rejected by card_verifier")


async def fetch_card(
    http: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: Any = DEFAULT,
    verifier: CardVerifier | None = None,
    limits: ClientLimits | None = None,
) -> tuple[AgentCard, str]:
    """Fetch, parse and verify the card of the agent at ``url``; return it and where it was.

    Redirects are followed (at most ``limits.max_card_redirects``), but the caller's
    ``headers`` (credentials) never go to another origin than ``url``'s; the card is read
    within ``limits.max_card_bytes``.
    """
    limits = limits or ClientLimits()
    tried: list[str] = []
    for candidate in card_urls(url):
        status, content = await _get_card(http, candidate, headers or {}, timeout, limits)
        if status == 404:
            tried.append(candidate)
            continue
        if status >= 400:
            raise DiscoveryError(f"fetching the Agent Card at {candidate} failed: HTTP {status}")
        where = f"the Agent Card at {candidate}"
        raw = loads(content, lambda why: DiscoveryError(f"{where} is {why}"))  # noqa: B023
        card = parse_card(raw, candidate)
        await verify_card(card, raw, verifier, candidate)
        return card, candidate
    raise DiscoveryError("no Agent Card found; tried " + ", ".join(tried))


async def _get_card(
    http: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    timeout: Any,
    limits: ClientLimits,
) -> tuple[int, bytes]:
    """GET a card URL, following redirects by hand: credentials stay on the first origin."""
    home = origin_of(url)
    for _ in range(limits.max_card_redirects + 1):
        sent = {"Accept": "application/json", "A2A-Version": "1.0"}
        if origin_of(url) == home:
            sent.update(headers)
        request = http.build_request("GET", url, headers=sent, timeout=timeout)
        try:
            response = await http.send(request, stream=True, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise map_httpx_error(exc) from exc
        try:
            if response.is_redirect and "location" in response.headers:
                url = str(response.url.join(response.headers["location"]))
                continue
            try:
                return response.status_code, await read_capped(response, limits.max_card_bytes)
            except TooLargeError as exc:
                raise DiscoveryError(
                    f"the Agent Card at {url} is too large: {exc} (ClientLimits.max_card_bytes)"
                ) from None
            except httpx.HTTPError as exc:
                raise map_httpx_error(exc) from exc
        finally:
            await response.aclose()
    raise DiscoveryError(f"the Agent Card: more than {limits.max_card_redirects} redirects")


def interface_version(interface: AgentInterface) -> str:
    """The interface's protocol version, ``""`` read as absent (1.0, the field's default)."""
    return (interface.protocol_version or "").strip() or "1.0"


def interface_candidates(
    card: AgentCard,
    *,
    bindings: Sequence[str] | None = None,
    allow_v03: bool = True,
    card_url: str | None = None,
) -> list[AgentInterface]:
    """Every interface of ``card`` this client may speak, best first (the module docstring's
    rule): the 1.x ones if any, else the 0.3 ones; in the caller's ``bindings`` order, else the
    card's. The first is
    the one spoken; the others are where a client falls back when it cannot connect (§5.2).
    Raises :class:`NegotiationError` when there is none.
    """
    wanted = [normalize_binding(b) for b in (bindings or TRANSPORTS)]
    known = [b for b in wanted if b in TRANSPORTS]
    candidates = [
        i for i in card.supported_interfaces if normalize_binding(i.protocol_binding) in known
    ]
    if bindings:
        candidates.sort(key=lambda i: known.index(normalize_binding(i.protocol_binding)))
    v1 = [i for i in candidates if interface_version(i).split(".")[0] == "1"]
    v03_ = [i for i in candidates if interface_version(i).startswith("0.")]
    if not v1 and v03_ and not allow_v03:
        raise NegotiationError(
            f"{card.name!r} only offers A2A {v03_[0].protocol_version}; pass allow_v03=True "
            "to speak it"
        )
    # Never 0.3 to an agent that offers 1.x (§3.6.3), not even as a fallback: the fallbacks are
    # the other interfaces of the chosen version.
    chosen = v1 or (v03_ if allow_v03 else [])
    if not chosen:
        offered = ", ".join(
            f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
        )
        hint = ""
        if "GRPC" in wanted and "GRPC" not in TRANSPORTS:
            hint = "; gRPC needs the 'grpc' extra: pip install 'simple-a2a[grpc]'"
        raise NegotiationError(
            f"{card.name!r} offers no interface this client speaks "
            f"(offered: {offered or 'none'}; accepted: {', '.join(known)} with A2A 1.x or 0.3)"
            + hint
        )
    return [_resolved(i, card_url) for i in chosen]


def _resolved(interface: AgentInterface, card_url: str | None) -> AgentInterface:
    grpc = normalize_binding(interface.protocol_binding) == "GRPC"
    # A GRPC URL is a gRPC target (``host:port``, ``[::1]:port``, ``grpc(s)://``), never a path
    # under the card's URL: joining it dialled ``http://host/.well-known/127.0.0.1:50051``.
    if card_url is not None and not grpc and not urlsplit(interface.url).scheme:
        return interface.model_copy(update={"url": urljoin(card_url, interface.url)})
    return interface


def select_interface(
    card: AgentCard,
    *,
    bindings: Sequence[str] | None = None,
    allow_v03: bool = True,
    card_url: str | None = None,
) -> AgentInterface:
    """Choose the interface to speak to (see the module docstring for the rule).

    ``bindings`` restricts and orders the acceptable bindings (``"JSONRPC"``, ``"HTTP+JSON"``);
    by default every binding this client implements is acceptable, in the card's order.
    A relative interface URL is resolved against ``card_url``.
    """
    return interface_candidates(card, bindings=bindings, allow_v03=allow_v03, card_url=card_url)[0]
