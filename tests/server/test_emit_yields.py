"""An executor that emits in a tight loop still lets the event loop run at least once a
millisecond (``TaskHandle._published``): its streams send as it goes, and other requests are
served. The millisecond is counted per task manager (one loop), not per handle (issue #36)."""

from __future__ import annotations

import asyncio
import time

from simple_a2a.protocol import AgentCard, Message, SendMessageConfiguration, SendMessageRequest
from simple_a2a.server import CallContext, RequestContext, RequestHandler
from simple_a2a.storage import MemoryStorage

CARD = AgentCard(name="t", description="t", version="1", capabilities={"streaming": True})


async def test_a_tight_loop_of_emits_lets_the_loop_run_every_millisecond() -> None:
    emitted = 0

    async def chatty(ctx: RequestContext) -> None:
        nonlocal emitted
        await ctx.start()
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:  # never awaits anything but the emits
            await ctx.emit_artifact("x", append=emitted > 0)
            emitted += 1
        await ctx.complete()

    turns = 0
    stop = False

    async def ticker() -> None:
        nonlocal turns
        while not stop:
            turns += 1
            await asyncio.sleep(0)

    handler = RequestHandler(CARD, chatty, MemoryStorage())
    ticking = asyncio.create_task(ticker())
    config = SendMessageConfiguration(return_immediately=False)
    request = SendMessageRequest(message=Message.user("go"), configuration=config)
    started = time.monotonic()
    await handler.send_message(request, CallContext())
    elapsed = time.monotonic() - started
    stop = True
    await ticking
    assert emitted > 20
    # about one turn a millisecond of emitting (at least a third of that on a loaded machine)
    assert turns >= elapsed * 1000 / 3, (turns, elapsed, emitted)
