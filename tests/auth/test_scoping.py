"""Per-caller scoping (spec §3.3.2, §7.5, §13.1): a caller cannot see, cancel, subscribe to,
continue or push-configure another caller's task, and cannot tell it from a missing one."""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from simple_a2a.auth import BearerAuth
from simple_a2a.server.push import PushSettings
from tests.auth.auth_support import PLAIN, REST, adapter, serve_agent, serving, user

BINDINGS = ["JSONRPC", "HTTP+JSON"]
TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


def _receiver() -> Starlette:
    async def hook(_: Any) -> Response:
        return Response(status_code=204)

    return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    """(agent URL, webhook URL)."""
    push = PushSettings(allow_hosts=["127.0.0.1"])
    with serving(_receiver()) as hooks, serve_agent(BearerAuth(tokens=TOKENS), push=push) as url:
        yield url, hooks + "/hook"


@contextlib.asynccontextmanager
async def as_caller(url: str, token: str) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=10, verify=PLAIN) as client:
        yield client


async def raw(binding: str, client: httpx.AsyncClient, op: str, params: dict[str, Any]) -> Any:
    """(status, content type, body bytes) of one operation, exactly as the caller sees it."""
    if binding == "JSONRPC":
        body = {"jsonrpc": "2.0", "id": 7, "method": op, "params": params}
        r = await client.post("/", json=body)
    else:
        verb, path, body, query = REST(client).request(op, params)
        r = await client.request(verb, path, json=body, params=query)
    return r.status_code, r.headers["content-type"], r.content


def same(body: bytes, task_id: str) -> bytes:
    """The body with the task id and timestamps masked: all that may differ."""
    return TIMESTAMP.sub(b"<ts>", body.replace(task_id.encode(), b"<id>"))


def attempts(task_id: str, config_id: str, hook: str) -> dict[str, dict[str, Any]]:
    """Every operation that names a task, aimed at ``task_id``."""
    follow_up = {"message": {**user("ask large"), "taskId": task_id}}
    return {
        "GetTask": {"id": task_id},
        "CancelTask": {"id": task_id},
        "SubscribeToTask": {"id": task_id},
        "SendMessage": follow_up,
        "SendStreamingMessage": follow_up,
        "CreateTaskPushNotificationConfig": {"taskId": task_id, "url": hook},
        "GetTaskPushNotificationConfig": {"taskId": task_id, "id": config_id},
        "ListTaskPushNotificationConfigs": {"taskId": task_id},
        "DeleteTaskPushNotificationConfig": {"taskId": task_id, "id": config_id},
    }


@pytest.mark.parametrize("binding", BINDINGS)
async def test_another_callers_task_is_a_missing_task(urls: tuple[str, str], binding: str) -> None:
    url, hook = urls
    async with as_caller(url, "tok-alice") as alice, as_caller(url, "tok-bob") as bob:
        a = adapter(binding, alice)
        sent = await a.call("SendMessage", {"message": user("ask")})
        task = sent.result["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        made = await a.call("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook})
        assert made.ok, made
        config_id = made.result["id"]

        missing = str(uuid.uuid4())
        for op, params in attempts(task["id"], config_id, hook).items():
            theirs = await raw(binding, bob, op, params)
            nothing = await raw(binding, bob, op, attempts(missing, config_id, hook)[op])
            assert theirs[0] == nothing[0] and theirs[0] in (200, 404), (op, theirs)
            assert theirs[1] == nothing[1], op
            assert same(theirs[2], task["id"]) == same(nothing[2], missing), op
            assert b"TaskNotFound" in theirs[2] or b"TASK_NOT_FOUND" in theirs[2], (op, theirs)

        # nothing bob tried touched alice's task
        got = await a.call("GetTask", {"id": task["id"]})
        assert got.result["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert len(got.result["history"]) == len(task["history"])
        configs = await a.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        assert [c["id"] for c in configs.result["configs"]] == [config_id]
        # and alice can still continue it
        done = await a.call("SendMessage", {"message": {**user("ask large"), "taskId": task["id"]}})
        assert done.result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_list_tasks_shows_only_the_callers_tasks(urls: tuple[str, str], binding: str) -> None:
    url, _ = urls
    async with as_caller(url, "tok-alice") as alice, as_caller(url, "tok-bob") as bob:
        ctx = str(uuid.uuid4())
        mine = []
        for who, text in ((alice, "one"), (alice, "two"), (bob, "three")):
            out = await adapter(binding, who).call(
                "SendMessage", {"message": user(text, context_id=ctx)}
            )
            mine.append((who, out.result["task"]["id"]))
        for who in (alice, bob):
            listed = await adapter(binding, who).call("ListTasks", {"contextId": ctx})
            assert sorted(t["id"] for t in listed.result["tasks"]) == sorted(
                tid for owner, tid in mine if owner is who
            )
            everything = await adapter(binding, who).call("ListTasks", {"pageSize": 100})
            ids = {t["id"] for t in everything.result["tasks"]}
            assert not ids & {tid for owner, tid in mine if owner is not who}


async def test_a_subscription_to_ones_own_task_works(urls: tuple[str, str]) -> None:
    url, _ = urls
    async with as_caller(url, "tok-alice") as alice:
        a = adapter("JSONRPC", alice)
        sent = await a.call("SendMessage", {"message": user("ask")})
        out = await a.stream("SubscribeToTask", {"id": sent.result["task"]["id"]}, stop_after=1)
        assert out.ok and out.events[0][1]["task"]["id"] == sent.result["task"]["id"]
