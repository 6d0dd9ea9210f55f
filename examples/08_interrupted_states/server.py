"""Demo 08: two agents whose tasks pause for the client.

/order  asks which size (input-required), then places the order
/vault  asks for a token (auth-required) until it gets the right one
"""

import simple_a2a
from simple_a2a import Role
from simple_a2a.server import RequestContext, agent

from .._common import card, serve, skill

SIZES = ("small", "medium", "large")
VAULT_TOKEN = "open-sesame"


@agent
async def order(ctx: RequestContext) -> str | None:
    if not any(m.role == Role.AGENT for m in ctx.history):  # the first turn: what to order
        await ctx.require_input(f"Which size would you like: {', '.join(SIZES)}?")
        return None
    size = ctx.text.strip().lower()
    if size not in SIZES:
        await ctx.require_input(f"Sorry, {size!r} is not a size: {', '.join(SIZES)}?")
        return None
    return f"Ordered: one {size} {ctx.history[0].text}"


@agent
async def vault(ctx: RequestContext) -> str | None:
    token = next((p.data.get("token") for p in ctx.message.parts if p.is_data), None)
    if token is None:
        await ctx.require_auth("The vault is locked: send your token as {'token': ...}")
    elif token != VAULT_TOKEN:
        await ctx.require_auth("Wrong token; try again")
    else:
        return "The secret is: 42"
    return None


AGENTS = {
    "/order": {
        "agent_card": card("Order", "Takes your order.", skill("order", "Order food", "pizza")),
        "executor": order,
    },
    "/vault": {
        "agent_card": card("Vault", "Keeps a secret.", skill("vault", "Reveal the secret")),
        "executor": vault,
    },
}

if __name__ == "__main__":
    serve(simple_a2a.multi_server(AGENTS))
