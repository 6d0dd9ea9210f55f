"""Agents for the CLI tests (``simple-a2a serve tests.cli_agent:echo`` serves the first one).

``Scripted`` dispatches on the first word of the text:

- ``words W1 W2 ...``: streams the words as chunks of one artifact (append, last_chunk);
- ``fail`` / ``reject``: the task ends failed / rejected;
- ``ask``: input-required (a follow-up completes it);
- ``slow``: works until canceled (or 10 s);
- ``reply``: a direct Message, no task;
- anything else: completed with ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from simple_a2a.protocol import AgentCard, Message
from simple_a2a.server import A2AServer, AgentExecutor, RequestContext, agent, server
from simple_a2a.server.push import PushSettings


@agent
async def echo(ctx: RequestContext) -> str:
    """Echoes what you say.

    A second paragraph that the card leaves out.
    """
    return f"echo: {ctx.text}"


class Scripted(AgentExecutor):
    """The scripted test agent."""

    async def execute(self, ctx: RequestContext) -> Any:
        word, _, rest = ctx.text.partition(" ")
        if word == "words":
            await ctx.start()
            words = rest.split()
            for i, w in enumerate(words):
                await asyncio.sleep(0.01)
                await ctx.emit_artifact(
                    {"artifactId": "poem", "name": "poem", "parts": [{"text": w + " "}]},
                    append=i > 0,
                    last_chunk=i == len(words) - 1,
                )
            await ctx.complete()
        elif word == "fail":
            await ctx.fail("boom")
        elif word == "reject":
            await ctx.reject("not today")
        elif word == "ask":
            if ctx.task.history[:-1]:
                await ctx.complete(f"thanks for {rest}")
            else:
                await ctx.require_input("what size?")
        elif word == "slow":
            await ctx.start()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ctx.cancelled.wait(), 10)
        elif word == "reply":
            await ctx.reply(Message.agent(f"reply: {rest}"))
        else:
            return f"echo: {ctx.text}"
        return None


def scripted_server(push: PushSettings | None = None) -> A2AServer:
    """The scripted agent; its card declares push notifications when ``push`` is given."""
    card = AgentCard.from_dict(
        {
            "name": "CLI test agent",
            "description": "Scripted agent for the CLI tests",
            "version": "2.0",
            "capabilities": {"streaming": True, "pushNotifications": push is not None},
            "skills": [
                {"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["test"]},
            ],
            "securitySchemes": {
                "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}}
            },
        }
    )
    return server(card, Scripted(), push=push)


#: For ``simple-a2a serve tests.cli_agent:app`` (an A2AServer is served as it is).
app = scripted_server()
