"""``AsyncClient``: the one implementation of the client; ``Client`` is a blocking facade of it.

Policy lives here (discovery, negotiation, retries, reconnection, typing the results); moving
bytes is the job of a :class:`~simple_a2a.client.transport.Transport`, one per binding.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx

from simple_a2a.protocol._base import A2AModel
from simple_a2a.protocol.card import AgentCard, AgentInterface
from simple_a2a.protocol.errors import A2AError
from simple_a2a.protocol.logcontext import library_logger
from simple_a2a.protocol.models import (
    FINAL_STATES,
    TERMINAL_STATES,
    AuthenticationInfo,
    Message,
    Part,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from simple_a2a.protocol.requests import (
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamEvent,
)
from simple_a2a.protocol.telemetry import TELEMETRY

from ._interfaces import (
    api_key_place,
    first_connecting,
    next_interface,
    spoken_version,
    v03_list_refused,
    warn_if_v03,
)
from ._retries import call_anywhere
from .answers import invalid
from .discovery import CardVerifier, fetch_card, interface_candidates, parse_card, verify_card
from .errors import ClientTimeoutError, ConnectError, NegotiationError
from .limits import ClientLimits, origin_of
from .streams import ReconnectPolicy, RetryPolicy, resilient_stream
from .telemetry import traced_call, traced_stream
from .transport import DEFAULT, TRANSPORTS, SSEEvent, TimeoutTypes, Transport

__all__ = ["AsyncClient", "Content"]

log = library_logger("simple_a2a.client")
M = TypeVar("M", bound=A2AModel)

#: What ``send`` and ``stream`` accept: a string, a part, a list of strings/parts, a Message.
Content = str | Part | Message | Iterable[str | Part | dict[str, Any]]


def _parse(model: type[M], data: dict[str, Any], operation: str) -> M:
    try:
        return model.from_dict(data)
    except A2AError as exc:
        raise invalid(f"{operation}: the agent's answer is invalid: {exc.message}") from None
    except RecursionError:
        raise invalid(f"{operation}: the agent's answer is nested too deeply") from None


class AsyncClient:
    """An async A2A client for one agent (``async with AsyncClient(url) as client: ...``).

    ``url_or_card`` is the agent's base URL (its card is fetched from
    ``/.well-known/agent-card.json``, then the 0.3-era ``/.well-known/agent.json``), the URL
    of a card, or an :class:`AgentCard` (or its JSON object). The card is resolved and the
    interface chosen on the first call (or by :meth:`agent_card`).

    Options:

    - ``headers``: sent with every request; ``bearer_token``: ``Authorization: Bearer ...``;
      ``api_key``: sent in ``api_key_header`` if given, else where the card's API-key security
      scheme says (header, query parameter or cookie, by name), else ``X-API-Key``; ``auth``:
      any ``httpx.Auth``; a refusal is an ``AuthenticationError`` whose ``schemes`` and
      ``challenges`` come from the 401's ``WWW-Authenticate``;
    - ``http_client`` (an ``httpx.AsyncClient``, not closed by us) or ``transport`` (an
      ``httpx.AsyncBaseTransport``, e.g. ``httpx.MockTransport`` or ``httpx.ASGITransport``);
    - ``timeout``: default per-call timeout in seconds (every method also takes ``timeout=``);
    - ``bindings``: acceptable bindings in order of preference (default: the card's order);
      ``allow_v03``: speak 0.3 to an agent that offers nothing newer (never to a 1.0 agent);
    - ``card_verifier``: called with ``(card, raw_json)``; return ``False`` or raise to reject
      (the seam for JWS signatures, spec §8.4);
    - ``retry``: :class:`RetryPolicy` for unary calls; ``reconnect``: :class:`ReconnectPolicy`
      for streams; ``extensions``: URIs sent in ``A2A-Extensions``;
    - ``limits``: :class:`ClientLimits`, the bounds on what the agent may send (sizes, total
      deadlines, the window of seen event ids); A2A calls never follow redirects;
    - ``allow_cross_origin_credentials``: send the credentials (``bearer_token``, ``api_key``,
      ``auth``, ``headers``) to an interface URL of the card on another origin than the URL
      given here (spec §8.3.2 lets a card point anywhere); refused by default, with a warning
      when allowed.
    """

    def __init__(
        self,
        url_or_card: str | AgentCard | Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        api_key: str | None = None,
        api_key_header: str | None = None,
        auth: httpx.Auth | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: TimeoutTypes = 30.0,
        bindings: Sequence[str] | None = None,
        allow_v03: bool = True,
        card_verifier: CardVerifier | None = None,
        retry: RetryPolicy | None = None,
        reconnect: ReconnectPolicy | None = None,
        extensions: Sequence[str] | None = None,
        limits: ClientLimits | None = None,
        allow_cross_origin_credentials: bool = False,
    ) -> None:
        self._url: str | None = url_or_card if isinstance(url_or_card, str) else None
        self._given_card: AgentCard | Mapping[str, Any] | None = (
            None if isinstance(url_or_card, str) else url_or_card
        )
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            transport=transport, auth=auth, timeout=timeout, follow_redirects=False
        )
        self._credentials = bool(bearer_token or api_key or auth or headers)
        self.limits = limits or ClientLimits()
        self._allow_cross_origin_credentials = allow_cross_origin_credentials
        self._timeout: Any = DEFAULT if http_client is None else timeout
        self._headers = dict(headers or {})
        if bearer_token is not None:
            self._headers["Authorization"] = f"Bearer {bearer_token}"
        if extensions:
            self._headers["A2A-Extensions"] = ",".join(extensions)
        self._api_key = api_key
        self._api_key_header = api_key_header
        self._bindings = bindings
        self._allow_v03 = allow_v03
        self._card_verifier = card_verifier
        self.retry = retry or RetryPolicy()
        self.reconnect = reconnect or ReconnectPolicy()
        self._card: AgentCard | None = None
        self._card_url: str | None = None
        self._transport: Transport | None = None
        self._candidates: list[AgentInterface] = []
        self._lock: asyncio.Lock | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client (unless it was given to us)."""
        if self._transport is not None:
            await self._transport.aclose()
        if self._owns_http:
            await self._http.aclose()

    # -- discovery and negotiation -------------------------------------------------------------

    async def _ready(self) -> Transport:
        if self._transport is not None:
            return self._transport
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._transport is None:
                card = await self._resolve_card()
                self._candidates = interface_candidates(
                    card,
                    bindings=self._bindings,
                    allow_v03=self._allow_v03,
                    card_url=self._card_url,
                )
                warn_if_v03(card, self._candidates[0], self._bindings)
                self._interface = self._candidates[0]
                self._transport = self._make_transport(card, self._interface)
        return self._transport

    async def _fall_back(self, failed: Transport, exc: ConnectError) -> Transport:
        """The next interface's transport after ``failed`` could not connect (spec §5.2;
        ``_interfaces.py``), or ``exc`` again when there is none."""
        assert self._lock is not None and self._card is not None
        async with self._lock:
            if self._transport is not failed and self._transport is not None:
                return self._transport  # another call moved on already
            assert self._interface is not None
            following = next_interface(self._candidates, self._interface)
            if following is None:
                raise exc
            log.warning(
                "could not connect to %s %s (%s); trying %s %s",
                self._interface.protocol_binding,
                self._interface.url,
                exc,
                following.protocol_binding,
                following.url,
            )
            await failed.aclose()
            self._interface = following
            self._transport = self._make_transport(self._card, following)
            return self._transport

    async def _resolve_card(self) -> AgentCard:
        if self._card is not None:
            return self._card
        if self._url is not None:
            card, self._card_url = await fetch_card(
                self._http,
                self._url,
                headers=self._headers,
                timeout=self._timeout,
                verifier=self._card_verifier,
                limits=self.limits,
            )
        elif isinstance(self._given_card, AgentCard):
            card = self._given_card
            await verify_card(card, card.to_dict(), self._card_verifier, "the given card")
        else:
            raw = dict(self._given_card or {})
            card = parse_card(raw, "the given card")
            await verify_card(card, raw, self._card_verifier, "the given card")
        self._card = card
        return card

    def _check_origin(self, interface: AgentInterface) -> None:
        """Credentials go only to the origin the user named, unless they opted in (§8.3.2)."""
        if self._url is None or not self._credentials:
            return
        named, target = origin_of(self._url), origin_of(interface.url)
        if named == target:
            return
        what = f"the card's interface {interface.url} is on another origin than {self._url}"
        if not self._allow_cross_origin_credentials:
            raise NegotiationError(
                f"{what}: refusing to send the client's credentials there; pass "
                "allow_cross_origin_credentials=True if you trust it"
            )
        log.warning("%s: sending the client's credentials there (opted in)", what)

    def _make_transport(self, card: AgentCard, interface: AgentInterface) -> Transport:
        self._check_origin(interface)
        headers = dict(self._headers)
        query: dict[str, str] = {}
        if self._api_key is not None:
            location, name = api_key_place(card, self._api_key_header)
            if location == "query":
                query[name] = self._api_key
            elif location == "cookie":
                cookies = [c for c in (headers.get("Cookie"), f"{name}={self._api_key}") if c]
                headers["Cookie"] = "; ".join(cookies)
            else:
                headers[name] = self._api_key
        cls = TRANSPORTS[interface.protocol_binding.upper()]
        return cls(
            self._http,
            interface.url,
            version=spoken_version(interface),
            headers=headers,
            query=query,
            limits=self.limits,
        )

    async def agent_card(self) -> AgentCard:
        """The agent's public card (fetched, verified and negotiated on first use)."""
        await self._ready()
        assert self._card is not None
        return self._card

    @property
    def interface(self) -> AgentInterface | None:
        """The interface chosen by negotiation (``None`` before the first call)."""
        return getattr(self, "_interface", None)

    @property
    def protocol_version(self) -> str | None:
        """``"1.0"`` or ``"0.3"``: the version spoken (``None`` before the first call)."""
        return self._transport.version if self._transport is not None else None

    # -- plumbing ------------------------------------------------------------------------------

    def _with_tenant(self, request: dict[str, Any]) -> dict[str, Any]:
        tenant = self.interface.tenant if self.interface is not None else None
        if tenant and "tenant" not in request:
            request = {"tenant": tenant, **request}
        return request

    async def _call(
        self, operation: str, request: A2AModel | dict[str, Any], timeout: Any
    ) -> dict[str, Any]:
        if TELEMETRY.on:  # a CLIENT span around the call (docs/observability.md)
            return await traced_call(
                lambda: self._send(operation, request, timeout), operation, self
            )
        return await self._send(operation, request, timeout)

    async def _send(
        self, operation: str, request: A2AModel | dict[str, Any], timeout: Any
    ) -> dict[str, Any]:
        transport = await self._ready()
        data = request.to_dict() if isinstance(request, A2AModel) else request
        data = self._with_tenant(data)
        timeout = self._timeout if timeout is DEFAULT else timeout
        deadline = self.limits.call_deadline
        call = call_anywhere(transport, operation, data, timeout, self.retry, self._fall_back)
        if deadline is None:
            return await call
        try:
            return await asyncio.wait_for(call, deadline)
        except asyncio.TimeoutError:
            raise ClientTimeoutError(
                f"{operation}: no answer within the call deadline of {deadline}s "
                "(ClientLimits.call_deadline)"
            ) from None

    def _stream(
        self, operation: str, request: dict[str, Any], timeout: Any, task_id: str | None
    ) -> AsyncIterator[StreamEvent]:
        # A subscription lasts until the task is terminal (spec §3.1.6); a message's stream
        # until it is terminal or interrupted (§3.1.2).
        until = TERMINAL_STATES if operation == "SubscribeToTask" else FINAL_STATES
        timeout = self._timeout if timeout is DEFAULT else timeout

        async def open_stream() -> AsyncIterator[SSEEvent]:
            transport = await self._ready()
            return first_connecting(
                transport,
                lambda t: t.stream(operation, self._with_tenant(request), timeout=timeout),
                self._fall_back,
            )

        async def resubscribe(task: str, last_id: str | None) -> AsyncIterator[SSEEvent]:
            transport = await self._ready()
            return transport.stream(
                "SubscribeToTask",
                self._with_tenant({"id": task}),
                timeout=timeout,
                last_event_id=last_id,
            )

        events = resilient_stream(
            open_stream,
            resubscribe,
            self.reconnect,
            task_id=task_id,
            until=until,
            limits=self.limits,
            get_task=lambda task: self.get(task, timeout=timeout),
        )
        return traced_stream(events, operation, self) if TELEMETRY.on else events

    @staticmethod
    def _message(content: Content, task_id: str | None, context_id: str | None) -> Message:
        if isinstance(content, Message):
            update = {k: v for k, v in (("task_id", task_id), ("context_id", context_id)) if v}
            return content.model_copy(update=update) if update else content
        return Message.user(content, task_id=task_id, context_id=context_id)

    @staticmethod
    def _send_request(
        message: Message,
        return_immediately: bool,
        history_length: int | None,
        accepted_output_modes: Sequence[str] | None,
        push_config: TaskPushNotificationConfig | None,
        metadata: dict[str, Any] | None,
    ) -> dict[str, Any]:
        config = SendMessageConfiguration(
            accepted_output_modes=list(accepted_output_modes or []),
            task_push_notification_config=push_config,
            history_length=history_length,
            return_immediately=True if return_immediately else None,
        )
        return SendMessageRequest(
            message=message,
            configuration=config if config.to_dict() else None,
            metadata=metadata,
        ).to_dict()

    # -- the operations ------------------------------------------------------------------------

    async def send(
        self,
        content: Content,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool = False,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push_config: TaskPushNotificationConfig | None = None,
        metadata: dict[str, Any] | None = None,
        timeout: Any = DEFAULT,
    ) -> Task | Message:
        """SendMessage: a string, part(s) or a Message; returns the Task or a direct Message.

        Blocks until the task is terminal or interrupted, unless ``return_immediately``.
        ``task_id``/``context_id`` continue a task or conversation (multi-turn).
        """
        message = self._message(content, task_id, context_id)
        request = self._send_request(
            message,
            return_immediately,
            history_length,
            accepted_output_modes,
            push_config,
            metadata,
        )
        data = await self._call("SendMessage", request, timeout)
        return _parse(SendMessageResponse, data, "SendMessage").payload

    def stream(
        self,
        content: Content,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push_config: TaskPushNotificationConfig | None = None,
        metadata: dict[str, Any] | None = None,
        timeout: Any = DEFAULT,
    ) -> AsyncIterator[StreamEvent]:
        """SendStreamingMessage: yields the Task (or one Message), then its updates.

        Each event is a ``Task``, ``Message``, ``TaskStatusUpdateEvent`` or
        ``TaskArtifactUpdateEvent``; the iteration ends at a terminal or interrupted state. A
        dropped connection is resumed through SubscribeToTask (see ``reconnect``).
        Fold the events with :func:`simple_a2a.client.afold` to get the final task.
        Leaving the loop early (``break``, an exception, cancellation) closes the connection.
        """
        message = self._message(content, task_id, context_id)
        request = self._send_request(
            message, False, history_length, accepted_output_modes, push_config, metadata
        )
        return self._stream("SendStreamingMessage", request, timeout, None)

    def subscribe(self, task_id: str, *, timeout: Any = DEFAULT) -> AsyncIterator[StreamEvent]:
        """SubscribeToTask: the task's current state, then its updates until it is terminal
        (also through ``input-required``: a follow-up resumes the task, spec §3.1.6)."""
        return self._stream("SubscribeToTask", {"id": task_id}, timeout, task_id)

    async def get(
        self, task_id: str, *, history_length: int | None = None, timeout: Any = DEFAULT
    ) -> Task:
        """GetTask: the task's current state (``history_length`` limits the history)."""
        request: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            request["historyLength"] = history_length
        return _parse(Task, await self._call("GetTask", request, timeout), "GetTask")

    async def list(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
        timeout: Any = DEFAULT,
    ) -> ListTasksResponse:
        """ListTasks: one page of tasks (newest first); see :meth:`list_all` for every page.
        Refused before sending when A2A 0.3 is spoken, which has no ListTasks."""
        if (await self._ready()).is_v03:
            raise v03_list_refused(await self.agent_card())
        request = ListTasksRequest(
            context_id=context_id,
            status=TaskState(status) if status is not None else None,
            page_size=page_size,
            page_token=page_token or None,
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
        )
        data = await self._call("ListTasks", request, timeout)
        return _parse(ListTasksResponse, data, "ListTasks")

    async def list_all(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | str | None = None,
        page_size: int | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
        timeout: Any = DEFAULT,
    ) -> AsyncIterator[Task]:
        """Every task matching the filters, walking the pages (``nextPageToken``)."""
        token: str | None = None
        seen: set[str] = set()
        while True:
            page = await self.list(
                context_id=context_id,
                status=status,
                page_size=page_size,
                page_token=token,
                history_length=history_length,
                status_timestamp_after=status_timestamp_after,
                include_artifacts=include_artifacts,
                timeout=timeout,
            )
            for task in page.tasks:
                yield task
            token = page.next_page_token or None
            if token is None or token in seen:
                return
            seen.add(token)

    async def cancel(
        self, task_id: str, *, metadata: dict[str, Any] | None = None, timeout: Any = DEFAULT
    ) -> Task:
        """CancelTask: returns the task in its new state."""
        request: dict[str, Any] = {"id": task_id}
        if metadata:
            request["metadata"] = metadata
        return _parse(Task, await self._call("CancelTask", request, timeout), "CancelTask")

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        config_id: str | None = None,
        token: str | None = None,
        authentication: AuthenticationInfo | None = None,
        timeout: Any = DEFAULT,
    ) -> TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig: register a webhook for the task."""
        config = TaskPushNotificationConfig(
            task_id=task_id, id=config_id, url=url, token=token, authentication=authentication
        )
        data = await self._call("CreateTaskPushNotificationConfig", config, timeout)
        return _parse(TaskPushNotificationConfig, data, "CreateTaskPushNotificationConfig")

    async def get_push_config(
        self, task_id: str, config_id: str, *, timeout: Any = DEFAULT
    ) -> TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig."""
        request = {"taskId": task_id, "id": config_id}
        data = await self._call("GetTaskPushNotificationConfig", request, timeout)
        return _parse(TaskPushNotificationConfig, data, "GetTaskPushNotificationConfig")

    async def list_push_configs(
        self, task_id: str, *, timeout: Any = DEFAULT
    ) -> builtins.list[TaskPushNotificationConfig]:
        """ListTaskPushNotificationConfigs: every config of the task (all pages)."""
        configs: builtins.list[TaskPushNotificationConfig] = []
        token: str | None = None
        while True:
            request: dict[str, Any] = {"taskId": task_id}
            if token:
                request["pageToken"] = token
            data = await self._call("ListTaskPushNotificationConfigs", request, timeout)
            page = _parse(
                ListTaskPushNotificationConfigsResponse, data, "ListTaskPushNotificationConfigs"
            )
            configs.extend(page.configs)
            if not page.next_page_token or page.next_page_token == token:
                return configs
            token = page.next_page_token

    async def delete_push_config(
        self, task_id: str, config_id: str, *, timeout: Any = DEFAULT
    ) -> None:
        """DeleteTaskPushNotificationConfig."""
        request = {"taskId": task_id, "id": config_id}
        await self._call("DeleteTaskPushNotificationConfig", request, timeout)

    async def extended_card(self, *, timeout: Any = DEFAULT) -> AgentCard:
        """GetExtendedAgentCard: the card for authenticated callers (verified like the card)."""
        data = await self._call("GetExtendedAgentCard", {}, timeout)
        card = _parse(AgentCard, data, "GetExtendedAgentCard")
        await verify_card(card, data, self._card_verifier, "GetExtendedAgentCard")
        return card
