"""Demo 05: a ten-step agent that stops as soon as its task is canceled (cooperatively)."""

import asyncio
import contextlib

from simple_a2a.server import AgentExecutor, RequestContext, server

from .._common import card, pace, serve, skill

STEPS = 10


class TenSteps(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        for step in range(1, STEPS + 1):
            # Work for a second, but wake up at once if the client cancels the task.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ctx.cancelled.wait(), pace(1.0, fast=0.15))
            if ctx.cancelled:
                print(f"task {ctx.task_id[:8]}: canceled during step {step}", flush=True)
                return  # the server records the task as canceled
            await ctx.emit_status(f"{ctx.text}: step {step}/{STEPS}")
        await ctx.complete(f"{ctx.text}: all {STEPS} steps done")


CARD = card("Worker", "Ten slow steps; cancel it any time.", skill("work", "Ten slow steps"))

if __name__ == "__main__":
    serve(server(CARD, TenSteps()))
