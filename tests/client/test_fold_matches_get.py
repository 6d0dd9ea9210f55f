"""A folded stream equals what GetTask returns: client and server fold events with one reducer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from simple_a2a import AgentCard, AsyncClient, Task
from simple_a2a.client import afold
from simple_a2a.server import RequestContext, server


async def words(ctx: RequestContext) -> AsyncIterator[str]:
    for word in ("one ", "two ", "three"):
        yield word


async def test_folded_stream_equals_get(serve: Any) -> None:
    url = serve(server(AgentCard(name="w", description="w", version="1"), words).app)
    async with AsyncClient(url) as client:
        folded = await afold(client.stream("go"))
        assert isinstance(folded, Task)
        stored = await client.get(folded.id)
    assert folded.artifacts == stored.artifacts
    assert folded.text == "one two three"
    assert folded.status.state == stored.status.state
