"""Run a demo end to end: ``python -m examples.run 01_basic_usage`` (or ``examples/run 01``).

Starts the demo's server on a free port, waits until it answers, runs its client, stops the
server, and exits with the client's status. No argument lists the demos; ``all`` runs them all.
Options after the demo name go to the client (``03_llm_research --topic "..."``).
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
SELF_HOSTED = {"11_sqlite_storage", "12_cluster"}


def demos() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if (p / "client.py").is_file())


def describe(demo: str, width: int = 76) -> str:
    """The first paragraph of the demo's README, shortened to ``width``."""
    readme = HERE / demo / "README.md"
    text = readme.read_text() if readme.is_file() else ""
    paragraph = next((p for p in text.split("\n\n") if p.strip() and p[0] != "#"), "")
    line = " ".join(paragraph.replace("`", "").split())
    return line if len(line) <= width else line[: width - 1].rsplit(" ", 1)[0] + " …"


def resolve(name: str) -> str:
    """``01``, ``01_basic_usage`` and ``basic_usage`` all name the first demo."""
    matches = [d for d in demos() if name in (d, d[:2], d[3:])]
    if len(matches) != 1:
        raise SystemExit(f"unknown demo {name!r}; run without arguments to list them")
    return matches[0]


def run(demo: str, client_args: list[str] | None = None) -> int:
    print(f"━━ {demo} ━━", flush=True)
    port = free_port()
    client = [sys.executable, "-m", f"examples.{demo}.client", "--port", str(port)]
    client += client_args or []
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
    first_option = next((i for i, arg in enumerate(argv) if arg.startswith("--")), len(argv))
    names, options = argv[:first_option], argv[first_option:]
    chosen = demos() if names == ["all"] else [resolve(name) for name in names]
    failed = [demo for demo in chosen if run(demo, options) != 0]
    if len(chosen) > 1:
        print("all demos passed" if not failed else f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
