"""route_path: one rule, for every layer, of where a request is below its mount point."""

from __future__ import annotations

import pytest

from simple_a2a.protocol.asgi import route_path


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("/tasks/1", "", "/tasks/1"),
        ("/agent/tasks/1", "/agent", "/tasks/1"),
        ("/agent", "/agent", "/"),
        ("/agent/", "/agent", "/"),
        ("/agentX/.well-known/agent-card.json", "/agent", "/agentX/.well-known/agent-card.json"),
    ],
)
def test_route_path(path: str, root: str, expected: str) -> None:
    assert route_path({"path": path, "root_path": root}) == expected
