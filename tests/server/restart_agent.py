"""A server process for the restart tests: ``python restart_agent.py STORAGE_URL PORT``.

Messages saying "slow" keep their task working until the process dies; others complete.
"""

from __future__ import annotations

import asyncio
import sys

from simple_a2a.protocol import AgentCard
from simple_a2a.server import RequestContext, server


async def agent(ctx: RequestContext) -> str:
    if ctx.text == "slow":
        await ctx.start("working on it")
        await asyncio.sleep(3600)
    return f"done: {ctx.text}"


if __name__ == "__main__":
    card = AgentCard(name="restart", description="restart test agent", version="1")
    # Short leases: a killed process's task is recovered within ~1.5 s of its last heartbeat.
    agent_server = server(card, agent, storage=sys.argv[1], lease_ttl=1.0, lease_scan_interval=0.3)
    agent_server.run(port=int(sys.argv[2]), log_level="warning")
