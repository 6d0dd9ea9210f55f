"""An executor that emits in a tight loop still lets the event loop run at least once a
millisecond (``TaskHandle._published``): its streams send as it goes, and other requests are
served. The millisecond is counted per task manager (one loop), not per handle (issue #36).

Checked by counting, not by a wall-clock bound (which a loaded machine breaks): a ticker task
counts its turns, and the executor notes the loop's clock and that count after each emit. Two
emits with no turn between them mean no emit between them yielded; each of those looked at the
clock after the first of the two, so less than a millisecond can lie between them.
"""

from __future__ import annotations

import asyncio

from simple_a2a.protocol import AgentCard, Message, SendMessageConfiguration, SendMessageRequest
from simple_a2a.server import CallContext, RequestContext, RequestHandler
from simple_a2a.storage import MemoryStorage

CARD = AgentCard(name="t", description="t", version="1", capabilities={"streaming": True})


async def test_a_tight_loop_of_emits_lets_the_loop_run_every_millisecond() -> None:
    loop = asyncio.get_running_loop()
    turns = 0
    #: (the loop's clock, the ticker's turns) after each emit
    after_emit: list[tuple[float, int]] = []

    async def chatty(ctx: RequestContext) -> None:
        await ctx.start()
        started = loop.time()
        # never awaits anything but the emits; runs 50 ms of the loop's clock (however many
        # emits a loaded machine fits in them)
        while loop.time() - started < 0.05:
            await ctx.emit_artifact("x", append=bool(after_emit))
            after_emit.append((loop.time(), turns))
        await ctx.complete()

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
    await handler.send_message(request, CallContext())
    stop = True
    await ticking
    assert len(after_emit) > 20
    # For emits a < b with the same count, emit b-1 ended (and so emit b looked at the clock)
    # less than a millisecond after emit a ended.
    first = 0
    for b in range(1, len(after_emit)):
        if after_emit[b][1] != after_emit[first][1]:
            first = b
            continue
        waited = after_emit[b - 1][0] - after_emit[first][0]
        assert waited < 0.001, (first, b, waited, len(after_emit))
    assert turns > 1  # the ticker ran while the executor emitted
