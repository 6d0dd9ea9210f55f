"""Fixtures of the cluster tests: a fresh PostgreSQL schema, replicas, a proxy, a webhook."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from simple_a2a.server.background import BackgroundServer

from .support import Cluster, RoundRobinProxy, WebhookReceiver, running_cluster, sql


def _schema() -> Iterator[str]:
    pytest.importorskip("asyncpg", reason="asyncpg is not installed (simple-a2a[postgres])")
    name = f"a2a_cluster_{secrets.token_hex(6)}"
    try:
        sql("public", "SELECT 1")
    except Exception as exc:  # skip loudly, never pass
        pytest.skip(f"PostgreSQL not reachable: {exc!r}")
    yield name
    sql(name, "DROP SCHEMA IF EXISTS {s} CASCADE")


@pytest.fixture(scope="module")
def webhook() -> Iterator[tuple[WebhookReceiver, str]]:
    receiver = WebhookReceiver()
    with BackgroundServer(receiver.app) as srv:
        yield receiver, srv.url + "/hook"


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def resumable_cluster(marks: Path) -> Iterator[tuple[Cluster, RoundRobinProxy]]:
    for schema in _schema():
        with running_cluster(schema, 3, resumable=True, marks=marks) as running:
            yield running


@pytest.fixture(scope="module")
def plain_cluster(marks: Path) -> Iterator[tuple[Cluster, RoundRobinProxy]]:
    for schema in _schema():
        with running_cluster(schema, 3, resumable=False, marks=marks) as running:
            yield running
