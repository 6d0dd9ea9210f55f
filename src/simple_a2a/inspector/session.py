"""One inspected agent: our own :class:`AsyncClient` over a recording transport.

Every operation the page asks for goes through the real client (discovery, negotiation of the
interface and version, 0.3 translation, reconnection), so the inspector shows how *our* client
sees the agent, and the wire view shows the exact bytes. Results are returned as the 1.0 JSON
objects of the spec (ProtoJSON), whatever version the agent speaks.

Streams become timelines: each event with its SSE ``id:`` (the per-task sequence number), and
a ``reconnect`` entry whenever the client resumes a dropped stream with SubscribeToTask and
``Last-Event-ID`` (spec §3.1.6, §4.3.2).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from simple_a2a.client import AsyncClient
from simple_a2a.client.streams import resilient_stream
from simple_a2a.client.transport import SSEEvent
from simple_a2a.protocol.errors import A2AError
from simple_a2a.protocol.models import Message, Task, TaskArtifactUpdateEvent
from simple_a2a.protocol.requests import StreamEvent

from .wire import RecordingTransport, WireLog

__all__ = ["Session", "error_json", "event_json"]


def error_json(exc: BaseException) -> dict[str, Any]:
    """An error as the page shows it: its type and its message, never a traceback."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__}
    if isinstance(exc, A2AError):
        out["message"] = exc.message
        out["code"] = exc.code
    return out


def _kind(event: StreamEvent) -> str:
    if isinstance(event, Task):
        return "task"
    if isinstance(event, Message):
        return "message"
    if isinstance(event, TaskArtifactUpdateEvent):
        return "artifact"
    return "status"


def event_json(event: StreamEvent, seq: str) -> dict[str, Any]:
    """A timeline entry: the event's kind, its sequence id (``""`` if none) and its 1.0 JSON."""
    return {"kind": _kind(event), "seq": seq, "event": event.to_dict()}


class _LastId:
    """The SSE ``id:`` of the event the stream yielded last (``""``: none of its own).

    It wraps each source in an iterator class, not an async generator: the client's stream is
    the one async generator between caller and connection (see ``client.transport.SSEStream``).
    """

    def __init__(self) -> None:
        self.id = ""

    def follow(self, source: AsyncIterator[SSEEvent]) -> AsyncIterator[SSEEvent]:
        return _Tagging(source, self)


class _Tagging:
    def __init__(self, source: AsyncIterator[SSEEvent], last: _LastId) -> None:
        self._source = source
        self._last = last

    def __aiter__(self) -> _Tagging:
        return self

    async def __anext__(self) -> SSEEvent:
        sse = await self._source.__anext__()
        self._last.id = sse.id if sse.fresh_id else ""
        return sse

    async def aclose(self) -> None:
        aclose = getattr(self._source, "aclose", None)
        if aclose is not None:
            await aclose()


class Session:
    """The inspector's view of one agent (``target``: its base URL or card URL)."""

    def __init__(
        self,
        target: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        api_key: str | None = None,
        bindings: Sequence[str] | None = None,
        timeout: float = 30.0,
        wire: WireLog | None = None,
        inner: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.target = target
        self.wire = wire or WireLog()
        self.client = AsyncClient(
            target,
            headers=headers,
            bearer_token=bearer_token,
            api_key=api_key,
            bindings=bindings,
            timeout=timeout,
            transport=RecordingTransport(self.wire, inner),
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def card(self) -> dict[str, Any]:
        """The card (1.0 form and as served), its interfaces and what negotiation chose."""
        card = await self.client.agent_card()
        interface = self.client.interface
        card_url = getattr(self.client, "_card_url", None)
        raw = next(
            (
                e["responseBody"]
                for e in reversed(self.wire.since(0))
                if e["url"] == card_url and e["status"] == 200
            ),
            None,
        )
        return {
            "target": self.target,
            "cardUrl": card_url,
            "card": card.to_dict(),
            "raw": raw,
            "chosen": interface.to_dict() if interface is not None else None,
            "protocolVersion": self.client.protocol_version,
        }

    async def send(
        self,
        parts: list[dict[str, Any]],
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool = False,
    ) -> dict[str, Any]:
        """SendMessage; the Task or the Message as ``{"task": ...}`` / ``{"message": ...}``."""
        result = await self.client.send(
            parts,
            task_id=task_id or None,
            context_id=context_id or None,
            return_immediately=return_immediately,
        )
        return {_kind(result): result.to_dict()}

    def stream(
        self, parts: list[dict[str, Any]], *, task_id: str | None, context_id: str | None
    ) -> AsyncIterator[dict[str, Any]]:
        """SendStreamingMessage as a timeline."""
        message = self.client._message(parts, task_id or None, context_id or None)
        request = self.client._send_request(message, False, None, None, None, None)
        return self._timeline("SendStreamingMessage", request, None)

    def subscribe(self, task_id: str) -> AsyncIterator[dict[str, Any]]:
        """SubscribeToTask as a timeline."""
        return self._timeline("SubscribeToTask", {"id": task_id}, task_id)

    async def _timeline(
        self, operation: str, request: dict[str, Any], task_id: str | None
    ) -> AsyncIterator[dict[str, Any]]:
        transport = await self.client._ready()
        request = self.client._with_tenant(request)
        last = _LastId()
        notes: list[dict[str, Any]] = []

        async def open_stream() -> AsyncIterator[SSEEvent]:
            return last.follow(transport.stream(operation, request))

        async def resubscribe(task: str, last_id: str | None) -> AsyncIterator[SSEEvent]:
            notes.append({"kind": "reconnect", "taskId": task, "lastEventId": last_id or ""})
            resume = self.client._with_tenant({"id": task})
            return last.follow(transport.stream("SubscribeToTask", resume, last_event_id=last_id))

        events = resilient_stream(open_stream, resubscribe, self.client.reconnect, task_id=task_id)
        try:
            async for event in events:
                while notes:
                    yield notes.pop(0)
                yield event_json(event, last.id)
        except Exception as exc:  # shown in the timeline; the page's stream ends cleanly
            while notes:
                yield notes.pop(0)
            yield {"kind": "error", "error": error_json(exc)}
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        yield {"kind": "end"}

    async def get(self, task_id: str) -> dict[str, Any]:
        return (await self.client.get(task_id)).to_dict()

    async def cancel(self, task_id: str) -> dict[str, Any]:
        return (await self.client.cancel(task_id)).to_dict()

    async def list(
        self,
        *,
        context_id: str | None = None,
        status: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        page = await self.client.list(
            context_id=context_id or None,
            status=status or None,
            page_size=page_size,
            page_token=page_token or None,
            include_artifacts=True,
            history_length=0,
        )
        return page.to_dict()

    async def push_configs(self, task_id: str) -> dict[str, Any]:
        configs = await self.client.list_push_configs(task_id)
        return {"configs": [c.to_dict() for c in configs]}
