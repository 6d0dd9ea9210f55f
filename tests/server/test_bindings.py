"""One behavioural suite, run over both HTTP bindings: JSON-RPC (spec §9) and HTTP+JSON (§11).

Every test takes ``b``, a raw-httpx adapter of one binding (tests/server/bindings.py), so the
same expectations hold for both; only the error *code* differs by binding (spec §5.4: the
JSON-RPC code, or the HTTP status).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from simple_a2a.protocol import AgentCard
from simple_a2a.protocol import errors as e
from simple_a2a.server import server
from tests.support.agents import EXT, TestAgent, make_card, serving, user
from tests.support.bindings import JSONRPC, REST, Outcome

BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    extended = make_card(pushNotifications=True, extendedAgentCard=True).model_copy(
        update={"name": "Extended"}
    )
    apps = {
        "plain": server(make_card(), TestAgent()).app,
        "full": server(
            make_card(pushNotifications=True, extendedAgentCard=True),
            TestAgent(),
            extended_card=extended,
        ).app,
        "unconfigured": server(make_card(extendedAgentCard=True), TestAgent()).app,
        "small": server(make_card(), TestAgent(), max_body_size=2000).app,
        "required": server(
            AgentCard.from_dict(
                {
                    "name": "Needs ext",
                    "description": "d",
                    "version": "1",
                    "capabilities": {"extensions": [{"uri": EXT, "required": True}]},
                }
            ),
            TestAgent(),
        ).app,
        "nostream": server(make_card(streaming=False), TestAgent()).app,
    }
    with serving_all(apps) as out:
        yield out


class serving_all:
    def __init__(self, apps: dict[str, Any]) -> None:
        self.apps = apps
        self.stack: list[Any] = []

    def __enter__(self) -> dict[str, str]:
        out = {}
        for name, app in self.apps.items():
            cm = serving(app)
            out[name] = cm.__enter__()
            self.stack.append(cm)
        return out

    def __exit__(self, *exc: object) -> None:
        for cm in reversed(self.stack):
            cm.__exit__(None, None, None)


def adapter(name: str, client: httpx.AsyncClient) -> JSONRPC | REST:
    return JSONRPC(client) if name == "JSONRPC" else REST(client)


@pytest.fixture(params=BINDINGS)
async def connect(request: pytest.FixtureRequest, urls: dict[str, str]) -> AsyncIterator[Any]:
    clients: list[httpx.AsyncClient] = []

    def make(which: str = "plain", binding: str | None = None) -> JSONRPC | REST:
        client = httpx.AsyncClient(base_url=urls[which], timeout=10, headers={"A2A-Version": "1.0"})
        clients.append(client)
        return adapter(binding or request.param, client)

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
def b(connect: Any) -> JSONRPC | REST:
    return connect()  # type: ignore[no-any-return]


def assert_error(out: Outcome, b: JSONRPC | REST, err: type[e.A2AError]) -> None:
    assert out.reason == err.reason, out
    assert out.code == b.code_of(err), out


async def new_task(b: JSONRPC | REST, text: str = "slow") -> dict[str, Any]:
    out = await b.call(
        "SendMessage", {"message": user(text), "configuration": {"returnImmediately": True}}
    )
    assert out.ok, out
    return out.result["task"]  # type: ignore[no-any-return]


# -- SendMessage / SendStreamingMessage (spec §3.1.1, §3.1.2) --


async def test_send_blocking_returns_the_completed_task(b: Any) -> None:
    out = await b.call("SendMessage", {"message": user("hello")})
    task = out.result["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "echo: hello"
    assert out.headers["a2a-version"] == "1.0"  # spec §3.6.2: the negotiated version


async def test_send_return_immediately_answers_before_the_task_ends(b: Any) -> None:
    task = await new_task(b)
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    await b.call("CancelTask", {"id": task["id"]})


async def test_send_can_answer_with_a_message(b: Any) -> None:
    out = await b.call("SendMessage", {"message": user("reply there")})
    assert out.result["message"]["parts"][0]["text"] == "reply: there"


async def test_multi_turn_input_required(b: Any) -> None:
    """Spec §3.4: a follow-up with the taskId resumes an interrupted task."""
    first = (await b.call("SendMessage", {"message": user("ask")})).result["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow = user("ask large", taskId=first["id"], contextId=first["contextId"])
    second = (await b.call("SendMessage", {"message": follow})).result["task"]
    assert second["id"] == first["id"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_polling_a_task_sees_every_change(b: Any) -> None:
    """GetTask answers reuse a task's encoded JSON while it is the same snapshot (server/http.py
    ``result_json``); each change makes a new snapshot, which a poll then shows."""
    first = (await b.call("SendMessage", {"message": user("ask")})).result["task"]
    polls = [(await b.call("GetTask", {"id": first["id"]})).result for _ in range(3)]
    assert polls[0] == polls[1] == polls[2]
    assert polls[0]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow = user("ask large", taskId=first["id"], contextId=first["contextId"])
    await b.call("SendMessage", {"message": follow})
    after = (await b.call("GetTask", {"id": first["id"]})).result
    assert after["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(after["history"]) > len(polls[0]["history"])
    trimmed = (await b.call("GetTask", {"id": first["id"], "historyLength": 1})).result
    assert len(trimmed["history"]) == 1  # a trimmed copy is encoded afresh


async def test_stream_task_first_ids_increase_final_state(b: Any) -> None:
    out = await b.stream("SendStreamingMessage", {"message": user("steps 3")})
    assert out.headers["content-type"].startswith("text/event-stream")
    kinds = [next(iter(ev)) for _id, ev in out.events]
    assert kinds[0] == "task"
    assert kinds.count("artifactUpdate") == 3
    assert out.events[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [int(i) for i, _ in out.events] == list(range(1, len(out.events) + 1))


async def test_stream_refused_when_the_card_says_no_streaming(connect: Any) -> None:
    """Spec §3.3.4: streaming not declared → UnsupportedOperationError."""
    b = connect("nostream")
    out = await b.stream("SendStreamingMessage", {"message": user("hi")})
    assert_error(out, b, e.UnsupportedOperationError)


# -- GetTask / ListTasks (spec §3.1.3, §3.1.4, §3.2.4) --


async def test_get_with_history_length(b: Any) -> None:
    task = (await b.call("SendMessage", {"message": user("hello")})).result["task"]
    full = (await b.call("GetTask", {"id": task["id"]})).result
    assert len(full["history"]) >= 1
    none = (await b.call("GetTask", {"id": task["id"], "historyLength": 0})).result
    assert "history" not in none
    one = (await b.call("GetTask", {"id": task["id"], "historyLength": 1})).result
    assert len(one["history"]) == 1


async def test_unknown_task_is_task_not_found(b: Any) -> None:
    for op, params in [
        ("GetTask", {"id": "nope"}),
        ("CancelTask", {"id": "nope"}),
    ]:
        out = await b.call(op, params)
        assert_error(out, b, e.TaskNotFoundError)
    out = await b.stream("SubscribeToTask", {"id": "nope"})
    assert_error(out, b, e.TaskNotFoundError)


async def test_list_filters_and_pagination(b: Any) -> None:
    ctx = f"ctx-{b.name}"
    for i in range(3):
        await b.call("SendMessage", {"message": user(f"item {i}", contextId=ctx)})
    out = await b.call("ListTasks", {"contextId": ctx, "status": "TASK_STATE_COMPLETED"})
    assert len(out.result["tasks"]) == 3
    assert all(t["contextId"] == ctx for t in out.result["tasks"])
    seen, token = [], None
    while True:
        params: dict[str, Any] = {"contextId": ctx, "pageSize": 2, "includeArtifacts": True}
        if token:
            params["pageToken"] = token
        page = (await b.call("ListTasks", params)).result
        seen += [t["id"] for t in page["tasks"]]
        assert all(t.get("artifacts") for t in page["tasks"])
        token = page.get("nextPageToken")
        if not token:
            break
    assert len(seen) == len(set(seen)) == 3
    working = await b.call("ListTasks", {"contextId": ctx, "status": "TASK_STATE_WORKING"})
    assert working.result.get("tasks", []) == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 1000}, "pageSize"),
        ({"pageToken": "%%%"}, "pageToken"),
        ({"status": "TASK_STATE_BOGUS"}, "status"),
    ],
)
async def test_list_invalid_params_name_the_field(
    b: Any, params: dict[str, Any], field: str
) -> None:
    out = await b.call("ListTasks", params)
    assert_error(out, b, e.InvalidParamsError)
    assert field in out.message


# -- CancelTask / SubscribeToTask (spec §3.1.5, §3.1.6) --


async def test_cancel_and_cancel_of_a_terminal_task(b: Any) -> None:
    task = await new_task(b)
    out = await b.call("CancelTask", {"id": task["id"]})
    assert out.result["status"]["state"] == "TASK_STATE_CANCELED"
    again = await b.call("CancelTask", {"id": task["id"]})
    assert_error(again, b, e.TaskNotCancelableError)


async def test_subscribe_follows_a_live_task(b: Any) -> None:
    task = await new_task(b, "slow")
    live = asyncio.create_task(b.stream("SubscribeToTask", {"id": task["id"]}))
    await asyncio.sleep(0.2)
    await b.call("CancelTask", {"id": task["id"]})
    out = await asyncio.wait_for(live, 5)
    assert "task" in out.events[0][1]
    assert out.events[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_last_event_id_replays_the_rest(b: Any) -> None:
    first = await b.stream("SendStreamingMessage", {"message": user("ask")}, stop_after=1)
    task_id = first.events[0][1]["task"]["id"]
    await asyncio.sleep(0.2)  # the task is input-required now: interrupted, not terminal
    # The subscription stays open through input-required (§3.1.6): read what was logged so far.
    replay = await b.stream(
        "SubscribeToTask",
        {"id": task_id},
        headers={"Last-Event-ID": first.events[0][0]},
        stop_after=1,
    )
    ids = [int(i) for i, _ in replay.events]
    assert ids == [int(first.events[0][0]) + 1]
    final = replay.events[-1][1]["statusUpdate"]["status"]["state"]
    assert final == "TASK_STATE_INPUT_REQUIRED"


async def test_subscribe_to_a_terminal_task_is_unsupported(b: Any) -> None:
    task = (await b.call("SendMessage", {"message": user("done")})).result["task"]
    out = await b.stream("SubscribeToTask", {"id": task["id"]})
    assert_error(out, b, e.UnsupportedOperationError)


# -- push notification configs (spec §3.1.7-§3.1.10) --


async def test_push_configs_need_the_capability(b: Any) -> None:
    task = (await b.call("SendMessage", {"message": user("x")})).result["task"]
    out = await b.call(
        "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": "https://93.184.216.34/"}
    )
    assert_error(out, b, e.PushNotificationNotSupportedError)
    out = await b.call("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    assert_error(out, b, e.PushNotificationNotSupportedError)


async def test_push_config_create_get_list_delete(connect: Any) -> None:
    b = connect("full")
    task = (await b.call("SendMessage", {"message": user("x")})).result["task"]
    tid = task["id"]
    made = await b.call(
        "CreateTaskPushNotificationConfig",
        {"taskId": tid, "id": "c1", "url": "https://93.184.216.34/hook", "token": "tok"},
    )
    assert made.result["id"] == "c1" and made.result["taskId"] == tid
    got = await b.call("GetTaskPushNotificationConfig", {"taskId": tid, "id": "c1"})
    assert got.result["url"] == "https://93.184.216.34/hook"
    listed = await b.call("ListTaskPushNotificationConfigs", {"taskId": tid})
    assert [c["id"] for c in listed.result["configs"]] == ["c1"]
    deleted = await b.call("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": "c1"})
    assert deleted.ok and deleted.result == {}
    gone = await b.call("GetTaskPushNotificationConfig", {"taskId": tid, "id": "c1"})
    assert_error(gone, b, e.TaskNotFoundError)
    bad = await b.call("CreateTaskPushNotificationConfig", {"taskId": tid, "url": "ftp://x"})
    assert_error(bad, b, e.InvalidParamsError)


# -- GetExtendedAgentCard (spec §3.1.11, §3.3.4) --


async def test_extended_card_errors_and_success(connect: Any) -> None:
    out = await connect("plain").call("GetExtendedAgentCard", {})
    assert_error(out, connect("plain"), e.UnsupportedOperationError)
    b = connect("unconfigured")
    assert_error(await b.call("GetExtendedAgentCard", {}), b, e.ExtendedAgentCardNotConfiguredError)
    card = (await connect("full").call("GetExtendedAgentCard", {})).result
    assert card["name"] == "Extended"


# -- malformed requests (spec §3.3.2, §9.5, §11.6) --


async def test_malformed_json(b: Any) -> None:
    out = await b.raw(b'{"message": ')
    assert_error(out, b, e.JSONParseError)


async def test_wrong_types_name_the_field(b: Any) -> None:
    out = await b.call(
        "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": "x"}}
    )
    assert_error(out, b, e.InvalidParamsError)
    assert "message.parts" in out.message
    out = await b.call("GetTask", {"id": "x", "historyLength": "many"})
    assert_error(out, b, e.InvalidParamsError)
    assert "historyLength" in out.message


async def test_oversized_body_is_413(connect: Any) -> None:
    b = connect("small")
    out = await b.call("SendMessage", {"message": user("x" * 5000)})
    assert out.status == 413
    assert out.reason == "PAYLOAD_TOO_LARGE"


async def test_versions(b: Any) -> None:
    """Spec §3.6: an unsupported A2A-Version → VersionNotSupportedError; the query form works."""
    out = await b.call("GetTask", {"id": "x"}, headers={"A2A-Version": "9.9"})
    assert_error(out, b, e.VersionNotSupportedError)
    b.client.headers.pop("A2A-Version")
    b.client.params = httpx.QueryParams({"A2A-Version": "1.0"})
    out = await b.call("SendMessage", {"message": user("q")})
    assert out.headers["a2a-version"] == "1.0"
    assert out.result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_extensions_reach_the_executor_and_are_echoed(b: Any) -> None:
    """Spec §4.6 / §3.2.6: requested extensions → ctx.requested_extensions; activated ones
    (declared by the card) are echoed in A2A-Extensions."""
    out = await b.call(
        "SendMessage",
        {"message": user("whoami")},
        headers={"A2A-Extensions": f"{EXT}, https://other.example/x"},
    )
    text = out.result["task"]["artifacts"][0]["parts"][0]["text"]
    assert EXT in text and "https://other.example/x" in text
    assert out.headers["a2a-extensions"] == EXT


async def test_required_extension_missing(connect: Any) -> None:
    """Spec §3.3.4: a required extension the client did not declare."""
    b = connect("required")
    out = await b.call("SendMessage", {"message": user("hi")})
    assert_error(out, b, e.ExtensionSupportRequiredError)
    out = await b.call("SendMessage", {"message": user("hi")}, headers={"X-A2A-Extensions": EXT})
    assert out.ok


async def test_response_media_type(b: Any) -> None:
    """PRODUCT §3: application/json unless the client asked for application/a2a+json, which
    only HTTP+JSON answers (§11.1); JSON-RPC answers application/json (§9.1)."""
    out = await b.call("GetTask", {"id": "x"})
    assert out.headers["content-type"].startswith("application/json")
    out = await b.call("GetTask", {"id": "x"}, headers={"Accept": "application/a2a+json"})
    asked = "application/a2a+json" if isinstance(b, REST) else "application/json"
    assert out.headers["content-type"].startswith(asked)


# -- across bindings --


@pytest.mark.parametrize(("make", "use"), [("HTTP+JSON", "JSONRPC"), ("JSONRPC", "HTTP+JSON")])
async def test_a_task_is_the_same_task_over_both_bindings(
    connect: Any, make: str, use: str
) -> None:
    maker, user_b = connect("plain", make), connect("plain", use)
    task = await new_task(maker, "slow")
    got = await user_b.call("GetTask", {"id": task["id"]})
    assert got.result["id"] == task["id"]
    live = asyncio.create_task(user_b.stream("SubscribeToTask", {"id": task["id"]}))
    await asyncio.sleep(0.2)
    canceled = await user_b.call("CancelTask", {"id": task["id"]})
    assert canceled.result["status"]["state"] == "TASK_STATE_CANCELED"
    events = (await asyncio.wait_for(live, 5)).events
    assert events[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    final = await maker.call("GetTask", {"id": task["id"]})
    assert final.result["status"]["state"] == "TASK_STATE_CANCELED"
