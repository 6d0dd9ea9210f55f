"""Deliveries survive a restart: the outbox (push cursors) lives in the storage.

Server 1 runs a task while the webhook is down, then stops with every notification pending;
server 2 opens the same storage (``new_storage``: memory, SQLite, PostgreSQL), resumes the
pending cursor and delivers every event, in order, none lost, once the webhook is up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from simple_a2a.storage import PushCursor, Storage
from tests.push.push_helpers import (
    Receiver,
    Steps,
    free_port,
    make_server,
    post_rpc,
    send,
    serve_in_thread,
    summary,
)

EXPECTED = [
    "task:TASK_STATE_SUBMITTED",
    "status:TASK_STATE_WORKING",
    "artifact:step 0",
    "artifact:step 1",
    "status:TASK_STATE_COMPLETED",
]


def _pending(new_storage: Callable[[], Storage]) -> list[PushCursor]:
    async def read() -> list[PushCursor]:
        storage = new_storage()
        await storage.open()
        try:
            assert storage.push_cursors is not None
            return await storage.push_cursors.pending()
        finally:
            await storage.close()

    return asyncio.run(read())


def test_pending_deliveries_resume_after_restart(serve, new_storage) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    hook = f"http://127.0.0.1:{port}/hook"
    executor = Steps(n=2)
    executor.gate.set()
    with serve_in_thread(make_server(executor, storage=new_storage()).app) as url:
        task = send(url, push={"url": hook, "id": "cfg"})
        deadline = time.monotonic() + 5
        while post_rpc(url, "GetTask", {"id": task["id"]})["result"]["status"]["state"] != (
            "TASK_STATE_COMPLETED"
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    # Server 1 is gone with the whole backlog pending: nothing delivered, the cursor active.
    [cursor] = _pending(new_storage)
    assert (cursor.task_id, cursor.config_id) == (task["id"], "cfg")
    assert cursor.delivered_seq == 0 and cursor.state == "active"
    # Server 2 on the same storage, webhook up:
    receiver = Receiver()
    serve(receiver.app, port=port)
    serve(make_server(Steps(), storage=new_storage()).app)
    events = receiver.wait_final()
    assert [summary(e) for e in events] == EXPECTED
