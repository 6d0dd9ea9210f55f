"""SSRF guard for webhook URLs (spec §13.2), on by default.

A webhook URL is refused when its host resolves to an address a public service has no business
calling: loopback, private (RFC 1918, unique local), link-local (including the cloud metadata
address 169.254.169.254), multicast, reserved, unspecified or otherwise not globally routable —
IPv4 and IPv6 alike, IPv4-mapped/compatible IPv6 and 6to4 judged by the IPv4 inside.

The check runs twice: when a config is created (a clear error for the client) and again when
connecting. The second check defeats DNS rebinding: :class:`GuardedTransport` resolves the host
once, vets every address and connects to a vetted one, while the URL (so the ``Host`` header and
TLS SNI/certificate check) keeps the original name. Proxies from the environment are ignored, as
a proxy would connect on our behalf without the check.

Development escape hatches: ``allow_hosts`` (host names, IP addresses or CIDR networks, e.g.
``["localhost", "127.0.0.1", "10.0.0.0/8"]``) and ``allow_private_networks=True`` (no address
check at all).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import httpcore
import httpx

from ...protocol.logcontext import library_logger

log = library_logger("simple_a2a.push")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: ``async (host, port) -> [ip, ...]``; injectable for tests.
Resolver = Callable[[str, int], Awaitable[list[str]]]

_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


class UrlRefused(ValueError):
    """A webhook URL the guard will not call; ``reason`` says why."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"webhook url refused: {reason}")
        self.url = url
        self.reason = reason


class Unresolvable(UrlRefused):
    """The host name did not resolve: refused at connect time, accepted at creation."""


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address of ``host`` (IPv4 and IPv6), in the resolver's order, without duplicates."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]).split("%", 1)[0], None)
    return list(seen)


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    packed = ip.packed
    if packed[:12] == bytes(12) and packed[12] != 0:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(packed[12:])
    if ip in ipaddress.ip_network("64:ff9b::/96"):  # NAT64
        return ipaddress.IPv4Address(packed[12:])
    return None


def refusal_reason(ip: IPAddress) -> str | None:
    """What kind of forbidden address ``ip`` is (e.g. ``"a loopback address"``), or None."""
    inner = _embedded_ipv4(ip)
    if inner is not None:
        kind = refusal_reason(inner)
        return f"{kind} (embedded IPv4 {inner})" if kind else None
    if ip in _METADATA:
        return "the link-local cloud metadata address"
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("not globally routable", not ip.is_global),
    )
    for name, hit in checks:
        if hit:
            return f"a {name} address"
    return None


class UrlGuard:
    """Decides which webhook URLs and addresses may be called."""

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        allow_private_networks: bool = False,
        require_https: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        self.allow_private_networks = allow_private_networks
        self.require_https = require_https
        self.resolver: Resolver = resolver or system_resolver
        self._hosts: set[str] = set()
        self._networks: list[IPNetwork] = []
        for entry in allow_hosts:
            text = entry.strip().lower().strip("[]")
            try:
                self._networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                self._hosts.add(text.rstrip("."))

    def parse(self, url: str) -> tuple[str, int]:
        """Syntax checks; returns (host, port). Raises :class:`UrlRefused`."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise UrlRefused(url, f"not a valid URL ({exc})") from None
        schemes = ("https",) if self.require_https else ("http", "https")
        if parsed.scheme not in schemes:
            raise UrlRefused(url, f"the scheme must be {' or '.join(schemes)}")
        if not parsed.host:
            raise UrlRefused(url, "the URL has no host")
        if parsed.userinfo:
            raise UrlRefused(url, "credentials in the URL are not allowed")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        return parsed.host, port

    def _host_allowed(self, host: str) -> bool:
        return host.lower().rstrip(".") in self._hosts

    def check_address(self, address: str) -> str | None:
        """The refusal reason for one resolved address, or None if it may be called."""
        if self.allow_private_networks:
            return None
        ip = ipaddress.ip_address(address)
        if any(ip in net for net in self._networks):
            return None
        inner = _embedded_ipv4(ip)
        if inner is not None and any(inner in net for net in self._networks):
            return None
        return refusal_reason(ip)

    async def vetted_addresses(self, host: str, port: int) -> list[str]:
        """Resolve ``host`` and return the addresses that may be called, all of them vetted.

        Refuses (:class:`UrlRefused`) when the name does not resolve or when *any* address is
        forbidden — a name that mixes public and private addresses is a rebinding smell.
        """
        name = host.strip("[]")
        try:
            addresses = await self.resolver(name, port)
        except OSError as exc:
            raise Unresolvable(host, f"{host} does not resolve ({exc})") from None
        if not addresses:
            raise Unresolvable(host, f"{host} does not resolve")
        if self._host_allowed(name):
            return addresses
        for address in addresses:
            reason = self.check_address(address)
            if reason is not None:
                if address == name:
                    raise UrlRefused(host, f"{address} is {reason}")
                raise UrlRefused(host, f"{host} resolves to {address}, {reason}")
        return addresses

    async def check_url(self, url: str) -> None:
        """The creation-time check: syntax, then resolution. Raises :class:`UrlRefused` for
        what is certainly forbidden (a forbidden literal address, a name resolving to one).

        A name that does not resolve *now* is accepted (split-horizon DNS, offline development,
        #16 item 12): every connection resolves and vets again, which is the real guard."""
        host, port = self.parse(url)
        try:
            await self.vetted_addresses(host, port)
        except Unresolvable:
            log.info("push URL %s does not resolve now; it is checked again at each connect", url)
        except UrlRefused as exc:
            raise UrlRefused(url, exc.reason) from None


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, vet, then connect to the vetted address (the name never reaches the socket)."""

    def __init__(self, guard: UrlGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._guard = guard
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.vetted_addresses(host, port)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not allowed for webhooks")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """An httpx transport whose every connection goes through :class:`UrlGuard`.

    A refused address raises :class:`UrlRefused` from the request (not an ``httpx`` error).
    """

    def __init__(
        self,
        guard: UrlGuard,
        *,
        verify: bool | str = True,
        limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20),
        http2: bool = False,
        retries: int = 0,
    ) -> None:
        super().__init__(verify=verify, trust_env=False, limits=limits, http2=http2)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=http2,
            retries=retries,
            network_backend=_GuardedBackend(guard),
        )


def guarded_client(
    guard: UrlGuard, *, timeout: float | httpx.Timeout = 10.0, **options: Any
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for webhooks: guarded, no env proxies, no redirects."""
    return httpx.AsyncClient(
        transport=GuardedTransport(guard),
        timeout=timeout,
        trust_env=False,
        follow_redirects=False,
        **options,
    )


__all__: Sequence[str] = [
    "GuardedTransport",
    "Resolver",
    "UrlGuard",
    "UrlRefused",
    "guarded_client",
    "refusal_reason",
    "system_resolver",
]
