"""Demo 06: a three-step agent that pushes every task update to registered webhooks.

Declaring ``capabilities.pushNotifications`` turns push delivery on; each notification is signed
(a JWT in ``A2A-Notification-Signature``) with a key published at ``/.well-known/jwks.json``.
"""

from simple_a2a import AgentCapabilities
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server.push import PushSettings

from .._common import asleep, card, serve, skill

STEPS = 3


class SlowJob(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start(f"starting {ctx.text!r}")
        for step in range(1, STEPS + 1):
            await asleep(1.0, fast=0.1)
            await ctx.emit_status(f"step {step}/{STEPS}")
        await ctx.complete(f"{ctx.text}: done", message="finished")


CARD = card(
    "Batch",
    "A slow job that reports progress to your webhook.",
    skill("batch", "Run a slow job"),
    capabilities=AgentCapabilities(push_notifications=True),
)
# Webhooks on loopback are refused by default (SSRF guard); the demo's receiver is local.
PUSH = PushSettings(allow_hosts=["127.0.0.1", "localhost"])

if __name__ == "__main__":
    serve(server(CARD, SlowJob(), push=PUSH))
