"""Docs cannot rot: every ```python block of README.md and docs/**/*.md is run.

The convention, for whoever writes a page:

- A ```python block runs, unless the nearest non-blank line above its opening fence is an HTML
  comment ``<!-- not-run: reason -->`` (fragments, code that needs a database, a shell, ...);
  leave a blank line after the comment (inside an admonition it would swallow the block).
- The blocks of one page run in order in one namespace, like a REPL session, in a fresh
  temporary directory. Top-level ``await`` / ``async with`` / ``async for`` are allowed (such a
  block runs in its own event loop). What a block prints is not checked; its asserts are.
- ``A2AServer.run(port=P)`` and ``MultiServer.run(port=P)`` do not block here: they start the app
  in a background thread (:class:`BackgroundServer`) on a free port chosen for ``P`` before the
  page runs, and ``http://localhost:P`` (or ``127.0.0.1:P``) in the page's blocks is replaced by
  that real URL. The servers stop when the page is done.
- Blocks run as a script would (``__name__ == "__main__"``), so ``if __name__ == "__main__":``
  guards around ``run()`` serve.
- A page that talks to ``http://localhost:9292`` without starting a server itself (the client
  pages) gets a stand-in: the README's echo agent ("You said: ...") on a free port.

Fix the page, not this file, when a block fails.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import simple_a2a
from simple_a2a.server import A2AServer, MultiServer
from simple_a2a.server.background import BackgroundServer, free_port

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not-run:.+-->\s*$")
LOCAL_URL = re.compile(r"http://(?:localhost|127\.0\.0\.1):(\d+)")
RUN_PORT = re.compile(r"\.run\([^)]*\bport=(\d+)")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    code: str
    runs: bool


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of a page (indented ones too: in lists and admonitions)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, lang, start = opening["indent"], opening["lang"], i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :])
            i += 1
        i += 1
        if lang in ("python", "py"):
            above = next((s for s in reversed(lines[:start]) if s.strip()), "")
            code = "\n".join(body) + "\n"
            found.append(Block(page, start + 1, code, not NOT_RUN.match(above)))
    return found


def runnable_pages() -> Iterator[Path]:
    for page in PAGES:
        if any(block.runs for block in blocks(page)):
            yield page


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


class Servers:
    """The page's servers: the port written in the docs -> a real free port."""

    def __init__(self, code: str) -> None:
        ports = {int(p) for p in RUN_PORT.findall(code)} | {int(p) for p in LOCAL_URL.findall(code)}
        self.ports = {port: free_port() for port in ports}
        self.running: list[BackgroundServer] = []

    def start(self, app: Any, port: int) -> None:
        if any(srv.port == self.ports.get(port) for srv in self.running):
            raise RuntimeError(f"two servers on port {port} on one page: give each its own port")
        self.running.append(BackgroundServer(app, port=self.ports.get(port, 0)).start())

    def rewrite(self, code: str) -> str:
        def real(m: re.Match[str]) -> str:
            port = self.ports.get(int(m[1]))
            return f"http://127.0.0.1:{port}" if port else m[0]

        return LOCAL_URL.sub(real, code)

    def stop(self) -> None:
        for srv in reversed(self.running):
            srv.stop()


def _stand_in_agent() -> A2AServer:
    @simple_a2a.agent
    async def echo(ctx: simple_a2a.RequestContext) -> str:
        return f"You said: {ctx.text}"

    card = simple_a2a.AgentCard(name="Echo", description="Repeats what you say", version="1.0")
    return simple_a2a.server(card, echo, shutdown_grace=1.0)


def run_block(block: Block, namespace: dict[str, Any], servers: Servers) -> None:
    code = servers.rewrite(block.code)
    # Line numbers in tracebacks point into the page.
    source = "\n" * (block.line) + code
    compiled = compile(
        source, str(block.page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    if compiled.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(compiled, namespace))
    else:
        exec(compiled, namespace)


@pytest.mark.parametrize("page", list(runnable_pages()), ids=_name)
def test_page_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(self: Any, host: str = "127.0.0.1", port: int = 9292, **_: Any) -> None:
        servers.start(self.app, port)

    monkeypatch.setattr(A2AServer, "run", run)
    monkeypatch.setattr(MultiServer, "run", run)
    monkeypatch.chdir(tmp_path)
    page_blocks = [b for b in blocks(page) if b.runs]
    text = "".join(b.code for b in page_blocks)
    servers = Servers(text)
    if ".run(" not in text and LOCAL_URL.search(text):
        servers.start(_stand_in_agent().app, 9292)
    namespace: dict[str, Any] = {"__name__": "__main__"}  # as `python page.py` would run it
    try:
        for block in page_blocks:
            try:
                run_block(block, namespace, servers)
            except BaseException as exc:
                where = f"{_name(page)}:{block.line}"
                raise AssertionError(f"the block at {where} failed: {exc!r}") from exc
    finally:
        servers.stop()


def test_not_run_blocks_still_parse() -> None:
    """Even blocks that are not run must be Python (top-level await allowed)."""
    for page in PAGES:
        for block in blocks(page):
            if not block.runs and "--8<--" not in block.code:
                try:
                    compile(block.code, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                except SyntaxError as exc:
                    pytest.fail(f"{_name(page)}:{block.line}: {exc}")


def test_state_diagram_matches_the_state_machine() -> None:
    """docs/img/task-states.svg (docs/concepts.md) draws exactly the edges of ``TRANSITIONS``:
    its model, expanded, is the table; the file is what the model draws; the page shows it."""
    import importlib.util

    from simple_a2a.protocol.states import TRANSITIONS

    spec = importlib.util.spec_from_file_location("gen", ROOT / "docs" / "gen_state_diagram.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen"] = gen  # (dataclasses look their module up)
    spec.loader.exec_module(gen)

    def name(state: Any) -> str:
        return "new" if state.name == "UNSPECIFIED" else str(state.name).lower().replace("_", "-")

    expected = {(name(src), name(dst)) for src, targets in TRANSITIONS.items() for dst in targets}
    drawn = gen.expanded_edges()
    assert drawn == expected, (
        f"missing from the diagram: {sorted(expected - drawn)}; "
        f"not in TRANSITIONS: {sorted(drawn - expected)}"
    )
    svg = (ROOT / "docs" / "img" / "task-states.svg").read_text(encoding="utf-8")
    assert svg == gen.render(), "run: .venv/bin/python docs/gen_state_diagram.py"
    assert "(img/task-states.svg)" in (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")


def test_every_demo_has_a_page() -> None:
    demos = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "client.py").is_file())
    pages = sorted(p.stem for p in (ROOT / "docs" / "demos").glob("[0-9][0-9]_*.md"))
    assert pages == demos, "run: .venv/bin/python docs/gen_demo_pages.py"
