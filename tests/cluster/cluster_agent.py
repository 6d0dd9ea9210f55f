"""One replica of the cluster tests: ``python cluster_agent.py STORAGE_URL PORT``.

Environment: ``CLUSTER_RESUMABLE=1`` makes the executor ``resumable`` (a task interrupted by a
dead replica is finished by another); ``CLUSTER_MARKS`` is a directory where the cancel hook
leaves a file per cancelled task (proof that it ran, and on which replica). Leases are short
(2.5 s, scan every 0.5 s; ``CLUSTER_LEASE_TTL`` and ``CLUSTER_GRACE``, the shutdown grace,
default 1 s, change them) so a killed replica's tasks are recovered within about 3 s, yet a
live replica keeps its leases through the event-loop stalls of a loaded CI machine (with a 1 s
lease, a live replica under load average ~10 lost one and its task was failed).

What a message asks for:

- ``steps N DELAY``: N artifacts ``step-0`` .. ``step-N-1``, DELAY seconds apart, then done;
  a resumed run continues after the last step recorded (no step twice, none missing);
- ``ask``: asks for input; the follow-up ``answer X`` completes it on whichever replica got it;
- ``hang``: works until cancelled;
- anything else: completes at once.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from simple_a2a.protocol import AgentCard
from simple_a2a.protocol.card import AgentCapabilities
from simple_a2a.protocol.models import Artifact, Part
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server.push import PushSettings

PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0


class ClusterAgent(AgentExecutor):
    resumable = os.environ.get("CLUSTER_RESUMABLE") == "1"

    async def execute(self, ctx: RequestContext) -> None:
        words = ctx.text.split()
        if words and words[0] == "steps":
            count, delay = int(words[1]), float(words[2])
            done = {a.artifact_id for a in ctx.task.artifacts}
            if ctx.state.value != "TASK_STATE_WORKING":
                await ctx.start(f"working on {PORT}")
            for i in range(count):
                if f"step-{i}" in done:
                    continue
                await asyncio.sleep(delay)
                await ctx.emit_artifact(
                    Artifact(
                        artifact_id=f"step-{i}",
                        parts=[Part(text=str(i))],
                        metadata={"replica": PORT},  # who wrote it (the fencing test)
                    )
                )
            await ctx.complete(
                message=f"finished on {PORT}" + (" (resumed)" if ctx.resumed else "")
            )
        elif words == ["ask"]:
            await ctx.require_input("which one?")
        elif words and words[0] == "answer":
            await ctx.complete(message=f"answered {' '.join(words[1:])} on {PORT}")
        elif words == ["hang"]:
            await ctx.start(f"hanging on {PORT}")
            await ctx.cancelled.wait()
        else:
            await ctx.complete(message=f"done on {PORT}")

    async def cancel(self, ctx: RequestContext) -> None:
        marks = os.environ.get("CLUSTER_MARKS")
        if marks:
            # Written aside and renamed: a test that sees the file sees its whole content (a
            # CI run once read it between write_text's create and its write).
            mark = Path(marks, f"cancel-{ctx.task_id}")
            Path(f"{mark}.tmp").write_text(f"{PORT} {time.time()}")
            os.replace(f"{mark}.tmp", mark)


if __name__ == "__main__":
    card = AgentCard(
        name="cluster",
        description="cluster test agent",
        version="1",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
    )
    agent = server(
        card,
        ClusterAgent(),
        storage=sys.argv[1],
        push=PushSettings(allow_hosts=["127.0.0.1"], signing=None),
        lease_ttl=float(os.environ.get("CLUSTER_LEASE_TTL", "2.5")),
        lease_scan_interval=0.5,
        shutdown_grace=float(os.environ.get("CLUSTER_GRACE", "1.0")),
    )
    if "CLUSTER_WATCH_INTERVAL" in os.environ and agent.leases is not None:
        # the poll behind the cancel announcements (docs/cluster.md): slowed down, a test
        # proves the announcement alone reaches the executor
        agent.leases.watch_interval = float(os.environ["CLUSTER_WATCH_INTERVAL"])
    agent.run(port=PORT, log_level="warning")
