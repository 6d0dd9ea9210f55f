"""The SSRF guard: refused addresses, allow-lists, creation-time errors, DNS rebinding."""

from __future__ import annotations

import time

import httpx
import pytest

from simple_a2a.server.push import UrlGuard, UrlRefused
from simple_a2a.server.push.ssrf import guarded_client
from tests.push.push_helpers import Receiver, Steps, make_server, post_rpc, send, settings, summary

REFUSED = [
    ("http://127.0.0.1/hook", "loopback"),
    ("http://127.8.9.10:8080/hook", "loopback"),
    ("http://[::1]/hook", "loopback"),
    ("http://10.1.2.3/hook", "private"),
    ("http://172.16.0.1/hook", "private"),
    ("http://172.31.255.254/hook", "private"),
    ("http://192.168.1.1/hook", "private"),
    ("http://169.254.169.254/latest/meta-data", "metadata"),
    ("http://169.254.1.1/hook", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://[fd00::1]/hook", "private"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://[::127.0.0.1]/hook", "loopback"),
    ("http://[64:ff9b::a9fe:a9fe]/hook", "metadata"),
    ("http://0.0.0.0/hook", "unspecified"),
    ("http://[::]/hook", "unspecified"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://240.0.0.1/hook", "reserved"),
    ("http://100.64.0.1/hook", "not globally routable"),
    ("http://localhost/hook", "localhost resolves to"),
    ("http://2130706433/hook", "loopback"),  # 127.0.0.1 in decimal
    ("ftp://example.com/hook", "scheme"),
    ("http://user:pw@93.184.216.34/hook", "credentials"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
async def test_refused(url: str, reason: str) -> None:
    with pytest.raises(UrlRefused) as info:
        await UrlGuard().check_url(url)
    assert reason in info.value.reason


async def test_public_address_allowed() -> None:
    await UrlGuard().check_url("https://93.184.216.34/hook")
    await UrlGuard().check_url("https://[2606:4700:4700::1111]/hook")


async def test_allow_lists() -> None:
    await UrlGuard(allow_hosts=["127.0.0.1"]).check_url("http://127.0.0.1:9000/hook")
    await UrlGuard(allow_hosts=["localhost"]).check_url("http://localhost:9000/hook")
    await UrlGuard(allow_hosts=["10.0.0.0/8"]).check_url("http://10.9.8.7/hook")
    await UrlGuard(allow_hosts=["::1"]).check_url("http://[::1]/hook")
    await UrlGuard(allow_private_networks=True).check_url("http://192.168.0.10/hook")
    with pytest.raises(UrlRefused):  # the allow-list is exact, not a blanket pass
        await UrlGuard(allow_hosts=["10.0.0.0/8"]).check_url("http://192.168.0.10/hook")
    with pytest.raises(UrlRefused, match="scheme"):
        await UrlGuard(require_https=True).check_url("http://93.184.216.34/hook")


def test_creation_refused_names_url(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(make_server(push=settings(allow_hosts=[])).app)
    task = send(url)
    for hook in ("http://127.0.0.1:1/hook", "http://169.254.169.254/", "http://localhost/x"):
        reply = post_rpc(
            url, "CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": hook}
        )
        assert reply["error"]["code"] == -32602, reply
        assert "url" in str(reply["error"]) and "refused" in reply["error"]["message"]
    # inline config in SendMessage: refused before any task is created
    reply = post_rpc(
        url,
        "SendMessage",
        {
            "message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "x"}]},
            "configuration": {"taskPushNotificationConfig": {"url": "http://10.0.0.1/"}},
        },
    )
    assert reply["error"]["code"] == -32602
    listed = post_rpc(url, "ListTasks", {})
    assert len(listed["result"]["tasks"]) == 1


def _resolver(table: dict[str, list[list[str]]]):  # type: ignore[no-untyped-def]
    """A resolver whose answers change per call (the last one repeats): DNS rebinding."""

    async def resolve(host: str, port: int) -> list[str]:
        answers = table[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]

    return resolve


def test_dns_rebinding_refused_at_connection(serve) -> None:  # type: ignore[no-untyped-def]
    receiver = Receiver()
    port = serve(receiver.app).rsplit(":", 1)[1]
    resolver = _resolver({"rebind.test": [["93.184.216.34"], ["93.184.216.34"], ["127.0.0.1"]]})
    executor = Steps(n=1)
    srv = make_server(executor, push=settings(allow_hosts=[], resolver=resolver))
    url = serve(srv.app)
    task = send(url, push={"url": f"http://rebind.test:{port}/hook", "id": "cfg"})
    dispatcher = srv.push.dispatcher  # type: ignore[union-attr]
    import asyncio

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        fut = asyncio.run_coroutine_threadsafe(
            dispatcher.health(task["id"], "cfg"), dispatcher.loop
        )
        health = fut.result(5)
        if health is not None and health.state == "suspended":
            break
        time.sleep(0.02)
    assert health is not None and health.state == "suspended"
    assert "resolves to 127.0.0.1, a loopback address" in (health.last_error or "")
    assert receiver.attempts == 0  # never connected


def test_connects_to_vetted_ip_keeping_host_header(serve) -> None:  # type: ignore[no-untyped-def]
    receiver = Receiver()
    port = serve(receiver.app).rsplit(":", 1)[1]
    resolver = _resolver({"webhook.test": [["127.0.0.1"]]})
    executor = Steps(n=1)
    executor.gate.set()
    srv = make_server(executor, push=settings(allow_hosts=["127.0.0.1"], resolver=resolver))
    url = serve(srv.app)
    send(url, push={"url": f"http://webhook.test:{port}/hook"})
    events = receiver.wait_final()
    assert summary(events[-1]) == "status:TASK_STATE_COMPLETED"
    assert receiver.received[0][0]["host"] == f"webhook.test:{port}"


async def test_guarded_client_refuses_and_ignores_env_proxy(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HTTP_PROXY", "http://93.184.216.34:3128")
    async with guarded_client(UrlGuard()) as client:
        with pytest.raises(UrlRefused, match="loopback"):
            await client.get("http://127.0.0.1:9/")
        with pytest.raises(UrlRefused, match="metadata"):
            await client.get("http://169.254.169.254/latest/meta-data")
    _ = httpx
