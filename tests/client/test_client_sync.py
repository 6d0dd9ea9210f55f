"""The blocking client: from plain code, from worker threads, and the error on an event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

import simple_a2a
from simple_a2a import Task
from simple_a2a.client import Client, SyncClientInAsyncContextError


async def test_sync_client_from_worker_threads_while_a_loop_runs(sdk_server) -> None:
    def work(i: int) -> str:
        with simple_a2a.client(sdk_server.url) as agent:
            task = agent.send(f"echo {i}")
            assert isinstance(task, Task)
            return task.text

    results = await asyncio.gather(*(asyncio.to_thread(work, i) for i in range(4)))
    assert results == [f"echo: echo {i}" for i in range(4)]


async def test_sync_client_on_a_running_loop_raises_a_clear_error(sdk_server) -> None:
    agent = Client(sdk_server.url)
    with pytest.raises(SyncClientInAsyncContextError, match="AsyncClient"):
        agent.send("hello")
    with pytest.raises(SyncClientInAsyncContextError, match="AsyncClient"):
        agent.stream("count 2")  # raised at the call, not at the first iteration
    with pytest.raises(RuntimeError):  # it is also a RuntimeError
        agent.get("x")
    await asyncio.to_thread(agent.close)


def test_sync_client_in_a_thread_with_its_own_loop_elsewhere(sdk_server) -> None:
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run_loop() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    thread = threading.Thread(target=run_loop, daemon=True)
    thread.start()
    ready.wait(5)
    try:
        agent = simple_a2a.client(sdk_server.url)
        assert isinstance(agent.send("echo plain"), Task)
        events = list(agent.stream("count 2"))
        assert isinstance(events[0], Task)
        agent.close()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
