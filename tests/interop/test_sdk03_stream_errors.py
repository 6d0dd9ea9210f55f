"""A 0.3 streaming method that fails before its first event answers an SSE stream of one
JSON-RPC error response (0.3 §3.3.1, §6.11), which the official SDK 0.3.26's client reads as a
typed error; 1.0 keeps the plain JSON-RPC error response (issue #33)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from simple_a2a.server import server
from tests.interop.peers import sdk03_python
from tests.support.agents import TestAgent, make_card, serving

HERE = __import__("pathlib").Path(__file__).resolve().parent
THEIRS = {"peer": "Python SDK 0.3.26", "direction": "theirs → ours", "protocol": "0.3"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(server(make_card(), TestAgent()).app) as base:
        yield base


@pytest.mark.interop(**THEIRS, binding="JSONRPC")
def test_the_sdk03_client_reads_our_streaming_errors(url: str) -> None:
    done = subprocess.run(
        [sdk03_python(), str(HERE / "sdk03_stream_errors.py"), url + "/"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # -32001: TaskNotFoundError (0.3 §8.2), typed by the SDK as a JSON-RPC error
    assert seen["resubscribe_unknown"] == {
        "ok": False,
        "class": "A2AClientJSONRPCError",
        "code": -32001,
    }, seen
    assert seen["stream_unknown_task"] == {
        "ok": False,
        "class": "A2AClientJSONRPCError",
        "code": -32001,
    }, seen


def _post(url: str, method: str, params: dict[str, object], version: str | None) -> httpx.Response:
    headers = {"A2A-Version": version} if version else {}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return httpx.post(url + "/", json=body, headers=headers, timeout=10)


def test_a_v03_streaming_error_is_one_sse_event(url: str) -> None:
    answer = _post(url, "tasks/resubscribe", {"id": "no-such-task"}, None)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    assert len(events) == 1
    error = json.loads(events[0])
    assert error["id"] == 7 and error["error"]["code"] == -32001


def test_a_v10_streaming_error_stays_a_json_answer(url: str) -> None:
    answer = _post(url, "SubscribeToTask", {"id": "no-such-task"}, "1.0")
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["code"] == -32001
