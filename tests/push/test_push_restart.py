"""Deliveries survive a restart: the outbox (push cursors) lives in the storage.

Server 1 runs a task while the webhook is down, then stops; server 2 opens the same storage,
resumes the pending cursor and delivers every event, in order, once the webhook is up.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from push_helpers import (
    Receiver,
    Steps,
    free_port,
    make_server,
    rpc,
    send,
    serve_in_thread,
    summary,
)

from simple_a2a.storage.memory import MemoryStorage

EXPECTED = [
    "task:TASK_STATE_SUBMITTED",
    "status:TASK_STATE_WORKING",
    "artifact:step 0",
    "artifact:step 1",
    "status:TASK_STATE_COMPLETED",
]


def _storage(backend: str, tmp_path: Any) -> Any:
    if backend == "memory":  # one storage object shared by both servers: a stand-in database
        return lambda: shared
    sqlite = pytest.importorskip("simple_a2a.storage.sqlite")
    if sqlite.SQLiteStorage(tmp_path / "probe.db").push_cursors is None:
        pytest.skip(
            "SQLiteStorage has no push outbox yet (Storage.push_cursors is None): implement "
            "storage.base.PushCursorStore for SQLite to enable this test"
        )
    return lambda: sqlite.SQLiteStorage(tmp_path / "tasks.db")


shared = MemoryStorage()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_pending_deliveries_resume_after_restart(serve, tmp_path, backend) -> None:  # type: ignore[no-untyped-def]
    new_storage = _storage(backend, tmp_path)
    port = free_port()
    hook = f"http://127.0.0.1:{port}/hook"
    executor = Steps(n=2)
    executor.gate.set()
    with serve_in_thread(make_server(executor, storage=new_storage()).app) as url:
        task = send(url, push={"url": hook, "id": "cfg"})
        deadline = time.monotonic() + 5
        while rpc(url, "GetTask", {"id": task["id"]})["result"]["status"]["state"] != (
            "TASK_STATE_COMPLETED"
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    # server 1 is gone; nothing was delivered. Server 2 on the same storage, webhook up:
    receiver = Receiver()
    serve(receiver.app, port=port)
    serve(make_server(Steps(), storage=new_storage()).app)
    events = receiver.wait_final()
    assert [summary(e) for e in events] == EXPECTED
