"""Demo 03: two researchers and an evaluator in one process, plus a live web page.

/researcher-a   researches a topic (Anthropic when ANTHROPIC_API_KEY is set)
/researcher-b   researches it from another angle (OpenAI when OPENAI_API_KEY is set)
/evaluator      compares the two reports
/               a web page with three panels that fill live as the agents write
/ui/events      the page's feed: every chunk the agents produce, as server-sent events
"""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, StreamingResponse
from starlette.routing import Mount, Route

import simple_a2a
from simple_a2a.server import RequestContext, agent

from .._common import card, serve, skill
from .llm import pick


class Board:
    """What the agents write, fanned out to every open web page."""

    def __init__(self) -> None:
        self.watchers: set[asyncio.Queue[dict[str, Any]]] = set()

    def publish(self, panel: str, kind: str, text: str = "") -> None:
        for queue in self.watchers:
            queue.put_nowait({"panel": panel, "kind": kind, "text": text})

    async def follow(self, request: Request) -> AsyncIterator[str]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.watchers.add(queue)
        try:
            yield "event: hello\ndata: {}\n\n"
            while not await request.is_disconnected():
                try:
                    item = await asyncio.wait_for(queue.get(), 15)
                except asyncio.TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                yield f"event: {item['kind']}\ndata: {json.dumps(item)}\n\n"
        finally:
            self.watchers.discard(queue)


board = Board()


def researcher(panel: str, angle: str, prefer: str) -> tuple[Any, str]:
    model = pick(prefer)
    system = f"You are a careful researcher. Write about {angle}. Four short paragraphs."

    @agent
    async def research(ctx: RequestContext) -> AsyncIterator[str]:
        # An async generator agent: each chunk extends one artifact (append / last_chunk).
        board.publish(panel, "start", ctx.text)
        async for chunk in model.stream(system, ctx.text):
            board.publish(panel, "chunk", chunk)
            yield chunk
        board.publish(panel, "done")

    return research, model.name


@agent
async def evaluate(ctx: RequestContext) -> AsyncIterator[str]:
    """Expects a data part: {"topic": ..., "reports": {"researcher-a": ..., ...}}."""
    request = next(p.data for p in ctx.message.parts if p.is_data)
    reports = "\n\n".join(f"## {name}\n{text}" for name, text in request["reports"].items())
    board.publish("evaluator", "start", request["topic"])
    async for chunk in EVALUATOR.stream(EVALUATOR_SYSTEM, f"{request['topic']}\n\n{reports}"):
        board.publish("evaluator", "chunk", chunk)
        yield chunk
    board.publish("evaluator", "done")


EVALUATOR = pick("anthropic")
EVALUATOR_SYSTEM = "You evaluate research reports: say which is stronger and why, briefly."
research_a, model_a = researcher("researcher-a", "the history and the evidence", "anthropic")
research_b, model_b = researcher("researcher-b", "the open questions and the risks", "openai")

AGENTS = simple_a2a.multi_server(
    {
        "/researcher-a": {
            "agent_card": card(
                "Researcher A", f"History and evidence ({model_a}).", skill("research", "")
            ),
            "executor": research_a,
        },
        "/researcher-b": {
            "agent_card": card(
                "Researcher B", f"Open questions and risks ({model_b}).", skill("research", "")
            ),
            "executor": research_b,
        },
        "/evaluator": {
            "agent_card": card(
                "Evaluator", f"Compares research reports ({EVALUATOR.name}).", skill("evaluate", "")
            ),
            "executor": evaluate,
        },
    }
)


async def page(_request: Request) -> FileResponse:
    return FileResponse(Path(__file__).parent / "page.html")


async def events(request: Request) -> StreamingResponse:
    return StreamingResponse(board.follow(request), media_type="text/event-stream")


# The web page and its feed, with the three agents mounted beside them.
app = Starlette(
    routes=[Route("/", page), Route("/ui/events", events), Mount("", app=AGENTS.app)],
    lifespan=AGENTS.lifespan,
)

if __name__ == "__main__":
    serve(app)
