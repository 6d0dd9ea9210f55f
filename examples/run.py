"""Run a demo end to end: ``python -m examples.run 01_basic_usage`` (or ``examples/run 01``).

Starts the demo's server on a free port, waits until it answers, runs its client, stops the
server, and exits with the client's status. No argument lists the demos; ``all`` runs them all.
Set ``A2A_DEMO_FAST=1`` for fast mode (what the test suite does).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ._common import ROOT, demo_env, free_port, server_process

HERE = Path(__file__).resolve().parent

#: Where the runner waits for a card: multi-agent demos serve theirs under an agent's path.
PROBE = {
    "03_llm_research": "/researcher-a",
    "07_agent_chaining": "/pipeline",
    "08_interrupted_states": "/order",
}
#: Demos whose client starts (and restarts) the server itself.
SELF_HOSTED = {"11_sqlite_storage"}


def demos() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if (p / "client.py").is_file())


def describe(demo: str) -> str:
    readme = HERE / demo / "README.md"
    lines = readme.read_text().splitlines() if readme.is_file() else []
    prose = [line for line in lines if line.strip() and not line.startswith("#")]
    return prose[0] if prose else ""


def resolve(name: str) -> str:
    """``01``, ``01_basic_usage`` and ``basic_usage`` all name the first demo."""
    matches = [d for d in demos() if name in (d, d[:2], d[3:])]
    if len(matches) != 1:
        raise SystemExit(f"unknown demo {name!r}; run without arguments to list them")
    return matches[0]


def run(demo: str) -> int:
    print(f"━━ {demo} ━━", flush=True)
    port = free_port()
    client = [sys.executable, "-m", f"examples.{demo}.client", "--port", str(port)]
    started = time.monotonic()
    try:
        if demo in SELF_HOSTED:
            status = subprocess.call(client, cwd=ROOT, env=demo_env(port))
        else:
            with server_process(demo, port, probe=PROBE.get(demo, "")):
                status = subprocess.call(client, cwd=ROOT, env=demo_env(port))
    except (TimeoutError, RuntimeError) as exc:
        print(f"✗ {demo}: {exc}", flush=True)
        return 1
    verdict = "passed" if status == 0 else f"FAILED (exit status {status})"
    print(f"━━ {demo} {verdict} in {time.monotonic() - started:.1f}s ━━\n", flush=True)
    return status


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m examples.run DEMO | all   (A2A_DEMO_FAST=1 for fast mode)\n")
        for demo in demos():
            print(f"  {demo:<24} {describe(demo)}")
        return 0
    chosen = demos() if argv == ["all"] else [resolve(name) for name in argv]
    failed = [demo for demo in chosen if run(demo) != 0]
    if len(chosen) > 1:
        print("all demos passed" if not failed else f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
