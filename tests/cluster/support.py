"""Real processes for the cluster tests: N uvicorn replicas on one PostgreSQL schema, a
round-robin TCP proxy in front of them (any replica may answer any request, as behind a load
balancer without sticky sessions), a webhook receiver, and a stream reader that resumes with
``Last-Event-ID`` when the replica serving it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from examples._proxy import RoundRobinProxy

from simple_a2a.server.background import free_port

AGENT = Path(__file__).with_name("cluster_agent.py")
PG_DSN = os.environ.get("SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
#: A killed replica's task is recovered within lease ttl + scan interval (2.5 s + 0.5 s in the
#: agent) after its last heartbeat; the tests allow this much, loaded machine included.
RECOVERY_BOUND = 8.0


@dataclass
class Replica:
    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Cluster:
    storage: str
    schema: str
    env: dict[str, str]
    replicas: list[Replica] = field(default_factory=list)

    def start(self, index: int) -> None:
        replica = self.replicas[index]
        replica.proc = subprocess.Popen(
            [sys.executable, str(AGENT), self.storage, str(replica.port)],
            env={**os.environ, **self.env},
        )

    def wait_ready(self, index: int, timeout: float = 30) -> None:
        replica = self.replicas[index]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert replica.proc is not None and replica.proc.poll() is None, "replica exited"
            try:
                httpx.get(f"{replica.url}/.well-known/agent-card.json", timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"replica {index} did not start")

    def kill(self, index: int) -> None:
        """kill -9: no shutdown, no lease released, connections cut."""
        proc = self.replicas[index].proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)

    def restart(self, index: int) -> None:
        self.kill(index)
        self.start(index)
        self.wait_ready(index)

    def stop_all(self) -> None:
        for replica in self.replicas:
            if replica.proc is not None and replica.proc.poll() is None:
                replica.proc.terminate()
        for replica in self.replicas:
            if replica.proc is not None:
                try:
                    replica.proc.wait(15)
                except subprocess.TimeoutExpired:
                    replica.proc.kill()

    def owner_index(self, task_id: str) -> int | None:
        """The replica holding the task's lease (its owner id names the process id)."""
        if self.storage.startswith("sqlite:///"):
            import sqlite3

            with contextlib.closing(sqlite3.connect(self.storage[len("sqlite:///") :])) as conn:
                query = "SELECT owner FROM leases WHERE kind = 'task' AND key = ?"
                owner = conn.execute(query, (task_id,)).fetchall()
        else:
            query = "SELECT owner FROM {s}.leases WHERE kind = 'task' AND key = $1"
            owner = sql(self.schema, query, task_id)
        if not owner:
            return None
        pid = int(owner[0][0].split(":")[-2])
        return next((i for i, r in enumerate(self.replicas) if r.proc and r.proc.pid == pid), None)


def sql(schema: str, statement: str, *args: Any) -> list[Any]:
    import asyncpg

    async def run() -> list[Any]:
        conn = await asyncpg.connect(PG_DSN)
        try:
            return list(await conn.fetch(statement.format(s=f'"{schema}"'), *args))
        finally:
            await conn.close()

    return asyncio.run(run())


@contextlib.contextmanager
def running_cluster(
    schema: str,
    size: int,
    *,
    resumable: bool,
    marks: Path,
    storage: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[tuple[Cluster, RoundRobinProxy]]:
    """``size`` replicas on the PostgreSQL ``schema`` (or on ``storage``, e.g. a SQLite file);
    ``env``: more settings of the agent (``cluster_agent.py``)."""
    env = {
        "CLUSTER_RESUMABLE": "1" if resumable else "0",
        "CLUSTER_MARKS": str(marks),
        **(env or {}),
    }
    cluster = Cluster(storage or f"{PG_DSN}?schema={schema}", schema, env)
    cluster.replicas = [Replica(free_port()) for _ in range(size)]
    try:
        for index in range(size):  # all at once: they migrate the new schema together
            cluster.start(index)
        for index in range(size):
            cluster.wait_ready(index)
        with RoundRobinProxy([r.port for r in cluster.replicas]) as proxy:
            yield cluster, proxy
    finally:
        cluster.stop_all()


# --- the client side --------------------------------------------------------------------------


def rpc(url: str, method: str, params: dict[str, Any], timeout: float = 15) -> dict[str, Any]:
    """One JSON-RPC call on a fresh connection (through the proxy: the next replica)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = httpx.post(url + "/", json=body, timeout=timeout)
    answer: dict[str, Any] = response.json()
    return answer


def result(url: str, method: str, params: dict[str, Any]) -> Any:
    answer = rpc(url, method, params)
    assert "result" in answer, answer
    return answer["result"]


def send(text: str, *, task_id: str | None = None, **config: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    return {"message": msg, **({"configuration": config} if config else {})}


def state_of(url: str, task_id: str) -> str:
    return str(result(url, "GetTask", {"id": task_id})["status"]["state"])


def wait_state(url: str, task_id: str, states: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task: dict[str, Any] = result(url, "GetTask", {"id": task_id})
        if task["status"]["state"] in states:
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task['status']['state']}"
        time.sleep(0.1)


TERMINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}


def _is_final(event: dict[str, Any]) -> bool:
    if "statusUpdate" in event:
        return event["statusUpdate"]["status"]["state"] in TERMINAL
    if "task" in event:
        return event["task"]["status"]["state"] in TERMINAL
    return False


@dataclass
class StreamLog:
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    reconnects: int = 0


def follow(url: str, task_id: str, log: StreamLog, timeout: float = 60) -> None:
    """SubscribeToTask through ``url`` until the final event; when the connection drops (its
    replica died), resubscribe with ``Last-Event-ID`` — wherever the proxy sends us."""
    deadline = time.monotonic() + timeout
    last: int | None = None
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    while time.monotonic() < deadline:
        headers = {"Accept": "text/event-stream"}
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        try:
            with httpx.stream("POST", url + "/", json=body, headers=headers, timeout=30) as resp:
                seq: int | None = None
                for line in resp.iter_lines():
                    if line.startswith("id:"):
                        seq = int(line[3:].strip())
                    elif line.startswith("data:"):
                        data = json.loads(line[5:])
                        assert "result" in data, data
                        assert seq is not None
                        log.events.append((seq, data["result"]))
                        last = seq
                        if _is_final(data["result"]):
                            return
        except (httpx.TransportError, httpx.StreamError):
            pass
        log.reconnects += 1
        time.sleep(0.1)
    raise AssertionError(f"the stream of {task_id} did not end")


class WebhookReceiver:
    """Collects push notifications (a real HTTP server on loopback)."""

    def __init__(self) -> None:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()

        async def hook(request: Request) -> Response:
            body = json.loads(await request.body())
            with self._lock:
                self.received.append(body)
            return Response(status_code=204)

        self.app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])

    def of(self, task_id: str) -> list[dict[str, Any]]:
        def task_of(event: dict[str, Any]) -> str | None:
            for kind in ("statusUpdate", "artifactUpdate"):
                if kind in event:
                    return str(event[kind]["taskId"])
            return str(event["task"]["id"]) if "task" in event else None

        with self._lock:
            return [e for e in self.received if task_of(e) == task_id]
