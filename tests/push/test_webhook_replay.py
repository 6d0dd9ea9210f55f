"""Replay stores (issue #16, item 20): a replayed notification is refused after a restart
(SQLite file) and by another replica (PostgreSQL), not only by the process that saw it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from simple_a2a.protocol.push import JWKS_PATH, SIGNATURE_HEADER
from simple_a2a.server.push import SigningKeys
from simple_a2a.storage.replay import PostgresReplayStore, SQLiteReplayStore
from simple_a2a.webhooks import NotificationRejected, NotificationVerifier, ReplayStore
from tests.conftest import POSTGRES_DSN as DSN
from tests.push.test_webhook_hostile import BODY

HOOK = "https://hooks.example/a2a"


@pytest.fixture(scope="module")
def keys() -> SigningKeys:
    return SigningKeys.generate()


@pytest.fixture
def agent(serve: Any, keys: SigningKeys) -> str:
    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse(keys.jwks())

    return str(serve(Starlette(routes=[Route(JWKS_PATH, jwks)])))


def verifier(agent: str, store: ReplayStore) -> NotificationVerifier:
    return NotificationVerifier(agent_url=agent, audience=HOOK, replay_store=store)


async def check_replay_refused(
    agent: str, first: ReplayStore, second: ReplayStore, keys: SigningKeys
) -> None:
    headers = {SIGNATURE_HEADER: keys.sign(BODY, task_id="t1", audience=HOOK)}
    assert (await verifier(agent, first).verify(headers, BODY)).task_id == "t1"
    with pytest.raises(NotificationRejected, match="replayed"):
        await verifier(agent, second).verify(headers, BODY)
    fresh = {SIGNATURE_HEADER: keys.sign(BODY, task_id="t1", audience=HOOK)}
    assert (await verifier(agent, second).verify(fresh, BODY)).task_id == "t1"


async def test_sqlite_store_refuses_a_replay_after_a_restart(
    agent: str, keys: SigningKeys, tmp_path: Path
) -> None:
    before = SQLiteReplayStore(str(tmp_path / "seen.db"))
    await before.remember("warm-up", 0)  # the file exists before the "restart"
    after = SQLiteReplayStore(str(tmp_path / "seen.db"))  # a new process on the same file
    try:
        await check_replay_refused(agent, before, after, keys)
    finally:
        await before.aclose()
        await after.aclose()


async def test_sqlite_store_forgets_expired_tokens(tmp_path: Path) -> None:
    store = SQLiteReplayStore(str(tmp_path / "seen.db"))
    assert await store.remember("j1", 1.0)  # expired long ago
    assert await store.remember("j1", 4e9)  # so it may be taken again
    assert not await store.remember("j1", 4e9)
    await store.aclose()


async def test_postgres_store_refuses_a_replay_on_another_replica(
    agent: str, keys: SigningKeys, postgres_schema: str
) -> None:
    schema = postgres_schema
    replica_a = PostgresReplayStore(DSN, schema=schema)
    replica_b = PostgresReplayStore(DSN, schema=schema)
    try:
        await check_replay_refused(agent, replica_a, replica_b, keys)
    finally:
        await replica_a.aclose()
        await replica_b.aclose()
