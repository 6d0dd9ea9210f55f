"""``bench/instructions.py`` (instructions per request of a served process under callgrind):
its fixed-count load client against a real server on loopback, and its report. Valgrind itself
is never part of the test run."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import pytest
from bench.agents import ours_app
from bench.instructions import drive, report


@pytest.mark.parametrize("op", ["SendMessage", "GetTask"])
def test_the_load_client_sends_the_exact_count_and_checks_every_answer(serve: Any, op: str) -> None:
    app, _populate = ours_app(None, 0)
    seen: list[bytes] = []

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(scope["path"].encode())
        await app(scope, receive, send)

    port = urlsplit(serve(counting)).port
    assert port is not None
    asyncio.run(drive(port, op, 10, 3))
    assert len(seen) == 11  # one SendMessage to create the task first, then the 10


def test_an_error_answer_stops_the_run(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.instructions as instructions

    app, _populate = ours_app(None, 0)
    port = urlsplit(serve(app)).port
    assert port is not None
    valid = instructions.send_body

    def agent_role_after_the_first(i: int) -> bytes:  # role ROLE_AGENT: invalid params
        return valid(i) if i < 0 else valid(i).replace(b"ROLE_USER", b"ROLE_AGENT")

    monkeypatch.setattr(instructions, "send_body", agent_role_after_the_first)
    with pytest.raises(SystemExit, match="unexpected answer"):
        asyncio.run(drive(port, "SendMessage", 2, 1))


def test_the_report_gives_every_server_against_ours() -> None:
    table = report({"GetTask": {"ceiling": 128_000, "sdk": 1_180_000, "ours": 320_000}})
    assert "| GetTask | sdk | 1,180,000 | 3.69x |" in table
    assert "| GetTask | ceiling | 128,000 | 0.40x |" in table
    assert "| GetTask | ours | 320,000 |  |" in table


def test_a_baseline_runs_each_kind_of_ours_on_its_src(tmp_path: Any) -> None:
    """``BENCH_BASELINE`` compares like with like: ``ours-sqlite`` against the baseline's
    SQLite agent, not its memory one."""
    from bench.instructions import HERE, baseline_servers

    base = (tmp_path / "src").resolve()
    assert baseline_servers(["sdk", "ours", "ours-sqlite"], str(tmp_path)) == [
        ("sdk", "sdk", HERE / "src"),
        ("ours", "ours", HERE / "src"),
        ("ours-sqlite", "ours-sqlite", HERE / "src"),
        ("base", "ours", base),
        ("base-sqlite", "ours-sqlite", base),
    ]
    assert baseline_servers(["ceiling"], str(tmp_path))[-1] == ("base", "ours", base)
    assert baseline_servers(["ours"], None) == [("ours", "ours", HERE / "src")]


def test_the_floor_answers_what_ours_answers(serve: Any) -> None:
    """``floor`` (bench/agents.py) stands for the least work of ours only if it does the same
    visible work: the same SendMessage and GetTask answers over JSON-RPC and HTTP+JSON, byte for
    byte but for ids and the timestamp."""
    import re

    import httpx
    from bench.agents import floor_app

    def normalized(answer: bytes) -> bytes:
        answer = re.sub(rb"[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", b"ID", answer)
        return re.sub(rb"\d{4}-\d\d-\d\dT[\d:.]+Z", b"TIME", answer)

    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    answers = []
    for app in (floor_app()[0], ours_app(None, 0)[0]):
        url = serve(app)
        rpc = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}
        sent = httpx.post(url, json=rpc)
        task_id = sent.json()["result"]["task"]["id"]
        rpc = {"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": task_id}}
        got = httpx.post(url, json=rpc)
        sent_rest = httpx.post(f"{url}/message:send", json={"message": message})
        got_rest = httpx.get(f"{url}/tasks/{sent_rest.json()['task']['id']}")
        answers.append([normalized(r.content) for r in (sent, got, sent_rest, got_rest)])
    floor, ours = answers
    assert b"echo hello" in floor[0] and b"TASK_STATE_COMPLETED" in floor[3]
    assert floor == ours
