"""Stopping a server (SIGINT, as Ctrl-C) while a stream is open (issue #18).

The open stream ends at once with a clean end of the response (a client resumes elsewhere with
``Last-Event-ID``), the server exits within its grace period, and nothing is logged as an error:
uvicorn used to wait ``timeout_graceful_shutdown`` for the never-ending stream, then cancel it
with a traceback (docs/server.md, "Stopping").
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from simple_a2a.server.background import free_port
from tests.support import rpc

AGENT = Path(__file__).with_name("shutdown_agent.py")
GRACE = 3.0


MESSAGE = {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "go"}]}


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_stopping_ends_open_streams_cleanly_and_exits_within_the_grace(
    signal_number: int,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, str(AGENT), str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                httpx.get(f"{url}/.well-known/agent-card.json").raise_for_status()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)

        events: list[dict[str, object]] = []
        ended: list[str] = []  # "clean", or the error that ended the stream
        server_alive_at_end: list[bool] = []
        first_events = threading.Event()

        def read() -> None:
            try:
                with httpx.stream(
                    "POST", url, json=rpc("SendStreamingMessage", {"message": MESSAGE}), timeout=30
                ) as response:
                    for line in response.iter_lines():
                        if line.startswith("data:"):
                            events.append(json.loads(line[5:]))
                            if len(events) == 3:
                                first_events.set()
                ended.append("clean")
            except httpx.HTTPError as exc:
                ended.append(repr(exc))
            server_alive_at_end.append(proc.poll() is None)

        reader = threading.Thread(target=read)
        reader.start()
        assert first_events.wait(15), "no events"
        proc.send_signal(signal_number)
        reader.join(timeout=GRACE + 10)
        assert not reader.is_alive(), "the stream stayed open"
        stopped = time.monotonic()
        proc.wait(timeout=GRACE + 10)
        took = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        _out, err_bytes = proc.communicate()
    err = err_bytes.decode()
    assert ended == ["clean"], err
    assert server_alive_at_end == [True]  # the stream ended before the process: promptly
    assert took < GRACE + 2, f"exited {took:.1f} s after the stream closed"
    assert "Traceback" not in err, err
    assert "ERROR" not in err, err
    assert all("result" in event for event in events)  # events, then a clean end; no error
