"""Start-up cost: what importing simple-a2a's entry points adds to an empty interpreter, beside
pydantic (what our models stand on) and the official SDK, measured in the same run.

    python -m bench.imports [ROUNDS]          (default 15)

Each statement runs in a fresh interpreter (``python -c``), in interleaved rounds so that the
machine's phases hit every statement alike; one run of each first writes the bytecode caches
(``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment: with it, an editable
install recompiles every module at each start). Reported per statement: the wall time above the
empty interpreter's (its minimum over the rounds subtracted), as the minimum and the median over
the rounds. The minimum is the figure to compare across runs; the median says how noisy the run
was. Issue #19's goal: ``import simple_a2a`` <= 120 ms above an empty interpreter.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "empty interpreter": "pass",
    "pydantic (BaseModel)": "import pydantic; pydantic.BaseModel",
    "import simple_a2a": "import simple_a2a",
    "simple_a2a + Client": "import simple_a2a; simple_a2a.Client",
    "simple_a2a + A2AServer": "import simple_a2a; simple_a2a.A2AServer",
    "SDK: a2a.types": "import a2a.types",
    "SDK: a2a.client": "import a2a.client",
    "SDK: server (handler + routes)": (
        "import a2a.server.request_handlers, a2a.server.routes, a2a.server.tasks"
    ),
}


def _wall(code: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - started


def measure(rounds: int) -> dict[str, list[float]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for code in STATEMENTS.values():  # bytecode caches written, disk caches warm
        _wall(code, env)
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    for _ in range(rounds):
        for name, code in STATEMENTS.items():
            times[name].append(_wall(code, env))
    return times


def report(times: dict[str, list[float]]) -> str:
    empty = min(times["empty interpreter"])
    lines = [
        f"Python {sys.version.split()[0]}; empty interpreter {empty * 1000:.0f} ms; "
        f"{len(times['empty interpreter'])} rounds",
        "",
        "| statement | above an empty interpreter: min | median |",
        "|---|---:|---:|",
    ]
    for name, walls in times.items():
        if name == "empty interpreter":
            continue
        low = (min(walls) - empty) * 1000
        mid = (statistics.median(walls) - empty) * 1000
        lines.append(f"| `{STATEMENTS[name]}` | {low:.0f} ms | {mid:.0f} ms |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15)))
