"""The media types against the peers' servers (issue #33): what each accepts and answers, and
that what our client sends (application/a2a+json to 1.0 HTTP+JSON, §11.1; application/json to
JSON-RPC, §9.1, and to 0.3, 0.3 §3.2.1/§3.2.3) is accepted by each: the official Python SDK
1.3.0 (in-process, 0.3 compat on), the SDK 0.3.26 and the JavaScript SDK 1.3.0 (OS processes).

The peers' facts (docs/interop.md, "Media types"): both Python SDKs read any Content-Type, even
text/plain; the JS SDK's JSON-RPC server takes only application/json (a2a+json: -32005
"Unsupported Content-Type"), so does its 0.3 HTTP+JSON layer (a2a+json: the body is not parsed,
400 "SendMessageRequest missing message"); its 1.0 HTTP+JSON takes both. Every JSON-RPC server
answers application/json; 1.0 HTTP+JSON answers application/a2a+json whatever was accepted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from simple_a2a import Task, TaskState
from simple_a2a.client import AsyncClient
from tests.client.sdk_agent import build_app
from tests.client.servers import ServerThread
from tests.interop.peers import PeerProcess, sdk03_agent
from tests.server.test_media_types import send
from tests.test_interop_js import node, their_peer  # noqa: F401 (fixtures)

SDK13, SDK03, JS = "Python SDK 1.3.0", "Python SDK 0.3.26", "JavaScript SDK 1.3.0"
TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "application/a2a+json",
    "application/a2a+json; charset=utf-8",
]
ALL, JSON_ONLY = set(TYPES), {t for t in TYPES if t.startswith("application/json")}

#: (peer, binding, version): the interface's path, the types it reads, the type it answers
PEERS: dict[tuple[str, str, str], tuple[str, set[str], str]] = {
    (SDK13, "JSONRPC", "1.0"): ("/rpc", ALL, "application/json"),
    (SDK13, "JSONRPC", "0.3"): ("/rpc", ALL, "application/json"),
    (SDK13, "HTTP+JSON", "1.0"): ("/rest", ALL, "application/a2a+json"),
    (SDK13, "HTTP+JSON", "0.3"): ("/rest", ALL, "application/json"),
    (SDK03, "JSONRPC", "0.3"): ("/rpc", ALL, "application/json"),
    (SDK03, "HTTP+JSON", "0.3"): ("/rest", ALL, "application/json"),
    (JS, "JSONRPC", "1.0"): ("/a2a/jsonrpc", JSON_ONLY, "application/json"),
    (JS, "JSONRPC", "0.3"): ("/a2a/jsonrpc", JSON_ONLY, "application/json"),
    (JS, "HTTP+JSON", "1.0"): ("/a2a/rest", ALL, "application/a2a+json"),
    (JS, "HTTP+JSON", "0.3"): ("/a2a/rest", JSON_ONLY, "application/json"),
}
SHORT = {SDK13: "sdk13", SDK03: "sdk03", JS: "js"}
#: one parameter per interface, in the interop matrix as its peer's (tests/interop/matrix.py)
INTERFACES = [
    pytest.param(
        key,
        id=f"{SHORT[key[0]]}-{key[1]}-{key[2]}",
        marks=pytest.mark.interop(peer=key[0], direction="ours → theirs"),
    )
    for key in PEERS
]


@pytest.fixture(scope="module")
def sdk13() -> Iterator[str]:
    with ServerThread(lambda base: build_app(base, v03=True)) as running:
        yield running.url


@pytest.fixture(scope="module")
def sdk03() -> Iterator[str]:
    with sdk03_agent() as base:
        yield base


@pytest.fixture(params=INTERFACES)
def peer(request: pytest.FixtureRequest) -> tuple[str, tuple[str, str], str]:
    """(peer, (binding, version), the interface URL), starting the peer's server if needed."""
    name, binding, version = request.param
    if name == SDK13:
        base = request.getfixturevalue("sdk13")
    elif name == SDK03:
        base = request.getfixturevalue("sdk03")
    else:
        js: PeerProcess = request.getfixturevalue("their_peer")
        base = js.ensure()
    return name, (binding, version), base + PEERS[request.param][0]


def _refused(answer: httpx.Response) -> bool:
    try:
        return answer.status_code >= 400 or "error" in answer.json()
    except ValueError:
        return True


def test_what_each_peer_reads_and_answers(peer: tuple[str, tuple[str, str], str]) -> None:
    name, setup, url = peer
    _, reads, answers = PEERS[(name, *setup)]
    accepted = set()
    for content_type in TYPES:
        answer = send(url, setup, content_type, "application/a2a+json, application/json")
        if not _refused(answer):
            accepted.add(content_type)
            assert answer.headers["content-type"].split(";")[0] == answers, content_type
    assert accepted == reads


class Recorder:
    """An httpx client that records the Content-Type and Accept of each request it sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str | None, str | None]] = []
        self.http = httpx.AsyncClient(event_hooks={"request": [self._record]}, timeout=10)

    async def _record(self, request: httpx.Request) -> None:
        if request.method == "POST":
            self.sent.append((request.headers.get("content-type"), request.headers.get("accept")))


#: what our client sends, by (binding, version): (Content-Type, Accept of a unary call)
OURS = {
    ("JSONRPC", "1.0"): ("application/json", "application/json"),
    ("JSONRPC", "0.3"): ("application/json", "application/json"),
    ("HTTP+JSON", "1.0"): ("application/a2a+json", "application/a2a+json, application/json"),
    ("HTTP+JSON", "0.3"): ("application/json", "application/json"),
}


async def test_each_peer_takes_what_our_client_sends(
    peer: tuple[str, tuple[str, str], str],
) -> None:
    _, (binding, version), url = peer
    card: dict[str, Any] = {
        "name": "peer",
        "description": "d",
        "version": "1",
        "capabilities": {"streaming": True},
        "supportedInterfaces": [
            {"url": url, "protocolBinding": binding, "protocolVersion": version}
        ],
    }
    recorder = Recorder()
    try:
        async with AsyncClient(card, http_client=recorder.http) as client:
            task = await client.send("hello")
            assert isinstance(task, Task) and task.status.state == TaskState.COMPLETED
            assert client.protocol_version == version
    finally:
        await recorder.http.aclose()
    assert recorder.sent == [OURS[binding, version]]
