"""Server stacks: the event loop and HTTP implementation uvicorn runs every server with.

``BENCH_STACKS=asyncio+h11,uvloop+httptools`` runs the request/response load scenarios on each
stack in the same invocation (every server of a stack, the ceiling included, gets that stack;
the rounds interleave all of them). Unset, the one stack is ``BENCH_LOOP`` + ``BENCH_HTTP``
(default ``asyncio+h11``), as before. ``uvloop`` and ``httptools`` need the ``speed`` extra.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
from dataclasses import dataclass
from typing import Any

LOOPS = ("asyncio", "uvloop")
HTTPS = ("h11", "httptools")


@dataclass(frozen=True)
class Stack:
    loop: str = "asyncio"
    http: str = "h11"

    @property
    def name(self) -> str:
        return f"{self.loop}+{self.http}"

    def env(self) -> dict[str, str]:
        """What ``bench.serve`` reads to pick the loop and the HTTP implementation."""
        return {"BENCH_LOOP": self.loop, "BENCH_HTTP": self.http}

    def __str__(self) -> str:
        return self.name


def parse(text: str, source: str = "BENCH_STACKS") -> Stack:
    loop, _, http = text.strip().partition("+")
    if loop not in LOOPS or http not in HTTPS:
        raise SystemExit(
            f"bad stack {text!r} from {source}: LOOP+HTTP with LOOP in {'/'.join(LOOPS)} "
            f"and HTTP in {'/'.join(HTTPS)}, e.g. asyncio+h11,uvloop+httptools"
        )
    return Stack(loop, http)


def from_environment(env: dict[str, str] | None = None) -> list[Stack]:
    """The stacks of this run, checked: each at most once, its libraries installed."""
    env = dict(os.environ) if env is None else env
    listed = [part for part in env.get("BENCH_STACKS", "").split(",") if part.strip()]
    if listed:
        stacks = list(dict.fromkeys(parse(part) for part in listed))
    else:
        one = f"{env.get('BENCH_LOOP', 'asyncio')}+{env.get('BENCH_HTTP', 'h11')}"
        stacks = [parse(one, "BENCH_LOOP+BENCH_HTTP")]
    for stack in stacks:
        for module in (stack.loop, stack.http):
            if module not in ("asyncio", "h11") and importlib.util.find_spec(module) is None:
                raise SystemExit(f"{stack} needs {module}: pip install '.[speed]'")
    return stacks


def spread(values: list[float]) -> dict[str, float]:
    """Median and range of per-round ratios."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def versus(
    runs: dict[str, list[dict[str, Any]]], base: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """Each server on this stack against itself on the base stack, paired per round: req/s
    (this / base) and CPU per request (base / this: above 1.0 when this stack costs less)."""
    out: dict[str, Any] = {}
    for name, these in runs.items():
        those = base.get(name)
        if not those:
            continue
        pairs = list(zip(these, those, strict=True))
        rps = [a["rps"] / b["rps"] for a, b in pairs if b["rps"]]
        cpu = [
            b["cpu_us_per_request"] / a["cpu_us_per_request"]
            for a, b in pairs
            if a["cpu_us_per_request"] and b["cpu_us_per_request"]
        ]
        out[name] = {"rps": spread(rps) if rps else None, "cpu": spread(cpu) if cpu else None}
    return out
