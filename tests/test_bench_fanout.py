"""bench/fanout.py (issue #36): its quick mode runs end to end, and its floor is a fair one.

Speed is never asserted here (bench/ measures it): what is checked is that the scenario
completes against ours and the floor, every subscriber getting every chunk, and that its report
has every figure; and that the floor broadcasts valid A2A frames, the task first (§3.1.6).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from bench.agents import sse_fanout_floor_app

from simple_a2a.protocol.requests import StreamResponse
from tests.support.agents import serving

ROOT = Path(__file__).resolve().parent.parent
SUBSCRIBERS, EVENTS = 60, 5


def test_the_quick_mode_runs_against_ours_and_the_floor(tmp_path: Path) -> None:
    out = tmp_path / "fanout.json"
    env = {
        **os.environ,
        "BENCH_QUICK": "1",
        "BENCH_SERVERS": "ours,sse-floor",
        "BENCH_SUBSCRIBERS": str(SUBSCRIBERS),
        "BENCH_EVENTS": str(EVENTS),
        "BENCH_OUT": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.fanout"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    for name in ("ours", "sse-floor"):
        (run,) = results["rounds"][name]
        assert run["complete"] == SUBSCRIBERS and run["failed"] == 0
        assert run["deliveries"] == SUBSCRIBERS * EVENTS
        for figure in ("cpu_us_per_chunk", "setup_cpu_us_per_subscriber", "server_cpu_s"):
            assert run[figure] >= 0
        assert 0 < run["p50_ms"] <= run["p99_ms"] <= run["max_ms"]
        assert run["ttfe_p50_ms"] > 0 and "rss_per_subscriber_kib" in run
        assert f"| {name} | " in done.stdout
    summary = results["summary"]["ours"]
    assert set(summary["cpu_vs_sse-floor"]) == {"median", "min", "max"}
    assert summary["complete"] == SUBSCRIBERS


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def test_the_floor_broadcasts_valid_a2a_frames(tmp_path: Path) -> None:
    trigger = tmp_path / "go"
    text = f"fanout {trigger} 3 1"
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    app, _ = sse_fanout_floor_app()
    with serving(app) as base:
        params = {"message": message, "configuration": {"returnImmediately": True}}
        answer = httpx.post(base + "/", json=_rpc("SendMessage", params), timeout=10).json()
        task_id = answer["result"]["task"]["id"]
        frames = []
        subscribe = _rpc("SubscribeToTask", {"id": task_id})
        with httpx.stream("POST", base + "/", json=subscribe, timeout=10) as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    frames.append(json.loads(line[5:]))
                    trigger.touch()  # the first event is in: the agent may start
    events = [StreamResponse.from_dict(f["result"]) for f in frames]
    assert [f["id"] for f in frames] == [7] * 5
    assert events[0].task is not None and events[0].task.id == task_id
    assert events[-1].status_update is not None
    chunks = [e.artifact_update for e in events[1:-1]]
    assert all(c is not None and c.artifact.parts[0].text.startswith("t=") for c in chunks)
    assert [c.append for c in chunks if c is not None] == [False, True, True]
