"""The twelve demos (examples/), each run end to end through the runner in fast mode.

Every demo is a server and a client in two processes, so the runs are started together in the
background (a few at a time) when the first test needs them; each test then waits for its own.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMOS = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "client.py").is_file())
PARALLEL = 4
TIMEOUT = 90
Runs = dict[str, "Future[subprocess.CompletedProcess[str]]"]

#: What each demo needs from the library beyond the core: (module, attribute, feature name).
REQUIRES: dict[str, list[tuple[str, str | None, str]]] = {
    "03_llm_research": [("simple_a2a", "multi_server", "multi_server")],
    "06_push_notifications": [
        ("simple_a2a.webhooks", "NotificationVerifier", "the push receiver helper"),
        ("jwt", None, "PyJWT (signed push notifications)"),
    ],
    "07_agent_chaining": [("simple_a2a", "multi_server", "multi_server")],
    "08_interrupted_states": [("simple_a2a", "multi_server", "multi_server")],
    "10_auth_headers": [("simple_a2a.auth", "BearerAuth", "built-in bearer authentication")],
    "11_sqlite_storage": [("simple_a2a.storage.sqlite", None, "SQLite storage")],
}


def missing_feature(demo: str) -> str | None:
    for module, attribute, feature in REQUIRES.get(demo, []):
        try:
            found = importlib.import_module(module)
        except ImportError:
            return feature
        if attribute is not None and not hasattr(found, attribute):
            return feature
    return None


def run_demo(demo: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(A2A_DEMO_FAST="1", A2A_DEMO_OFFLINE="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "examples.run", demo],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


@pytest.fixture(scope="session")
def demo_runs(request: pytest.FixtureRequest) -> Runs:
    """Start every selected, runnable demo in the background; a future per demo."""
    selected = [
        item.callspec.params["demo"]
        for item in request.session.items
        if item.module is not None
        and item.module.__name__.endswith("test_examples")
        and hasattr(item, "callspec")
    ]
    pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="demo")
    request.addfinalizer(lambda: pool.shutdown(wait=False, cancel_futures=True))
    return {demo: pool.submit(run_demo, demo) for demo in selected if missing_feature(demo) is None}


def test_every_demo_has_a_readme() -> None:
    assert len(DEMOS) == 12, DEMOS
    for demo in DEMOS:
        assert (ROOT / "examples" / demo / "server.py").is_file()
        assert (ROOT / "examples" / demo / "README.md").is_file()


def test_runner_lists_the_demos() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "examples.run"], cwd=ROOT, capture_output=True, text=True
    )
    assert listing.returncode == 0
    assert all(demo in listing.stdout for demo in DEMOS)


@pytest.mark.parametrize("demo", DEMOS)
def test_demo(demo: str, demo_runs: Runs) -> None:
    feature = missing_feature(demo)
    if feature is not None:
        pytest.skip(f"DEMO {demo} NOT RUN: {feature} has not landed in simple_a2a yet")
    result = demo_runs[demo].result(TIMEOUT + 10)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{demo} failed:\n{output}"
    assert "✓ all" in result.stdout and "✗" not in result.stdout, output
