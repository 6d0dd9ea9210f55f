"""The storage backends push tests run against: memory, SQLite and (when reachable) PostgreSQL.

``new_storage`` is a factory of *unopened* storages that all address the same place (one file,
one schema; for memory, one shared object standing in for a database), so a test can stop a
server and start another on the same data. PostgreSQL is ``$SIMPLE_A2A_TEST_POSTGRES`` (default
``postgresql://postgres@127.0.0.1:5432/test``), one throwaway schema per test; skipped when the
server cannot be reached.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from simple_a2a.storage import MemoryStorage, Storage

POSTGRES_DSN = os.environ.get(
    "SIMPLE_A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion on a loop of its own (fixtures may run inside a test's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def new_storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Storage]]:
    if request.param == "memory":
        shared = MemoryStorage()
        yield lambda: shared
    elif request.param == "sqlite":
        from simple_a2a.storage.sqlite import SQLiteStorage

        yield lambda: SQLiteStorage(tmp_path / "tasks.db")
    else:
        asyncpg = pytest.importorskip("asyncpg", reason="asyncpg is not installed")
        from simple_a2a.storage.postgres import PostgresStorage

        schema = f"a2a_push_{secrets.token_hex(6)}"

        async def admin(sql: str) -> None:
            conn = await asyncpg.connect(POSTGRES_DSN, timeout=5)
            try:
                await conn.execute(sql)
            finally:
                await conn.close()

        try:
            _run(admin("SELECT 1"))
        except Exception as exc:  # any failure to reach the server: skip loudly, never pass
            pytest.skip(f"PostgreSQL not reachable at {POSTGRES_DSN}: {exc!r}")
        try:
            yield lambda: PostgresStorage(POSTGRES_DSN, schema=schema, max_size=4)
        finally:
            _run(admin(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
