"""Demo 12: one replica of a cluster (``--storage URL``, shared by every replica).

A scribe writes a numbered line per step as an artifact of its own. It is ``resumable``: when
the replica running a task dies, another replica takes the task's lease over and hands the task
back to its scribe, which carries on after the last line recorded — nothing written twice,
nothing missing. Leases are short here (2 s) so the takeover shows; the default is 10 s.
"""

import os

from simple_a2a import Artifact, Part
from simple_a2a.server import AgentExecutor, RequestContext, server

from .._common import argument, asleep, card, port, serve, skill

LINES = 12


class Scribe(AgentExecutor):
    resumable = True  # a dead replica's task is finished by another

    async def execute(self, ctx: RequestContext) -> None:
        done = {a.artifact_id for a in ctx.task.artifacts}
        note = f"replica :{port()} (pid {os.getpid()})"
        await ctx.emit_status(f"{'resumed' if ctx.resumed else 'writing'} on {note}")
        for n in range(1, LINES + 1):
            if f"line-{n}" in done:
                continue
            await asleep(0.5, 0.15)
            text = f"line {n:2} written by :{port()}"
            await ctx.emit_artifact(Artifact(artifact_id=f"line-{n}", parts=[Part.text(text)]))
        await ctx.complete(message=f"all {LINES} lines; finished on {note}")


CARD = card("Scribe", "Writes twelve lines, one by one.", skill("write", "Write lines", "write"))

if __name__ == "__main__":
    storage = argument("--storage") or "sqlite:///cluster.db"
    serve(server(CARD, Scribe(), storage=storage, lease_ttl=2.0, lease_scan_interval=0.5))
