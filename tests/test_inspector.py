"""The inspector's backend without a browser: real agents on loopback, the inspector app on
loopback, the page's API called over HTTP as the page calls it (``X-A2A-Inspector: 1``).

The browser tests are in tests/test_inspector_browser.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from simple_a2a.inspector import inspector_app
from simple_a2a.inspector.app import CSP
from simple_a2a.inspector.wire import WireLog
from tests.cli_agent import scripted_server

API = {"X-A2A-Inspector": "1"}
pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def agent_url(serve: Any) -> str:
    return str(serve(scripted_server().app))


@pytest.fixture
def inspector(serve: Any, agent_url: str) -> Iterator[httpx.Client]:
    url = serve(inspector_app(agent_url, allowed_hosts={"127.0.0.1", "localhost"}))
    with httpx.Client(base_url=url, headers=API, timeout=30) as http:
        yield http


def timeline(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in response.text.splitlines() if line]


def test_the_page_is_served_with_a_strict_csp(inspector: httpx.Client) -> None:
    page = inspector.get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "frame-ancestors 'none'" in CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    # Offline: the page loads only its own files (no CDN, no inline script).
    assert "http" not in page.text.replace('content="no-referrer"', "")
    assert '<script src="static/inspector.js"' in page.text
    assert (
        inspector.get("/static/inspector.js").headers["content-type"].startswith("text/javascript")
    )
    assert inspector.get("/static/inspector.css").status_code == 200
    assert inspector.get("/static/secret.py").status_code == 404


def test_the_api_answers_only_its_own_page(inspector: httpx.Client) -> None:
    bare = httpx.get(str(inspector.base_url).rstrip("/") + "/api/card")
    assert bare.status_code == 403
    assert "X-A2A-Inspector" in bare.json()["error"]["message"]
    # Another site's script would need a CORS preflight to send the header: never granted.
    preflight = httpx.options(
        str(inspector.base_url).rstrip("/") + "/api/send",
        headers={
            "Origin": "https://attacker.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-a2a-inspector, content-type",
        },
    )
    assert preflight.status_code >= 400
    assert not any(h.startswith("access-control-") for h in preflight.headers)
    # A foreign Host (DNS rebinding) is refused, page included.
    foreign = inspector.get("/", headers={"Host": "attacker.example"})
    assert foreign.status_code == 403


def test_card_with_interfaces_and_negotiation(inspector: httpx.Client, agent_url: str) -> None:
    info = inspector.get("/api/card").json()
    assert info["card"]["name"] == "CLI test agent"
    assert info["protocolVersion"] == "1.0"
    assert info["chosen"]["protocolBinding"] in {"JSONRPC", "HTTP+JSON"}
    assert info["cardUrl"] == agent_url + "/.well-known/agent-card.json"
    raw = json.loads(info["raw"])  # the card exactly as served
    assert raw["name"] == "CLI test agent"
    bindings = {i["protocolBinding"] for i in info["card"]["supportedInterfaces"]}
    assert {"JSONRPC", "HTTP+JSON"} <= bindings


def test_send_without_streaming_then_multi_turn(inspector: httpx.Client) -> None:
    first = inspector.post("/api/send", json={"parts": [{"text": "ask"}]}).json()["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow = {
        "parts": [{"text": "ask large"}],
        "taskId": first["id"],
        "contextId": first["contextId"],
    }
    second = inspector.post("/api/send", json=follow).json()["task"]
    assert second["id"] == first["id"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    direct = inspector.post("/api/send", json={"parts": [{"text": "reply hi"}]}).json()
    assert direct["message"]["parts"] == [{"text": "reply: hi"}]


def test_files_and_data_parts_reach_the_agent(inspector: httpx.Client) -> None:
    parts = [
        {"text": "look"},
        {"raw": "aGVsbG8=", "filename": "hello.txt", "mediaType": "text/plain"},
        {"data": {"size": 3}},
    ]
    task = inspector.post("/api/send", json={"parts": parts}).json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    sent = inspector.get(f"/api/tasks/{task['id']}").json()["history"][0]["parts"]
    assert sent[1]["raw"] == "aGVsbG8=" and sent[1]["filename"] == "hello.txt"
    assert sent[2]["data"] == {"size": 3}


def test_streaming_timeline_has_sequence_ids(inspector: httpx.Client) -> None:
    body = {"parts": [{"text": "words one two three"}], "stream": True}
    entries = timeline(inspector.post("/api/send", json=body))
    kinds = [e["kind"] for e in entries]
    assert kinds[0] == "task" and kinds[-1] == "end"
    assert kinds.count("artifact") == 3
    seqs = [int(e["seq"]) for e in entries if e["kind"] not in ("end",)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # the per-task sequence
    last = [e for e in entries if e["kind"] == "status"][-1]
    assert last["event"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_resubscribe_cancel_list_and_push(inspector: httpx.Client) -> None:
    body = {"parts": [{"text": "slow"}], "returnImmediately": True}
    task = inspector.post("/api/send", json=body).json()["task"]
    canceled = inspector.post(f"/api/tasks/{task['id']}/cancel").json()
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    entries = timeline(inspector.post(f"/api/tasks/{task['id']}/subscribe"))
    # A finished task: its snapshot, or an error the page shows; never a traceback.
    assert entries[-1]["kind"] == "end"
    assert all("Traceback" not in json.dumps(e) for e in entries)
    for text in ("one", "two", "three"):
        inspector.post("/api/send", json={"parts": [{"text": text}]})
    page = inspector.get("/api/tasks", params={"pageSize": 2}).json()
    assert len(page["tasks"]) == 2 and page["nextPageToken"]
    rest = inspector.get(
        "/api/tasks", params={"pageSize": 2, "pageToken": page["nextPageToken"]}
    ).json()
    assert {t["id"] for t in rest["tasks"]}.isdisjoint(t["id"] for t in page["tasks"])
    done = inspector.get("/api/tasks", params={"status": "TASK_STATE_CANCELED"}).json()
    assert [t["id"] for t in done["tasks"]] == [task["id"]]
    # Listing push configs of an agent without push support: the agent's A2A error, shown.
    push = inspector.get(f"/api/tasks/{task['id']}/push")
    assert push.status_code == 502
    assert push.json()["error"]["type"] == "PushNotificationNotSupportedError"


def test_the_wire_view_records_both_ways_and_redacts_credentials(
    serve: Any, agent_url: str
) -> None:
    url = serve(inspector_app(agent_url, headers={"Authorization": "Bearer s3cret"}))
    with httpx.Client(base_url=url, headers=API, timeout=30) as http:
        http.post("/api/send", json={"parts": [{"text": "hello"}]})
        http.post("/api/send", json={"parts": [{"text": "words a b"}], "stream": True})
        exchanges = http.get("/api/wire").json()["exchanges"]
    assert "s3cret" not in json.dumps(exchanges)
    card, send, stream = exchanges[0], exchanges[1], exchanges[2]
    assert card["method"] == "GET" and card["url"].endswith("/.well-known/agent-card.json")
    assert ["Authorization", "[redacted]"] in [[k.title(), v] for k, v in send["requestHeaders"]]
    assert "hello" in send["requestBody"] and "echo: hello" in send["responseBody"]
    assert send["status"] == 200 and send["done"]
    assert "id: " in stream["responseBody"] and "data: " in stream["responseBody"]  # raw SSE


def test_a_dropped_stream_shows_the_reconnect(serve: Any) -> None:
    from tests.client.proxy import CuttingProxy
    from tests.client.replay_agent import ReplayAgent
    from tests.client.servers import ServerThread

    agent = ReplayAgent()
    with ServerThread(agent.app) as upstream:
        proxy = CuttingProxy(upstream.port, cut_after=650)
        try:
            url = serve(inspector_app(proxy.url))
            with httpx.Client(base_url=url, headers=API, timeout=30) as http:
                body = {"parts": [{"text": "go"}], "stream": True}
                entries = timeline(http.post("/api/send", json=body))
                exchanges = http.get("/api/wire").json()["exchanges"]
        finally:
            proxy.close()
    kinds = [e["kind"] for e in entries]
    assert "reconnect" in kinds, kinds
    reconnect = entries[kinds.index("reconnect")]
    assert reconnect["lastEventId"] == entries[kinds.index("reconnect") - 1]["seq"]
    seqs = [int(e["seq"]) for e in entries if e.get("seq")]
    assert seqs == list(range(1, 12))  # every event once, in order, across the reconnect
    assert agent.calls == ["SendStreamingMessage", "SubscribeToTask"]
    resumed = [e for e in exchanges if "SubscribeToTask" in e["requestBody"]]
    assert resumed and ["last-event-id", reconnect["lastEventId"]] in resumed[0]["requestHeaders"]


def test_an_unreachable_agent_is_an_error_not_a_traceback(serve: Any) -> None:
    from tests.conftest import free_port

    url = serve(inspector_app(f"http://127.0.0.1:{free_port()}"))
    answer = httpx.get(url + "/api/card", headers=API)
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["message"] and "Traceback" not in answer.text


def test_the_wire_log_is_bounded() -> None:
    log = WireLog(max_exchanges=3, max_body=10)
    for _ in range(5):
        exchange = log.open(httpx.Request("POST", "http://agent/", content=b"x" * 20))
        log.append_body(exchange, "y" * 30)
        exchange.done = True
    kept = log.since(0)
    assert [e["id"] for e in kept] == [3, 4, 5]
    assert all(len(e["requestBody"]) == 10 and len(e["responseBody"]) == 10 for e in kept)
    assert all(e["truncated"] for e in kept)
    assert log.since(4) == [kept[-1]]


def test_the_inspect_command_serves_the_page_on_loopback(agent_url: str) -> None:
    """``simple-a2a inspect URL`` as a real process: prints the page's URL, binds loopback,
    sends the global credentials to the agent and never to the page."""
    import subprocess
    import time

    from tests.conftest import free_port

    port = free_port()
    command = [str(Path(sys.executable).parent / "simple-a2a"), "--token", "t0ken", "inspect"]
    process = subprocess.Popen(
        [*command, agent_url.removeprefix("http://"), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"Inspecting {agent_url} at http://127.0.0.1:{port}/"), line
        page = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 10
        while True:
            try:
                info = httpx.get(page + "api/card", headers=API).json()
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the inspector did not start"
                time.sleep(0.05)
        assert info["card"]["name"] == "CLI test agent"
        wire = httpx.get(page + "api/wire", headers=API).json()["exchanges"]
        assert ["authorization", "[redacted]"] in wire[0]["requestHeaders"]
        assert "t0ken" not in json.dumps(wire)
        # Loopback only: the page is not on the machine's other addresses.
        assert httpx.get(page, headers={"Host": "192.0.2.1"}).status_code == 403
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_inspector_inside_an_agent(serve: Any) -> None:
    """``server(..., inspector=True)``: the page at /inspector/ inspects that agent (at its own
    address, even when the agent itself is mounted under a prefix); off by default."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from simple_a2a.server import server
    from tests.cli_agent import Scripted

    card = scripted_server().card
    off = serve(server(card, Scripted()).app)
    assert httpx.get(off + "/inspector/").status_code == 404
    agent = server(card, Scripted(), inspector=True).app
    host = Starlette(routes=[Mount("/agents/scripted", app=agent)])
    for base in (serve(agent), serve(host) + "/agents/scripted"):
        with httpx.Client(base_url=base, headers=API, timeout=30) as http:
            assert http.get("/inspector").status_code in (307, 308)  # to /inspector/
            page = http.get("/inspector/")
            assert page.status_code == 200 and "A2A inspector" in page.text
            assert page.headers["content-security-policy"] == CSP
            info = http.get("/inspector/api/card").json()
            assert info["cardUrl"] == base + "/.well-known/agent-card.json"
            reply = http.post("/inspector/api/send", json={"parts": [{"text": "hi"}]}).json()
            assert reply["task"]["artifacts"][0]["parts"] == [{"text": "echo: hi"}]
            # The agent's own routes are untouched.
            assert http.get("/.well-known/agent-card.json").json()["name"] == "CLI test agent"


async def test_the_wire_shows_compressed_bodies_decompressed_and_hides_query_keys() -> None:
    import gzip

    from simple_a2a.inspector.wire import RecordingTransport

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}).encode()

    def agent(request: httpx.Request) -> httpx.Response:
        headers = {"content-encoding": "gzip", "content-type": "application/json"}
        return httpx.Response(200, headers=headers, content=gzip.compress(body))

    log = WireLog()
    transport = RecordingTransport(log, httpx.MockTransport(agent))
    async with httpx.AsyncClient(transport=transport) as http:
        answer = await http.post("http://agent.test/rpc?api_key=s3cret&x=1", json={"a": 1})
    assert answer.json() == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    [exchange] = log.since(0)
    assert exchange["responseBody"] == body.decode()
    assert "s3cret" not in exchange["url"] and "x=1" in exchange["url"]


def test_open_timelines_are_bounded(serve: Any, agent_url: str) -> None:
    """At most MAX_STREAMS timelines at once (each holds a stream to the agent); one more is
    told so in its timeline, and a slot frees when a timeline ends."""
    import contextlib

    from simple_a2a.inspector import app as inspector_module

    url = serve(inspector_app(agent_url))
    limit = inspector_module.MAX_STREAMS
    with contextlib.ExitStack() as stack, httpx.Client(base_url=url, headers=API) as http:
        ids, lines = [], []  # (a dropped line iterator would close its response)
        for _ in range(limit):
            body = {"parts": [{"text": "slow"}], "stream": True}
            response = stack.enter_context(http.stream("POST", "/api/send", json=body))
            lines.append(response.iter_lines())
            ids.append(json.loads(next(lines[-1]))["event"]["id"])
        over = timeline(http.post("/api/send", json={"parts": [{"text": "x"}], "stream": True}))
        assert [e["kind"] for e in over] == ["error", "end"]
        assert over[0]["error"]["type"] == "TooManyStreams"
        http.post(f"/api/tasks/{ids[0]}/cancel")  # its timeline ends: a slot is free again
        assert [json.loads(line)["kind"] for line in lines[0]][-1] == "end"
        again = timeline(http.post("/api/send", json={"parts": [{"text": "y"}], "stream": True}))
        assert again[-2]["event"]["status"]["state"] == "TASK_STATE_COMPLETED"
        for task_id in ids[1:]:
            http.post(f"/api/tasks/{task_id}/cancel")
