"""The media types of the HTTP bindings (issue #33), against our server.

Requests: ``application/json`` and the v1.0.1 ``application/a2a+json`` (1.0 §11.1, §14.1.1),
with or without parameters, are read on every binding and version (and a body without a
Content-Type, as the Python SDKs' servers do); other types are refused naming what to send.

Answers: JSON-RPC is ``application/json`` whatever the client accepts (1.0 §9.1; 0.3 §3.2.1:
MUST), so is 0.3 HTTP+JSON (0.3 §3.2.3: MUST); 1.0 HTTP+JSON answers ``application/a2a+json``
to a client that accepts it (§11.1: SHOULD), else ``application/json`` (PRODUCT §3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simple_a2a.server import server
from tests.support.agents import TestAgent, make_card, serving

READ = [
    "application/json",
    "application/json; charset=utf-8",
    "application/a2a+json",
    "application/a2a+json; charset=utf-8",
    "Application/A2A+JSON;charset=UTF-8",
    None,
]
REFUSED = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
SETUPS = [(b, v) for b in ("JSONRPC", "HTTP+JSON") for v in ("1.0", "0.3")]
IDS = [f"{b}-{v}" for b, v in SETUPS]

#: the message of each version's wire form (0.3 HTTP+JSON is its a2a.proto's JSON)
MESSAGES: dict[tuple[str, str], dict[str, Any]] = {
    ("JSONRPC", "1.0"): {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
    ("HTTP+JSON", "1.0"): {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
    ("JSONRPC", "0.3"): {
        "kind": "message",
        "messageId": "m",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    },
    ("HTTP+JSON", "0.3"): {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]},
}
METHODS = {
    ("JSONRPC", "1.0", False): "SendMessage",
    ("JSONRPC", "1.0", True): "SendStreamingMessage",
    ("JSONRPC", "0.3", False): "message/send",
    ("JSONRPC", "0.3", True): "message/stream",
    ("HTTP+JSON", "1.0", False): "/message:send",
    ("HTTP+JSON", "1.0", True): "/message:stream",
    ("HTTP+JSON", "0.3", False): "/v1/message:send",
    ("HTTP+JSON", "0.3", True): "/v1/message:stream",
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(server(make_card(), TestAgent()).app) as base:
        yield base


def send(
    url: str,
    setup: tuple[str, str],
    content_type: str | None,
    accept: str = "application/json",
    *,
    streaming: bool = False,
) -> httpx.Response:
    """A send (or stream) of "hi" as ``content_type`` to the agent at ``url`` (a JSON-RPC
    endpoint, or the base of HTTP+JSON routes), in the binding and version's wire form. Also
    sent to the peers' servers (tests/interop/test_media_type_peers.py)."""
    binding, version = setup
    method = METHODS[binding, version, streaming]
    message = MESSAGES[setup]
    if binding == "JSONRPC":
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    else:
        url, body = url + method, {"message": message}
    headers = {"Accept": accept, "A2A-Version": version}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=10)


@pytest.mark.parametrize("setup", SETUPS, ids=IDS)
@pytest.mark.parametrize("content_type", READ)
def test_both_media_types_are_read(url: str, setup: tuple[str, str], content_type: str) -> None:
    answer = send(url, setup, content_type)
    assert answer.status_code == 200, answer.text
    assert "error" not in answer.json(), answer.text
    assert answer.headers["content-type"] == "application/json"


@pytest.mark.parametrize("setup", SETUPS, ids=IDS)
def test_a_stream_is_read_from_either_media_type(url: str, setup: tuple[str, str]) -> None:
    for content_type in ("application/a2a+json; charset=utf-8", "application/json"):
        answer = send(url, setup, content_type, "text/event-stream", streaming=True)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert '"error"' not in answer.text, answer.text


#: the Content-Type answered to ``Accept: application/a2a+json``
ANSWERED = {
    ("JSONRPC", "1.0"): "application/json",  # §9.1
    ("JSONRPC", "0.3"): "application/json",  # 0.3 §3.2.1: MUST
    ("HTTP+JSON", "1.0"): "application/a2a+json",  # §11.1: SHOULD
    ("HTTP+JSON", "0.3"): "application/json",  # 0.3 §3.2.3: MUST
}


@pytest.mark.parametrize("setup", SETUPS, ids=IDS)
def test_the_answer_is_a2a_json_only_where_the_spec_says(url: str, setup: tuple[str, str]) -> None:
    for accept in ("application/a2a+json", "application/a2a+json, application/json"):
        answer = send(url, setup, "application/a2a+json", accept)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == ANSWERED[setup]


@pytest.mark.parametrize("setup", SETUPS, ids=IDS)
def test_an_error_answer_has_the_same_media_type(url: str, setup: tuple[str, str]) -> None:
    binding, version = setup
    headers = {"Accept": "application/a2a+json", "A2A-Version": version}
    if binding == "JSONRPC":
        method = "GetTask" if version == "1.0" else "tasks/get"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": "no-such-task"}}
        answer = httpx.post(url + "/", json=body, headers=headers, timeout=10)
    else:
        path = "/tasks/no-such-task" if version == "1.0" else "/v1/tasks/no-such-task"
        answer = httpx.get(url + path, headers=headers, timeout=10)
    assert "error" in answer.json(), answer.text
    assert answer.headers["content-type"] == ANSWERED[setup]


@pytest.mark.parametrize("setup", SETUPS, ids=IDS)
@pytest.mark.parametrize("content_type", REFUSED)
def test_other_media_types_are_refused(url: str, setup: tuple[str, str], content_type: str) -> None:
    answer = send(url, setup, content_type)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    if setup[0] == "JSONRPC":
        assert error["code"] == -32600  # invalid request: the envelope, not a method's params
    else:
        assert error["status"] == "INVALID_ARGUMENT"
    assert "application/json" in error["message"] and "application/a2a+json" in error["message"]
    assert "Traceback" not in answer.text
