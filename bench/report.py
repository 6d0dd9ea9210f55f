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


def _spread(value: Any, bold: bool = True) -> str:
    """``median [min-max]`` of a paired ratio, or a dash."""
    if not value:
        return "—"
    median = f"{value['median']:.2f}x"
    if bold:
        median = f"**{median}**"
    return f"{median} [{value['min']:.2f}-{value['max']:.2f}]"


LOAD_HEADER = [
    "| scenario | ours req/s | a2a-sdk req/s | ours/sdk | ours/memory | ours/ceiling "
    "| CPU us/req ours / sdk / ceiling | ceiling CPU / ours | p50 ms ours / sdk "
    "| p99 ms ours / sdk | ours p99/p50 |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]


def _load_row(name: str, r: dict[str, Any]) -> str:
    ours = r.get("ceiling", {}) if name.startswith("ceiling") else r.get("ours", {})
    sdk, ceiling, paired = r.get("sdk", {}), r.get("ceiling", {}), r.get("paired", {})
    label = f"{name} (raw ASGI)" if name.startswith("ceiling") else name
    return (
        f"| {label} | {_f(ours.get('rps'))} | {_f(sdk.get('rps'))} "
        f"| {_spread(paired.get('rps_vs_sdk'))} | {_spread(paired.get('rps_vs_memory'))} "
        f"| {_spread(paired.get('rps_vs_ceiling'))} "
        f"| {_f(ours.get('cpu_us_per_request'))} / {_f(sdk.get('cpu_us_per_request'))} "
        f"/ {_f(ceiling.get('cpu_us_per_request'))} "
        f"| {_spread(paired.get('cpu_vs_ceiling'))} "
        f"| {_f(ours.get('p50_ms'), 2)} / {_f(sdk.get('p50_ms'), 2)} "
        f"| {_f(ours.get('p99_ms'), 2)} / {_f(sdk.get('p99_ms'), 2)} "
        f"| {_spread(paired.get('p99_over_p50'), bold=False)} |"
    )


def _stacks_table(loads: dict[str, dict[str, Any]], base: str) -> list[str]:
    """Each later stack against the first, paired per round, server by server."""
    lines = [
        "",
        f"Each stack against {base} in the same rounds (req/s this / {base}; CPU per request "
        f"{base} / this: above 1.00x when this stack costs less):",
        "",
        "| scenario | stack | ours req/s | sdk req/s | ceiling req/s | ours CPU | sdk CPU "
        "| ceiling CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in loads.values():
        vs = r.get("vs_stack")
        if not vs:
            continue
        cells = [
            _spread((vs.get(server) or {}).get(what), bold=False)
            for what in ("rps", "cpu")
            for server in ("ours", "sdk", "ceiling")
        ]
        lines.append(f"| {r.get('scenario')} | {r.get('stack')} | {' | '.join(cells)} |")
    return lines


def _baseline_table(loads: dict[str, dict[str, Any]], baseline: str) -> list[str]:
    """Ours against BENCH_BASELINE's agent ("base"), paired per round, scenario by scenario."""
    lines = [
        "",
        f"Ours against the baseline {baseline} in the same rounds (req/s ours / base; CPU per "
        "request base / ours: above 1.00x when ours costs less):",
        "",
        "| scenario | stack | ours req/s | base req/s | req/s ours / base | CPU us/req ours / base "
        "| CPU base / ours |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in loads.values():
        paired = r.get("paired", {})
        if "rps_vs_base" not in paired:
            continue
        ours, base = r.get("ours", {}), r.get("base", {})
        lines.append(
            f"| {r.get('scenario')} | {r.get('stack')} | {_f(ours.get('rps'))} "
            f"| {_f(base.get('rps'))} | {_spread(paired.get('rps_vs_base'))} "
            f"| {_f(ours.get('cpu_us_per_request'))} / {_f(base.get('cpu_us_per_request'))} "
            f"| {_spread(paired.get('cpu_vs_base'))} |"
        )
    return lines


def markdown(report: dict[str, Any]) -> str:
    results: dict[str, Any] = report["results"]
    m = report["machine"]
    stacks: list[str] = m.get("stacks") or [f"{m['loop']}+{m['http']}"]
    server = (
        f"loop {m['loop']}, http {m['http']}"
        if len(stacks) == 1
        else f"stacks {', '.join(stacks)} (loop+http)"
    )
    lines = [
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, uvicorn {m['uvicorn']} "
        f"({server}, 1 worker, access log off), {m['wrk']}; "
        f"load average at the end {', '.join(f'{x:.1f}' for x in m.get('loadavg_at_end', []))}"
        " (a shared machine).",
        f"Rounds: {report['runs']} interleaved x {report['duration_s']} s per server"
        + (" (quick mode)" if report["quick"] else "")
        + f"; whole benchmark {report['elapsed_s']} s."
        + (f" Tag: {report['tag']}." if report.get("tag") else ""),
        "",
        "Ratios are medians of per-round paired ratios, [min-max] over the rounds. CPU is the "
        "server process's utime+stime per request; *ceiling CPU / ours* is 1.00x when we cost "
        "no more than the raw ASGI app. Rows under *sqlite* compare our SQLite store (ours) "
        "with our memory store and the SDK's in-memory store in the same rounds.",
    ]
    if len(stacks) > 1:
        lines[-1] += (
            " Every stack's servers (ceiling, SDK, ours) ran in the same rounds; streams, "
            f"fan-out, memory, the big store and SQLite ran on {stacks[0]} only."
        )
    loads = {name: r for name, r in results.items() if r["kind"] == "load"}
    for stack in stacks:
        mine = {
            r.get("scenario", name): r
            for name, r in loads.items()
            if r.get("stack", stacks[0]) == stack
        }
        if len(stacks) > 1:
            if not mine:
                continue
            lines += ["", f"### {stack}"]
        lines += ["", *LOAD_HEADER, *(_load_row(name, r) for name, r in mine.items())]
    if len(stacks) > 1:
        lines += _stacks_table(loads, stacks[0])
    if report.get("baseline"):
        lines += _baseline_table(loads, report["baseline"])
    header = ["", "| scenario | ours | a2a-sdk | ratio |", "|---|---:|---:|---:|"]
    lines += header
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
    if lines[-len(header) :] == header:  # no row under it
        del lines[-len(header) :]
    if report["notes"]:
        lines += ["", "Notes:", *[f"- {n}" for n in report["notes"]]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.json") as f:
        print(markdown(json.load(f)))
