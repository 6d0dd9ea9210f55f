"""Demo 02: an agent that streams a long text word by word, as chunks of one artifact."""

import re
from pathlib import Path

from simple_a2a import Artifact, new_id
from simple_a2a.server import AgentExecutor, RequestContext, server

from .._common import FAST, asleep, card, serve, skill

TEXT = (Path(__file__).parent / "text.md").read_text()
WORDS_PER_MINUTE = 240  # a comfortable reading speed


def chunks() -> list[str]:
    """Each word with the whitespace after it, so the client can print the text as written."""
    words = re.findall(r"\S+\s*", TEXT)
    return words[:40] if FAST else words


class Storyteller(AgentExecutor):
    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        words = chunks()
        artifact_id = new_id()  # every chunk extends the same artifact
        for i, word in enumerate(words):
            if ctx.cancelled:
                return
            await ctx.emit_artifact(
                Artifact.of(word, artifact_id=artifact_id, name="story"),
                append=i > 0,  # the first chunk starts the artifact, the others extend it
                last_chunk=i == len(words) - 1,
            )
            await asleep(60 / WORDS_PER_MINUTE, fast=0.002)
        await ctx.complete()


CARD = card(
    "Storyteller",
    "Tells a story, streamed word by word.",
    skill("tell", "Stream a short story", "tell me a story"),
)

if __name__ == "__main__":
    serve(server(CARD, Storyteller()))
