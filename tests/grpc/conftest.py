"""gRPC fixtures (see grpc_served.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.grpc.grpc_served import Served, start


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    s = await start()
    try:
        yield s
    finally:
        await s.close()
