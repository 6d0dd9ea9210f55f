"""Demo 01: a greeter agent that answers "Howdy: world" with a random greeting."""

import random

from simple_a2a.server import RequestContext, agent, server

from .._common import card, serve, skill

GREETINGS = ("Howdy", "Hello", "Hi", "Greetings", "Ahoy", "Good day")


@agent
async def greeter(ctx: RequestContext) -> str:
    return f"{random.choice(GREETINGS)}: {ctx.text}"


CARD = card("Greeter", "Greets you with a random greeting.", skill("greet", "Say hello", "world"))

if __name__ == "__main__":
    serve(server(CARD, greeter))
