"""Automatic delivery over real HTTP: order, retries, outages, suspension, deletion."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from simple_a2a.server.push import RetryPolicy
from tests.push.push_helpers import (
    Receiver,
    Steps,
    dumps,
    free_port,
    logged,
    make_server,
    post_rpc,
    send,
    settings,
    summary,
)

EXPECTED = [
    "task:TASK_STATE_SUBMITTED",
    "status:TASK_STATE_WORKING",
    *[f"artifact:step {i}" for i in range(5)],
    "status:TASK_STATE_COMPLETED",
]


def test_every_event_in_order_inline_config(serve) -> None:
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps()
    srv = make_server(executor)
    url = serve(srv.app)
    task = send(url, push={"url": hook, "token": "tok"})
    executor.gate.set()
    events = receiver.wait_final()
    assert [summary(e) for e in events] == EXPECTED
    assert dumps(events) == dumps(logged(srv, task["id"]))  # exactly the log, in order


@pytest.mark.parametrize("await_delivery", [0.0, 10.0])
def test_blocking_send_awaits_delivery_when_asked(serve, await_delivery: float) -> None:
    """``await_delivery``: the answer of a blocking send comes after the webhook acknowledged
    the terminal event (the A2A integration test kit reads its webhook right after it); by
    default the request path never waits on a webhook."""
    receiver = Receiver()
    receiver.delay = 0.1  # a slow webhook: 4 events take 0.4 s
    hook = serve(receiver.app) + "/hook"
    executor = Steps(n=1)
    executor.gate.set()
    url = serve(make_server(executor, push=settings(await_delivery=await_delivery)).app)
    reply = post_rpc(
        url,
        "SendMessage",
        {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook}},
        },
    )
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    delivered = [summary(e) for e in receiver.events]
    if await_delivery:
        assert delivered[-1] == "status:TASK_STATE_COMPLETED"
    else:
        assert "status:TASK_STATE_COMPLETED" not in delivered
        receiver.wait_final()


def test_config_created_later_gets_snapshot_then_events(serve) -> None:
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps(n=3)
    srv = make_server(executor)
    url = serve(srv.app)
    task = send(url)
    reply = post_rpc(url, "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook})
    assert reply["result"]["id"]
    receiver.wait_for(lambda evs: len(evs) == 1)
    executor.gate.set()
    events = receiver.wait_final()
    assert [summary(e) for e in events] == [
        "task:TASK_STATE_SUBMITTED",
        "status:TASK_STATE_WORKING",
        "artifact:step 0",
        "artifact:step 1",
        "artifact:step 2",
        "status:TASK_STATE_COMPLETED",
    ]


def test_receiver_returns_503_then_recovers(serve) -> None:
    receiver = Receiver()
    receiver.fail = 6
    receiver.retry_after = "0"
    hook = serve(receiver.app) + "/hook"
    executor = Steps()
    srv = make_server(executor)
    url = serve(srv.app)
    send(url, push={"url": hook})
    executor.gate.set()
    events = receiver.wait_final()
    assert [summary(e) for e in events] == EXPECTED
    assert receiver.attempts == len(EXPECTED) + 6


def test_receiver_down_then_started_later(serve) -> None:
    port = free_port()
    hook = f"http://127.0.0.1:{port}/hook"
    executor = Steps()
    srv = make_server(executor)
    url = serve(srv.app)
    task = send(url, push={"url": hook})
    executor.gate.set()
    time.sleep(0.8)  # the agent finishes while nobody listens
    assert post_rpc(url, "GetTask", {"id": task["id"]})["result"]["status"]["state"] == (
        "TASK_STATE_COMPLETED"
    )
    receiver = Receiver()
    serve(receiver.app, port=port)
    events = receiver.wait_final()
    assert [summary(e) for e in events] == EXPECTED


def test_many_configs_each_in_order(serve) -> None:
    receivers = [Receiver() for _ in range(3)]
    hooks = [serve(r.app) + "/hook" for r in receivers]
    receivers[1].fail = 3
    executor = Steps()
    srv = make_server(executor)
    url = serve(srv.app)
    task = send(url, push={"url": hooks[0]})
    for hook in hooks[1:]:
        post_rpc(url, "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook})
    for receiver in receivers:
        receiver.wait_for(lambda evs: len(evs) >= 1)
    executor.gate.set()
    for receiver in receivers:
        assert [summary(e) for e in receiver.wait_final()] == EXPECTED


def test_failing_config_is_suspended_and_resumable(serve, caplog: pytest.LogCaptureFixture) -> None:
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps()
    retry = RetryPolicy(initial_delay=0.01, max_delay=0.02, max_attempts=3)
    srv = make_server(executor, push=settings(retry=retry))
    url = serve(srv.app)
    caplog.set_level(logging.WARNING, logger="simple_a2a.push")
    task = send(url, push={"url": hook, "id": "cfg"})
    receiver.wait_for(lambda evs: len(evs) == 1)
    receiver.fail, receiver.fail_status, receiver.attempts = 10_000, 500, 0
    executor.gate.set()
    dispatcher = srv.push.dispatcher  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    health = None
    while time.monotonic() < deadline:
        health = _run(srv, dispatcher.health(task["id"], "cfg"))
        if health is not None and health.state == "suspended":
            break
        time.sleep(0.02)
    assert health is not None and health.state == "suspended", health
    assert health.failures == 3 and health.last_error == "HTTP 500"
    assert receiver.attempts == 3
    assert any("suspended after 3 consecutive failures" in r.message for r in caplog.records)
    time.sleep(0.3)
    assert receiver.attempts == 3  # nothing sent while suspended
    receiver.fail = 0
    assert _run(srv, dispatcher.resume(task["id"], "cfg"))
    assert [summary(e) for e in receiver.wait_final()] == EXPECTED


def test_rejected_event_is_skipped(serve) -> None:
    receiver = Receiver()
    receiver.reject = lambda ev: 400 if summary(ev) == "artifact:step 2" else None
    hook = serve(receiver.app) + "/hook"
    executor = Steps()
    url = serve(make_server(executor).app)
    send(url, push={"url": hook})
    executor.gate.set()
    events = receiver.wait_final()
    assert [summary(e) for e in events] == [x for x in EXPECTED if x != "artifact:step 2"]


def test_deleted_config_gets_nothing_more(serve) -> None:
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps()
    url = serve(make_server(executor).app)
    task = send(url, push={"url": hook, "id": "cfg"})
    receiver.wait_for(lambda evs: len(evs) == 1)
    reply = post_rpc(url, "DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "cfg"})
    assert "result" in reply
    executor.gate.set()
    time.sleep(0.5)
    assert len(receiver.events) == 1


def test_headers_token_and_authentication(serve) -> None:
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps(n=1)
    executor.gate.set()
    url = serve(make_server(executor).app)
    push = {
        "url": hook,
        "token": "secret-token",
        "authentication": {"scheme": "Bearer", "credentials": "abc"},
    }
    send(url, push=push)
    receiver.wait_final()
    headers = receiver.received[0][0]
    assert headers["x-a2a-notification-token"] == "secret-token"
    assert headers["a2a-notification-token"] == "secret-token"
    assert headers["authorization"] == "Bearer abc"
    assert headers["content-type"] == "application/a2a+json"
    assert headers["a2a-notification-signature"].count(".") == 2


def test_no_push_capability_means_no_dispatcher(serve) -> None:
    from simple_a2a.server import server
    from tests.push.push_helpers import push_card

    srv = server(push_card(push=False), Steps())
    assert srv.push is None
    url = serve(srv.app)
    reply = post_rpc(url, "SendMessage", {"message": {"role": "ROLE_USER", "messageId": "m",
                "parts": [{"text": "x"}]}, "configuration": {"taskPushNotificationConfig":
                {"url": "https://example.com/hook"}}})  # fmt: skip
    assert reply["error"]["code"] == -32003


def _run(srv, coro):  # type: ignore[no-untyped-def]
    """Run a dispatcher coroutine on the server's loop (it owns the workers)."""
    loop = srv.push.dispatcher.loop
    return asyncio.run_coroutine_threadsafe(coro, loop).result(5)
