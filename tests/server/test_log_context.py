"""Structured log fields: library log lines carry operation, caller, task and context id."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from simple_a2a import AsyncClient
from simple_a2a.auth import APIKeyAuth
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.logcontext import (
    FIELDS,
    bind,
    bind_deferred,
    current,
    library_logger,
    reset,
)
from simple_a2a.server import server

CARD = AgentCard.from_dict(
    {"name": "Logged", "description": "log test", "version": "1", "capabilities": {}}
)


async def failing(ctx: Any) -> str:
    raise RuntimeError("boom")


async def test_executor_failure_log_carries_the_request(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    url = serve(server(CARD, failing, auth=APIKeyAuth({"k-1": "alice"})).app)
    caplog.set_level(logging.INFO, logger="simple_a2a")
    async with AsyncClient(url, api_key="k-1") as client:
        task = await client.send("hi")
    (record,) = [r for r in caplog.records if r.getMessage().startswith("executor failed")]
    assert record.name == "simple_a2a.server"
    assert record.a2a_operation == "SendMessage"  # type: ignore[attr-defined]
    assert record.a2a_caller == "alice"  # type: ignore[attr-defined]
    assert record.a2a_task_id == task.id  # type: ignore[union-attr,attr-defined]
    assert record.a2a_context_id == task.context_id  # type: ignore[union-attr,attr-defined]


def test_fields_default_to_none_and_explicit_extra_wins(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = library_logger("simple_a2a.server")
    caplog.set_level(logging.INFO, logger="simple_a2a")
    log.info("outside any request")
    token = bind(operation="GetTask", task_id="t-1")
    try:
        assert current()["a2a_task_id"] == "t-1"
        log.info("inside", extra={"a2a_task_id": "explicit"})
    finally:
        reset(token)
    outside, inside = caplog.records[-2:]
    assert all(getattr(outside, name) is None for name in FIELDS)
    assert inside.a2a_operation == "GetTask"  # type: ignore[attr-defined]
    assert inside.a2a_task_id == "explicit"  # type: ignore[attr-defined]
    assert current() == {}


def test_deferred_fields_are_worked_out_once_and_only_when_read() -> None:
    """The server binds each request's fields deferred (most requests log nothing): the
    function runs at the first read, once, and binds nest as with :func:`bind`."""
    calls: list[str] = []

    def fields(operation: str) -> dict[str, Any]:
        calls.append(operation)
        return {"operation": operation, "task_id": None}

    outer = bind_deferred(fields, "SendMessage")
    inner = bind(task_id="t-2", context_id="c-2")  # the executor's runner binds over it
    assert calls == ["SendMessage"]  # read by the nested bind
    reset(inner)
    reset(outer)
    token = bind_deferred(fields, "GetTask")
    try:
        assert calls == ["SendMessage"]  # nothing read yet
        nested = bind_deferred(lambda: {"task_id": "t-3"})
        assert current() == {"a2a_operation": "GetTask", "a2a_task_id": "t-3"}
        assert current() is current()  # worked out once
        reset(nested)
        assert current() == {"a2a_operation": "GetTask"}
        assert calls == ["SendMessage", "GetTask"]
    finally:
        reset(token)
    assert current() == {}
