"""Hostile input on a real server on loopback: every resource bounded, spec errors beyond
(#16 server items 1, 3-9, 11). The limits live in :class:`simple_a2a.server.Limits`."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from simple_a2a.auth import BearerAuth
from simple_a2a.server import Limits, server
from tests.support import rpc
from tests.support.agents import TestAgent, make_card, user

H = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@contextlib.asynccontextmanager
async def serving_here(srv: Any, **options: Any) -> AsyncIterator[int]:
    """``srv.serve()`` on this test's own loop (what the server's loop does is observable)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    serving = asyncio.create_task(srv.serve(port=port, log_level="warning", **options))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(200):
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get("/.well-known/agent-card.json")).status_code == 200:
                        break
                await asyncio.sleep(0.05)
        yield port
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving


def _entry(i: int, method: str = "ListTasks", **params: Any) -> dict[str, Any]:
    return rpc(method, params, i)


def test_batch_entries_capped_nothing_run(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(server(make_card(), TestAgent(), limits=Limits(max_batch_entries=5)).app)
    sends = [_entry(i, "SendMessage", message=user("hi")) for i in range(6)]
    reply = httpx.post(url, json=sends, headers=H, timeout=30).json()
    assert reply["error"]["code"] == -32600
    assert "Limits.max_batch_entries = 5" in reply["error"]["message"]
    tasks = httpx.post(url, json=_entry(1), headers=H, timeout=10).json()["result"]["tasks"]
    assert tasks == []  # refused whole: no entry ran
    ok = httpx.post(url, json=sends[:5], headers=H, timeout=30).json()
    assert [a["id"] for a in ok] == [0, 1, 2, 3, 4] and all("result" in a for a in ok)


def test_batch_answer_bounded(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(server(make_card(), TestAgent(), limits=Limits(max_batch_answer_bytes=300)).app)
    batch = [_entry(i, "SendMessage", message=user("hi")) for i in range(6)]
    answers = httpx.post(url, json=batch, headers=H, timeout=30).json()
    assert len(answers) == 6
    refused = [a for a in answers if "error" in a]
    assert refused and all(
        "Limits.max_batch_answer_bytes" in a["error"]["message"] for a in refused
    )
    assert "result" in answers[0]
    ran = httpx.post(url, json=_entry(1), headers=H, timeout=10).json()["result"]["tasks"]
    assert len(ran) == 6 - len(refused)  # a refused entry was not run


async def test_batch_yields_to_other_connections() -> None:
    """The server's own loop runs other work between the entries of one batch: a ticker on
    that loop advances at least once per entry while one large junk batch is answered."""
    srv = server(make_card(), TestAgent(), limits=Limits(max_batch_entries=2000))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async with (
        serving_here(srv) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        junk = [{"jsonrpc": "2.0", "id": i, "method": "nope"} for i in range(2000)]
        tick_task = asyncio.create_task(ticker())
        before = ticks
        answers = (await client.post("/", json=junk, headers=H)).json()
        during = ticks - before
        tick_task.cancel()
    assert len(answers) == 2000 and answers[0]["error"]["code"] == -32601
    assert during >= 2000  # one yield per entry at least


def test_failed_notification_gets_no_reply(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(server(make_card(), TestAgent()).app)
    note = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "missing"}}
    single = httpx.post(url, json=note, headers=H, timeout=10)
    assert single.status_code == 204 and single.content == b""  # JSON-RPC 2.0 §4.1
    batch = httpx.post(url, json=[note, {**note, "method": "nope"}], headers=H, timeout=10)
    assert batch.status_code == 204 and batch.content == b""
    mixed = httpx.post(url, json=[note, {**note, "id": 7}], headers=H, timeout=10).json()
    assert [a["id"] for a in mixed] == [7] and mixed[0]["error"]["code"] == -32001


def test_nan_and_infinity_refused_never_echoed(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(server(make_card(), TestAgent()).app)
    for raw in (
        b'{"jsonrpc":"2.0","id":1e400,"method":"ListTasks","params":{}}',
        b'{"jsonrpc":"2.0","id":NaN,"method":"ListTasks","params":{}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":-Infinity}}',
        b'[{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"x":[1E+999]}}]',
        b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"x":1' + b"0" * 400 + b".0}}",
    ):
        r = httpx.post(url, content=raw, headers=H, timeout=10)
        assert r.json()["error"]["code"] == -32700, raw
        assert b"Infinity" not in r.content and b"NaN" not in r.content
        assert r.json()["id"] is None
    rest = httpx.post(
        url + "/message:send",
        content=b'{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"data":1e999}]}}',
        headers=H,
        timeout=10,
    )
    assert rest.status_code == 400 and b"Infinity" not in rest.content
    # an exponent in a string is fine
    ok = httpx.post(url, json=_entry(1, contextId="e500"), headers=H, timeout=10).json()
    assert "result" in ok


def test_timestamp_at_datetime_limits_is_invalid_params(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(server(make_card(), TestAgent()).app)
    for stamp in ("9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"):
        rpc_reply = httpx.post(
            url, json=_entry(1, statusTimestampAfter=stamp), headers=H, timeout=10
        ).json()
        assert rpc_reply["error"]["code"] == -32602, rpc_reply
        rest = httpx.get(url + "/tasks", params={"statusTimestampAfter": stamp}, headers=H)
        assert rest.status_code == 400, rest.text


def test_parts_and_metadata_limits_name_the_limit(serve) -> None:  # type: ignore[no-untyped-def]
    limits = Limits(max_parts_per_message=10, max_metadata_bytes=100)
    url = serve(server(make_card(), TestAgent(), limits=limits).app)
    message = user("hi")
    message["parts"] = [{"text": "x"}] * 11
    r = httpx.post(url, json=_entry(1, "SendMessage", message=message), headers=H).json()
    assert r["error"]["code"] == -32602
    assert "Limits.max_parts_per_message = 10" in r["error"]["message"]
    streamed = httpx.post(url, json=_entry(1, "SendStreamingMessage", message=message), headers=H)
    assert "Limits.max_parts_per_message = 10" in streamed.text
    rest = httpx.post(url + "/message:send", json={"message": message}, headers=H, timeout=10)
    assert rest.status_code == 400 and "Limits.max_parts_per_message = 10" in rest.text
    for where in ("message", "part", "request"):
        message = user("hi")
        params: dict[str, Any] = {"message": message}
        big = {"k": "v" * 200}
        if where == "message":
            message["metadata"] = big
        elif where == "part":
            message["parts"][0]["metadata"] = big
        else:
            params["metadata"] = big
        rest = httpx.post(url + "/message:send", json=params, headers=H, timeout=10)
        assert rest.status_code == 400, rest.text
        assert "Limits.max_metadata_bytes = 100" in rest.text
    tasks = httpx.post(url, json=_entry(1), headers=H, timeout=10).json()["result"]["tasks"]
    assert tasks == []


def test_large_body_validated_off_the_loop(serve) -> None:  # type: ignore[no-untyped-def]
    """Above offload_validation_bytes the body is parsed and validated in a worker thread;
    the answer is the same as on the loop."""
    url = serve(server(make_card(), TestAgent(), limits=Limits(offload_validation_bytes=1)).app)
    r = httpx.post(url, json=_entry(1, "SendMessage", message=user("echo hi")), headers=H)
    assert "result" in r.json(), r.text
    bad = httpx.post(url, json=_entry(1, "SendMessage", message={"role": 5}), headers=H).json()
    assert bad["error"]["code"] == -32602


def test_auth_refusal_before_the_body_is_read(serve) -> None:  # type: ignore[no-untyped-def]
    """A 10 MB body is announced but never sent: the 401 comes without reading it."""
    url = serve(server(make_card(), TestAgent(), auth=BearerAuth(tokens={"t": "alice"})).app)
    host, port = url.removeprefix("http://").split(":")
    for path in ("/", "/message:send"):
        with socket.create_connection((host, int(port)), timeout=20) as sock:
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {10 * 1024 * 1024}\r\n\r\n{{".encode()
            )
            head = sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 401"), head[:200]


def test_card_urls_from_public_url_not_host(serve) -> None:  # type: ignore[no-untyped-def]
    srv = server(make_card(), TestAgent(), public_url="https://agent.example.com/a2a/")
    url = serve(srv.app)
    card = httpx.get(url + "/.well-known/agent-card.json", headers={"Host": "evil.test"}).json()
    urls = [i["url"] for i in card["supportedInterfaces"]]
    assert urls and all(u.startswith("https://agent.example.com/a2a") for u in urls), urls
    assert "evil.test" not in str(card)


async def test_serve_bounds_concurrent_connections() -> None:
    """run()/serve() set uvicorn's concurrency limit: idle connections past it cannot hold the
    server, a request beyond the limit gets 503 (#16 item 11)."""
    srv = server(make_card(), TestAgent())
    defaults = srv.uvicorn_options()
    assert defaults["limit_concurrency"] >= 100 and defaults["timeout_keep_alive"] <= 30
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    async with serving_here(srv, limit_concurrency=3) as port:
        for _ in range(3):  # slowloris: connected, never a full request
            idle.append(await asyncio.open_connection("127.0.0.1", port))
            idle[-1][1].write(b"POST / HTTP/1.1\r\n")
            await idle[-1][1].drain()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            r = await client.get("/.well-known/agent-card.json")
        assert r.status_code == 503
        for _, writer in idle:
            writer.close()


def test_last_event_id_beyond_int64_refused(serve, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Refused as invalid params, on SQLite as in memory; never a silently ended stream."""
    for storage in (None, f"sqlite:///{tmp_path / 'tasks.db'}"):
        url = serve(server(make_card(streaming=True), TestAgent(), storage=storage).app)
        sent = httpx.post(url, json=_entry(1, "SendMessage", message=user("hi")), headers=H)
        task_id = sent.json()["result"]["task"]["id"]
        huge = {**H, "Last-Event-ID": str(2**63)}
        r = httpx.post(url, json=_entry(2, "SubscribeToTask", id=task_id), headers=huge)
        assert r.json()["error"]["code"] == -32602, r.text
        rest = httpx.get(f"{url}/tasks/{task_id}:subscribe", headers=huge)
        assert rest.status_code == 400 and "Last-Event-ID" in rest.text


@pytest.mark.parametrize(
    ("body", "walked"),
    [
        (b'{"id":1e400}', True),
        (b"[1E+999]", True),
        (b'{"x":[1,  -2.5e999]}', True),
        (b'{"id":"11de71a8-95a3-4e12-b9ad-d3d3bd8519e1"}', False),  # the hex of an id
        (b'{"contextId":"e500","text":"ab1e500"}', False),
        (b'{"x": ' + b"1" * 210 + b".5}", True),  # no exponent, 10**209: still infinity
        (b'{"x":[7,' + b"9" * 200 + b"]}", True),  # a long integer: walked (stays an int)
        (b'{"text":"' + b"1" * 300 + b'"}', False),  # digits in a string
        (b'{"x":1.5e99,"y":' + b"1" * 199 + b".0}", False),  # both too short to overflow
    ],
)
def test_only_a_number_literal_that_could_overflow_sends_the_body_through_the_walk(
    body: bytes, walked: bool
) -> None:
    """#16 item 4 checks every parsed number for infinity only when the body has a literal
    that could overflow; ids in hex (a UUID often holds ``e`` and three digits) do not count."""
    from simple_a2a.server.http import _may_overflow

    assert _may_overflow(body) is walked


def test_a_long_decimal_that_overflows_is_refused_not_stored_as_null() -> None:
    """A float literal of 310 digits and no exponent is infinity too; it was once let through
    and its metadata value became ``null`` (a lost value)."""
    from simple_a2a.protocol import errors as e
    from simple_a2a.server.http import _parse_json

    with pytest.raises(e.JSONParseError, match="out of range"):
        _parse_json(b'{"metadata":{"x":1' + b"0" * 309 + b".0}}")
    big = _parse_json(b'{"x":1' + b"0" * 309 + b"}")  # an integer: exact, kept
    assert big == {"x": 10**309}
    assert _parse_json(b'{"x":1' + b"0" * 307 + b".0}") == {"x": 1e307}


def test_a_bare_number_out_of_range_is_a_parse_error() -> None:
    from simple_a2a.protocol import errors as e
    from simple_a2a.server.http import _parse_json

    for body in (b"1e400", b" -1E+999 "):
        with pytest.raises(e.JSONParseError):
            _parse_json(body)
    assert _parse_json(b"1e99") == 1e99


def test_encoded_task_answers_are_reused_per_snapshot_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``result_json`` reuses the bytes of the same task object only (a new snapshot, even
    equal, is encoded afresh), for the task of GetTask and SendMessage answers, with exactly the
    bytes the answer's model encodes to; the cache keeps at most its bound. (A cache of its own:
    the process-wide one is full after the other tests.)"""
    from simple_a2a.protocol.encoded import EncodedCache
    from simple_a2a.protocol.models import Message, Part, Role, Task, TaskState, TaskStatus
    from simple_a2a.protocol.requests import SendMessageResponse
    from simple_a2a.server import http

    cache = EncodedCache(16)
    monkeypatch.setattr(http, "TASKS", cache)

    def task(i: int) -> Task:
        return Task(id=f"t{i}", context_id="c", status=TaskStatus(state=TaskState.WORKING))

    one = task(1)
    assert http.result_json("GetTask", one) is http.result_json("GetTask", one)
    assert http.result_json("GetTask", one) == one.to_json()
    twin = task(1)
    assert http.result_json("GetTask", twin) == http.result_json("GetTask", one)
    assert http.result_json("GetTask", twin) is not http.result_json("GetTask", one)
    assert http.result_json("CancelTask", one) is not http.result_json("CancelTask", one)

    sent = task(99)  # not encoded before
    answer = SendMessageResponse(task=sent)
    kept_before = len(cache)
    assert http.result_json("SendMessage", answer) == answer.to_json()
    assert len(cache) == kept_before  # not kept without keep_sent
    kept = http.result_json("SendMessage", answer, keep_sent=True)  # (the memory store's)
    assert kept == answer.to_json() and len(cache) == kept_before + 1
    assert cache.take(sent) == sent.to_json() and len(cache) == kept_before
    reply = SendMessageResponse(
        message=Message(message_id="m", role=Role.AGENT, parts=[Part(text="hi")])
    )
    assert http.result_json("SendMessage", reply) == reply.to_json()

    for i in range(cache.kept * 2):
        http.result_json("GetTask", task(i))
    assert len(cache) == cache.kept


def test_encoded_cache_take_hands_over_the_bytes() -> None:
    """``take`` (the memory store cooling a task) gets the bytes an answer was encoded to and
    forgets them; a miss is encoded without being remembered."""
    from simple_a2a.protocol.encoded import EncodedCache
    from simple_a2a.protocol.models import Task, TaskState, TaskStatus

    cache = EncodedCache(4)
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))
    answered = cache.get(task)
    assert cache.take(task) is answered
    assert len(cache) == 0
    assert cache.take(task) == task.to_json()
    assert len(cache) == 0
