"""A test agent for the binding suites and a module-scoped loopback server for it.

The executor dispatches on the first word of the user's text:

- ``slow``: starts working and waits until canceled (or 10 s);
- ``steps N``: N artifact chunks, a little apart, then completed;
- ``ask``: input-required (a follow-up message completes it);
- ``whoami``: completes with an artifact naming the tenant and the requested extensions;
- ``reply``: a direct Message, no task;
- anything else: completed with the artifact ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from simple_a2a.protocol import AgentCard, Message
from simple_a2a.server import AgentExecutor, RequestContext
from tests.support import card

EXT = "https://example.com/ext/geo/v1"


class TestAgent(AgentExecutor):
    __test__ = False

    async def execute(self, ctx: RequestContext) -> Any:
        word, _, rest = ctx.text.partition(" ")
        if word == "slow":
            await ctx.start()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ctx.cancelled.wait(), 10)
            return None
        if word == "steps":
            await ctx.start()
            n = int(rest or 3)
            for i in range(n):
                await asyncio.sleep(0.02)
                await ctx.emit_artifact(
                    {"artifactId": "out", "parts": [{"text": f"{i} "}]},
                    append=i > 0,
                    last_chunk=i == n - 1,
                )
            await ctx.complete()
            return None
        if word == "ask":
            if ctx.task.history[:-1]:
                await ctx.complete(f"thanks for {rest}")
            else:
                await ctx.require_input("what size?")
            return None
        if word == "whoami":
            info = {"tenant": ctx.tenant, "extensions": ctx.requested_extensions}
            return json.dumps(info)
        if word == "reply":
            await ctx.reply(Message.agent(f"reply: {rest}"))
            return None
        return f"echo: {ctx.text}"


async def cancel_while_subscribed(
    client: Any, task_id: str, *, settle: float = 0.2, timeout: float = 10
) -> tuple[Any, list[Any]]:
    """Subscribe to the running task ``task_id`` (the agent's ``slow``), cancel it once the
    subscription had ``settle`` seconds to open, and return the CancelTask answer and every
    event the subscription delivered until it ended."""
    seen: list[Any] = []

    async def follow() -> None:
        async for event in client.subscribe(task_id):
            seen.append(event)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(settle)
    canceled = await client.cancel(task_id)
    await asyncio.wait_for(follower, timeout)
    return canceled, seen


def make_card(**caps: Any) -> AgentCard:
    """The binding test agent's card: it declares the extension :data:`EXT`."""
    return card("Binding test agent", extensions=[EXT], **caps)


def user(text: str, **fields: Any) -> dict[str, Any]:
    return Message.user(text, **fields).to_dict()


@contextlib.contextmanager
def serving(app: Any, *, grpc_of: Any = None) -> Iterator[str]:
    """uvicorn on a free loopback port in a thread (module-scoped servers keep suites fast).

    ``grpc_of``: an ``A2AServer`` whose gRPC binding (1.0 and 0.3) is served too, on a free port
    in the same event loop, started first so that the card lists it."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )

    async def serve() -> None:
        rpc = await grpc_of.grpc_server(0, "127.0.0.1") if grpc_of is not None else None
        try:
            await server.serve()
        finally:
            if rpc is not None:
                await rpc.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
