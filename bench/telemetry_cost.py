"""What tracing costs: SendMessage in process, OpenTelemetry absent vs off vs on.

    python -m bench.telemetry_cost [CALLS] [ROUNDS]     # default 2000 calls, 5 rounds

Each measurement is a fresh process (``absent`` must never have imported OpenTelemetry) sending
CALLS SendMessage requests through the ASGI app with httpx's ASGITransport (no sockets), after a
warm-up. The modes are interleaved round by round (absent, off, on, absent, ...) so machine noise
hits all alike. ``absent``: OpenTelemetry made unimportable; ``off``: imported, tracing not
enabled; ``on``: ``enable_tracing()`` with an SDK TracerProvider and a SimpleSpanProcessor into
an in-memory exporter (every span recorded and exported). Prints µs per call: median [min-max].
"""

from __future__ import annotations

import statistics
import subprocess
import sys

CHILD = r"""
import asyncio, sys, time
mode, calls = sys.argv[1], int(sys.argv[2])
if mode == "absent":
    sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
else:
    import opentelemetry.trace  # noqa: F401
if mode == "on":
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from simple_a2a.protocol.telemetry import enable_tracing
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
import httpx
import simple_a2a
from simple_a2a import AgentCard

card = AgentCard.from_dict({"name": "b", "description": "b", "version": "1", "capabilities": {}})

async def echo(ctx):
    return ctx.text

app = simple_a2a.server(card, echo).app

def body(i):
    return {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": {
        "messageId": f"m{i}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}

async def main():
    transport = httpx.ASGITransport(app)
    headers = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as http:
        for i in range(200):  # warm-up
            assert "result" in (await http.post("/", json=body(i), headers=headers)).json()
        start = time.perf_counter()
        for i in range(calls):
            await http.post("/", json=body(i), headers=headers)
        elapsed = time.perf_counter() - start
    if mode == "on":
        assert exporter.get_finished_spans(), "no spans recorded"
    print(elapsed / calls * 1e6)

asyncio.run(main())
"""

MODES = ("absent", "off", "on")


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_number in range(rounds):
        for mode in MODES:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, mode, str(calls)],
                check=True,
                capture_output=True,
                text=True,
            )
            results[mode].append(float(out.stdout.strip().splitlines()[-1]))
        print(
            f"round {round_number + 1}: "
            + ", ".join(f"{m} {results[m][-1]:.0f} µs" for m in MODES),
            flush=True,
        )
    base = statistics.median(results["absent"])
    print(f"\nSendMessage in process, {calls} calls x {rounds} interleaved rounds (µs per call)")
    for mode in MODES:
        values = results[mode]
        median = statistics.median(values)
        print(
            f"  {mode:<7} {median:7.0f}  [{min(values):.0f}-{max(values):.0f}]"
            f"  {median / base - 1:+.1%} vs absent"
        )


if __name__ == "__main__":
    main()
