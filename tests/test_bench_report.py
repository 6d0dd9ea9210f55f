"""The benchmark's before/after table (``BENCH_BASELINE``): ratios of ours to the baseline's
agent are paired per round and rendered as bench/README.md shows them. The benchmark itself is
never part of the test run; its arithmetic and its report are."""

from __future__ import annotations

from typing import Any

from bench.__main__ import median_of, paired_ratios
from bench.report import markdown


def _runs(rps: list[float], cpu: list[float]) -> list[dict[str, Any]]:
    return [
        {"rps": r, "cpu_us_per_request": c, "p50_ms": 1.0, "p99_ms": 2.0, "errors": 0}
        for r, c in zip(rps, cpu, strict=True)
    ]


def test_ours_against_the_baseline_is_paired_per_round_and_reported() -> None:
    rounds = {
        "ours": _runs([100, 200, 300], [10, 10, 10]),
        "base": _runs([100, 100, 100], [20, 10, 5]),  # round by round: 1x, 2x, 3x the rate
        "sdk": _runs([50, 50, 50], [40, 40, 40]),
    }
    paired = paired_ratios(rounds)
    assert paired["rps_vs_base"] == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert paired["cpu_vs_base"] == {"median": 1.0, "min": 0.5, "max": 2.0}  # base / ours
    result = {
        "kind": "load",
        "scenario": "SendMessage rpc c=32",
        "stack": "asyncio+h11",
        "paired": paired,
        **{name: median_of(runs) for name, runs in rounds.items()},
    }
    machine = {
        "nproc": 2, "cpu": "test", "python": "3.11", "uvicorn": "0", "loop": "asyncio",
        "http": "h11", "wrk": "wrk", "loadavg_at_end": [0.0, 0.0, 0.0],
    }  # fmt: skip
    report = {
        "runs": 3, "duration_s": 1, "quick": True, "elapsed_s": 1.0, "tag": "",
        "machine": machine, "results": {"SendMessage rpc c=32": result},
        "notes": [], "baseline": "/tmp/base (abc1234)",
    }  # fmt: skip
    text = markdown(report)
    assert "Ours against the baseline /tmp/base (abc1234) in the same rounds" in text
    assert (
        "| SendMessage rpc c=32 | asyncio+h11 | 200 | 100 | **2.00x** [1.00-3.00] | 10 / 10 "
        "| **1.00x** [0.50-2.00] |"
    ) in text
    del report["baseline"]
    assert "Ours against the baseline" not in markdown(report)  # a run without one
