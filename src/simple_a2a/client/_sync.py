"""``Client``: the blocking client, a thin facade over :class:`AsyncClient`.

Why a facade and not a second implementation: every rule (negotiation, retries, stream
resumption, error mapping) lives once, in the async code, and cannot drift. Each blocking
method is generated from its async twin (same signature and docstring, checked by mypy through
``ParamSpec``) and runs the coroutine on a private event loop in a daemon thread shared by all
blocking clients of the process, via ``asyncio.run_coroutine_threadsafe``. So it works from a
plain script and from worker threads (even while other threads run their own event loops).

The one rule: never call the blocking client from a thread that is running an event loop.
That would stall the loop for the whole call, and deadlock an agent calling its own server on
that loop; it raises :class:`SyncClientInAsyncContextError` pointing to ``AsyncClient``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from typing import Any, Concatenate, ParamSpec, TypedDict, TypeVar

import httpx
from typing_extensions import Unpack

from simple_a2a.protocol.card import AgentCard, AgentInterface

from ._async import AsyncClient
from .discovery import CardVerifier
from .errors import SyncClientInAsyncContextError
from .limits import ClientLimits
from .streams import ReconnectPolicy, RetryPolicy
from .transport import TimeoutTypes

__all__ = ["Client", "ClientOptions", "client"]

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E")


class ClientOptions(TypedDict, total=False):
    """The keyword options of :class:`AsyncClient`, for ``Client`` and ``client()``."""

    headers: Mapping[str, str] | None
    bearer_token: str | None
    api_key: str | None
    api_key_header: str | None
    auth: httpx.Auth | None
    http_client: httpx.AsyncClient | None
    transport: httpx.AsyncBaseTransport | None
    timeout: TimeoutTypes
    bindings: list[str] | tuple[str, ...] | None
    allow_v03: bool
    card_verifier: CardVerifier | None
    retry: RetryPolicy | None
    reconnect: ReconnectPolicy | None
    extensions: list[str] | tuple[str, ...] | None
    limits: ClientLimits | None
    allow_cross_origin_credentials: bool


class _LoopThread:
    """One event loop running forever in a daemon thread."""

    _lock = threading.Lock()
    _shared: _LoopThread | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="simple-a2a-client-loop", daemon=True
        )
        self.thread.start()

    @classmethod
    def shared(cls) -> _LoopThread:
        with cls._lock:
            if cls._shared is None or not cls._shared.thread.is_alive():
                cls._shared = cls()
            return cls._shared

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        started = threading.Event()
        finished = threading.Event()

        async def tracked() -> R:
            started.set()
            try:
                return await coro
            finally:
                finished.set()

        future = asyncio.run_coroutine_threadsafe(tracked(), self.loop)
        try:
            return future.result()
        except BaseException:
            # KeyboardInterrupt and friends: stop the work on the loop too, and let it unwind
            # before returning, so that (e.g.) closing a stream does not find it still running.
            future.cancel()
            if started.is_set():
                finished.wait(timeout=5)
            else:
                coro.close()
            raise


def _check_thread(name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise SyncClientInAsyncContextError(
        f"simple_a2a.Client.{name}() was called from a thread that is running an event loop; "
        "blocking it would stall the loop (and deadlock an agent calling its own server). "
        f"Use simple_a2a.AsyncClient there (`await client.{name}(...)`), or run the blocking "
        "client in a worker thread (`await asyncio.to_thread(...)`)."
    )


def _blocking(
    fn: Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Client, P], R]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        _check_thread(fn.__name__)
        return self._loop.run(fn(self._async, *args, **kwargs))

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _blocking_iter(
    fn: Callable[Concatenate[AsyncClient, P], AsyncIterator[E]],
) -> Callable[Concatenate[Client, P], Iterator[E]]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[E]:
        _check_thread(fn.__name__)
        return self._iterate(fn(self._async, *args, **kwargs))

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


async def _next(agen: AsyncIterator[E]) -> tuple[bool, E | None]:
    try:
        return True, await agen.__anext__()
    except StopAsyncIteration:
        return False, None


class Client:
    """The blocking A2A client: the methods of :class:`AsyncClient`, without ``await``.

    ``with simple_a2a.client(url) as agent: task = agent.send("hello")``; streams are plain
    iterators (``for event in agent.stream("hi"): ...``). Takes the options of ``AsyncClient``.
    """

    def __init__(
        self, url_or_card: str | AgentCard | Mapping[str, Any], **options: Unpack[ClientOptions]
    ) -> None:
        self._async = AsyncClient(url_or_card, **options)
        self._loop = _LoopThread.shared()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP client (unless it was given to us)."""
        _check_thread("close")
        self._loop.run(self._async.aclose())

    @property
    def interface(self) -> AgentInterface | None:
        """The interface chosen by negotiation (``None`` before the first call)."""
        return self._async.interface

    @property
    def protocol_version(self) -> str | None:
        """``"1.0"`` or ``"0.3"``: the version spoken (``None`` before the first call)."""
        return self._async.protocol_version

    def _iterate(self, agen: AsyncIterator[E]) -> Iterator[E]:
        try:
            while True:
                more, item = self._loop.run(_next(agen))
                if not more:
                    return
                yield item  # type: ignore[misc]
        finally:
            aclose: Callable[[], Coroutine[Any, Any, None]] | None = getattr(agen, "aclose", None)
            if aclose is not None:
                self._loop.run(aclose())

    agent_card = _blocking(AsyncClient.agent_card)
    send = _blocking(AsyncClient.send)
    stream = _blocking_iter(AsyncClient.stream)
    subscribe = _blocking_iter(AsyncClient.subscribe)
    get = _blocking(AsyncClient.get)
    list = _blocking(AsyncClient.list)
    list_all = _blocking_iter(AsyncClient.list_all)
    cancel = _blocking(AsyncClient.cancel)
    create_push_config = _blocking(AsyncClient.create_push_config)
    get_push_config = _blocking(AsyncClient.get_push_config)
    list_push_configs = _blocking(AsyncClient.list_push_configs)
    delete_push_config = _blocking(AsyncClient.delete_push_config)
    extended_card = _blocking(AsyncClient.extended_card)


def client(
    url_or_card: str | AgentCard | Mapping[str, Any], **options: Unpack[ClientOptions]
) -> Client:
    """A blocking :class:`Client` for the agent at ``url_or_card`` (a URL, card or card dict).

    ``simple_a2a.client("http://localhost:9292").send("hello")`` is a whole round trip.
    """
    return Client(url_or_card, **options)
