"""Interop with the official JavaScript SDK ``@a2a-js/sdk`` 1.3.0 (issue 15), both directions,
A2A 1.0 and 0.3 over JSON-RPC, HTTP+JSON and gRPC, with real OS processes on loopback:

- the SDK's client (tests/interop_js/client.mjs; 0.3: its ``compat/v0_3`` transports) against
  our server: one Node process per binding and version runs the whole scenario (card, send,
  stream, get, list, multi-turn, cancel with a subscriber, subscribe to a finished task, push
  config CRUD and delivery, unknown tasks) and prints each step's outcome, which the tests
  below check;
- our ``AsyncClient`` against an agent built from the SDK's server pieces
  (tests/interop_js/agent.mjs: DefaultRequestHandler, Express JSON-RPC and REST handlers with
  the SDK's 0.3 compat layer on, which picks 0.3 or 1.0 per request by ``A2A-Version``, and
  its gRPC services, ``lf.a2a.v1`` and the 0.3 ``a2a.v1``, on one port).

``scripts/js_sdk`` installs the pinned SDK with npm; without node, npm or network the tests skip
and say why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from simple_a2a import Message, Task, TaskNotFoundError, TaskState, TaskStatusUpdateEvent
from simple_a2a.client import AsyncClient, afold
from simple_a2a.protocol.errors import (
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from simple_a2a.protocol.models import TaskPushNotificationConfig
from simple_a2a.server import Limits, server
from tests.conftest import free_port
from tests.interop.peers import PeerProcess, healthy_peer, peer_for_test
from tests.push.push_helpers import Receiver, settings
from tests.support.agents import TestAgent, cancel_while_subscribed, make_card, serving

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "interop_js"
BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
SETUPS = [(b, v) for v in ("1.0", "0.3") for b in BINDINGS]
PEER = "JavaScript SDK 1.3.0"
OURS = {"peer": PEER, "direction": "ours → theirs"}
THEIRS = {"peer": PEER, "direction": "theirs → ours"}
HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture(scope="session")
def node() -> str:
    """Node with the pinned @a2a-js/sdk installed (scripts/js_sdk), or skip saying why."""
    executable = shutil.which("node")
    if executable is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the JavaScript SDK interop tests need Node 20 and npm")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "js_sdk")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"npm could not install @a2a-js/sdk: {done.stderr.strip()[-500:]}")
    return executable


def test_js_sdk_installs_one_at_a_time(node: str) -> None:
    """scripts/js_sdk waits for an install already running (every pytest-xdist worker calls it
    through ``node``; two npm runs in one node_modules break each other)."""
    import fcntl

    with (HERE / ".js_sdk.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen(["bash", str(ROOT / "scripts" / "js_sdk")])
        try:
            # Installed already (``node``), so unlocked it would exit at once; a slow start
            # can only make this pass, never fail.
            with pytest.raises(subprocess.TimeoutExpired):
                waiting.wait(timeout=1)
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
        assert waiting.wait(timeout=60) == 0


# -- the SDK's client against our server ---------------------------------------------------------


@pytest.fixture(scope="module")
def our_server() -> Iterator[str]:
    """Our agent over JSON-RPC, HTTP+JSON and gRPC, 1.0 and 0.3 (one card lists them all)."""
    agent = server(make_card(pushNotifications=True), TestAgent(), push=settings())
    with serving(agent.app, grpc_of=agent) as base:
        yield base


@pytest.fixture(scope="module")
def webhook() -> Iterator[tuple[Receiver, str]]:
    receiver = Receiver()
    with serving(receiver.app) as base:
        yield receiver, base + "/hook"


@pytest.fixture(scope="module", params=SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
def their_client(
    request: pytest.FixtureRequest, node: str, our_server: str, webhook: tuple[Receiver, str]
) -> dict[str, Any]:
    """The steps of tests/interop_js/client.mjs, run once per binding and protocol version
    against our server (0.3: the SDK's compat/v0_3 transports on our 0.3 card)."""
    binding, version = request.param
    done = subprocess.run(
        [node, str(HERE / "client.mjs"), our_server, binding, version, webhook[1]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=HERE,
    )
    if done.returncode != 0:
        raise AssertionError(f"the JS SDK client failed: {done.stderr[-2000:]}")
    steps: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    steps["binding"], steps["version"] = request.param
    return steps


def ok(steps: dict[str, Any], name: str) -> Any:
    step = steps[name]
    assert step["ok"], f"{name}: {step['error']}"
    return step["value"]


def failed(steps: dict[str, Any], name: str) -> dict[str, Any]:
    step = steps[name]
    assert not step["ok"], f"{name} succeeded: {step['value']}"
    error: dict[str, Any] = step["error"]
    assert error["typed"], f"{name}: the SDK raised an untyped error {error}"
    return error


#: what each streaming step's error carries, by its JSON-RPC code
STREAM_ERROR_CODES = {"UNSUPPORTED_OPERATION": -32004, "TASK_NOT_FOUND": -32001}


def failed_streaming(steps: dict[str, Any], name: str, reason: str) -> None:
    """A streaming step that must fail with ``reason``. Peer fault J3 (docs/interop.md): over
    0.3 JSON-RPC our error comes as an SSE event (0.3 §3.3.1), which the SDK's 0.3 client does
    not type: it raises a plain Error whose message carries the code."""
    if (steps["binding"], steps["version"]) != ("JSONRPC", "0.3"):
        assert failed(steps, name)["reason"] == reason
        return
    step = steps[name]
    assert not step["ok"], f"{name} succeeded: {step['value']}"
    error = step["error"]
    assert not error["typed"], f"J3 is fixed: {error}"
    assert "SSE event contained an error" in error["message"], error
    assert f"(Code: {STREAM_ERROR_CODES[reason]})" in error["message"], error


@pytest.mark.interop(**THEIRS)
def test_their_client_discovers_and_sends(their_client: dict[str, Any]) -> None:
    card = ok(their_client, "card")
    assert card == {"transport": their_client["binding"], "version": their_client["version"]}
    sent = ok(their_client, "send")
    assert sent["state"] == "TASK_STATE_COMPLETED" and sent["artifacts"] == ["echo: echo hi"]
    got = ok(their_client, "get")
    assert got["id"] == sent["id"] and got["artifacts"] == ["echo: echo hi"]
    if their_client["version"] == "1.0":
        assert ok(their_client, "list") == [sent["id"]]  # ListTasks filtered by the context
    elif their_client["binding"] == "JSONRPC":
        # 0.3 JSON-RPC has no tasks/list (0.3 §7.4: "N/A"); the SDK sends it anyway and our
        # server answers -32601 method not found.
        assert "Method not found" in their_client["list"]["error"]["message"]
    else:
        # The 0.3 a2a.proto has no ListTask: the SDK's 0.3 REST and gRPC transports refuse it
        # themselves.
        assert failed(their_client, "list")["reason"] == "UNSUPPORTED_OPERATION"


@pytest.mark.interop(**THEIRS)
def test_their_client_streams(their_client: dict[str, Any]) -> None:
    events = ok(their_client, "stream")
    assert events[0] == {"kind": "task", "state": "TASK_STATE_SUBMITTED"}
    assert [e["text"] for e in events if e["kind"] == "artifactUpdate"] == ["0 ", "1 ", "2 "]
    assert events[-1] == {"kind": "statusUpdate", "state": "TASK_STATE_COMPLETED"}


@pytest.mark.interop(**THEIRS)
def test_their_client_multi_turn(their_client: dict[str, Any]) -> None:
    asked = ok(their_client, "ask")
    assert asked["state"] == "TASK_STATE_INPUT_REQUIRED" and asked["statusText"] == "what size?"
    done = ok(their_client, "follow_up")
    assert done["id"] == asked["id"] and done["contextId"] == asked["contextId"]
    assert done["state"] == "TASK_STATE_COMPLETED" and done["artifacts"] == ["thanks for large"]


@pytest.mark.interop(**THEIRS, faults={"JSONRPC 0.3": "J3"})
def test_their_client_cancel_and_subscribe(their_client: dict[str, Any]) -> None:
    assert ok(their_client, "slow")["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert ok(their_client, "cancel")["state"] == "TASK_STATE_CANCELED"
    # §3.1.6: the subscription starts with the Task, then follows it to its terminal state.
    events = ok(their_client, "subscribe")
    assert events[0] == {"kind": "task", "state": "TASK_STATE_WORKING"}
    assert events[-1] == {"kind": "statusUpdate", "state": "TASK_STATE_CANCELED"}
    # §3.1.6: subscribing to a task in a terminal state is UnsupportedOperationError, answered
    # before any stream opens, so the SDK types it (but over 0.3 JSON-RPC: J3).
    failed_streaming(their_client, "subscribe_finished", "UNSUPPORTED_OPERATION")


@pytest.mark.interop(**THEIRS)
def test_their_client_push_config_crud(their_client: dict[str, Any]) -> None:
    created = ok(their_client, "push_create")
    assert created["id"] == "cfg-1" and created["url"] == HOOK and created["token"] == "t0k"
    assert created["taskId"] == ok(their_client, "slow")["id"]
    assert ok(their_client, "push_get") == {"id": "cfg-1", "url": HOOK}
    assert ok(their_client, "push_list") == ["cfg-1"]
    assert ok(their_client, "push_delete") == []  # deleted, then listed empty


@pytest.mark.interop(**THEIRS)
async def test_their_client_push_delivery(
    their_client: dict[str, Any], webhook: tuple[Receiver, str]
) -> None:
    """The SDK registers a webhook with its message: our server posts the version's shapes
    (1.0: StreamResponse as application/a2a+json, §13.2; 0.3: the 0.3 Task, 0.3 §9.5)."""
    task_id = ok(their_client, "push_delivery")["id"]
    receiver = webhook[0]

    def posts() -> list[tuple[dict[str, str], dict[str, Any]]]:
        found = [(h, json.loads(b)) for h, b in receiver.received]
        return [(h, p) for h, p in found if task_id in json.dumps(p)]

    for _ in range(100):
        if any("completed" in json.dumps(p).lower() for _, p in posts()):
            break
        await asyncio.sleep(0.05)
    headers, last = posts()[-1]
    assert headers.get("x-a2a-notification-token") == "hook-tok"
    if their_client["version"] == "0.3":
        assert headers["content-type"].startswith("application/json")
        assert last["kind"] == "task" and last["id"] == task_id
        assert last["status"]["state"] == "completed"
    else:
        assert headers["content-type"].startswith("application/a2a+json")
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.interop(**THEIRS, faults={"JSONRPC 0.3": "J3"})
def test_their_client_types_task_not_found(their_client: dict[str, Any]) -> None:
    for name in ("get_missing", "cancel_missing"):
        error = failed(their_client, name)
        assert error["taskNotFound"] and error["reason"] == "TASK_NOT_FOUND", (name, error)
    failed_streaming(their_client, "subscribe_missing", "TASK_NOT_FOUND")


@pytest.mark.interop(**THEIRS)
@pytest.mark.parametrize("setup", SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
def test_their_client_meets_our_rate_limit(node: str, setup: tuple[str, str]) -> None:
    """Our RateLimitError (``Limits.max_running_tasks_per_caller`` = 1): the SDK's client gets
    an error carrying our message on every transport (JSON-RPC -32603, HTTP+JSON 503, gRPC
    UNAVAILABLE), never a hang or a parse failure; the task it holds is then canceled."""
    agent = server(make_card(), TestAgent(), limits=Limits(max_running_tasks_per_caller=1))
    with serving(agent.app, grpc_of=agent) as base:
        done = subprocess.run(
            [node, str(HERE / "client.mjs"), base, *setup],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=HERE,
            env={**os.environ, "SCENARIO": "rate_limit"},
        )
    assert done.returncode == 0, f"the JS SDK client failed: {done.stderr[-2000:]}"
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert ok(steps, "held")["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert not steps["refused"]["ok"], steps["refused"]
    error = steps["refused"]["error"]
    assert "Limits.max_running_tasks_per_caller" in error["message"], error
    # (typed by the SDK, as its own A2A error class, on every transport but its 0.3 REST one)
    assert error["typed"] or setup == ("HTTP+JSON", "0.3"), error
    assert ok(steps, "cancel_held")["state"] == "TASK_STATE_CANCELED"


# -- our client against the SDK's agent ----------------------------------------------------------


@pytest.fixture(scope="module")
def their_peer(node: str) -> Iterator[PeerProcess]:
    """tests/interop_js/agent.mjs as a Node process, with the SDK's 0.3 compat layer on and its
    gRPC services on a second port."""
    command = [node, str(HERE / "agent.mjs")]
    peer = PeerProcess(lambda port: [*command, str(port), "legacy", str(free_port())], PEER, HERE)
    with healthy_peer(peer):
        yield peer


@pytest.fixture
def their_agent(request: pytest.FixtureRequest, their_peer: PeerProcess) -> Iterator[str]:
    """The JS SDK agent's base URL, healthy for this test (restarted if it hung or died)."""
    yield from peer_for_test(request, their_peer)


@contextlib.asynccontextmanager
async def open_client(base: str, binding: str, version: str) -> AsyncIterator[AsyncClient]:
    target: str | dict[str, Any] = base
    if version == "0.3":
        # The SDK's compat layer serves the 0.3 card when no A2A-Version is asked for, but
        # that card keeps the 1.0 interfaces, which our client rightly prefers (§3.6.3); a card
        # without them makes our client speak 0.3 to the same routes.
        target = httpx.get(base + "/.well-known/agent-card.json").json()
        del target["supportedInterfaces"]
    async with AsyncClient(target, bindings=[binding]) as client:
        assert client.protocol_version is None or client.protocol_version == version
        yield client


@pytest.fixture(params=SETUPS, ids=[f"{b}-{v}" for b, v in SETUPS])
async def agent(request: pytest.FixtureRequest, their_agent: str) -> Any:
    async with open_client(their_agent, *request.param) as client:
        yield client


@pytest.mark.interop(**OURS)
async def test_our_client_discovers_sends_gets_lists(agent: AsyncClient) -> None:
    card = await agent.agent_card()
    assert card.name == "JS SDK interop agent"
    task = await agent.send("echo hi")
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    assert task.text == "echo: echo hi"
    got = await agent.get(task.id)
    assert got.id == task.id and got.state is TaskState.COMPLETED
    if agent.protocol_version == "1.0":
        page = await agent.list(context_id=task.context_id)
        assert [t.id for t in page.tasks] == [task.id]
    reply = await agent.send("reply there")
    assert isinstance(reply, Message) and reply.text == "reply: there"


@pytest.mark.interop(**OURS, protocol="0.3", faults={"HTTP+JSON": "J2"})
@pytest.mark.parametrize("binding", BINDINGS)
async def test_our_client_lists_over_v03(binding: str, their_agent: str) -> None:
    async with open_client(their_agent, binding, "0.3") as agent:
        task = await agent.send("echo listed")
        assert isinstance(task, Task) and agent.protocol_version == "0.3"
        # 0.3 has no ListTasks on any binding (§7.4: "N/A" for JSON-RPC; no rpc in its proto):
        # our client refuses it before sending, saying where to list instead (the card has no
        # 1.0 interface here). Peer fault J2 (docs/interop.md) is why it must: the SDK's 0.3
        # REST layer has no GET /v1/tasks, the request falls through to its 1.0 router, which
        # reads "v1" as a tenant and answers 200 with an empty 1.0 list.
        with pytest.raises(UnsupportedOperationError, match=r"no A2A 1\.0 interface"):
            await agent.list(context_id=task.context_id)
        if binding != "HTTP+JSON":
            return
        fallen = httpx.get(f"{their_agent}/a2a/rest/v1/tasks", params={"contextId": "x"})
        assert fallen.status_code == 200 and fallen.json().get("tasks", []) == []  # J2 itself


@pytest.mark.interop(**OURS)
async def test_our_client_streams(agent: AsyncClient) -> None:
    final = await afold(agent.stream("steps 3"))
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert "".join(p.text or "" for p in final.artifacts[0].parts) == "0 1 2 "


@pytest.mark.interop(**OURS)
async def test_our_client_multi_turn(agent: AsyncClient) -> None:
    asked = await agent.send("ask")
    assert isinstance(asked, Task) and asked.state is TaskState.INPUT_REQUIRED
    done = await agent.send("ask large", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task) and done.id == asked.id
    assert done.state is TaskState.COMPLETED and done.text == "thanks for large"


@pytest.mark.interop(**OURS)
async def test_our_client_cancel_and_subscribe(agent: AsyncClient) -> None:
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task)
    canceled, seen = await cancel_while_subscribed(agent, task.id)
    assert canceled.state is TaskState.CANCELED
    assert isinstance(seen[0], Task)  # §3.1.6: the subscription starts with the Task
    last = seen[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.CANCELED
    with pytest.raises(UnsupportedOperationError):  # §3.1.6: terminal task
        await afold(agent.subscribe(task.id))


@pytest.mark.interop(**OURS, faults={"*": "J1"})
async def test_our_client_cancel_finished_tasks(agent: AsyncClient) -> None:
    done = await agent.send("echo done")
    assert isinstance(done, Task)
    with pytest.raises(TaskNotCancelableError):  # §3.1.5: a completed task
        await agent.cancel(done.id)
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task)
    assert (await agent.cancel(task.id)).state is TaskState.CANCELED
    # Peer fault J1 (docs/interop.md): §3.1.5 answers CancelTask on an already canceled task
    # with TaskNotCancelableError; the SDK returns the canceled Task again (reading §3.3.1's
    # "idempotent" as the same answer). When this fails the SDK is fixed: expect the error.
    again = await agent.cancel(task.id)
    assert again.id == task.id and again.state is TaskState.CANCELED


@pytest.mark.interop(**OURS)
async def test_our_client_push_config_crud(agent: AsyncClient) -> None:
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task)
    try:
        created = await agent.create_push_config(task.id, HOOK, config_id="c1", token="tok")
        assert created.id == "c1" and created.url == HOOK and created.task_id == task.id
        got = await agent.get_push_config(task.id, "c1")
        assert got.url == HOOK and got.token == "tok"
        assert [c.id for c in await agent.list_push_configs(task.id)] == ["c1"]
        await agent.delete_push_config(task.id, "c1")
        assert await agent.list_push_configs(task.id) == []
    finally:
        await agent.cancel(task.id)


@pytest.mark.interop(**OURS)
async def test_our_client_push_delivery(agent: AsyncClient) -> None:
    """A config sent with the message: the SDK posts to the webhook with the token, in the
    shapes of the version it was registered with (1.0: a StreamResponse, §13.2; 0.3: the 0.3
    Task object, 0.3 §9.5)."""
    receiver = Receiver()
    with serving(receiver.app) as hook_base:
        config = TaskPushNotificationConfig(url=hook_base + "/hook", token="tok")
        task = await agent.send("echo pushed", push_config=config)
        assert isinstance(task, Task)

        def final_seen() -> bool:
            for _, body in receiver.received:
                pushed = json.loads(body)  # 1.0: a StreamResponse; 0.3: a Task or an event
                event = pushed.get("task") or pushed.get("statusUpdate") or pushed
                state = (event.get("status") or {}).get("state")
                if state in ("TASK_STATE_COMPLETED", "completed"):
                    return True
            return False

        for _ in range(100):
            if final_seen():
                break
            await asyncio.sleep(0.05)
        headers, body = receiver.received[-1]
        pushed = json.loads(body)
        assert headers.get("x-a2a-notification-token") == "tok"
        if agent.protocol_version == "0.3":
            assert pushed["kind"] == "task" and pushed["id"] == task.id
            assert pushed["status"]["state"] == "completed"
            assert headers["content-type"].startswith("application/json")
        else:
            assert headers["content-type"].startswith("application/a2a+json")
            event = pushed.get("task") or pushed["statusUpdate"]
            assert event["status"]["state"] == "TASK_STATE_COMPLETED"
            assert event.get("id", event.get("taskId")) == task.id


@pytest.mark.interop(**OURS)
async def test_our_client_types_task_not_found(agent: AsyncClient) -> None:
    with pytest.raises(TaskNotFoundError):
        await agent.get("no-such-task")
    with pytest.raises(TaskNotFoundError):
        await agent.cancel("no-such-task")
    with pytest.raises(TaskNotFoundError):
        await afold(agent.subscribe("no-such-task"))
