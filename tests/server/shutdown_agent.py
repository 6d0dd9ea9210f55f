"""A server process for test_shutdown.py: ``python shutdown_agent.py PORT``.

Its one agent streams a chunk every 50 ms for a minute (stopping when cancelled); the server's
``shutdown_grace`` is 3 s.
"""

from __future__ import annotations

import asyncio
import sys

from simple_a2a.protocol import AgentCard
from simple_a2a.server import RequestContext, server


async def ticker(ctx: RequestContext) -> None:
    await ctx.start()
    for i in range(1200):
        if ctx.cancelled:
            return
        await ctx.emit_artifact({"artifactId": "ticks", "parts": [{"text": f"{i} "}]}, append=i > 0)
        await asyncio.sleep(0.05)
    await ctx.complete()


if __name__ == "__main__":
    card = AgentCard(name="ticker", description="ticks for a minute", version="1")
    server(card, ticker, shutdown_grace=3.0).run(port=int(sys.argv[1]), log_level="info")
