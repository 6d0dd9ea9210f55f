"""What every demo shares: the port, fast mode, card building, ✓/✗ checks, starting servers.

- The port comes from ``--port N`` or the ``A2A_DEMO_PORT`` environment variable (default 9292);
  the runner (``python -m examples.run``) picks a free one and passes it to both sides.
- Fast mode (``A2A_DEMO_FAST=1``) shrinks every pause and text so the test suite can run all
  eleven demos; without it the demos keep a human pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:  # imported where used: the runner stays light (it only starts processes)
    from simple_a2a import AgentCard, AgentSkill

FAST = os.environ.get("A2A_DEMO_FAST", "") not in ("", "0")
HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent  # the repository root (where ``examples`` lives)
CARD_PATH = "/.well-known/agent-card.json"


# -- port and URLs ---------------------------------------------------------------------------


def argument(flag: str, default: str | None = None) -> str | None:
    """The value after ``flag`` on the command line (``--port 9300``), else ``default``."""
    args = sys.argv[1:]
    if flag in args and args.index(flag) + 1 < len(args):
        return args[args.index(flag) + 1]
    return default


def port() -> int:
    return int(argument("--port") or os.environ.get("A2A_DEMO_PORT") or 9292)


def url(path: str = "") -> str:
    """The demo server's base URL, plus ``path`` (e.g. ``/research`` on a multi-agent server)."""
    return f"http://{HOST}:{port()}{path}"


# -- pacing ----------------------------------------------------------------------------------


def pace(seconds: float, fast: float | None = None) -> float:
    """``seconds`` at human pace; in fast mode ``fast`` (default: a fiftieth of it)."""
    if not FAST:
        return seconds
    return fast if fast is not None else seconds / 50


def sleep(seconds: float, fast: float | None = None) -> None:
    time.sleep(pace(seconds, fast))


async def asleep(seconds: float, fast: float | None = None) -> None:
    await asyncio.sleep(pace(seconds, fast))


# -- the server side -------------------------------------------------------------------------


def skill(skill_id: str, description: str, *examples: str) -> AgentSkill:
    from simple_a2a import AgentSkill

    return AgentSkill(
        id=skill_id,
        name=skill_id.replace("_", " ").title(),
        description=description,
        tags=["demo"],
        examples=list(examples),
    )


def card(name: str, description: str, *skills: AgentSkill, **fields: Any) -> AgentCard:
    """An Agent Card for a demo agent (the server fills in its URLs when it serves it)."""
    from simple_a2a import AgentCard

    return AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        skills=list(skills) or [skill(name.lower(), description)],
        **fields,
    )


def serve(app: Any) -> None:
    """Serve an ASGI app (``server(...).app``, a multi-agent app…) on the demo port."""
    import uvicorn

    app = getattr(app, "app", app)  # an A2AServer or anything with ``.app``
    print(f"serving on {url()}", flush=True)
    uvicorn.run(app, host=HOST, port=port(), log_level="warning", timeout_graceful_shutdown=3)


# -- the client side -------------------------------------------------------------------------


class Checks:
    """``check(ok, "what was checked")`` prints a ✓ or ✗ line; ``check.exit()`` ends the demo
    with status 1 if any check failed."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def __call__(self, ok: object, what: str) -> bool:
        print(f"  {'✓' if ok else '✗'} {what}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return bool(ok)

    def exit(self) -> None:
        total = self.passed + self.failed
        if self.failed:
            print(f"\n✗ {self.failed} of {total} checks failed")
        else:
            print(f"\n✓ all {total} checks passed")
        sys.exit(1 if self.failed else 0)


def state(value: Any) -> str:
    """``TaskState.INPUT_REQUIRED`` (or a task) → ``input-required``, for printing."""
    value = getattr(value, "state", value)
    return str(getattr(value, "value", value)).removeprefix("TASK_STATE_").lower().replace("_", "-")


def title(text: str) -> None:
    print(f"\n{text}", flush=True)


# -- running a demo's server as a subprocess (the runner; demo 11 restarts its own) -----------


def wait_until_up(base_url: str, timeout: float = 60.0, process: Any = None) -> None:
    """Poll the agent card until the server answers; a clear error after ``timeout``."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=1.0) as http:
        while True:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"the server exited with status {process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if http.get(base_url + CARD_PATH).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the server did not answer at {base_url}{CARD_PATH} in {timeout:.0f}s"
                )
            time.sleep(0.05)


def demo_env(port_number: int) -> dict[str, str]:
    return {**os.environ, "A2A_DEMO_PORT": str(port_number), "PYTHONIOENCODING": "utf-8"}


@contextlib.contextmanager
def server_process(
    demo: str, port_number: int, *args: str, probe: str = "", timeout: float = 60.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``examples/<demo>/server.py`` on ``port_number``, wait until it answers (at
    ``probe``: the path of one of its agents), stop it (gracefully: SIGINT) on exit."""
    command = [sys.executable, "-m", f"examples.{demo}.server", "--port", str(port_number), *args]
    process = subprocess.Popen(command, cwd=ROOT, env=demo_env(port_number))
    try:
        wait_until_up(f"http://{HOST}:{port_number}{probe}", timeout, process)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])
