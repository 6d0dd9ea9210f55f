"""The A2A agent the MCP bridge tests call: ours, served for real on loopback.

Its card has two skills (one id needs sanitizing) and streams. The executor dispatches on the
first word of the user's text:

- ``slow``: works until canceled (or 10 s);
- ``steps N``: N artifact chunks, a little apart, then completed;
- ``ask``: input-required ("What size?"); the follow-up in the same task completes it;
- ``turns``: counts the messages of this conversation (state kept per contextId);
- ``fail``: raises (the task fails);
- ``long``: a 500-character answer;
- ``file``: a text answer, a PNG by bytes and a PDF by URL;
- ``reply``: a direct Message, no task;
- ``skill``: the skill the request's metadata named;
- anything else: ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from simple_a2a.protocol import AgentCard, Artifact, Message, Part
from simple_a2a.server import RequestContext

CARD = AgentCard.from_dict(
    {
        "name": "Paint shop",
        "description": "Paints things.",
        "version": "2.1.0",
        "capabilities": {"streaming": True},
        "skills": [
            {
                "id": "paint",
                "name": "Paint",
                "description": "Paints a thing in a color.",
                "tags": ["art"],
                "examples": ["paint the fence green"],
            },
            {
                "id": "quote price/v2",
                "name": "Quote",
                "description": "Quotes a price.",
                "tags": ["sales"],
            },
        ],
    }
)

#: The same agent without streaming: calls are blocking SendMessage.
BLOCKING_CARD = CARD.model_copy(
    update={"capabilities": CARD.capabilities.model_copy(update={"streaming": False})}
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


async def paint_shop(ctx: RequestContext) -> Any:
    word, _, rest = ctx.text.partition(" ")
    if word == "slow":
        await ctx.start()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(ctx.cancelled.wait(), 10)
        return None
    if word == "steps":
        await ctx.start()
        n = int(rest or 3)
        for i in range(n):
            await asyncio.sleep(0.02)
            await ctx.emit_artifact(
                {"artifactId": "out", "parts": [{"text": f"{i} "}]},
                append=i > 0,
                last_chunk=i == n - 1,
            )
        await ctx.complete()
        return None
    if word == "ask":
        if ctx.task.history[:-1]:
            return f"a {rest} one, then"
        await ctx.require_input("What size?")
        return None
    if word == "turns":
        seen = int(await ctx.load_state("turns") or 0) + 1
        await ctx.save_state("turns", str(seen).encode())
        return f"turn {seen}"
    if word == "fail":
        raise RuntimeError("secret internal detail")
    if word == "long":
        return "x" * 500
    if word == "file":
        return Artifact.of(
            [
                Part.from_text("here you are"),
                Part.from_raw(PNG, media_type="image/png", filename="fence.png"),
                Part.from_raw(b"%PDF-1.4", media_type="application/pdf", filename="a.pdf"),
                Part.from_url("https://example.com/invoice.pdf", media_type="application/pdf"),
            ]
        )
    if word == "reply":
        await ctx.reply(Message.agent(f"reply: {rest}"))
        return None
    if word == "skill":
        return f"skill {(ctx.metadata or {}).get('skillId')}"
    return f"echo: {ctx.text}"
