"""Demo 03's web page in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright for Python.

The demo server runs as a subprocess (fast, offline stand-in model); the page is opened, then
the demo's own client runs against the server while the page watches, as a person would do it.
The test asserts that the three panels fill (both researchers, then the evaluation) and that
the page's script raised no error, and saves a screenshot to ``test-artifacts/demo03.png``.

It skips, naming what is missing, only when the browser cannot run here: no
``/usr/bin/chromium`` (``scripts/browser`` installs it), no ``playwright`` package (the ``dev``
extra), or a Chromium that will not start. Playwright's own browser download is never used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
PAGE = ROOT / "examples" / "03_llm_research" / "page.html"
SCREENSHOT = ROOT / "test-artifacts" / "demo03.png"
PANELS = ("researcher-a", "researcher-b", "evaluator")
TOPIC = "how honeybees find flowers"
#: Chromium as root on a machine with a closed network (no sandbox, no background traffic).
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Debian Chromium under Playwright, or a skip that names what is missing."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"BROWSER TEST NOT RUN: {CHROMIUM} is missing (scripts/browser installs it: "
            "apt-get install chromium)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            "BROWSER TEST NOT RUN: the playwright package is missing (pip install -e '.[dev]')"
        )
    with sync_playwright() as pw:
        try:
            chromium = pw.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=FLAGS, timeout=20_000
            )
        except Exception as error:  # the browser is there but cannot start here
            pytest.skip(f"BROWSER TEST NOT RUN: {CHROMIUM} did not start under Playwright: {error}")
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def demo_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The demo-03 server on a free port, fast and offline; its base URL."""
    from examples._common import free_port, server_process

    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("A2A_DEMO_FAST", "1")
    monkeypatch.setenv("A2A_DEMO_OFFLINE", "1")
    port = free_port()
    with server_process("03_llm_research", port, probe="/researcher-a", timeout=20):
        yield f"http://127.0.0.1:{port}"


def run_client(base_url: str) -> subprocess.CompletedProcess[str]:
    port = base_url.rsplit(":", 1)[1]
    return subprocess.run(
        [sys.executable, "-m", "examples.03_llm_research.client", "--port", port],
        cwd=ROOT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_the_page_shows_both_researchers_and_the_evaluation_live(
    demo_server: str, browser: Any
) -> None:
    # (demo_server first: the browser, and the page's open event feed, close before the server
    # stops, so it need not wait for the feed to end.)
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    problems = watch_for_problems(page)
    page.goto(demo_server + "/")
    try:
        expect(page).to_have_title("simple-a2a · LLM research")
        for panel in PANELS:
            expect(page.locator(f"#{panel} .text")).to_be_empty()
        # The feed is open (its "hello" arrived): from now on the page sees every chunk.
        expect(page.locator("#status")).to_contain_text("run the demo's client", timeout=10_000)

        result = run_client(demo_server)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "✓ all" in result.stdout, result.stdout

        expect(page.locator("#topic")).to_have_text(TOPIC)
        for panel in PANELS:
            expect(page.locator(f"#{panel}")).to_have_class("done", timeout=10_000)
        expect(page.locator("#status")).to_contain_text("done")
    finally:
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)

    texts = {panel: page.locator(f"#{panel} .text").inner_text() for panel in PANELS}
    # Offline stand-in: each researcher opens on the topic; the evaluator gives its verdict.
    for panel in PANELS[:2]:
        assert texts[panel].startswith(f"Here is what is known about {TOPIC}."), texts
    assert texts["evaluator"].startswith("Both reports are useful."), texts
    # Each panel shows the whole answer the client got over A2A (the client prints them all).
    printed = " ".join(result.stdout.split())
    for panel, text in texts.items():
        assert " ".join(text.split()) in printed, (panel, text, result.stdout)
    assert problems == []


def test_a_new_run_clears_the_panels_whichever_researcher_starts_first(browser: Any) -> None:
    """The page's script alone, on a scripted feed: B's first words arrive before A starts."""
    from playwright.sync_api import expect

    def sse(kind: str, panel: str = "", text: str = "") -> str:
        data = json.dumps({"panel": panel, "kind": kind, "text": text})
        return f"event: {kind}\ndata: {data}\n\n"

    old = [
        sse("start", p, "old topic") + sse("chunk", p, "old text") + sse("done", p) for p in PANELS
    ]
    feed = "retry: 600000\n\n" + sse("hello") + "".join(old)
    feed += sse("start", "researcher-b", "new topic") + sse("chunk", "researcher-b", "B first. ")
    feed += sse("start", "researcher-a", "new topic") + sse("chunk", "researcher-a", "A. ")
    feed += sse("chunk", "researcher-b", "B second.") + sse("done", "researcher-b")

    page = browser.new_page()
    problems = watch_for_problems(page)
    page.route(
        "http://demo.test/", lambda route: route.fulfill(path=PAGE, content_type="text/html")
    )
    page.route(
        "http://demo.test/ui/events",
        lambda route: route.fulfill(body=feed, content_type="text/event-stream"),
    )
    page.goto("http://demo.test/")
    expect(page.locator("#researcher-b")).to_have_class("done")
    expect(page.locator("#topic")).to_have_text("new topic")
    expect(page.locator("#researcher-b .text")).to_have_text("B first. B second.")
    expect(page.locator("#researcher-a .text")).to_have_text("A. ")
    expect(page.locator("#researcher-a")).to_have_class("working")
    expect(page.locator("#evaluator .text")).to_be_empty()
    expect(page.locator("#evaluator")).not_to_have_class("done")
    page.close()
    assert [p for p in problems if "EventSource" not in p] == []


def watch_for_problems(page: Any) -> list[str]:
    """Errors the page's script raises or logs, as they happen."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def console(message: Any) -> None:
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    page.on("console", console)
    return problems
