"""Demo 07: three agents on one server; the pipeline agent delegates to the other two over A2A.

/reverse   reverses the order of the words
/shout     upper-cases the text
/pipeline  sends the text to /reverse, then the result to /shout, through the A2A client
"""

import simple_a2a
from simple_a2a import Task
from simple_a2a.server import RequestContext, agent

from .._common import card, serve, skill, url
from . import tracing


@agent
async def reverse_words(ctx: RequestContext) -> str:
    return " ".join(reversed(ctx.text.split()))


@agent
async def shout(ctx: RequestContext) -> str:
    return ctx.text.upper() + "!"


async def ask(path: str, text: str) -> Task:
    """Delegate to another agent: discover it by URL, send, get its finished task back."""
    async with simple_a2a.AsyncClient(url(path)) as other:
        task = await other.send(text)
    assert isinstance(task, Task)
    return task


@agent
async def pipeline(ctx: RequestContext) -> None:
    await ctx.start("asking the reverse-words agent")
    reversed_task = await ask("/reverse", ctx.text)
    await ctx.emit_status(f"reverse-words answered {reversed_task.text!r}; asking the shouter")
    shouted_task = await ask("/shout", reversed_task.text)
    await ctx.complete(
        simple_a2a.Artifact.of(
            shouted_task.text,
            name="result",
            metadata={"delegated": {"reverse": reversed_task.id, "shout": shouted_task.id}},
        )
    )


AGENTS = {
    "/reverse": {
        "agent_card": card("ReverseWords", "Reverses the order of words.", skill("reverse", "")),
        "executor": reverse_words,
    },
    "/shout": {
        "agent_card": card("Shout", "Upper-cases your text.", skill("shout", "Shout it")),
        "executor": shout,
    },
    "/pipeline": {
        "agent_card": card(
            "Pipeline",
            "Reverses the words, then shouts them (by asking two other agents).",
            skill("pipeline", "Reverse then shout", "hello brave new world"),
        ),
        "executor": pipeline,
    },
}

if __name__ == "__main__":
    if tracing.ENABLED:  # A2A_DEMO_TRACE=1: print one trace tree per request (the otel extra)
        tracing.enable(printer=True)
    serve(simple_a2a.multi_server(AGENTS))
