"""The media types of the HTTP bindings (issue #33): ``application/json`` and the v1.0.1
``application/a2a+json`` (§11.1, §14.1.1) are read on every binding, with or without parameters;
the answer is ``application/a2a+json`` to a client that accepts it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from simple_a2a.server import server
from tests.support.agents import TestAgent, make_card, serving, user

TYPES = ["application/json", "application/a2a+json", "application/a2a+json; charset=utf-8"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(server(make_card(), TestAgent()).app) as base:
        yield base


def _send(url: str, binding: str, version: str, content_type: str, accept: str) -> httpx.Response:
    import json

    message = user("hi")
    if binding == "JSONRPC":
        method = "SendMessage" if version == "1.0" else "message/send"
        if version == "0.3":
            message = {"kind": "message", "messageId": "m", "role": "user",
                       "parts": [{"kind": "text", "text": "hi"}]}  # fmt: skip
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
        path = "/"
    else:
        path = "/message:send" if version == "1.0" else "/v1/message:send"
        if version == "0.3":
            message = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}
        body = {"message": message} if version == "1.0" else {"request": message}
    headers = {"Content-Type": content_type, "Accept": accept, "A2A-Version": version}
    return httpx.post(url + path, content=json.dumps(body), headers=headers, timeout=10)


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("content_type", TYPES)
def test_both_media_types_are_read(url: str, binding: str, version: str, content_type: str) -> None:
    answer = _send(url, binding, version, content_type, "application/json")
    assert answer.status_code == 200, answer.text
    assert "error" not in answer.json(), answer.text
    assert answer.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_answer_is_a2a_json_when_accepted(url: str, binding: str) -> None:
    answer = _send(url, binding, "1.0", "application/a2a+json", "application/a2a+json")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/a2a+json")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_other_media_types_are_refused(url: str, binding: str) -> None:
    answer = _send(url, binding, "1.0", "text/plain", "application/json")
    text = answer.text
    assert "application/a2a+json" in text and "Traceback" not in text
