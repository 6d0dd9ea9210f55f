"""The ITK agent (itk/main.py) as the integration test kit runs it: a real subprocess on free
ports, readiness by polling its card, instructions over every binding and both versions, and
chains where it calls a second instance of itself (the contract: docs/interop.md#itk)."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from simple_a2a import Client
from simple_a2a.protocol import Message, Part, Task

pytest.importorskip("grpc")

ITK = Path(__file__).resolve().parent.parent / "itk"
# itk/ is not a package (the kit runs main.py from inside it): load its codec by path
_spec = importlib.util.spec_from_file_location("itk_instruction", ITK / "instruction.py")
assert _spec is not None and _spec.loader is not None
itk = sys.modules["itk_instruction"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(itk)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Agent:
    def __init__(self, tmp: Path, name: str) -> None:
        self.http, self.grpc = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.http}"
        self.log = tmp / f"{name}.log"
        env = {**os.environ, "ITK_LOG_LEVEL": "INFO"}
        self.proc = subprocess.Popen(
            [sys.executable, "main.py", "--httpPort", str(self.http), "--grpcPort", str(self.grpc)],
            cwd=ITK,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, budget: float = 35.0) -> None:
        """As the kit does: GET the card until 200."""
        deadline = time.monotonic() + budget
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(self.url + "/.well-known/agent-card.json").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError("agent not ready:\n" + self.log.read_text())

    def stop(self) -> None:
        """SIGTERM, as the kit stops it: a graceful shutdown (uvicorn then re-raises the signal,
        so the exit status is -SIGTERM, or 0 if the process ended first)."""
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(15) in (0, -signal.SIGTERM)
        assert "Application shutdown complete" in self.log.read_text()


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Agent, Agent]]:
    tmp = tmp_path_factory.mktemp("itk")
    pair = Agent(tmp, "a"), Agent(tmp, "b")
    try:
        for agent in pair:
            agent.wait_ready()
        yield pair
    finally:
        for agent in pair:
            if agent.proc.poll() is None:
                agent.stop()


def _b64(instruction: itk.Instruction) -> str:
    return base64.b64encode(itk.encode(instruction)).decode()


def _rpc(agent: Agent, method: str, params: dict, *, v10: bool, path: str = "/jsonrpc/") -> dict:
    headers = {"A2A-Version": "1.0"} if v10 else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = httpx.post(agent.url + path, json=body, headers=headers, timeout=60).json()
    assert "error" not in reply, reply
    return reply["result"]


def _send_v10(agent: Agent, instruction: itk.Instruction, path: str = "/jsonrpc/") -> dict:
    part = {
        "raw": _b64(instruction),
        "mediaType": "application/x-protobuf",
        "filename": "instruction.bin",
    }
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [part]}
    return _rpc(agent, "SendMessage", {"message": message}, v10=True, path=path)


def _status_text(task: dict) -> str:
    parts = task["status"]["message"]["parts"]
    assert len(parts) == 1  # exactly one text part: the kit matches tokens inside one part
    return parts[0]["text"]


def test_card_follows_the_kit_contract(agents: tuple[Agent, Agent]) -> None:
    a, _ = agents
    card = httpx.get(a.url + "/.well-known/agent-card.json").json()
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
    assert card["skills"] == [] and card["defaultInputModes"] == ["text/plain"]
    assert card["defaultOutputModes"] == ["text/plain"]
    listed = [
        (i["protocolBinding"], i["url"], i["protocolVersion"]) for i in card["supportedInterfaces"]
    ]
    assert listed == [
        ("JSONRPC", f"{a.url}/jsonrpc/", "1.0"),
        ("JSONRPC", f"{a.url}/jsonrpc/", "0.3"),
        ("HTTP+JSON", f"{a.url}/rest/", "1.0"),
        ("HTTP+JSON", f"{a.url}/rest/", "0.3"),
        ("GRPC", f"127.0.0.1:{a.grpc}", "1.0"),  # bare host:port
        ("GRPC", f"127.0.0.1:{a.grpc}", "0.3"),  # the same port: a2a.v1.A2AService beside it
    ]
    assert card["url"] == f"{a.url}/jsonrpc/" and card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"].startswith("0.3")
    assert {(i["transport"], i["url"]) for i in card["additionalInterfaces"]} == {
        ("JSONRPC", f"{a.url}/jsonrpc/"),
        ("HTTP+JSON", f"{a.url}/rest/"),
        ("GRPC", f"127.0.0.1:{a.grpc}"),
    }


@pytest.mark.parametrize("path", ["/jsonrpc/", "/jsonrpc"])
def test_jsonrpc_v10_return_response_and_steps(agents: tuple[Agent, Agent], path: str) -> None:
    a, _ = agents
    instruction = itk.series(itk.respond("one"), itk.series(itk.respond("two")), itk.respond("3"))
    task = _send_v10(a, instruction, path)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _status_text(task) == "one\ntwo\n3"


def test_jsonrpc_v03_file_part(agents: tuple[Agent, Agent]) -> None:
    a, _ = agents
    file = {
        "bytes": _b64(itk.respond("hello 0.3")),
        "mimeType": "application/x-protobuf",
        "name": "instruction.bin",
    }
    message = {
        "kind": "message",
        "messageId": "m-3",
        "role": "user",
        "parts": [{"kind": "file", "file": file}],
    }
    task = _rpc(a, "message/send", {"message": message}, v10=False)
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert _status_text(task) == "hello 0.3"


def test_rest_v10_and_v03(agents: tuple[Agent, Agent]) -> None:
    a, _ = agents
    part = {"raw": _b64(itk.respond("rest 1.0")), "mediaType": "application/x-protobuf"}
    body = {"message": {"messageId": "m-r1", "role": "ROLE_USER", "parts": [part]}}
    reply = httpx.post(
        a.url + "/rest/message:send",
        json=body,
        headers={"A2A-Version": "1.0", "Content-Type": "application/a2a+json"},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    assert _status_text(reply.json()["task"]) == "rest 1.0"
    # 0.3 ProtoJSON as python v0.3 sends it: the file's bytes hold the *base64 text* (base64 twice)
    twice = base64.b64encode(_b64(itk.respond("rest 0.3")).encode()).decode()
    file = {"fileWithBytes": twice, "mimeType": "application/x-protobuf", "name": "instruction.bin"}
    body = {
        "request": {"messageId": "m-r3", "role": "ROLE_USER", "content": [{"file": file}]},
        "configuration": {"blocking": True},
    }
    # joined naively onto the card's URL (".../rest/" + "/v1/message:send")
    reply = httpx.post(a.url + "/rest//v1/message:send", json=body, timeout=60)
    assert reply.status_code == 200, reply.text
    task = reply.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [p["text"] for p in task["status"]["message"]["content"]] == ["rest 0.3"]


def test_no_instruction_fails_the_task(agents: tuple[Agent, Agent]) -> None:
    a, _ = agents
    message = {"messageId": "m-x", "role": "ROLE_USER", "parts": [{"text": "just words"}]}
    task = _rpc(a, "SendMessage", {"message": message}, v10=True)["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert _status_text(task) == "No valid instruction found in request"


def _message(instruction: itk.Instruction) -> Message:
    return Message.user(
        Part.raw(
            itk.encode(instruction), media_type="application/x-protobuf", filename="instruction.bin"
        )
    )


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
def test_our_client_over_each_binding(agents: tuple[Agent, Agent], binding: str) -> None:
    a, _ = agents
    with Client(a.url, bindings=[binding], timeout=60) as client:
        task = client.send(_message(itk.respond(f"via {binding}")))
        assert client.interface is not None and client.interface.protocol_binding == binding
    assert isinstance(task, Task) and task.status.message is not None
    assert task.status.message.text == f"via {binding}"


def test_a_0_3_reader_reaches_the_grpc_port(agents: tuple[Agent, Agent]) -> None:
    """The card's 0.3 fields alone (a 0.3 client's view) lead to the same gRPC port, where our
    client speaks 0.3's ``a2a.v1.A2AService``."""
    a, _ = agents
    card = httpx.get(a.url + "/.well-known/agent-card.json").json()
    v03_only = {k: v for k, v in card.items() if k != "supportedInterfaces"}
    with Client(v03_only, bindings=["GRPC"], timeout=60) as client:
        task = client.send(_message(itk.respond("via 0.3 gRPC")))
        assert client.interface is not None and client.protocol_version == "0.3"
        assert client.interface.url == f"127.0.0.1:{a.grpc}"
    assert isinstance(task, Task) and task.status.message is not None
    assert task.status.message.text == "via 0.3 gRPC"


def _chain(a: Agent, b: Agent, transport: str, **call: object) -> itk.Instruction:
    """The kit's shape for a -> b -> a over one transport."""
    hold = call.get("behavior") == "resubscribe"
    back = itk.series(
        itk.respond(f"[b -> a ({transport})]", hold=hold),
        itk.call(
            transport, a.url, itk.respond(f"traversal-completed:{transport}", hold=hold), **call
        ),
    )
    return itk.series(
        itk.respond(f"[a -> b ({transport})]", hold=hold),
        itk.call(transport, b.url, back, **call),  # type: ignore[arg-type]
    )


def _tokens(transport: str) -> str:
    return f"[a -> b ({transport})]\n[b -> a ({transport})]\ntraversal-completed:{transport}"


@pytest.mark.parametrize("transport", ["jsonrpc", "http_json", "grpc"])
def test_chain_back_and_forth(agents: tuple[Agent, Agent], transport: str) -> None:
    """a -> b -> a: a's task awaits b, which calls back into a (the executor is reentrant)."""
    a, b = agents
    task = _send_v10(a, _chain(a, b, transport))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert _status_text(task) == _tokens(transport)


def _stream_status_texts(
    agent: Agent, instruction: itk.Instruction, until: str | None = None
) -> list[str]:
    """As the kit reads a stream: only the agent's ``statusUpdate.status.message``; with
    ``until``, disconnect once a text holds it (the runner does, leaving a held task alive)."""
    part = {"raw": _b64(instruction), "mediaType": "application/x-protobuf"}
    params = {"message": {"messageId": "m-s", "role": "ROLE_USER", "parts": [part]}}
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": params}
    texts: list[str] = []
    first = None
    with httpx.stream(
        "POST", agent.url + "/jsonrpc/", json=body, headers={"A2A-Version": "1.0"}, timeout=60
    ) as reply:
        for line in reply.iter_lines():
            if not line.startswith("data:"):
                continue
            result = json.loads(line[5:])["result"]
            first = first or result
            update = result.get("statusUpdate", {}).get("status", {}).get("message")
            if update and update["role"] == "ROLE_AGENT":
                texts += [p["text"] for p in update["parts"]]
                if until is not None and until in texts[-1]:
                    break
    # the first event is the Task (SUBMITTED), carrying the id resubscribing callers need
    assert first is not None and first["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert until is None or until in texts[-1], texts
    return texts


@pytest.mark.parametrize("transport", ["jsonrpc", "grpc"])
def test_streaming_chain(agents: tuple[Agent, Agent], transport: str) -> None:
    a, b = agents
    texts = _stream_status_texts(a, _chain(a, b, transport, streaming=True))
    assert texts == [_tokens(transport)]


def test_resubscribe_chain_holds_and_cancels(agents: tuple[Agent, Agent]) -> None:
    """Every ReturnResponse holds: each hop streams, drops the stream, subscribes, reads up to
    ``task-finished``, then cancels the callee's held task."""
    a, b = agents
    chain = _chain(a, b, "http_json", streaming=True, behavior="resubscribe")
    started = time.monotonic()
    texts = _stream_status_texts(a, chain, until="traversal-completed:http_json")
    assert texts[0] == _tokens("http_json") + "\ntask-finished"
    assert time.monotonic() - started < 9  # the callees were cancelled, not left to time out


class Notifications:
    """The kit's notifications_app.py: stores POSTed JSON that names a task, else 400."""

    def __init__(self) -> None:
        self.stored: list[tuple[dict[str, str], dict]] = []
        self.app = Starlette(
            routes=[Route("/notifications", self.endpoint, methods=["GET", "POST"])]
        )

    async def endpoint(self, request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse([body for _headers, body in self.stored])
        body = await request.json()
        named = body.get("task", {}).get("id") or body.get("statusUpdate", {}).get("taskId")
        if not named and not (body.get("kind") == "task" and body.get("id")):
            return Response(status_code=400)
        self.stored.append((dict(request.headers), body))
        return JSONResponse({"ok": True})


def test_push_notification_chain(agents: tuple[Agent, Agent], serve: Any) -> None:
    """As the kit's push test: a non-streaming send with a webhook to agent a, each hop's call
    registering one too; one GET right after a answers finds every chain suffix in one text."""
    a, b = agents
    webhook = Notifications()
    hook = serve(webhook.app)
    part = {
        "raw": _b64(
            _chain(
                a, b, "jsonrpc", behavior="push_notification", push_url=hook.removeprefix("http://")
            )
        ),
        "mediaType": "application/x-protobuf",
    }
    params = {
        "message": {"messageId": "m-p", "role": "ROLE_USER", "parts": [part]},
        "configuration": {
            "taskPushNotificationConfig": {"url": hook + "/notifications", "token": "runner-token"}
        },
    }
    task = _rpc(a, "SendMessage", params, v10=True)["task"]
    assert _status_text(task) == _tokens("jsonrpc")
    texts = [
        p["text"]
        for event in httpx.get(hook + "/notifications").json()
        if (message := event.get("statusUpdate", {}).get("status", {}).get("message"))
        and message["role"] == "ROLE_AGENT"
        for p in message["parts"]
    ]
    for suffix in (
        "traversal-completed:jsonrpc",
        "[b -> a (jsonrpc)]\ntraversal-completed:jsonrpc",
        _tokens("jsonrpc"),
    ):
        assert suffix in texts, (suffix, texts)
    tokens = {headers.get("x-a2a-notification-token") for headers, _ in webhook.stored}
    assert tokens == {"runner-token", "itk-token"}


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_official_sdk_client_reads_the_card_and_calls(
    agents: tuple[Agent, Agent], binding: str, streaming: bool
) -> None:
    """The official Python SDK 1.3.0's client (the kit's runner and python_v10 peers) parses the
    hybrid card, picks the binding's 1.0 interface (gRPC: the bare ``host:port``) and calls."""
    grpc = pytest.importorskip("grpc")
    a2a_client = pytest.importorskip("a2a.client")
    a2a_types = pytest.importorskip("a2a.types")
    a, b = agents
    config = a2a_client.ClientConfig(
        supported_protocol_bindings=[binding],
        streaming=streaming,
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    client = await a2a_client.ClientFactory(config).create_from_url(a.url)
    raw = itk.encode(itk.series(itk.respond("sdk"), itk.call("grpc", b.url, itk.respond("b"))))
    part = a2a_types.Part(raw=raw, media_type="application/x-protobuf", filename="instruction.bin")
    message = a2a_types.Message(message_id="m-sdk", role=a2a_types.Role.ROLE_USER, parts=[part])
    try:
        request = a2a_types.SendMessageRequest(message=message)
        events = [event async for event in client.send_message(request)]
    finally:
        await client.close()
    last = events[-1]
    status = last.status_update.status if last.HasField("status_update") else last.task.status
    assert status.state == a2a_types.TaskState.TASK_STATE_COMPLETED
    assert [p.text for p in status.message.parts] == ["sdk\nb"]


def test_unreachable_callee_fails_the_task(agents: tuple[Agent, Agent]) -> None:
    a, _ = agents
    nobody = f"http://127.0.0.1:{_free_port()}"
    task = _send_v10(a, itk.series(itk.respond("x"), itk.call("jsonrpc", nobody, itk.respond("y"))))
    assert task["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert _status_text(task["task"]).startswith("instruction failed: ")


def test_jsonrpc_v03_stream(agents: tuple[Agent, Agent]) -> None:
    """0.3 ``message/stream``: the Task first, the answer in the final status-update."""
    a, _ = agents
    file = {"bytes": _b64(itk.respond("streamed 0.3")), "mimeType": "application/x-protobuf"}
    message = {"kind": "message", "messageId": "m-s3", "role": "user",
               "parts": [{"kind": "file", "file": file}]}  # fmt: skip
    body = {"jsonrpc": "2.0", "id": 4, "method": "message/stream", "params": {"message": message}}
    with httpx.stream("POST", a.url + "/jsonrpc", json=body, timeout=60) as reply:
        events = [
            json.loads(line[5:])["result"] for line in reply.iter_lines() if line[:5] == "data:"
        ]
    assert events[0]["kind"] == "task" and events[0]["status"]["state"] == "submitted"
    final = events[-1]
    assert final["kind"] == "status-update" and final["final"] is True
    assert final["status"]["state"] == "completed"
    assert [p["text"] for p in final["status"]["message"]["parts"]] == ["streamed 0.3"]
