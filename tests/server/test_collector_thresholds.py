"""The collector settings a server's startup makes (server/app.py, ``freeze_startup_heap``):
CPython's default young threshold is raised once per process, a deployment's own is kept.
Each case runs in a fresh interpreter: the settings are the process's."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import asyncio, gc, sys
from simple_a2a import AgentCard, A2AServer
from simple_a2a.server.app import YOUNG_THRESHOLD
if sys.argv[1] != "default":
    gc.set_threshold(*map(int, sys.argv[1].split(",")))
card = AgentCard(name="gc", description="d", version="1", supported_interfaces=[])

async def main():
    server = A2AServer(card, lambda ctx: "ok")
    await server.startup()
    print(gc.get_threshold(), YOUNG_THRESHOLD, gc.get_freeze_count() > 0)
    await server.shutdown()

asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("default", "(20000, 10, 10) 20000 True"),
        ("5000,10,10", "(5000, 10, 10) 20000 True"),  # tuned by the deployment: kept
        ("0,10,10", "(0, 10, 10) 20000 True"),  # collection off: kept off
    ],
)
def test_startup_raises_only_the_interpreters_default(preset: str, expected: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, preset], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
