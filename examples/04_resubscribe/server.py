"""Demo 04: a five-step task; every step is a status update and a line of a "log" artifact."""

from simple_a2a import Artifact, new_id
from simple_a2a.server import AgentExecutor, RequestContext, server

from .._common import asleep, card, serve, skill

STEPS = 5


class FiveSteps(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        log_id = new_id()
        for step in range(1, STEPS + 1):
            await asleep(1.0, fast=0.4)
            await ctx.emit_status(f"step {step}/{STEPS}")
            line = Artifact.of(f"step {step} done\n", artifact_id=log_id, name="log")
            await ctx.emit_artifact(line, append=step > 1, last_chunk=step == STEPS)
        await ctx.complete(message="all steps done")


CARD = card("Stepper", "Works through five steps.", skill("steps", "Run five slow steps"))

if __name__ == "__main__":
    serve(server(CARD, FiveSteps()))
