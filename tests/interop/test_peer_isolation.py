"""A peer that hangs or dies fails only the test that used it (issue #33).

The peer fixtures (tests/interop/peers.py ``PeerProcess``) check before every test that the
peer's card answers within a few seconds and restart it when it does not. Here on the SDK
0.3.26 agent, a real process: killed (it died), then stopped with SIGSTOP (it hangs, as it did
after a subscribe stream that never ended).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import httpx
import pytest

from simple_a2a import Task
from simple_a2a.client import AsyncClient, ConnectError
from tests.interop.peers import HEALTH_TIMEOUT, PeerProcess, healthy_peer, sdk03_peer


@pytest.fixture
def peer() -> Iterator[PeerProcess]:
    with healthy_peer(sdk03_peer()) as started:
        yield started


async def test_a_killed_peer_is_restarted_for_the_next_test(peer: PeerProcess) -> None:
    dead = peer.base
    assert peer.process is not None
    peer.process.kill()
    peer.process.wait(10)
    # the test that was using it fails at once, with a connection error
    async with AsyncClient(dead) as client:
        with pytest.raises((ConnectError, Exception)):
            await client.send("echo hi")
    assert not peer.healthy()
    # the next test's fixture gets a new, working peer
    base = peer.ensure()
    assert base != dead and peer.starts == 2
    async with AsyncClient(base) as client:
        task = await client.send("echo hi")
        assert isinstance(task, Task) and task.text == "echo: echo hi"


def test_a_hung_peer_is_replaced_within_the_health_bound(peer: PeerProcess) -> None:
    assert peer.process is not None
    hung = peer.process
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        with pytest.raises(httpx.TimeoutException):
            httpx.get(peer.base + "/.well-known/agent-card.json", timeout=HEALTH_TIMEOUT)
        base = peer.ensure()  # notices within HEALTH_TIMEOUT, stops the hung one, starts anew
        assert hung.poll() is not None  # the hung process is gone
        assert httpx.get(base + "/.well-known/agent-card.json", timeout=5).status_code == 200
    finally:
        if hung.poll() is None:
            os.kill(hung.pid, signal.SIGCONT)
            hung.kill()


def test_a_failing_test_gets_the_peers_log(peer: PeerProcess) -> None:
    assert peer.log_path.exists()
    assert peer.log_tail() != "(no log)"
