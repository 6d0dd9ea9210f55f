"""What the adapter test modules share about subprocesses: an example run as its docs say, and
which modules ``import simple_a2a`` loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(module: str) -> str:
    """``python -m examples.adapters.MODULE --check --offline`` with no API key; its stdout
    (the run must exit 0)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", f"examples.adapters.{module}", "--check", "--offline"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def loaded_by_import(*packages: str) -> list[str]:
    """The modules of ``packages`` (top-level names) that ``import simple_a2a,
    simple_a2a.adapters`` loads in a fresh interpreter (each extra must stay unloaded)."""
    code = (
        "import sys, simple_a2a, simple_a2a.adapters; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {packages!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return list(eval(done.stdout))  # a list literal printed by the child: its module names
