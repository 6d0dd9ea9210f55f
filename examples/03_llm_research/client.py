"""Demo 03: stream two researchers in parallel, then ask the evaluator to compare them; and
watch the demo's web page feed (what a browser at the server's root shows) fill as they write.

    python -m examples.run 03_llm_research        (then open the server URL to watch live)
"""

import asyncio
import sys
import textwrap
import time

import httpx
from httpx_sse import aconnect_sse

from simple_a2a import AsyncClient, Part, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

from .._common import Checks, argument, state, title, url

check = Checks()
TOPIC = argument("--topic") or "how honeybees find flowers"
PANELS = ("researcher-a", "researcher-b", "evaluator")


class Run:
    """One agent's answer as it streams in."""

    def __init__(self) -> None:
        self.text = ""
        self.state: TaskState | None = None
        self.first = self.last = 0.0


async def ask(panel: str, content: object, run: Run, live: bool = False) -> None:
    async with AsyncClient(url(f"/{panel}")) as agent:
        async for event in agent.stream(content):
            if isinstance(event, TaskArtifactUpdateEvent):
                chunk = event.artifact.text
                run.first, run.last = run.first or time.monotonic(), time.monotonic()
                run.text += chunk
                if live:
                    print(chunk, end="", flush=True)
            elif isinstance(event, TaskStatusUpdateEvent):
                run.state = event.status.state


async def watch_page(connected: asyncio.Event, feed: dict[str, list[str]]) -> None:
    """Read the web page's event feed, as the browser does, until the evaluator is done."""
    async with (
        httpx.AsyncClient(timeout=None) as http,
        aconnect_sse(http, "GET", url("/ui/events")) as source,
    ):
        async for sse in source.aiter_sse():
            item = sse.json()
            if sse.event == "hello":
                connected.set()
            elif sse.event == "chunk":
                feed[item["panel"]].append(item["text"])
            elif sse.event == "done" and item["panel"] == "evaluator":
                return


async def progress(runs: dict[str, Run]) -> None:
    while sys.stdout.isatty():
        counts = " · ".join(f"{name}: {len(run.text.split())} words" for name, run in runs.items())
        print(f"\r  {counts}", end="", flush=True)
        await asyncio.sleep(0.2)


async def main() -> None:
    title("The agents")
    for panel in PANELS:
        async with AsyncClient(url(f"/{panel}")) as agent:
            card = await agent.agent_card()
        print(f"  /{panel:13} {card.name}: {card.description}")
    print(f"  web page: {url('/')}")

    page = httpx.get(url("/"))
    check(page.status_code == 200 and all(p in page.text for p in PANELS), "the page has 3 panels")
    connected, feed = asyncio.Event(), {panel: [] for panel in PANELS}
    watcher = asyncio.create_task(watch_page(connected, feed))
    await asyncio.wait_for(connected.wait(), 10)

    title(f"Two researchers, in parallel, on: {TOPIC}")
    runs = {panel: Run() for panel in PANELS}
    ticker = asyncio.create_task(progress(runs))
    await asyncio.gather(*(ask(panel, TOPIC, runs[panel]) for panel in PANELS[:2]))
    ticker.cancel()
    a, b = runs["researcher-a"], runs["researcher-b"]
    for panel in PANELS[:2]:
        print(f"\n  [{panel}] ({state(runs[panel].state)})")
        print(textwrap.indent(textwrap.fill(runs[panel].text, 92), "    "))

    title("The evaluator compares them\n")
    reports = {panel: runs[panel].text for panel in PANELS[:2]}
    request = Part.data({"topic": TOPIC, "reports": reports})
    await ask("evaluator", request, runs["evaluator"], live=True)
    print()
    await asyncio.wait_for(watcher, 10)

    title("Checks")
    for panel, run in runs.items():
        check(run.state == TaskState.COMPLETED and run.text.strip(), f"{panel} completed")
    check(a.first < b.last and b.first < a.last, "the two researchers streamed at the same time")
    for panel, run in runs.items():
        check("".join(feed[panel]) == run.text, f"the web page's feed showed {panel} live")


asyncio.run(main())
check.exit()
