"""Demo 10: an agent behind a bearer token; its card stays public."""

import os

from simple_a2a.auth import BearerAuth
from simple_a2a.server import RequestContext, agent, server

from .._common import card, serve, skill

TOKEN = os.environ.get("A2A_DEMO_TOKEN", "demo-secret-token")


@agent
async def concierge(ctx: RequestContext) -> str:
    who = ctx.caller.identity if ctx.caller else "stranger"
    return f"Welcome back, {who}. You said: {ctx.text}"


CARD = card("Concierge", "Members only.", skill("greet", "Greet a member"))

if __name__ == "__main__":
    # The card declares the Bearer scheme; every A2A operation requires a known token.
    serve(server(CARD, concierge, auth=BearerAuth(tokens={TOKEN: "ada"})))
