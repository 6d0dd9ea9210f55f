"""bench/streams.py (issue #36): its arithmetic, and that its floor sends what ours sends.

The benchmark itself never runs in the test suite (speed is measured in bench/, never in timed
tests); what is checked here is that its ratios are paired per round and that the bare SSE
floor is a fair one: the same frames, each a valid A2A StreamResponse.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from bench.agents import sse_floor_app
from bench.streams import render, summarize

from simple_a2a.protocol.requests import StreamResponse
from tests.support.agents import serving


def _run(cpu: float, complete: int = 10) -> dict[str, Any]:
    return {
        "cpu_us_per_event": cpu,
        "steady_cpu_us_per_event": cpu / 2,
        "rss_per_stream_kib": 20.0,
        "p50_ms": 1.0,
        "p99_ms": 5.0,
        "ttfe_p50_ms": 2.0,
        "complete": complete,
        "failed": 0,
    }


def test_cpu_ratios_are_paired_per_round() -> None:
    rounds = {
        "ours": [_run(100), _run(200), _run(300)],
        "sdk": [_run(1000), _run(1000), _run(1000)],
        "sse-floor": [_run(100), _run(50), _run(100)],  # round by round: 1x, 4x, 3x
    }
    summary = summarize(rounds)
    assert summary["ours"]["cpu_vs_sdk"] == {"median": 0.2, "min": 0.1, "max": 0.3}
    assert summary["ours"]["cpu_vs_sse-floor"] == {"median": 3.0, "min": 1.0, "max": 4.0}
    assert summary["ours"]["steady_vs_sse-floor"] == {"median": 3.0, "min": 1.0, "max": 4.0}
    assert "| ours | 200.0 [100.0-300.0] | 0.20 [0.10-0.30] | 3.00 [1.00-4.00] |" in render(summary)


@pytest.fixture(scope="module")
def floor_url() -> Any:
    app, _ = sse_floor_app()
    with serving(app) as base:
        yield base


def test_the_floor_sends_valid_a2a_frames(floor_url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "SendStreamingMessage",
        "params": {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "tokens 3 1"}]}
        },
    }
    answer = httpx.post(floor_url + "/", json=body, timeout=10)
    frames = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")]
    events = [StreamResponse.from_dict(f["result"]) for f in frames]
    assert [f["id"] for f in frames] == [3] * 5
    assert events[0].task is not None and events[-1].status_update is not None
    chunks = [e.artifact_update for e in events[1:-1]]
    assert all(c is not None and c.artifact.parts[0].text.startswith("t=") for c in chunks)
    assert [c.last_chunk for c in chunks if c is not None] == [False, False, True]
