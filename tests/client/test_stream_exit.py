"""Leaving ``async for event in client.stream(...)`` early is quiet and closes the connection.

docs/client.md calls ``break`` the supported way to stop a stream. Each mode (``break``, an
exception in the loop body, cancelling the consuming task) runs in its own process
(stream_exit_client.py) so that the end of the program, when asyncio closes the async
generators still alive, is part of the test; its stderr must stay empty (issue #18).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import simple_a2a
from simple_a2a.server import RequestContext

CLIENT = Path(__file__).with_name("stream_exit_client.py")


@simple_a2a.agent
async def ticker(ctx: RequestContext) -> None:
    """Streams a chunk every 20 ms for 2 s: always still running when the client leaves."""
    await ctx.start()
    for i in range(100):
        if ctx.cancelled:
            return
        await ctx.emit_artifact({"artifactId": "ticks", "parts": [{"text": f"{i} "}]}, append=i > 0)
        await asyncio.sleep(0.02)
    await ctx.complete()


@pytest.mark.parametrize("mode", ["break", "raise", "cancel"])
def test_leaving_a_stream_early_is_silent_and_closes_it(serve: Any, mode: str) -> None:
    card = simple_a2a.AgentCard(name="Ticker", description="ticks", version="1")
    url = serve(simple_a2a.server(card, ticker).app)
    done = subprocess.run(
        [sys.executable, str(CLIENT), url, mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines() == ["open after a pause: 0", "open at exit: 0"]
