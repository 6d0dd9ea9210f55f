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


# -- the streaming operation (issue #36: CPU per streamed event against the floor) -------------
def _frame(result: dict[str, Any]) -> str:
    import json

    return "data: " + json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}) + "\n\n"


def _tokens_frames(chunks: int, last: str = "TASK_STATE_COMPLETED") -> str:
    task = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
    update = {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": []}}
    status = {"taskId": "t", "contextId": "c", "status": {"state": last}}
    frames = [_frame({"task": task}), *[_frame({"artifactUpdate": update})] * chunks]
    return "".join([*frames, _frame({"statusUpdate": status})])


@pytest.mark.parametrize("app_of", ["ours", "sse-floor"])
def test_the_stream_driver_reads_every_frame_of_a_real_stream(serve: Any, app_of: str) -> None:
    from bench.agents import sse_floor_app
    from bench.instructions import drive_stream

    app, _populate = ours_app(None, 0) if app_of == "ours" else sse_floor_app()
    port = urlsplit(serve(app)).port
    assert port is not None
    events = asyncio.run(drive_stream(port, 4, 1))
    # ours: the submitted task, the working status, 4 chunks, completed; the floor starts working
    assert events == (7 if app_of == "ours" else 6)


def test_the_stream_driver_refuses_a_stream_cut_before_its_terminal_status(serve: Any) -> None:
    from bench.instructions import drive_stream

    async def cut(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await receive()
        body = _tokens_frames(3).rsplit("data:", 1)[0].encode()  # no completed status
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    port = urlsplit(serve(cut)).port
    assert port is not None
    with pytest.raises(SystemExit, match="completed status last"):
        asyncio.run(drive_stream(port, 3, 1))


def test_sse_events_takes_every_line_ending_comments_and_ids() -> None:
    from bench.instructions import sse_events

    body = b'id: 1\r\ndata: {"a":1}\r\n\r\n: ping\r\n\r\ndata: x\rdata: y\r\revent: e\ndata:z\n\n'
    assert sse_events(body) == ['{"a":1}', "x\ny", "z"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"data: 1\n\ndata: 2\n", "whole event"),  # cut inside an event
        (b"data: 1\n\nnonsense\n\n", "not an SSE field"),
        (b"data: 1\n\nretri: 3\n\n", "not an SSE field"),
        (b"id: 4\n\n", "without data"),
    ],
)
def test_sse_events_refuses_a_malformed_stream(body: bytes, error: str) -> None:
    from bench.instructions import sse_events

    with pytest.raises(SystemExit, match=error):
        sse_events(body)


def test_check_stream_wants_the_task_n_chunks_and_the_completed_status() -> None:
    from bench.instructions import check_stream, sse_events

    check_stream(sse_events(_tokens_frames(3).encode()), 3)
    with pytest.raises(SystemExit, match="2 artifact chunks, not 3"):
        check_stream(sse_events(_tokens_frames(2).encode()), 3)
    with pytest.raises(SystemExit, match="completed status last"):
        check_stream(sse_events(_tokens_frames(3, "TASK_STATE_FAILED").encode()), 3)
    wrong_id = _tokens_frames(3).replace('"id": 7', '"id": 8', 1).encode()
    with pytest.raises(SystemExit, match="JSON-RPC result"):
        check_stream(sse_events(wrong_id), 3)
    two_kinds = _frame({"task": {}, "message": {}}) + _tokens_frames(3)
    with pytest.raises(SystemExit, match="one StreamResponse"):
        check_stream(sse_events(two_kinds.encode()), 3)


def test_per_chunk_cancels_what_a_stream_costs_once() -> None:
    from bench.instructions import per_chunk

    once, chunk = 2_000_000, 362_000  # the request, the task, the connection; one chunk
    counts = {60: once + 60 * chunk, 10: once + 10 * chunk}
    assert per_chunk(counts) == (362_000, 362_000 + 2_000_000 // 60)


def test_the_stream_report_says_per_chunk_against_ours_and_the_floor() -> None:
    from bench.instructions import stream_report

    results = {
        "ours": {"chunk": 362_000, "whole": 400_000, "idle": 1_000},
        "sse-floor": {"chunk": 157_000, "whole": 170_000, "idle": 900},
        "sdk": {"chunk": 1_500_000, "whole": 1_600_000, "idle": 1_100},
    }
    table = stream_report(results, 60)
    assert "instructions per chunk | whole stream per chunk (I60/60)" in table
    assert "request" not in table
    assert "| SendStreamingMessage | ours | 362,000 | 400,000 | 1,000 |  | 2.31x |" in table
    assert "| SendStreamingMessage | sse-floor | 157,000 | 170,000 | 900 | 0.43x |  |" in table
    assert "| SendStreamingMessage | sdk | 1,500,000 | 1,600,000 | 1,100 | 4.14x | 9.55x |" in table


async def test_slow_ticks_refresh_the_date_on_every_tick_of_the_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``TICK_S``: uvicorn's main loop sleeps the period between ticks (not 0.1 s), and each tick
    refreshes the date header (its counter a multiple of 10) and sees an exit."""
    import uvicorn.server
    from bench import serve

    monkeypatch.setattr(uvicorn.server.Server, "main_loop", uvicorn.server.Server.main_loop)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    class Ticking:
        ticks: list[int] = []

        async def on_tick(self, counter: int) -> bool:
            self.ticks.append(counter)
            return len(self.ticks) == 3  # the exit, seen on the third tick

    serve.slow_ticks(2.0)
    monkeypatch.setattr(serve.asyncio, "sleep", sleep)
    ticking = Ticking()
    await uvicorn.server.Server.main_loop(ticking)  # type: ignore[arg-type]
    assert ticking.ticks == [0, 10, 20]
    assert slept == [2.0, 2.0]
