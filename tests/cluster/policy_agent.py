"""One replica of the recovery policy tests: ``python policy_agent.py STORAGE_URL PORT``.

Environment: ``POLICY`` is ``fail`` (the default policy), ``resumable`` (``resumable = True``)
or ``rerun:ATTEMPTS:BACKOFF`` (``recovery = Rerun(ATTEMPTS, BACKOFF)``); ``POLICY_MARKS`` is a
directory where each execution leaves ``attempt-TASK-N`` (N = ``ctx.attempt``) holding the
replica's port and whether ``ctx.resumed`` was set: the proof of which attempt ran where.
Leases are short (2.5 s, scan every 0.5 s), as in ``cluster_agent.py``.

What a message asks for: ``finish-at N``: works until cancelled (or killed) unless
``ctx.attempt >= N``, then completes with ``finished attempt N on PORT``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from simple_a2a import Fail, Rerun
from simple_a2a.protocol import AgentCard
from simple_a2a.protocol.card import AgentCapabilities
from simple_a2a.server import AgentExecutor, RecoveryPolicy, RequestContext, server

PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def _policy(spec: str) -> RecoveryPolicy:
    if spec.startswith("rerun:"):
        _, attempts, backoff = spec.split(":")
        return Rerun(attempts=int(attempts), backoff=float(backoff))
    return Fail()


class PolicyAgent(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        marks = os.environ["POLICY_MARKS"]
        mark = Path(marks, f"attempt-{ctx.task_id}-{ctx.attempt}")
        Path(f"{mark}.tmp").write_text(f"{PORT} {ctx.resumed}")
        os.replace(f"{mark}.tmp", mark)  # a reader sees the whole content
        words = ctx.text.split()
        if words[:1] == ["finish-at"] and ctx.attempt >= int(words[1]):
            await ctx.complete(message=f"finished attempt {ctx.attempt} on {PORT}")
            return
        await ctx.start(f"attempt {ctx.attempt} working on {PORT}")
        await ctx.cancelled.wait()


if __name__ == "__main__":
    spec = os.environ.get("POLICY", "fail")
    if spec == "resumable":
        PolicyAgent.resumable = True
    elif spec != "fail":  # "fail" keeps the class default: nothing set
        PolicyAgent.recovery = _policy(spec)
    card = AgentCard(
        name="policy",
        description="recovery policy test agent",
        version="1",
        capabilities=AgentCapabilities(streaming=True),
    )
    agent = server(
        card,
        PolicyAgent(),
        storage=sys.argv[1],
        lease_ttl=2.5,
        lease_scan_interval=0.5,
        shutdown_grace=1.0,
    )
    agent.run(port=PORT, log_level="warning")
