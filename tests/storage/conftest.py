"""Fixtures the storage tests share."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator

import pytest

#: the Redis of the event fan-out tests (scripts/services starts one)
REDIS = os.environ.get("SIMPLE_A2A_TEST_REDIS", "redis://127.0.0.1:6379/0")


@pytest.fixture
async def redis_stream() -> AsyncIterator[str]:
    """A stream key of this test's own on the real Redis, deleted afterwards (skips when
    redis is not installed or Redis cannot be reached)."""
    aioredis = pytest.importorskip("redis.asyncio", reason="redis is not installed")
    client = aioredis.Redis.from_url(REDIS, socket_connect_timeout=2)
    try:
        await client.ping()
    except Exception as exc:
        await client.aclose()
        pytest.skip(f"Redis not reachable at {REDIS}: {exc!r}")
    key = f"a2a_test_{secrets.token_hex(6)}"
    try:
        yield key
    finally:
        await client.delete(key)
        await client.aclose()
