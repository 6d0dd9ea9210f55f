"""A hostile agent on loopback: a raw ASGI app whose misbehaviour each test chooses.

It serves a valid Agent Card (whose interface URL a test may point elsewhere) and answers
every other request with ``behaviour(request)``: an async function that sends the answer
through the :class:`Reply` it is given. It records what it received (to see which credentials
reached it) and how many body bytes it managed to send (to see a limit enforced while reading).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

MiB = 1024 * 1024


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Reply:
    """Sends one HTTP answer; ``body`` may be called many times (a chunked, endless answer)."""

    def __init__(self, send: Any, agent: HostileAgent) -> None:
        self._send = send
        self._agent = agent
        self.gone = asyncio.Event()  #: the client hung up

    async def start(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        await self._send({"type": "http.response.start", "status": status, "headers": raw})

    async def body(self, data: bytes, more: bool = True) -> None:
        if self.gone.is_set():
            raise OSError("the client hung up")
        await self._send({"type": "http.response.body", "body": data, "more_body": more})
        self._agent.sent += len(data)

    async def json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        await self.start(status, {"content-type": "application/json"})
        await self.body(data, more=False)

    async def raw(self, data: bytes, ctype: str = "application/json", status: int = 200) -> None:
        await self.start(status, {"content-type": ctype})
        await self.body(data, more=False)


Behaviour = Callable[[Received, Reply], Awaitable[None]]


async def not_found(request: Received, reply: Reply) -> None:
    await reply.json({"error": "no"}, status=404)


@dataclass
class HostileAgent:
    """The ASGI app. ``interface_url`` defaults to its own ``/rpc``."""

    url: str
    behaviour: Behaviour = not_found
    card_behaviour: Behaviour | None = None
    interface_url: str | None = None
    binding: str = "JSONRPC"
    received: list[Received] = field(default_factory=list)
    sent: int = 0

    def card(self) -> dict[str, Any]:
        return {
            "name": "hostile",
            "description": "an agent that should not be trusted",
            "version": "1",
            "supportedInterfaces": [
                {
                    "protocolBinding": self.binding,
                    "protocolVersion": "1.0",
                    "url": self.interface_url or self.url + "/rpc",
                }
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        request = Received(scope["method"], scope["path"], headers, body)
        self.received.append(request)
        reply = Reply(send, self)

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            reply.gone.set()

        watcher = asyncio.create_task(watch())
        try:
            if scope["path"] == "/.well-known/agent-card.json":
                if self.card_behaviour is not None:
                    await self.card_behaviour(request, reply)
                else:
                    await reply.json(self.card())
            else:
                await self.behaviour(request, reply)
        except OSError:
            pass  # the client hung up: what a limit is for
        finally:
            watcher.cancel()

    def calls(self) -> list[Received]:
        return [r for r in self.received if not r.path.startswith("/.well-known/")]


def rpc_result(request: Received, result: Any, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC success answer echoing the request's id (unless ``request_id`` is given)."""
    rid = request.json["id"] if request_id is None else request_id
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def sse(event_id: int, data: Any) -> bytes:
    return f"id: {event_id}\ndata: {json.dumps(data)}\n\n".encode()
