"""The interop peers installed by ``scripts/peers`` and run as real OS processes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# scripts/test names the environment (.venv-sdk03, or .venv-sdk03-latest with A2A_LATEST=1).
SDK03_PYTHON = Path(os.environ.get("A2A_SDK03_VENV") or ROOT / ".venv-sdk03") / "bin" / "python"


def sdk03_python() -> str:
    """The interpreter of the official Python SDK 0.3.26's venv, or skip saying why."""
    if not SDK03_PYTHON.exists():
        pytest.skip("the Python SDK 0.3.26 venv is missing: run bash scripts/peers")
    return str(SDK03_PYTHON)


@contextlib.contextmanager
def peer_agent(argv: list[str], name: str, port: int, cwd: Path | None = None) -> Iterator[str]:
    """Run a peer's agent process listening on ``port``; yield its base URL once its card
    answers, and stop it afterwards."""
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the {name} agent exited: {process.stderr.read()!r}")  # type: ignore[union-attr]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/.well-known/agent-card.json").status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {name} agent did not start")
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def sdk03_agent() -> Iterator[str]:
    """Run tests/interop/sdk03_agent.py with the 0.3.26 SDK; yield its base URL."""
    port, grpc_port = free_port(), free_port()
    argv = [sdk03_python(), str(HERE / "sdk03_agent.py"), str(port), str(grpc_port)]
    with peer_agent(argv, "SDK 0.3.26", port) as base:
        yield base


def run_sdk03_client(
    base: str, transport: str, hook: str, scenario: str | None = None
) -> dict[str, Any]:
    """Run tests/interop/sdk03_client.py with the 0.3.26 SDK against ``base`` (``scenario``:
    its ``SCENARIO``, e.g. ``rate_limit``)."""
    done = subprocess.run(
        [sdk03_python(), str(HERE / "sdk03_client.py"), base, transport, hook],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "SCENARIO": scenario} if scenario else None,
    )
    if done.returncode != 0:
        raise AssertionError(f"the SDK 0.3.26 client failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
