"""A 0.3 streaming method that fails before its first event answers an SSE stream of one
JSON-RPC error response (0.3 §3.3.1, §6.11), which the official SDK 0.3.26's client reads as a
typed error; refusals at the HTTP level (401) stay HTTP errors; 1.0 keeps the plain JSON-RPC
error response (issue #33). The official 1.3.0 client: ``test_sdk_stream_errors.py``."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from simple_a2a.auth import BearerAuth
from simple_a2a.server import Limits, server
from tests.interop.peers import sdk03_python
from tests.support.agents import TestAgent, make_card, serving

HERE = Path(__file__).resolve().parent
THEIRS = {"peer": "Python SDK 0.3.26", "direction": "theirs → ours", "protocol": "0.3"}


@pytest.fixture(scope="module")
def urls() -> Iterator[list[str]]:
    """An agent that allows one part per message, one that declares no streaming, one behind
    bearer authentication."""
    agents = [
        server(make_card(), TestAgent(), limits=Limits(max_parts_per_message=1)),
        server(make_card(streaming=False), TestAgent()),
        server(make_card(), TestAgent(), auth=BearerAuth(tokens={"s3cret": "alice"})),
    ]
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(serving(agent.app)) + "/" for agent in agents]


def typed(code: int) -> dict[str, object]:
    """The SDK's A2AClientJSONRPCError carrying JSON-RPC error ``code`` (0.3 §8)."""
    return {"ok": False, "class": "A2AClientJSONRPCError", "code": code}


#: what the SDK raised for each case of sdk03_stream_errors.py
EXPECTED = {
    "resubscribe_unknown": typed(-32001),  # TaskNotFoundError
    "stream_unknown_task": typed(-32001),
    "stream_over_a_limit": typed(-32602),  # invalid params, naming Limits.max_parts_per_message
    "stream_ok": {"ok": True, "event": "Task"},
    "stream_not_declared": typed(-32004),  # UnsupportedOperationError
    "stream_unauthenticated": {"ok": False, "class": "A2AClientHTTPError", "status": 401},
}


@pytest.mark.interop(**THEIRS, binding="JSONRPC")
def test_the_sdk03_client_reads_our_streaming_errors(urls: list[str]) -> None:
    done = subprocess.run(
        [sdk03_python(), str(HERE / "sdk03_stream_errors.py"), *urls],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == EXPECTED


def _post(url: str, method: str, params: dict[str, object], version: str | None) -> httpx.Response:
    headers = {"A2A-Version": version} if version else {}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_a_v03_streaming_error_is_one_sse_event(urls: list[str]) -> None:
    answer = _post(urls[0], "tasks/resubscribe", {"id": "no-such-task"}, None)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    assert len(events) == 1
    error = json.loads(events[0])
    assert error["id"] == 7 and error["error"]["code"] == -32001


def test_a_v03_refusal_at_the_http_level_stays_json(urls: list[str]) -> None:
    answer = _post(urls[2], "tasks/resubscribe", {"id": "no-such-task"}, None)
    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["id"] == 7


def test_an_unknown_method_stays_json(urls: list[str]) -> None:
    """The method (so whether it streams) is not known: a plain JSON-RPC error response."""
    answer = _post(urls[0], "tasks/streamish", {"id": "x"}, None)
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == -32601


def test_a_v10_streaming_error_stays_a_json_answer(urls: list[str]) -> None:
    answer = _post(urls[0], "SubscribeToTask", {"id": "no-such-task"}, "1.0")
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == -32001
