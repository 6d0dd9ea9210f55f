"""Real servers on loopback for the client tests: the official SDK's agent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.client.servers import ServerThread


@pytest.fixture(scope="session")
def sdk_server() -> Iterator[ServerThread]:
    from tests.client.sdk_agent import build_app

    with ServerThread(build_app) as server:
        yield server
