"""The interop peers installed by ``scripts/peers`` and run as real OS processes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
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


#: How long a healthy peer takes to answer its card between tests; well under the test timeout.
HEALTH_TIMEOUT = 3.0
#: How long a peer may take to start (Node and the SDK import in a few seconds here).
START_TIMEOUT = 30.0
LOGS = ROOT / "test-artifacts" / "peers"


class PeerProcess:
    """A peer's agent as an OS process that stays healthy from test to test.

    A peer that hangs or dies must fail only the test that used it (issue #33: one hung
    subscribe stream made the SDK 0.3.26 agent stop answering, and every later test of the
    module failed). So before each test :meth:`ensure` checks that the card answers within
    :data:`HEALTH_TIMEOUT` and restarts the process when it does not; the peer's output goes to
    a log file (``test-artifacts/peers/``) whose tail :meth:`log_tail` adds to a failing test's
    report. ``command(port)`` gives the argv for a fresh port.
    """

    def __init__(
        self, command: Callable[[int], list[str]], name: str, cwd: Path | None = None
    ) -> None:
        self.command, self.name, self.cwd = command, name, cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.base = ""
        self.starts = 0
        self.log_path = LOGS / "none"

    def start(self) -> str:
        self.stop()
        port = free_port()
        self.starts += 1
        LOGS.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() else "-" for c in self.name)
        self.log_path = LOGS / f"{safe}-{os.getpid()}-{self.starts}.log"
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.command(port), cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while not self.healthy(timeout=1.0):
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.name} agent exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {self.name} agent did not start:\n{self.log_tail()}")
            time.sleep(0.05)
        return self.base

    def healthy(self, timeout: float = HEALTH_TIMEOUT) -> bool:
        if self.process is None or self.process.poll() is not None:
            return False
        try:
            card = httpx.get(self.base + "/.well-known/agent-card.json", timeout=timeout)
        except httpx.HTTPError:
            return False
        return card.status_code == 200

    def ensure(self) -> str:
        """The base URL of a healthy peer: this one, or a new one if it hung or died."""
        if not self.healthy():
            if self.process is not None:
                print(f"the {self.name} agent was unhealthy; restarting it:\n{self.log_tail()}")
            self.start()
        return self.base

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None


@contextlib.contextmanager
def healthy_peer(peer: PeerProcess) -> Iterator[PeerProcess]:
    """Start ``peer``, yield it, stop it (a module fixture's body)."""
    peer.start()
    try:
        yield peer
    finally:
        peer.stop()


def peer_for_test(request: pytest.FixtureRequest, peer: PeerProcess) -> Iterator[str]:
    """A function fixture's body: a healthy peer's URL for this test; its log tail goes into
    the report of a test that fails (shown only then)."""
    base = peer.ensure()
    yield base
    request.node.add_report_section("call", f"{peer.name} log", peer.log_tail())


def sdk03_peer() -> PeerProcess:
    """tests/interop/sdk03_agent.py with the 0.3.26 SDK, on a fresh port per start."""
    python = sdk03_python()
    return PeerProcess(
        lambda port: [python, str(HERE / "sdk03_agent.py"), str(port), str(free_port())],
        "SDK 0.3.26",
    )


@contextlib.contextmanager
def sdk03_agent() -> Iterator[str]:
    """Run tests/interop/sdk03_agent.py with the 0.3.26 SDK; yield its base URL."""
    with healthy_peer(sdk03_peer()) as peer:
        yield peer.base


def run_sdk03_client(
    base: str, transport: str, hook: str, scenario: str | None = None
) -> dict[str, Any]:
    """Run tests/interop/sdk03_client.py with the 0.3.26 SDK against ``base`` (``scenario``:
    its ``SCENARIO``, e.g. ``rate_limit``)."""
    done = subprocess.run(
        [sdk03_python(), str(HERE / "sdk03_client.py"), base, transport, hook],
        capture_output=True,
        text=True,
        timeout=60,  # half the test's timeout: a hung client fails its test with its output
        check=False,
        env={**os.environ, "SCENARIO": scenario} if scenario else None,
    )
    if done.returncode != 0:
        raise AssertionError(f"the SDK 0.3.26 client failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
