"""Render a benchmark report (the dict ``bench/__main__.py`` writes as JSON) as markdown."""

from __future__ import annotations

import json
import sys
from typing import Any


def _f(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def _ratio(a: Any, b: Any) -> str:
    if not a or not b:
        return "—"
    return f"**{a / b:.2f}x**"


def markdown(report: dict[str, Any]) -> str:
    results: dict[str, Any] = report["results"]
    m = report["machine"]
    lines = [
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, uvicorn {m['uvicorn']} "
        f"(loop {m['loop']}, http {m['http']}, 1 worker, access log off), {m['wrk']}; "
        f"load average at the end {', '.join(f'{x:.1f}' for x in m.get('loadavg_at_end', []))}"
        " (a shared machine).",
        f"Runs: median of {report['runs']} x {report['duration_s']} s"
        + (" (quick mode)" if report["quick"] else "")
        + f"; whole benchmark {report['elapsed_s']} s."
        + (f" Tag: {report['tag']}." if report.get("tag") else ""),
        "",
        "| scenario | ours req/s | a2a-sdk req/s | ours/sdk | ours/ceiling | p50 ms ours / sdk "
        "| p99 ms ours / sdk |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    ceilings = {
        r["connections"]: r.get("ceiling", {}).get("rps")
        for name, r in results.items()
        if name.startswith("ceiling")
    }
    for name, r in results.items():
        if r["kind"] != "load":
            continue
        if name.startswith("ceiling"):
            c = r.get("ceiling", {})
            lines.append(
                f"| {name} (raw ASGI) | {_f(c.get('rps'))} | | | 1.00x | {_f(c.get('p50_ms'), 2)} "
                f"| {_f(c.get('p99_ms'), 2)} |"
            )
            continue
        ours, sdk = r.get("ours", {}), r.get("sdk", {})
        lines.append(
            f"| {name} | {_f(ours.get('rps'))} | {_f(sdk.get('rps'))} "
            f"| {_ratio(ours.get('rps'), sdk.get('rps'))} "
            f"| {_ratio(ours.get('rps'), ceilings.get(r['connections']))} "
            f"| {_f(ours.get('p50_ms'), 2)} / {_f(sdk.get('p50_ms'), 2)} "
            f"| {_f(ours.get('p99_ms'), 2)} / {_f(sdk.get('p99_ms'), 2)} |"
        )
    lines += ["", "| scenario | ours | a2a-sdk | ratio |", "|---|---:|---:|---:|"]
    for name, r in results.items():
        ours, sdk = r.get("ours", {}), r.get("sdk", {})
        if r["kind"] == "stream":
            lines.append(
                f"| {name}: events/s | {_f(ours.get('events_per_s'))} "
                f"| {_f(sdk.get('events_per_s'))} "
                f"| {_ratio(ours.get('events_per_s'), sdk.get('events_per_s'))} |"
            )
            lines.append(
                f"| {name}: time to first event (ms) | {_f(ours.get('ttfe_ms'), 2)} "
                f"| {_f(sdk.get('ttfe_ms'), 2)} "
                f"| {_ratio(sdk.get('ttfe_ms'), ours.get('ttfe_ms'))} faster |"
            )
        elif r["kind"] == "fanout":
            for key in ("p50_ms", "p99_ms"):
                lines.append(
                    f"| {name}: delivery {key[:3]} (ms) | {_f(ours.get(key), 1)} "
                    f"| {_f(sdk.get(key), 1)} | {_ratio(sdk.get(key), ours.get(key))} faster |"
                )
            lines.append(
                f"| {name}: subscribers that got every event | "
                f"{ours.get('complete_subscribers', '—')} | {sdk.get('complete_subscribers', '—')} "
                "| |"
            )
        elif r["kind"] == "memory":
            lines.append(
                f"| {name} ({r['tasks']:,} tasks, RSS delta): bytes/task "
                f"| {_f(ours.get('bytes_per_task'))} | {_f(sdk.get('bytes_per_task'))} "
                f"| {_ratio(ours.get('bytes_per_task'), sdk.get('bytes_per_task'))} of sdk |"
            )
        elif r["kind"] == "load" and "rss_growth_bytes_per_request" in ours:
            lines.append(
                f"| {name}: RSS growth per request (bytes) "
                f"| {_f(ours.get('rss_growth_bytes_per_request'))} "
                f"| {_f(sdk.get('rss_growth_bytes_per_request'))} | |"
            )
    if report["notes"]:
        lines += ["", "Notes:", *[f"- {n}" for n in report["notes"]]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.json") as f:
        print(markdown(json.load(f)))
