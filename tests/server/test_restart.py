"""Restart semantics (issue #7): kill -9 mid-task, start again on the same database.

Every completed task is intact (byte-identical), the running one is failed with the restart
message, nothing else changed — on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from simple_a2a.server.background import free_port
from simple_a2a.server.handler import RESTART_MESSAGE
from tests.support import rpc

AGENT = Path(__file__).with_name("restart_agent.py")
PG_DSN = os.environ.get("A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def start(storage: str, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, str(AGENT), storage, str(port)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the agent process did not start")


def call(port: int, method: str, params: dict[str, Any]) -> Any:
    response = httpx.post(f"http://127.0.0.1:{port}/", json=rpc(method, params), timeout=10)
    result = response.json()
    assert "result" in result, result
    return result["result"]


def message(text: str, **config: Any) -> dict[str, Any]:
    msg = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"message": msg, **({"configuration": config} if config else {})}


def all_tasks(port: int) -> dict[str, Any]:
    listed = call(port, "ListTasks", {"pageSize": 100, "includeArtifacts": True})
    return {t["id"]: t for t in listed["tasks"]}


def check_restart(storage: str) -> None:
    port = free_port()
    proc = start(storage, port)
    try:
        done = [call(port, "SendMessage", message(f"job {i}"))["task"] for i in range(5)]
        slow = call(port, "SendMessage", message("slow", returnImmediately=True))["task"]
        for _ in range(100):  # until the slow task is working
            if call(port, "GetTask", {"id": slow["id"]})["status"]["state"] == "TASK_STATE_WORKING":
                break
            time.sleep(0.05)
        before = all_tasks(port)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    proc = start(storage, port)
    try:
        # The killed process's lease on the slow task expires (lease_ttl=1 s); the restarted
        # process's scan takes it over and fails it: within the bound, never stuck (#14).
        deadline = time.monotonic() + 10
        while True:
            after = all_tasks(port)
            if after[slow["id"]]["status"]["state"] != "TASK_STATE_WORKING":
                break
            assert time.monotonic() < deadline, "the interrupted task was not recovered"
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(10)
    assert set(after) == set(before)
    for task in done:
        assert after[task["id"]] == before[task["id"]], "a completed task changed"
        assert after[task["id"]]["status"]["state"] == "TASK_STATE_COMPLETED"
    failed = after[slow["id"]]
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["status"]["message"]["parts"][0]["text"] == RESTART_MESSAGE
    assert failed.get("artifacts", []) == []


def test_sigkill_and_restart_on_sqlite(tmp_path: Path) -> None:
    check_restart(f"sqlite:///{tmp_path / 'tasks.db'}")


@pytest.fixture
def pg_schema() -> Iterator[str]:
    asyncpg = pytest.importorskip("asyncpg")
    import asyncio

    schema = f"restart_{uuid.uuid4().hex[:12]}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(PG_DSN)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    try:
        asyncio.run(run("SELECT 1"))
    except Exception as exc:
        pytest.skip(f"PostgreSQL is not reachable at {PG_DSN}: {exc}")
    yield schema
    asyncio.run(run(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


def test_sigkill_and_restart_on_postgres(pg_schema: str) -> None:
    check_restart(f"{PG_DSN}?schema={pg_schema}")
